"""Job transforms (``JOB_TRANSFORM_NAMES``/``JOB_TRANSFORM_<N>``) applied to new job ads.

A transform body is read once (``Transform.parse``) into statements with line
numbers and applied to each job (``Transform.apply``). Statements:
``REQUIREMENTS expr`` (the transform applies only when it is true for the job),
``SET``/``DEFAULT``/``EVALSET attr expr``, ``EVALMACRO var expr`` (a temporary
macro), ``COPY``/``RENAME a b``, ``DELETE a``, the ``/regex/`` forms of COPY,
RENAME and DELETE (``\\0``…``\\9`` in the new name), ``NAME``/``UNIVERSE``
(metadata), ``var = value`` temporary macros and ``if``/``elif``/``else``/``endif``.

``TRANSFORM [N] [vars in|from|matching …]`` ends the body. Its arguments take
the forms of the submit ``queue`` statement; ``Transform.iterate`` makes one
transformed copy of an ad per iteration (as condor_transform_ads does), with
the temporary macros ``Iterating`` (true), ``Step``, ``Row``, ``ItemIndex`` and
the loop variables (``Item`` by default) set. The schedd applies a transform
once (``apply``), ignoring the arguments, with ``Iterating`` false.

Each value is macro-expanded first: ``$(MY.Attr)`` is the job attribute's
expression text (nothing when the job has no such attribute); other names are the
transform's macros, then ``lookup`` (the configuration's unexpanded values, given to
``parse`` by the schedd's settings: HTCondor keeps a transform body unexpanded in the
configuration, so its ``$(MY.Attr)`` reach the job). A statement that fails (bad expression) is skipped and noted
in ``TransformResult.errors``; it does not fail the submission. Given a
``Reads``, ``apply`` records every attribute it read or wrote, so the queue
can prove that another job of the cluster would be transformed alike
(``htcpool.schedd.shapes``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from htcpool.classad import ClassAd, EvalContext
from htcpool.classad.classad import to_node
from htcpool.classad.errors import ClassAdError
from htcpool.classad.nodes import Literal, Node
from htcpool.classad.parser import parse_expression
from htcpool.classad.unparse import unparse_old
from htcpool.classad.values import ERROR, UNDEFINED
from htcpool.schedd.shapes import Footprint, reads_of
from htcpool.submit.macros import Expander
from htcpool.submit.queue import parse_queue
from htcpool.submit.world import FileSystemView, MemoryFileSystem

KEYWORDS = frozenset({"name", "requirements", "universe", "set", "default", "evalset", "evalmacro",
                      "copy", "rename", "delete"})
_CONDITIONAL = frozenset({"if", "elif", "else", "endif"})
_PARSED: dict[str, Node] = {}


def parse_cached(text: str) -> Node:
    node = _PARSED.get(text)
    if node is None:
        node = parse_expression(text)
        if len(_PARSED) < 100_000:
            _PARSED[text] = node
    return node


@dataclass(frozen=True, slots=True)
class Statement:
    line: int
    keyword: str
    text: str


@dataclass
class TransformResult:
    applied: bool
    changed: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)


@dataclass
class Reads:
    """What one application of a transform looked at (lower-cased attribute names)."""

    names: set[str] = field(default_factory=set)
    opaque: bool = False
    same_names: bool = False

    def expression(self, node: Node, ad: ClassAd) -> None:
        """Note what evaluating ``node`` in ``ad`` reads, through the ad's current expressions."""
        names, opaque = reads_of(node)
        closed = Footprint.close(names, [ad._exprs], opaque)
        self.names.update(closed.names)
        self.opaque = self.opaque or closed.opaque


def _split_attr(text: str) -> tuple[str, str]:
    """(attribute, value) with an optional ``=`` or ``,`` between them."""
    match = re.match(r"^\s*(\S+?)\s*(?:[=,]\s*|\s+|$)(.*)$", text, re.S)
    if not match:
        return text.strip(), ""
    return match.group(1).rstrip("=,"), match.group(2).strip()


