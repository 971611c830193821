"""The :class:`Config` object: a read configuration and typed, context-aware lookups.

A Config holds the definitions a read produced (:class:`MacroSet`), the context it was
read in (subsystem and local name: self references and ``if defined`` were resolved in
that context), the environment and random source used by ``$ENV``/``$RANDOM_*``, and the
list of sources read, and the clock its ClassAd evaluations see (None: a value that reads
the time is an error; the program reading the configuration passes its own). Lookups
expand lazily, at call time, like HTCondor's ``param()``:

* ``get_str``/``get_expr`` return the expanded text, None when the name is undefined or
  empty (an empty value hides the table default, as ``X =`` does in HTCondor);
* ``get_int``/``get_float``/``get_bool`` convert like ``param_integer``/``param_double``/
  ``param_boolean`` (literal first, then a ClassAd evaluation, see :mod:`~htcpool.config.typed`:
  ``5*60`` is 300, ``10.7`` is 10 as an integer, ``true`` is 1), check the range the
  parameter table gives the knob (``range=`` in ``param_info.in``), and raise
  :class:`~htcpool.config.errors.ConfigValueError` naming the knob, the defining file and
  line and the reason when the text is not of that type or out of range. Every daemon reads
  its numeric knobs through them, so an expression is accepted wherever HTCondor accepts one.
  A daemon's configuration sets ``on_bad_value``: the error is handed to it (the daemon logs
  it, naming the knob) and the knob's default is used instead, so no knob value stops a
  daemon or sets it spinning (HTCondor's daemons exit on such a value instead);
* every accessor takes ``subsystem``, ``local_name`` (tried as ``LOCAL.NAME`` then
  ``SUBSYS.NAME`` then ``NAME``) and ``slot`` (``SLOT<N>_NAME`` tried before ``NAME``, as
  the startd does for per-slot settings).

Build one with :func:`htcpool.config.read_config` (files) or :meth:`Config.from_text`.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from htcpool.config.errors import ConfigValueError
from htcpool.config.lookup import Context, Found, lookup
from htcpool.config.macro_set import DEFAULT, Definition, MacroSet
from htcpool.config.macros import Expander, LazyRandom, RandomSource
from htcpool.config.probe import MachineFacts, fake_machine
from htcpool.config.table import default_for
from htcpool.config.typed import boolean_value, integer_value, real_value

T = TypeVar("T")
_UNSET = object()


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a value came from: a file and line (and metaknob), or the table ("default")."""

    name: str  # the name that matched, prefix included (e.g. "STARTD.START")
    source: str  # file name, "<Detected>", "<Environment>" or "<Default>"
    line: int = 0
    metaknob: str = ""

    @property
    def is_default(self) -> bool:
        return self.source == DEFAULT

    def __str__(self) -> str:
        if self.is_default:
            return "default"
        if not self.line:
            return self.source
        where = f"{self.source}, line {self.line}"
        return f"{where}, use {self.metaknob}" if self.metaknob else where


