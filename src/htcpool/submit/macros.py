"""Macro expansion for submit descriptions, on top of the configuration's expander.

condor_submit expands ``$(NAME)``, ``$(NAME:default)``, ``$FUNC(…)`` and
``$(DOLLAR)`` with the same engine as the configuration, so this module adds
nothing to the language: ``Expander`` wraps ``htcpool.config.macros.Expander``
(HTCondor's find-replace-rescan loop and the ``$FUNC`` bodies of
``htcpool.config.functions``) with what submit needs around it:

* names are looked up through a ``lookup`` callable, which is where the submit
  hash counts uses (the "unused line" warning) and notices per-job macros;
  an undefined name expands to the empty string, as in condor_submit;
* ``used_random`` tells whether ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` drew
  since it was last cleared (such a job cannot be copied for its siblings);
* expansion errors (a macro that refers back to itself, bad function
  arguments) become ``MacroError``, a ``SubmitError``, so the caller can name
  the submit file and line.

The random generator is seeded with 0 unless one is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from htcpool.config.errors import ConfigError
from htcpool.config.macros import Expander as ConfigExpander
from htcpool.config.macros import LazyRandom, RandomSource
from htcpool.submit.errors import SubmitError


class MacroError(SubmitError):
    """A macro could not be expanded (bad function arguments, runaway recursion)."""


class Expander:
    """Expands macros against ``lookup``; ``environ`` and ``rng`` back ``$ENV`` and ``$RANDOM_*``."""

    def __init__(self, lookup: Callable[[str], str | None], environ: Mapping[str, str] | None = None,
                 rng: RandomSource | None = None, cwd: str = "/") -> None:
        self._engine = ConfigExpander(lookup, environ or {}, rng or LazyRandom(0), cwd=cwd)
        self._draws = 0

    @property
    def lookup(self) -> Callable[[str], str | None]:
        return self._engine.lookup

    @lookup.setter
    def lookup(self, value: Callable[[str], str | None]) -> None:
        self._engine.lookup = value

    @property
    def used_random(self) -> bool:
        return self._engine.random_draws != self._draws

    @used_random.setter
    def used_random(self, value: bool) -> None:
        if not value:
            self._draws = self._engine.random_draws

    def expand(self, text: str) -> str:
        if "$" not in text:
            return text
        try:
            return self._engine.expand(text)
        except ConfigError as e:
            raise MacroError(str(e)) from None


__all__ = ["Expander", "MacroError"]
