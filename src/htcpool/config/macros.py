"""Macro references in configuration text: finding them and expanding them.

A reference is ``$(NAME)``, ``$(NAME:default)`` or ``$FUNC(body)``. :func:`find_macro`
scans for the first one whose body is acceptable: a plain reference (and ``$ENV``) may
hold only identifier characters (letters, digits, ``_ . /``) before an optional colon;
after the colon the characters ``$ , \\ :``, identifier characters and one nested
``(...)`` are allowed. Any other body is not a reference and scanning resumes inside it,
which is how ``$($(X))`` finds the inner reference first. ``$$(...)`` is never a
reference here: it is left for match time.

:meth:`Expander.expand` is HTCondor's loop: find the first reference, replace it by its
value (raw, unexpanded), and search again from the start, until none is left; then every
``$(DOLLAR)`` becomes ``$``. Because replaced text is rescanned, a value that refers back
to itself would loop forever; the expander tracks which names produced each stretch of
text and raises :class:`~htcpool.config.errors.ConfigRecursionError` naming the cycle.

The ``$FUNC`` bodies (``$ENV``, ``$INT``, ``$REAL``, ``$STRING``, ``$EVAL``, ``$CHOICE``,
``$SUBSTR``, ``$RANDOM_CHOICE``, ``$RANDOM_INTEGER``, ``$F...``, ``$BASENAME``,
``$DIRNAME``) are evaluated by :mod:`htcpool.config.functions`.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from htcpool.classad.context import LazyRandom
from htcpool.config.errors import ConfigExpansionError, ConfigRecursionError

#: Function names recognised after ``$`` (case-sensitive, as in HTCondor).
SPECIAL_FUNCTIONS = frozenset(
    {
        "ENV",
        "RANDOM_CHOICE",
        "RANDOM_INTEGER",
        "CHOICE",
        "SUBSTR",
        "INT",
        "REAL",
        "STRING",
        "EVAL",
        "BASENAME",
        "DIRNAME",
    }
)
NORMAL = ""  # the function name of a plain $(NAME) reference
FILENAME = "F"  # $F<flags>(...)
_FILENAME_FLAGS = frozenset("pnxdqabfwu")
_CANDIDATE = re.compile(r"\$(\$?[A-Za-z0-9_]*)\(")
_ID_BODY = re.compile(r"[A-Za-z0-9_./]*(?::(?:[A-Za-z0-9_./$ ,\\:]|\([^)]*\))*)?\)")
#: Expansion output beyond this size is taken as runaway growth.
MAX_EXPANSION = 4_000_000


@dataclass(slots=True)
class MacroRef:
    """Where one reference sits in a text: ``text[dollar:end]`` is the whole ``$...(...)``."""

    dollar: int
    function: str  # NORMAL, FILENAME, or one of SPECIAL_FUNCTIONS
    flags: str  # the letters after $F for FILENAME, else ""
    body_start: int
    colon: int  # index of the default's ':' for NORMAL/ENV, else -1
    end: int  # one past the closing ')'

    def body(self, text: str) -> str:
        return text[self.body_start : self.end - 1]

    def name(self, text: str) -> str:
        stop = self.colon if self.colon >= 0 else self.end - 1
        return text[self.body_start : stop]

    def default(self, text: str) -> str | None:
        return None if self.colon < 0 else text[self.colon + 1 : self.end - 1]


@functools.lru_cache(maxsize=256)
def _classify(prefix: str) -> tuple[str, str] | None:
    """(function, flags) for the characters between ``$`` and ``(``, or None."""
    if prefix == "":
        return NORMAL, ""
    if prefix.startswith("$"):
        return None
    if prefix[0] == "F" and all((ch.lower() in _FILENAME_FLAGS) for ch in prefix[1:]):
        return FILENAME, prefix[1:]
    if prefix in SPECIAL_FUNCTIONS:
        return prefix, ""
    return None


_NOT_DOLLAR: Callable[[MacroRef, str], bool]  # set below; find_macro tests it inline


def find_macro(
    text: str, start: int = 0, accept: Callable[[MacroRef, str], bool] | None = None
) -> MacroRef | None:
    """The first acceptable reference at or after ``start``; ``accept`` may veto candidates."""
    pos = start
    search = _CANDIDATE.search
    id_body = _ID_BODY.match
    skip_dollar = accept is _NOT_DOLLAR
    if skip_dollar:
        accept = None
    while True:
        found = search(text, pos)
        if found is None:
            return None
        dollar = found.start()
        cursor = found.end() - 1
        prefix = found.group(1)
        if prefix:
            kind = _classify(prefix)
            if kind is None:
                pos = cursor
                continue
            function, flags = kind
        else:
            function = flags = NORMAL
        body_start = cursor + 1
        if function == NORMAL or function == "ENV":
            body = id_body(text, body_start)
            if body is None:
                pos = body_start
                continue
            close = body.end() - 1
            colon = text.find(":", body_start, close)
            if (
                skip_dollar
                and function == NORMAL
                and close - body_start == 6
                and text[body_start:close].upper() == "DOLLAR"
            ):
                pos = close
                continue
        else:
            close = text.find(")", body_start)
            colon = -1
            if close < 0:
                pos = body_start
                continue
        ref = MacroRef(dollar, function, flags, body_start, colon, close + 1)
        if accept is not None and not accept(ref, text):
            pos = close
            continue
        return ref


def _is_dollar(ref: MacroRef, text: str) -> bool:
    return ref.function == NORMAL and text[ref.body_start : ref.end - 1].upper() == "DOLLAR"


def _not_dollar(ref: MacroRef, text: str) -> bool:
    return not _is_dollar(ref, text)


_NOT_DOLLAR = _not_dollar


def replace_dollar(text: str) -> str:
    """Turn every ``$(DOLLAR)`` into ``$`` (after all other expansion is done)."""
    if "$" not in text:
        return text
    out = []
    pos = 0
    while True:
        ref = find_macro(text, pos, _is_dollar)
        if ref is None:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos : ref.dollar])
        out.append("$")
        pos = ref.end


#: What serves ``$RANDOM_*``: a generator, or one seeded on first use.
RandomSource = random.Random | LazyRandom


@dataclass
class Region:
    """A stretch of expanded text and the chain of names that produced it."""

    start: int
    end: int
    chain: tuple[str, ...]


@dataclass
class Expander:
    """Expands references against a lookup function.

    ``lookup(name)`` returns the raw (unexpanded) value of a name in the reading
    context, the table default included, or None when nothing defines it. ``environ``
    serves ``$ENV``; ``rng`` serves ``$RANDOM_*``; ``where`` names the definition being
    expanded, for error messages (source, line); ``clock`` is the time ``$INT``, ``$REAL``,
    ``$STRING`` and ``$EVAL`` evaluate at (None: an expression that reads the time is an
    error).
    """

    lookup: Callable[[str], str | None]
    environ: Mapping[str, str]
    rng: RandomSource = field(default_factory=LazyRandom)
    where: tuple[str, int] = ("", 0)
    cwd: str = ""
    #: Settled expansions by upper-cased name; only for a configuration that no longer
    #: changes (lookups after reading), never while reading.
    memo: dict[str, str] | None = None
    random_draws: int = 0
    clock: Callable[[], float] | None = None

    def fail(self, message: str) -> ConfigExpansionError:
        return ConfigExpansionError(message, self.where[0], self.where[1])

    def expand(self, text: str, chain: tuple[str, ...] = ()) -> str:
        """Fully expand ``text``; ``chain`` lists the names already being expanded."""
        if "$" not in text:
            return text
        return replace_dollar(self._expand_refs(text, chain))

    def _expand_refs(self, text: str, chain: tuple[str, ...]) -> str:
        """The main loop of :meth:`expand`, without the final ``$(DOLLAR)`` pass."""
        regions: list[Region] = []
        memo = self.memo
        start = 0
        while True:
            ref = find_macro(text, start, _not_dollar)
            if ref is None:
                return text
            # Expansion rescans from the start (a replacement can complete a reference
            # that began earlier), but only a '$' can begin one: skip a clean prefix.
            start = ref.dollar if text.find("$", 0, ref.dollar) < 0 else 0
            here = chain
            for region in regions:
                if region.start <= ref.dollar < region.end and len(region.chain) > len(here):
                    here = region.chain
            produced_by: str | None = None
            if ref.function == NORMAL:
                name = ref.name(text)
                key = name.upper()
                if key in here:
                    cycle = " -> ".join([*here[here.index(key) :], key])
                    raise ConfigRecursionError(
                        f"macro {name} refers back to itself ({cycle})", *self.where
                    )
                default = ref.default(text)
                cached = memo.get(key) if memo is not None and default is None else None
                if cached is not None:
                    replacement = cached
                else:
                    value = self.lookup(name)
                    if default is not None and not value:
                        value = default
                    replacement = value or ""
                    produced_by = key
                    if memo is not None and default is None and "$" in replacement:
                        settled = self._settle(replacement, (*here, key))
                        if settled is not None:
                            memo[key] = settled
                            replacement = settled
                            produced_by = None
                    elif memo is not None and default is None:
                        memo[key] = replacement
                        produced_by = None
            else:
                from htcpool.config.functions import evaluate_function

                replacement = evaluate_function(self, ref, text, here)
            delta = len(replacement) - (ref.end - ref.dollar)
            text = text[: ref.dollar] + replacement + text[ref.end :]
            if len(text) > MAX_EXPANSION:
                raise self.fail("macro expansion grows without bound")
            if regions:
                regions = _shift_regions(regions, ref.dollar, ref.end, delta)
            new_chain = here if produced_by is None else (*here, produced_by)
            if replacement and new_chain and "$" in replacement:
                regions.append(Region(ref.dollar, ref.dollar + len(replacement), new_chain))

    def _settle(self, raw: str, chain: tuple[str, ...]) -> str | None:
        """Expand a macro's value on its own when that is safe to reuse, else None.

        Substituting the value's own expansion is the same as substituting the raw
        value and rescanning, provided that expansion left no ``$`` behind (nothing in
        it can combine with the text around it) and drew no random numbers.
        """
        before = self.random_draws
        settled = self._expand_refs(raw, chain)
        if "$" in settled or self.random_draws != before:
            return None
        return settled

    def expand_self(self, text: str, names: tuple[str, ...]) -> str:
        """Expand only references to ``names`` (a definition's own name), right now."""
        if "$" not in text:
            return text
        if _self_ref_pattern(names).search(text) is None:
            return text
        wanted = {n.upper() for n in names}

        def is_self(ref: MacroRef, body_text: str) -> bool:
            function = ref.function
            if function == NORMAL:
                stop = ref.colon if ref.colon >= 0 else ref.end - 1
                return body_text[ref.body_start : stop].upper() in wanted
            if function != FILENAME:
                return False
            body = body_text[ref.body_start : ref.end - 1]
            cut = body.find(":")
            return (body if cut < 0 else body[:cut]).upper() in wanted

        for _ in range(10_000):
            ref = find_macro(text, 0, is_self)
            if ref is None:
                return text
            if ref.function == NORMAL:
                value = self.lookup(ref.name(text))
                default = ref.default(text)
                if default is not None and not value:
                    value = default
                replacement = value or ""
            else:
                from htcpool.config.functions import evaluate_function

                replacement = evaluate_function(self, ref, text, ())
            text = text[: ref.dollar] + replacement + text[ref.end :]
        raise self.fail(f"self reference to {names[0]} does not settle")


@functools.lru_cache(maxsize=4096)
def _self_ref_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """Finds every text that may hold ``$(NAME...)`` or ``$F...(NAME...)`` for ``names``.

    A filter only: a match still goes through :func:`find_macro`; no match means the
    text has no reference to any of ``names``.
    """
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"\$(?:F[A-Za-z]*)?\((?:{alternatives})[:)]", re.IGNORECASE)


def _shift_regions(regions: list[Region], start: int, end: int, delta: int) -> list[Region]:
    out = []
    for region in regions:
        if region.end <= start:
            out.append(region)
        elif region.start >= end:
            out.append(Region(region.start + delta, region.end + delta, region.chain))
        else:
            new_start = min(region.start, start)
            new_end = region.end + delta if region.end >= end else end + delta
            if new_end > new_start:
                out.append(Region(new_start, new_end, region.chain))
    return out


@functools.lru_cache(maxsize=512)
def expand_meta_args(text: str, args: str) -> str:
    """Substitute a metaknob's ``$(N)``, ``$(N?)``, ``$(N#)``, ``$(N+)``, ``$(N:default)``."""
    pieces = args.split(",") if args else []
    while True:
        ref = _find_meta_arg(text)
        if ref is None:
            return text
        dollar, end, body = ref
        digits = 0
        while digits < len(body) and body[digits].isdigit():
            digits += 1
        index = int(body[:digits])
        rest = body[digits:]
        empty_check = rest.startswith("?")
        many = rest.startswith("#") or rest.startswith("+")
        if empty_check or many:
            rest = rest[1:]
        default = rest[1:] if rest.startswith(":") else None
        if index <= 0:
            value = str(len(pieces)) if many else args
        elif many:
            value = ",".join(pieces[index - 1 :]) if index - 1 < len(pieces) else ""
            if not value and default is not None:
                value = default
        elif index - 1 < len(pieces):
            value = pieces[index - 1]
        else:
            value = default or ""
        value = value.strip(" \t\n\r\f\v")
        if empty_check:
            value = "1" if value else "0"
        text = text[:dollar] + value + text[end:]


def _find_meta_arg(text: str) -> tuple[int, int, str] | None:
    """The first ``$(<digits>...)`` reference: (dollar, end, body)."""
    pos = 0
    while True:
        dollar = text.find("$(", pos)
        if dollar < 0:
            return None
        body_start = dollar + 2
        cursor = body_start
        colon = False
        valid = cursor < len(text) and text[cursor].isdigit()
        while valid and cursor < len(text) and text[cursor] != ")":
            ch = text[cursor]
            cursor += 1
            if ch == ":" and not colon:
                colon = True
                continue
            if colon:
                if ch == "(":
                    close = text.find(")", cursor)
                    if close >= 0:
                        cursor = close + 1
                continue
            if not (ch.isdigit() or ch in "?#+"):
                valid = False
        if valid and cursor < len(text) and text[cursor] == ")":
            return dollar, cursor + 1, text[body_start:cursor]
        pos = body_start