@dataclass
class Transform:
    name: str
    statements: list[Statement]
    iteration: str = ""
    #: the configuration's unexpanded values, for ``$(NAME)`` the transform does not define
    lookup: Callable[[str], str | None] | None = field(default=None, repr=False, compare=False)
    # one expander per transform, pointed at each job in turn (seeding a generator per
    # job would cost more than the transform)
    _expander: Expander | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, name: str, body: str, lookup: Callable[[str], str | None] | None = None) -> Transform:
        if body.lstrip().startswith("["):
            raise ValueError(f"JOB_TRANSFORM_{name}: the old ClassAd form of transforms is no longer supported")
        statements: list[Statement] = []
        pending = ""
        lines = body.splitlines()
        for number, raw in enumerate(lines, 1):
            line = (pending + raw.strip()) if pending else raw.strip()
            if line.endswith("\\"):
                pending = line[:-1]
                continue
            pending = ""
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            low = word.lower()
            if low == "transform":
                return cls(name, statements, _iteration(rest.strip(), lines[number:]), lookup)
            if low in KEYWORDS or low in _CONDITIONAL:
                statements.append(Statement(number, low, rest.strip()))
            elif "=" in line:
                statements.append(Statement(number, "macro", line))
            else:
                raise ValueError(f"JOB_TRANSFORM_{name}, line {number}: unknown statement '{line}'")
        return cls(name, statements, lookup=lookup)

    def apply(self, ad: ClassAd, context: EvalContext,
              lookup: Callable[[str], str | None] | None = None,
              reads: Reads | None = None, variables: dict[str, str] | None = None) -> TransformResult:
        """Transform ``ad`` in place once; ``variables`` preset temporary macros (lower case);
        ``lookup`` (default: the one given to ``parse``) answers other macro names."""
        config = lookup or self.lookup or _nothing
        macros: dict[str, str] = {"iterating": "false", "isclusterad": "false",
                                  "latematerialization": "false"}
        if variables:
            macros.update(variables)
        seen = reads if reads is not None else Reads()

        def find(name: str) -> str | None:
            if name.lower().startswith("my."):
                seen.names.add(name[3:].lower())
                node = ad._exprs.get(name[3:].lower())
                if isinstance(node, Literal) and isinstance(node.value, str):
                    return node.value  # a plain string expands without its quotes
                return None if node is None else unparse_old(node)
            low = name.lower()
            return macros[low] if low in macros else config(name)

        if self._expander is None:
            self._expander = Expander(find)
        expander = self._expander
        expander.lookup = find
        expander.used_random = False
        result = TransformResult(applied=False)
        try:
            for st in self.statements:
                if st.keyword == "requirements":
                    text = expander.expand(st.text)
                    try:
                        parse_cached(text)
                    except ClassAdError as e:
                        result.errors.append(f"JOB_TRANSFORM_{self.name}, line {st.line}: REQUIREMENTS "
                                             f"'{text}' does not parse ({e}); the transform is not applied")
                        return result
                    if self._evaluate(text, ad, context, seen) is not True:
                        return result
            result.applied = True
            branches: list[tuple[bool, bool]] = []  # (active, taken)
            for st in self.statements:
                kw = st.keyword
                if kw in _CONDITIONAL:
                    self._conditional(st, branches, expander, ad, context, result, seen)
                    continue
                if not all(active for active, _ in branches):
                    continue
                try:
                    self._statement(st, ad, context, expander, macros, result, seen)
                except (ClassAdError, ValueError) as e:
                    result.errors.append(f"JOB_TRANSFORM_{self.name}, line {st.line}: "
                                         f"{st.keyword.upper()} {st.text}: {e}; the statement is skipped")
            return result
        finally:
            seen.opaque = seen.opaque or expander.used_random

    def iterate(self, ad: ClassAd, context: EvalContext,
                lookup: Callable[[str], str | None] = lambda name: None,
                fs: FileSystemView | None = None, cwd: str = "/") -> list[tuple[ClassAd, TransformResult]]:
        """One transformed copy of ``ad`` per iteration of the ``TRANSFORM`` statement.

        A transform without arguments iterates once; one whose REQUIREMENTS do not
        hold gives back the ad unchanged, once; ``TRANSFORM 0`` or an empty item
        list gives nothing. Items ``from`` a file are read through ``fs``.
        """
        trial = ad.copy()
        first = self.apply(trial, context, lookup)
        if not first.applied:
            return [(trial, first)]
        if not self.iteration:
            return [(trial, first)]
        expander = Expander(lookup)
        plan = parse_queue(expander.expand(self.iteration), fs or MemoryFileSystem(), cwd)
        out: list[tuple[ClassAd, TransformResult]] = []
        for row_index, row in enumerate(plan.rows if plan.rows is not None else ((),)):
            for step in range(plan.count):
                variables = {"iterating": "true", "step": str(step), "row": str(row_index),
                             "itemindex": str(row_index)}
                variables.update((name.lower(), value)
                                 for name, value in zip(plan.variables, row, strict=False))
                copy = ad.copy()
                out.append((copy, self.apply(copy, context, lookup, variables=variables)))
        return out

    def _evaluate(self, text: str, ad: ClassAd, context: EvalContext, seen: Reads) -> object:
        try:
            node = parse_cached(text)
            seen.expression(node, ad)
            return ad._evaluate_node(node, None, context)
        except ClassAdError:
            return ERROR

    def _conditional(self, st: Statement, branches: list[tuple[bool, bool]], expander: Expander,
                     ad: ClassAd, context: EvalContext, result: TransformResult, seen: Reads) -> None:
        def test() -> bool:
            text = st.text.strip()
            negate = text.startswith("!")
            text = text.lstrip("!").strip()
            if text.lower().startswith("defined "):
                name = text[8:].strip()
                value = expander.lookup(name) not in (None, "")
            else:
                expanded = expander.expand(text).strip()
                got = self._evaluate(expanded, ad, context, seen) if expanded else False
                value = got is True or (isinstance(got, (int, float)) and not isinstance(got, bool)
                                        and got != 0)
            return value != negate

        if st.keyword == "if":
            enclosing = all(a for a, _ in branches)
            value = enclosing and test()
            branches.append((value, value or not enclosing))
        elif not branches:
            result.errors.append(f"JOB_TRANSFORM_{self.name}, line {st.line}: {st.keyword} without if")
        elif st.keyword == "endif":
            branches.pop()
        elif st.keyword == "else":
            branches[-1] = (not branches[-1][1], True)
        else:
            taken = branches[-1][1]
            value = not taken and test()
            branches[-1] = (value, taken or value)

    def _statement(self, st: Statement, ad: ClassAd, context: EvalContext, expander: Expander,
                   macros: dict[str, str], result: TransformResult, seen: Reads) -> None:
        kw = st.keyword
        if kw in ("name", "universe", "requirements"):
            return
        if kw == "macro":
            name, _, value = st.text.partition("=")
            macros[name.strip().lower()] = expander.expand(value.strip())
            return
        text = expander.expand(st.text)
        if kw in ("copy", "rename", "delete") and text.lstrip().startswith("/"):
            self._regex(kw, text.strip(), ad, result, seen)
            return
        attr, value = _split_attr(text)
        low = attr.lower()
        seen.names.add(low)  # read (DEFAULT, COPY, …) or written: its spelling may stay
        if kw == "set" or (kw == "default" and _absent(ad._exprs.get(low))):
            ad.insert_node(attr, parse_cached(value))
            result.changed.add(low)
        elif kw == "evalset":
            node = parse_cached(value)
            seen.expression(node, ad)
            ad.insert_node(attr, to_node_value(ad._evaluate_node(node, None, context)))
            result.changed.add(low)
        elif kw == "evalmacro":
            node = parse_cached(value)
            seen.expression(node, ad)
            evaluated = ad._evaluate_node(node, None, context)
            macros[low] = evaluated if isinstance(evaluated, str) else unparse_old(to_node_value(evaluated))
        elif kw in ("copy", "rename"):
            source = ad._exprs.get(low)
            if source is None:
                return
            new = value.split()[0] if value else attr
            seen.names.add(new.lower())
            ad.insert_node(new, source)
            result.changed.add(new.lower())
            if kw == "rename":
                del ad[attr]
                result.changed.add(low)
        elif kw == "delete" and low in ad._exprs:
            del ad[attr]
            result.changed.add(low)

    def _regex(self, kw: str, text: str, ad: ClassAd, result: TransformResult, seen: Reads) -> None:
        end = text.find("/", 1)
        if end < 0:
            raise ValueError(f"unterminated regular expression in {text}")
        pattern = re.compile(text[1:end], re.I)
        replacement = text[end + 1:].strip()
        seen.same_names = True
        for low in list(ad._exprs):
            name = ad._names[low]
            match = pattern.search(name)
            if match is None:
                continue
            seen.names.add(low)
            if kw == "delete":
                del ad[name]
                result.changed.add(low)
                continue
            groups = [match.group(0), *[g or "" for g in match.groups()]]
            new = _substitute(replacement, groups)
            seen.names.add(new.lower())
            ad.insert_node(new, ad._exprs[low])
            result.changed.add(new.lower())
            if kw == "rename" and new.lower() != low:
                del ad[name]
                result.changed.add(low)


def _absent(node: Node | None) -> bool:
    """DEFAULT's test: no such attribute, or one set to the literal undefined."""
    return node is None or (isinstance(node, Literal) and node.value is UNDEFINED)


def _nothing(name: str) -> str | None:
    return None


def _iteration(rest: str, following: list[str]) -> str:
    """The arguments of a TRANSFORM statement, a parenthesised item block included."""
    if "(" in rest and ")" not in rest[rest.index("("):]:
        block = [rest]
        for raw in following:
            block.append(raw.strip())
            if raw.strip().endswith(")"):
                break
        else:
            raise ValueError(f"TRANSFORM {rest}: the item list has no closing ')'")
        return "\n".join(block)
    return rest


def _substitute(template: str, groups: list[str]) -> str:
    """``template`` with ``\\0``…``\\9`` replaced by the regex groups (missing ones empty)."""
    return re.sub(r"\\(\d)", lambda m: groups[int(m.group(1))] if int(m.group(1)) < len(groups) else "",
                  template)


def to_node_value(value: object) -> Node:
    """An expression node holding an evaluated value (UNDEFINED and ERROR included)."""
    if value is UNDEFINED:
        return parse_cached("undefined")
    if value is ERROR:
        return parse_cached("error")
    return to_node(value)
