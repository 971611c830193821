"""``if`` / ``elif`` / ``else`` / ``endif``: the stack of open blocks and the conditions.

A condition is macro-expanded first when it holds a ``$`` (an expansion that comes out
empty is false), may start with ``!`` to negate, and must then be one of: a number
(true when non-zero), ``true``/``false`` (also ``yes``/``no``/``t``/``f``),
``defined NAME`` (true when NAME has a non-empty value), ``defined use CATEGORY[:NAME]``,
or ``version [op] X.Y[.Z]``. A bare name is an error. A complex condition — a
comparison, an expression with operators — is an error as it is in HTCondor's daemon
configuration, unless the caller passes an ``evaluate_complex`` callback (condor_submit
evaluates such conditions as ClassAd expressions; :mod:`htcpool.submit` passes one). The character classification that tells
these forms apart follows HTCondor's ``Characterize_config_if_expression``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from htcpool.config.table import metaknob, metaknob_templates

#: The HTCondor version this reader answers ``if version`` with.
CONDOR_VERSION = (25, 14, 1)
MAX_IF_DEPTH = 63

EMPTY, NUMBER, BOOL, IDENTIFIER, MACRO, VERSION, IFDEF, COMPLEX = range(8)
_SPACE = " \t\n\r\f\v"

_S, _D, _A, _I, _C, _SUM, _L, _G, _M, _COLON, _O, _F, _MAC = (
    0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80, 0x100, 0x200, 0x400, 0x1000, 0x2000,
)


class ConditionError(ValueError):
    """An ``if``/``elif`` condition that is not valid; the text says why."""


def _matches_word(text: str, word: str, alone: bool = True) -> bool:
    text = text.lstrip(_SPACE)
    if text[: len(word)].lower() != word:
        return False
    rest = text[len(word) :]
    if alone:
        return rest.strip(_SPACE) == ""
    return not (rest[:1].isalnum())


@functools.lru_cache(maxsize=1024)
def characterize(expr: str, keyword_check: bool) -> int:
    """Which of the condition forms ``expr`` looks like."""
    text = expr.lstrip(_SPACE)
    if not text:
        return EMPTY
    begin = text
    if text[0] == "-":
        text = text[1:]
    seen = 0
    for i, ch in enumerate(text):
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if "0" <= ch <= "9":
            seen |= _D
        elif ch == ".":
            seen |= _F if (seen == _D or nxt == "" or nxt.isdigit()) else _I
        elif ch in "eE":
            seen |= _F if (seen & ~_F) == _D else _A
        elif ch in "+-":
            if seen != (_D | _F):
                seen |= _SUM
        elif ch.isascii() and ch.isalpha():
            seen |= _A
        elif ch in "_/":
            seen |= _I
        elif ch in "<=>":
            seen |= _C
        elif ch == "!" and nxt == "=":
            seen |= _C
        elif ch == "$":
            seen |= _M | (_MAC if nxt == "(" else 0)
        elif ch in _SPACE:
            if nxt and nxt not in _SPACE:
                seen |= _S
        elif ch in "&|":
            seen |= _L
        elif ch in "{|}()[]":
            seen |= _G
        elif ch == ":":
            seen |= _COLON
        else:
            seen |= _O
    if seen == 0:
        return EMPTY
    if seen in (_D, _D | _F):
        return NUMBER
    if seen == _A:
        if _matches_word(expr, "false") or _matches_word(expr, "true"):
            return BOOL
        if keyword_check and _matches_word(begin, "version"):
            return VERSION
        if keyword_check and _matches_word(begin, "defined"):
            return IFDEF
        return IDENTIFIER
    if seen in (_A | _D, _A | _D | _F, _A | _I, _A | _I | _D, _A | _I | _D | _F):
        return IDENTIFIER
    if seen in (_A | _S | _C | _D, _A | _S | _C | _D | _F):
        if keyword_check and _matches_word(begin, "version", alone=False):
            return VERSION
        return COMPLEX
    if seen in (
        _A | _S, _A | _S | _COLON, _A | _S | _I, _A | _S | _I | _COLON, _A | _S | _D,
        _A | _S | _D | _I, _A | _S | _D | _F, _A | _S | _D | _I | _F,
    ):
        if keyword_check and _matches_word(begin, "defined", alone=False):
            return IFDEF
        return COMPLEX
    if seen & _MAC and not seen & ~(_M | _I | _A | _D | _MAC | _COLON):
        return MACRO
    return COMPLEX


def _crufty_bool(text: str) -> bool | None:
    if _matches_word(text, "yes") or _matches_word(text, "t"):
        return True
    if _matches_word(text, "no") or _matches_word(text, "f"):
        return False
    return None


_VERSION_NUMBERS = re.compile(r"[vV]?(\d+)\.(\d+)(?:\.(\d+))?")


def _version_test(text: str) -> bool:
    rest = text.lstrip(_SPACE)[7:].lstrip(_SPACE)
    negated = rest.startswith("!")
    if negated:
        rest = rest[1:]
    op = 0
    or_equal = False
    if rest[:1] in ("<", "=", ">"):
        op = "<=>".index(rest[0]) - 1
        rest = rest[1:]
    if rest.startswith("="):
        or_equal = True
        rest = rest[1:]
    match = _VERSION_NUMBERS.match(rest.lstrip(_SPACE))
    if match is None or int(match.group(1)) < 6:
        raise ConditionError("the version literal is invalid")
    theirs = (
        int(match.group(1)),
        int(match.group(2)),
        int(match.group(3)) if match.group(3) is not None else CONDOR_VERSION[2],
    )
    diff = (CONDOR_VERSION > theirs) - (CONDOR_VERSION < theirs)
    result = diff == op or (or_equal and diff == 0)
    return not result if negated else result


#: Decides a complex condition (already expanded, ``!`` removed); raises ConditionError
#: with the reason when the condition cannot be decided.
ComplexEvaluator = Callable[[str], bool]


def evaluate_condition(
    expr: str,
    expand: Callable[[str], str],
    lookup: Callable[[str], str | None],
    evaluate_complex: ComplexEvaluator | None = None,
) -> bool:
    """Truth of an ``if`` condition; raise :class:`ConditionError` when it is not valid.

    ``evaluate_complex`` decides conditions of the complex form; without it they are
    an error ("complex conditionals are not supported").
    """
    expanded = False
    if "$" in expr:
        expr = expand(expr).rstrip(_SPACE)
        expanded = True
    expr = expr.lstrip(_SPACE)
    inverted = expr.startswith("!")
    if inverted:
        expr = expr[1:].lstrip(_SPACE)
    if expanded and not expr:
        value = False
    else:
        value = _evaluate(expr, lookup, evaluate_complex)
    return not value if inverted else value


def _evaluate(
    expr: str, lookup: Callable[[str], str | None], evaluate_complex: ComplexEvaluator | None
) -> bool:
    kind = characterize(expr, True)
    if kind == NUMBER:
        try:
            return float(expr.strip(_SPACE)) != 0
        except ValueError:
            return False
    if kind == BOOL:
        return _matches_word(expr, "true")
    if kind == IDENTIFIER:
        crufty = _crufty_bool(expr)
        if crufty is not None:
            return crufty
    if kind == VERSION:
        return _version_test(expr)
    if kind == IFDEF:
        return _defined_test(expr.lstrip(_SPACE)[7:].lstrip(_SPACE), lookup)
    if kind == COMPLEX:
        if evaluate_complex is not None:
            return evaluate_complex(expr)
        raise ConditionError("complex conditionals are not supported")
    raise ConditionError("expression is not a conditional")


def _defined_test(name: str, lookup: Callable[[str], str | None]) -> bool:
    if not name:
        return False
    kind = characterize(name, False)
    if kind == IDENTIFIER:
        value = lookup(name)
        if value is None and _crufty_bool(name) is not None:
            return True
        return bool(value)
    if kind in (NUMBER, BOOL):
        return True
    if name[:4].lower() == "use ":
        target = name[4:].lstrip(_SPACE)
        category, colon, template = target.partition(":")
        found = metaknob_templates(category) is not None
        if found and colon and template:
            found = metaknob(category, template) is not None
        if any(ch in target for ch in " \t\r"):
            raise ConditionError("defined use meta argument with internal spaces will never match")
        return found
    raise ConditionError("defined argument must be param name, boolean, or number")


@dataclass
class _Block:
    active: bool
    taken: bool
    seen_else: bool = False


class IfStack:
    """Open ``if`` blocks of one file or template; tells whether a line is in effect.

    ``evaluate_complex`` is passed on to :func:`evaluate_condition` for every condition.
    """

    def __init__(self, evaluate_complex: ComplexEvaluator | None = None) -> None:
        self._blocks: list[_Block] = []
        self._enabled = True
        self._evaluate_complex = evaluate_complex

    def enabled(self) -> bool:
        return self._enabled

    def _update(self) -> None:
        self._enabled = all(block.active for block in self._blocks)

    def inside_if(self) -> bool:
        return bool(self._blocks)

    def handle(
        self,
        line: str,
        expand: Callable[[str], str],
        lookup: Callable[[str], str | None],
    ) -> bool:
        """Apply ``line`` if it is an if/elif/else/endif (True), else return False.

        Raises :class:`ConditionError` with HTCondor's wording on a misplaced keyword
        or an invalid condition.
        """
        if line[:1] not in ("i", "I", "e", "E"):
            return False
        word = line[:5].lower()
        if word[:2] == "if" and (len(line) == 2 or line[2] in _SPACE):
            expr = line[2:].lstrip(_SPACE)
            active = self.enabled()
            if active:
                try:
                    active = evaluate_condition(expr, expand, lookup, self._evaluate_complex)
                except ConditionError as exc:
                    raise ConditionError(f"{expr} is not a valid if condition because {exc}") from None
            if len(self._blocks) >= MAX_IF_DEPTH:
                raise ConditionError("if nesting too deep!")
            self._blocks.append(_Block(active, active))
            self._update()
            return True
        if word[:4] == "else" and (len(line) == 4 or line[4] in _SPACE):
            if not self._blocks or self._blocks[-1].seen_else:
                raise ConditionError(
                    "else is not allowed after else" if self._blocks else "else without matching if"
                )
            block = self._blocks[-1]
            block.seen_else = True
            block.active = not block.taken
            block.taken = True
            self._update()
            return True
        if word[:4] == "elif" and (len(line) == 4 or line[4] in _SPACE):
            if not self._blocks or self._blocks[-1].seen_else:
                raise ConditionError(
                    "elif is not allowed after else" if self._blocks else "elif without matching if"
                )
            block = self._blocks[-1]
            outer = all(b.active for b in self._blocks[:-1])
            active = False
            if not block.taken and outer:
                expr = line[4:].lstrip(_SPACE)
                try:
                    active = evaluate_condition(expr, expand, lookup, self._evaluate_complex)
                except ConditionError as exc:
                    raise ConditionError(f"{expr} is not a valid elif condition because {exc}") from None
            block.active = active and not block.taken
            block.taken = block.taken or active
            self._update()
            return True
        if word == "endif" and (len(line) == 5 or line[5] in _SPACE):
            if not self._blocks:
                raise ConditionError("endif without matching if")
            self._blocks.pop()
            self._update()
            return True
        return False