class Config:
    """A configuration that has been read; see the module docstring."""

    def __init__(
        self,
        macros: MacroSet,
        context: Context,
        *,
        environ: Mapping[str, str] | None = None,
        rng: RandomSource | None = None,
        sources: list[str] | None = None,
        warnings: list[str] | None = None,
        facts: MachineFacts | None = None,
        cwd: str = "",
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.macros = macros
        self.context = context
        self.environ: Mapping[str, str] = environ if environ is not None else {}
        self.rng: RandomSource = rng if rng is not None else LazyRandom(0)
        self.sources = list(sources or [])
        self.warnings = list(warnings or [])
        self.facts = facts if facts is not None else fake_machine()
        self.cwd = cwd
        self.clock = clock
        #: None: a typed value that cannot be used raises ``ConfigValueError`` (tools, tests);
        #: a daemon sets a function that logs the error, and the knob's default is used
        self.on_bad_value: Callable[[ConfigValueError], None] | None = None
        # Settled expansions per reading context, dropped whenever the set changes.
        self._expanders: dict[tuple[str | None, str | None], Expander] = {}
        self._memo_version = -1

    # -- construction ---------------------------------------------------------
    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        source: str = "<string>",
        subsystem: str | None = "TOOL",
        local_name: str | None = None,
        environ: Mapping[str, str] | None = None,
        facts: MachineFacts | None = None,
        rng: random.Random | None = None,
        loader: object | None = None,
        allow_commands: bool = False,
        clock: Callable[[], float] | None = None,
    ) -> Config:
        """Read configuration ``text`` as the root source named ``source``."""
        from htcpool.config.files import assemble

        return assemble(
            [(source, text)],
            subsystem=subsystem,
            local_name=local_name,
            environ=environ or {},
            facts=facts or fake_machine(),
            rng=rng,
            loader=loader,  # type: ignore[arg-type]
            allow_commands=allow_commands,
            clock=clock,
        )

    # -- context --------------------------------------------------------------
    def _context(self, subsystem: str | None, local_name: str | None) -> Context:
        if subsystem is None and local_name is None:
            return self.context
        return Context(
            self.context.subsystem if subsystem is None else (subsystem or None),
            self.context.local_name if local_name is None else (local_name or None),
        )

    def lookup(
        self,
        name: str,
        subsystem: str | None = None,
        slot: int | None = None,
        local_name: str | None = None,
    ) -> Found | None:
        """The raw value and origin of ``name`` in the given context, or None."""
        context = self._context(subsystem, local_name)
        if slot is not None:
            found = lookup(self.macros, f"SLOT{slot}_{name}", context)
            if found is not None:
                return found
        return lookup(self.macros, name, context)

    def expander(self, subsystem: str | None = None, local_name: str | None = None,
                 where: tuple[str, int] = ("", 0)) -> Expander:
        """The expander for a lookup context (reused, with its memo of settled values)."""
        if self._memo_version != self.macros.version:
            self._expanders.clear()
            self._memo_version = self.macros.version
        context = self._context(subsystem, local_name)
        key = (context.subsystem, context.local_name)
        expander = self._expanders.get(key)
        if expander is None:
            macros = self.macros

            def raw_of(name: str) -> str | None:
                found = lookup(macros, name, context)
                return None if found is None else found.raw

            expander = Expander(raw_of, self.environ, self.rng, where, self.cwd, {}, clock=self.clock)
            self._expanders[key] = expander
        expander.where = where
        return expander

    def expand(self, text: str, subsystem: str | None = None, local_name: str | None = None) -> str:
        """Expand ``$(...)`` references in arbitrary ``text`` against this configuration."""
        return self.expander(subsystem, local_name).expand(text)

    # -- string accessors -----------------------------------------------------
    def raw(self, name: str, subsystem: str | None = None, slot: int | None = None,
            local_name: str | None = None) -> str | None:
        """The unexpanded value (None when nothing, not even the table, defines it)."""
        found = self.lookup(name, subsystem, slot, local_name)
        return None if found is None else found.raw

    def get_str(
        self,
        name: str,
        subsystem: str | None = None,
        slot: int | None = None,
        local_name: str | None = None,
        *,
        default: str | None = None,
    ) -> str | None:
        """The expanded value, or ``default`` when undefined or empty."""
        found = self.lookup(name, subsystem, slot, local_name)
        if found is None or not found.raw:
            return default
        expander = self.expander(subsystem, local_name, self._where(found))
        value = expander.expand(found.raw, (name.upper(),))
        return value if value else default

    def get_expr(
        self,
        name: str,
        subsystem: str | None = None,
        slot: int | None = None,
        local_name: str | None = None,
        *,
        default: str | None = None,
    ) -> str | None:
        """The expanded text of an expression knob (the ClassAd parse is the caller's)."""
        return self.get_str(name, subsystem, slot, local_name, default=default)

    def is_defined(self, name: str, subsystem: str | None = None, slot: int | None = None,
                   local_name: str | None = None) -> bool:
        """True when ``name`` has a non-empty value (the table default counts)."""
        return self.get_str(name, subsystem, slot, local_name) is not None

    # -- typed accessors ------------------------------------------------------
    def _typed(self, name: str, convert: Callable[..., T], default: T | None,
               subsystem: str | None, slot: int | None, local_name: str | None) -> T | None:
        found = self.lookup(name, subsystem, slot, local_name)
        text = self.get_str(name, subsystem, slot, local_name)
        if text is not None and found is not None:
            source, line = self._where(found)
            try:
                return convert(name, text, source=source, line=line, clock=self.clock)
            except ConfigValueError as e:
                if self.on_bad_value is None:
                    raise
                self.on_bad_value(e)  # the daemon logs it and runs on with the default
        return self._typed_default(name, convert, default, subsystem, local_name)

    def _typed_default(self, name: str, convert: Callable[..., T], default: T | None,
                       subsystem: str | None, local_name: str | None) -> T | None:
        """Like param_integer(): an undefined or empty (or, for a daemon, unusable) value falls
        back to the table default (for this subsystem), then to the caller's default."""
        context = self._context(subsystem, local_name)
        info = default_for(name, context.prefixes())
        if info is None or not info.default:
            return default
        expander = self.expander(subsystem, local_name, (DEFAULT, 0))
        text = expander.expand(info.default)
        if not text:
            return default
        try:
            return convert(name, text, source=DEFAULT, line=0, clock=self.clock)
        except ConfigValueError as e:
            if self.on_bad_value is None:
                raise
            self.on_bad_value(e)
            return default

    def strict(self) -> Config:
        """This configuration with ``on_bad_value`` unset: a typed value that cannot be used
        raises, for a reader that words its own message about it (the group quota knobs)."""
        if self.on_bad_value is None:
            return self
        view = copy.copy(self)
        view.on_bad_value = None
        return view

    def get_int(self, name: str, subsystem: str | None = None, slot: int | None = None,
                local_name: str | None = None, *, default: int | None = None) -> int | None:
        """The value as an integer (reals truncated, booleans 0/1, expressions evaluated)."""
        return self._typed(name, integer_value, default, subsystem, slot, local_name)

    def get_float(self, name: str, subsystem: str | None = None, slot: int | None = None,
                local_name: str | None = None, *, default: float | None = None) -> float | None:
        """The value as a real number (expressions evaluated)."""
        return self._typed(name, real_value, default, subsystem, slot, local_name)

    def get_bool(self, name: str, subsystem: str | None = None, slot: int | None = None,
                local_name: str | None = None, *, default: bool | None = None) -> bool | None:
        """The value as a boolean (``true``/``false``/``1``/``0`` or an expression)."""
        return self._typed(name, boolean_value, default, subsystem, slot, local_name)

    def get_typed(self, name: str, subsystem: str | None = None,
                  local_name: str | None = None) -> str | int | float | bool | None:
        """The value converted to the type the parameter table gives ``name``."""
        info = default_for(name, self._context(subsystem, local_name).prefixes())
        kind = info.type if info is not None else "string"
        if kind == "int":
            return self.get_int(name, subsystem, None, local_name)
        if kind == "double":
            return self.get_float(name, subsystem, None, local_name)
        if kind == "bool":
            return self.get_bool(name, subsystem, None, local_name)
        return self.get_str(name, subsystem, None, local_name)

    # -- provenance -----------------------------------------------------------
    def _where(self, found: Found) -> tuple[str, int]:
        if found.definition is None:
            return DEFAULT, 0
        return found.definition.source, found.definition.line

    def provenance(self, name: str, subsystem: str | None = None, slot: int | None = None,
                   local_name: str | None = None) -> Provenance | None:
        """Where ``name``'s value comes from, or None when it is not defined at all."""
        found = self.lookup(name, subsystem, slot, local_name)
        if found is None:
            return None
        if found.definition is None:
            return Provenance(found.table_name or name, DEFAULT)
        d = found.definition
        return Provenance(d.name, d.source, d.line, d.metaknob)

    def definitions(self) -> list[Definition]:
        """Every stored definition (table defaults excluded), in first-definition order."""
        return self.macros.definitions()

    def table_default(self, name: str, subsystem: str | None = None) -> str | None:
        """The parameter table's raw default for ``name`` (subsystem entry first)."""
        context = self._context(subsystem, None)
        info = default_for(name, context.prefixes())
        return None if info is None else info.default
