"""Policy expressions: parsed once, evaluated with the slot as MY and the job as TARGET.

Rules:

* Each policy knob (``START``, ``PREEMPT`` …) becomes an attribute of the slot ad,
  parsed once per slot type (``compile_policy``).
* A knob whose text does not parse is replaced by its *safe value* and reported:
  ``START`` becomes ``false`` and then ``IsOwner`` is forced ``true`` (the slot stays
  in Owner and accepts no work); a bad ``IsOwner`` is ``true`` as well; every other knob takes the startd's fallback
  (``settings.POLICY_FALLBACKS``), e.g. ``PREEMPT`` false, ``CONTINUE`` true.
* ``truth()`` reads a value as HTCondor's ``EvalBool`` does: booleans and numbers
  count, UNDEFINED and ERROR are "not true"; ``eval_float()`` reads a number as its
  ``EvalFloat`` does (booleans count as 1 and 0). An ERROR is reported (once until the
  knob evaluates cleanly again) through ``PolicyProblem`` actions.
* ``KILL``, ``PREEMPT``, ``SUSPEND``, ``CONTINUE``, ``WANT_SUSPEND`` and
  ``WANT_VACATE`` first try their ``_VANILLA`` variant for vanilla-universe jobs
  (``JobUniverse == 5``) when that variant is defined and evaluates to a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, as_number
from htcpool.classad.nodes import Node
from htcpool.classad.values import ERROR, UNDEFINED
from htcpool.startd.settings import POLICY_FALLBACKS

SAFE_VALUES: dict[str, str] = {"START": "false", "IsOwner": "true"}
VANILLA_VARIANTS = frozenset({"KILL", "PREEMPT", "SUSPEND", "CONTINUE", "WANT_SUSPEND", "WANT_VACATE"})
VANILLA_UNIVERSE = 5


@dataclass(frozen=True, slots=True)
class CompiledPolicy:
    """Parsed policy attributes for one slot type, and the knobs that failed to parse."""

    nodes: Mapping[str, Node]
    problems: tuple[tuple[str, str], ...] = ()
    texts: Mapping[str, str] = field(default_factory=dict)


def parse(text: str) -> Node:
    """Parse an expression (raises ``ClassAdError`` on bad text)."""
    return ExprTree(text).node


def compile_policy(texts: Mapping[str, str | None], overrides: Mapping[str, str] | None = None) -> CompiledPolicy:
    """Parse every policy knob; bad text falls back to the safe value and is recorded."""
    merged: dict[str, str | None] = dict(texts)
    merged.update(overrides or {})
    nodes: dict[str, Node] = {}
    problems: list[tuple[str, str]] = []
    used: dict[str, str] = {}
    for attr, text in merged.items():
        if text is None or not text.strip():
            continue
        try:
            nodes[attr] = parse(text)
            used[attr] = text
        except ClassAdError as e:
            safe = SAFE_VALUES.get(attr, POLICY_FALLBACKS.get(attr))
            problems.append((attr, f"{attr} = {text} does not parse ({e}); using {safe!r}"))
            if safe is not None:
                nodes[attr] = parse(safe)
                used[attr] = safe
    if any(attr == "START" for attr, _ in problems):
        nodes["IsOwner"] = parse("true")  # a broken START keeps the slot in Owner
        used["IsOwner"] = "true"
    return CompiledPolicy(nodes, tuple(problems), used)


def truth(value: Any) -> bool | None:
    """True/False for booleans and numbers; None for UNDEFINED, ERROR and other types."""
    t = type(value)
    if t is bool:
        return bool(value)
    if t is int or t is float:
        return value != 0
    return None


def eval_float(value: Any) -> float | None:
    """A policy value as a number, as HTCondor's ``EvalFloat`` reads it: an integer or a real
    (``classad.as_number``), or a boolean as 1 or 0 (``RANK = Owner == "bob"`` ranks 1 or 0);
    None for anything else."""
    if type(value) is bool:
        return 1.0 if value else 0.0
    n = as_number(value)
    return None if n is None else float(n)


class Evaluator:
    """Evaluates policy attributes of one slot ad, collecting ERROR reports."""

    __slots__ = ("ad", "job", "ctx", "errors", "vanilla")

    def __init__(self, ad: ClassAd, job: ClassAd | None, ctx: EvalContext) -> None:
        self.ad = ad
        self.job = job
        self.ctx = ctx
        self.errors: list[tuple[str, str]] = []
        universe = job.evaluate("JobUniverse", ctx) if job is not None else UNDEFINED
        self.vanilla = universe == VANILLA_UNIVERSE and type(universe) is int

    def value(self, attr: str) -> Any:
        """The value of ``attr`` (with the ``_VANILLA`` variant where it applies)."""
        if self.vanilla and attr in VANILLA_VARIANTS and f"{attr}_VANILLA" in self.ad:
            v = self._raw(f"{attr}_VANILLA")
            if v is not UNDEFINED and v is not ERROR:
                return v
        return self._raw(attr)

    def _raw(self, attr: str) -> Any:
        try:
            v = self.ad.evaluate(attr, self.ctx, self.job)
        except ClassAdError as e:
            self.errors.append((attr, f"{attr} could not be evaluated: {e}"))
            return ERROR
        if v is ERROR:
            self.errors.append((attr, f"{attr} evaluated to ERROR"))
        return v

    def true(self, attr: str) -> bool:
        """Whether ``attr`` is true (UNDEFINED and ERROR are not)."""
        return truth(self.value(attr)) is True

    def defined_false(self, attr: str) -> bool:
        return truth(self.value(attr)) is False

    def number(self, attr: str) -> float | None:
        return eval_float(self.value(attr))
