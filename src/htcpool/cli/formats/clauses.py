"""A job's Requirements taken apart into numbered clauses, as ``-better-analyze`` shows them.

Splitting (``split_clauses``). The tree is walked left to right, children
before parents, and a node gets the next step number when it is

* a logical ``&&``, ``||``, ``!`` or ``?:``: its step reads ``[0] && [1]``;
* a comparison (``==``, ``<``, ``=?=`` …): its step reads as the comparison;
* any other node that is an operand of a logical operator or of parentheses
  (an attribute such as ``TARGET.HasFileTransfer``, a function call such as
  ``versionGE(...)``, a literal): its step reads as the node.

Parentheses take no step; they pass on the step of what they enclose. The
operands of comparisons and arithmetic are not split further, except what
sits inside parentheses there. HTCondor folds
``!x`` into the step of ``x``; here ``!`` keeps a step of its own, so a
negated condition is not counted as the condition (a defect not copied).

Constants. A clause that refers to nothing of the slot (no ``TARGET.``
reference and no name the job lacks) is constant: true or false for every
slot. Constant operands settle their operators the usual way (``false &&
x`` is false …); a clause decided by one operand takes that operand's step
("effective"), and the operand that no longer matters is marked irrelevant,
with all its sub-clauses. Clauses that use ``CurrentTime`` or ``time()`` are
"variable": still constant for one analysis, but never used to prune.

Counting (``count_matches``). Each remaining clause is evaluated with the job
as MY and each slot as TARGET, in step order, and counts the slots where it
is true. An ``&&`` whose count equals one operand's count takes that operand's
step; an ``||`` one of whose operands matches every slot (or whose other
operand matches none) takes that operand's step and makes the other
irrelevant. The table (``reduced_rows``) lists the clauses left: neither
replaced by another step nor irrelevant.

Wrapping (``wrap_expression``) breaks the one-line text of an expression at
the blank after a ``&&`` or ``||`` once a line reaches the width, indenting
the new line by 4 plus 2 for each parenthesis open at the break.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from htcpool.classad import ClassAd, EvalContext, ExprTree
from htcpool.classad.errors import ClassAdError
from htcpool.classad.nodes import (
    AttrRef,
    BinaryOp,
    FnCall,
    Node,
    Paren,
    Ternary,
    UnaryOp,
)
from htcpool.classad.unparse import unparse

COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">=", "=?=", "=!="})
LOGICAL = frozenset({"&&", "||"})

NOT_CONSTANT = 2  # the "hard value" of a clause that depends on the slot

# how an operand shows in a logical step: false, true, not constant; upper case when fixed,
# lower case when it depends on the clock
_MARKS = {(0, False): "F", (1, False): "T", (0, True): "f", (1, True): "t"}


@dataclass(slots=True)
class Clause:
    """One numbered step of the analysis."""

    node: Node
    logic: str | None = None  # "&&", "||", "!", "?:" or None for a plain condition
    left: int = -1
    right: int = -1
    grip: int = -1  # the else branch of ?:
    variable: bool = False  # depends on the clock
    constant: bool = False
    hard: int = NOT_CONSTANT  # 0 or 1 when constant
    effective: int = -1  # the step this clause reduces to
    irrelevant: bool = False
    matches: int = 0
    marked_label: str | None = None  # label with the operands' constant marks

    def plain_label(self) -> str:
        if self.logic == "!":
            return f"! [{self.left}]"
        if self.logic == "?:":
            return f"[{self.left}] ? [{self.right}] : [{self.grip}]"
        if self.logic is not None:
            return f"[{self.left}] {self.logic} [{self.right}]"
        return unparse(self.node)

    def label(self) -> str:
        return self.marked_label if self.marked_label is not None else self.plain_label()


# ---------------------------------------------------------------- splitting


def _uses_clock(node: Node) -> bool:
    if isinstance(node, AttrRef) and node.base is None and node.key == "currenttime":
        return True
    if isinstance(node, FnCall) and node.name.lower() == "time" and not node.args:
        return True
    return any(_uses_clock(child) for child in node.children())


def _operands(node: Node) -> tuple[Node, ...]:
    """The parts the walk descends into (function arguments are not split)."""
    if isinstance(node, FnCall):
        return ()
    if isinstance(node, Ternary) and node.then is None:
        return (node.cond, node.orelse)
    return node.children()


def split_clauses(expr: Node) -> list[Clause]:
    """The numbered clauses of ``expr``; the last one is the whole expression."""
    clauses: list[Clause] = []

    def walk(node: Node, store: bool) -> int:
        logic: str | None = None
        if isinstance(node, BinaryOp) and node.op in LOGICAL:
            logic = node.op
        elif isinstance(node, UnaryOp) and node.op == "!":
            logic = "!"
        elif isinstance(node, Ternary) and node.then is not None:
            logic = "?:"
        comparison = isinstance(node, BinaryOp) and node.op in COMPARISONS
        paren = isinstance(node, Paren)
        children = _operands(node)
        indices = [walk(child, logic is not None or paren) for child in children]
        if paren:
            return indices[0]
        if logic is None and not comparison:
            if not store:
                return indices[0] if len(indices) == 1 else -1
            if len(indices) == 1 and indices[0] >= 0 and not isinstance(node, AttrRef):
                return indices[0]
        clause = Clause(node, logic, variable=_uses_clock(node))
        if logic is not None:
            clause.left = indices[0]
            clause.right = indices[1] if len(indices) > 1 else -1
            clause.grip = indices[2] if len(indices) > 2 else -1
        clauses.append(clause)
        return len(clauses) - 1

    walk(expr, True)
    return clauses


def numbered_lines(clauses: Sequence[Clause]) -> list[str]:
    """``    [3]    : TARGET.Disk >= RequestDisk`` for every step."""
    return ["    " + f"[{i}]".ljust(7)[:7] + ": " + c.plain_label() for i, c in enumerate(clauses)]


# ---------------------------------------------------------------- evaluation


def _evaluate(node: Node, job: ClassAd, slot: ClassAd | None, context: EvalContext) -> object:
    try:
        return ExprTree(unparse(node)).evaluate(job, slot, context)
    except ClassAdError:
        return None


def _is_true(node: Node, job: ClassAd, slot: ClassAd | None, context: EvalContext) -> bool:
    return _evaluate(node, job, slot, context) is True


def find_constants(
    clauses: list[Clause], job: ClassAd, slot_refs: Sequence[Collection[str]], context: EvalContext
) -> None:
    """Mark the clauses that refer to nothing of the slot, and their value for this job.

    ``slot_refs[i]`` holds the slot attributes clause ``i`` refers to; ``context`` carries
    the clock the analysis runs at."""
    for clause, refs in zip(clauses, slot_refs, strict=True):
        if not refs:
            clause.constant = True
            clause.hard = 1 if _is_true(clause.node, job, None, context) else 0


def _mark_irrelevant(clauses: list[Clause], index: int) -> None:
    if index < 0:
        return
    clause = clauses[index]
    clause.irrelevant = True
    for child in (clause.left, clause.right, clause.grip):
        _mark_irrelevant(clauses, child)


def _state(clauses: Sequence[Clause], index: int) -> tuple[int, bool]:
    if index < 0 or not clauses[index].constant:
        return NOT_CONSTANT, False
    return clauses[index].hard, clauses[index].variable


def _mark(hard: int, soft: bool) -> str:
    return _MARKS.get((hard, soft), "")


def propagate_constants(clauses: list[Clause]) -> None:
    """Settle logical steps with constant operands and point them at the step that decides them."""
    for c in clauses:
        if c.logic is None:
            continue
        hl, sl = _state(clauses, c.left)
        hr, sr = _state(clauses, c.right)
        hg, sg = _state(clauses, c.grip)
        effective, irrelevant, soft_irrelevant = -1, -1, False
        if c.logic == "!":
            if hl != NOT_CONSTANT:
                c.constant, c.hard, c.variable = True, 1 - hl, sl
            c.marked_label = f"! [{c.left}]{_mark(hl, sl)}"
        elif c.logic == "||":
            if hl == 1 or hr == 1:
                c.constant, c.hard, c.variable = True, 1, sl and sr
                if hl == 1:
                    effective, irrelevant = c.left, c.right
                    soft_irrelevant = sl and (hr != 0 or sr)
                else:
                    effective, irrelevant = c.right, c.left
                    soft_irrelevant = sr and (hl != 0 or sl)
            elif hl == 0 and hr == 0:
                c.constant, c.hard, c.variable = True, 0, sl or sr
            elif hl == 0:
                effective, irrelevant, soft_irrelevant = c.right, c.left, sl
            elif hr == 0:
                effective, irrelevant, soft_irrelevant = c.left, c.right, sr
            c.marked_label = f"[{c.left}]{_mark(hl, sl)} || [{c.right}]{_mark(hr, sr)}"
        elif c.logic == "&&":
            if hl == 0 or hr == 0:
                c.constant, c.hard, c.variable = True, 0, sl or sr
                if hl == 0:
                    effective, irrelevant, soft_irrelevant = c.left, c.right, sl
                else:
                    effective, irrelevant, soft_irrelevant = c.right, c.left, sr
            elif hl == 1 and hr == 1:
                c.constant, c.hard, c.variable = True, 1, sl or sr
            elif hl == 1:
                effective = c.right
            elif hr == 1:
                effective = c.left
            c.marked_label = f"[{c.left}]{_mark(hl, sl)} && [{c.right}]{_mark(hr, sr)}"
        else:  # ?:
            if hl in (0, 1):
                effective = c.right if hl else c.grip
                if effective >= 0 and clauses[effective].constant:
                    c.constant, c.variable = True, sl
                    c.hard = clauses[effective].hard
                irrelevant = c.grip if hl else c.right
                soft_irrelevant = sl
            marks = (_mark(hl, sl), _mark(hr, sr), _mark(hg, sg))
            c.marked_label = "[%d]%s ? [%d]%s : [%d]%s" % (
                c.left,
                marks[0],
                c.right,
                marks[1],
                c.grip,
                marks[2],
            )
        if effective >= 0:
            if irrelevant < 0:
                irrelevant = c.right if effective == c.left else c.left
                soft_irrelevant = soft_irrelevant or c.variable
            while clauses[effective].effective >= 0:
                effective = clauses[effective].effective
            c.effective = effective
        if irrelevant >= 0 and not soft_irrelevant:
            _mark_irrelevant(clauses, irrelevant)
    # operands that reduce to another step are shown as that step
    for c in clauses:
        changed = False
        for name in ("left", "right", "grip"):
            j = getattr(c, name)
            if j >= 0 and clauses[j].effective >= 0:
                setattr(c, name, clauses[j].effective)
                changed = True
        if changed:
            c.marked_label = None


def _chase(clauses: Sequence[Clause], index: int) -> int:
    while clauses[index].effective >= 0:
        index = clauses[index].effective
    return index


def count_matches(clauses: list[Clause], job: ClassAd, slots: Sequence[ClassAd], context: EvalContext) -> None:
    """Count, clause by clause, the slots each clause is true for, pruning as it goes."""
    everyone = len(slots)
    for c in clauses:
        if c.effective >= 0 or c.irrelevant or c.constant:
            continue
        logical_pair = c.logic in LOGICAL and c.left >= 0 and c.right >= 0
        if logical_pair:
            left, right = clauses[c.left], clauses[c.right]
            effective, prune = -1, -1
            if c.logic == "&&":
                if left.matches == 0:
                    effective = c.left
                elif right.matches == 0:
                    effective = c.right
            elif left.matches == everyone:
                effective, prune = c.left, c.right
            elif right.matches == everyone:
                effective, prune = c.right, c.left
            elif left.matches == 0 and right.matches != 0:
                effective, prune = c.right, c.left
            elif left.matches != 0 and right.matches == 0:
                effective, prune = c.left, c.right
            if prune >= 0:
                _mark_irrelevant(clauses, prune)
            if effective >= 0:
                c.effective = _chase(clauses, effective)
        c.matches = sum(1 for slot in slots if _is_true(c.node, job, slot, context))
        if logical_pair and c.logic == "&&":
            left, right = clauses[c.left], clauses[c.right]
            if left.matches == c.matches:
                c.effective = _chase(clauses, c.left)
                if right.matches > c.matches:
                    right.irrelevant = True
            elif right.matches == c.matches:
                c.effective = _chase(clauses, c.right)
                if left.matches > c.matches:
                    left.irrelevant = True


def reduced_rows(clauses: Sequence[Clause]) -> list[str]:
    """The lines of the ``Step Matched Condition`` table (without its headings)."""
    rows = []
    for i, c in enumerate(clauses):
        if c.effective >= 0 or c.irrelevant:
            continue
        step = f"[{i}]".ljust(5)[:5]
        if c.constant:
            word = (
                ("always" if c.hard else "never")
                if not c.variable
                else ("now" if c.hard else "not now")
            )
            rows.append("%s %9s  %s" % (step, word, c.label()))
        else:
            rows.append("%s %9d  %s" % (step, c.matches, c.label()))
    return rows


# ---------------------------------------------------------------- wrapping


def wrap_expression(text: str, indent: int = 4, width: int = 80) -> str:
    """``text`` broken into lines of about ``width`` columns after ``&&``/``||``.

    The first line is assumed to start at column ``indent`` already; later lines
    get their indentation inserted."""
    if indent > width:
        indent = width * 2 // 3
    out = list(text)
    line_start = 0
    last_break = 0  # index of the blank after the last && or ||; == line_start when none
    break_indent = indent
    level = indent
    pos = indent
    prev = ""
    after_op = False
    i = 0
    while i < len(out):
        ch = out[i]
        is_op = ch in "&|" and prev == ch
        if not is_op:
            if ch == "(":
                level += 2
            elif ch == ")":
                level -= 2
        if pos >= width and last_break != line_start:
            out[last_break] = "\n"
            pad = [" "] * max(0, break_indent)
            out[last_break + 1 : last_break + 1] = pad
            i += len(pad)
            line_start = last_break = last_break + 1
            pos = i - line_start if pad else 0  # HTCondor restarts the count at 0 when no indent
            break_indent = level
        if after_op:
            last_break = i
            break_indent = level
        prev = ch
        i += 1
        pos += 1
        after_op = is_op
    return "".join(out)
