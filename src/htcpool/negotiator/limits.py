"""Concurrency limits: named counters that jobs consume and the pool caps.

A job's ``ConcurrencyLimits`` is a comma or space separated list of names, each optionally
``name:count`` (the amount the job consumes, 1 when absent or not positive); names are
case-insensitive and may be dotted (``license.matlab``). The cap of a name is ``<NAME>_LIMIT``;
for a dotted name without one, ``CONCURRENCY_LIMIT_DEFAULT_<prefix>`` (the part before the first
dot); otherwise ``CONCURRENCY_LIMIT_DEFAULT`` (2308032).

The counts are rebuilt each cycle from what the startds report (HTCondor's ``LoadLimits``): every
slot ad's ``ConcurrencyLimits`` (the running job's) and ``PreemptingConcurrencyLimits``, and the
``MatchedConcurrencyLimits`` of a slot in the Matched state. Each match made in the cycle then
adds the job's limits at once, so later jobs see them. A job is rejected when, for any of its
limits, the count plus its consumption would pass the cap, or the count is negative; the reason
is ``concurrency limit <name> reached``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from htcpool.classad import ClassAd, EvalContext
from htcpool.negotiator.exprinfo import literal

DEFAULT_CONCURRENCY_LIMIT = 2308032.0  # CONCURRENCY_LIMIT_DEFAULT in param_info.in


def parse_limits(text: str) -> list[tuple[str, float]]:
    """``"a, B:2 lic.x:0.5"`` → ``[("a", 1.0), ("b", 2.0), ("lic.x", 0.5)]`` (names lower-cased)."""
    out: list[tuple[str, float]] = []
    for word in re.split(r"[\s,]+", text.strip().lower()):
        if not word:
            continue
        name, sep, count = word.partition(":")
        inc = 1.0
        if sep:
            try:
                inc = float(count)
            except ValueError:
                inc = 1.0
            if not inc > 0:
                inc = 1.0
        if name:
            out.append((name, inc))
    return out


#: what a slot ad says it consumes: its job's limits, a pending preemptor's, a match's (when Matched)
_LIMIT_ATTRS = (("concurrencylimits", "ConcurrencyLimits"), ("preemptingconcurrencylimits", "PreemptingConcurrencyLimits"),
                ("matchedconcurrencylimits", "MatchedConcurrencyLimits"))


def consumes_limits(ad: ClassAd) -> bool:
    """Whether the slot ad defines any attribute ``ConcurrencyLimits.count_slots`` reads."""
    exprs = ad._exprs
    return any(key in exprs for key, _ in _LIMIT_ATTRS)


class ConcurrencyLimits:
    """The cycle's counts of every concurrency limit, and the caps they are checked against."""

    def __init__(self, maxima: Mapping[str, float], prefix_defaults: Mapping[str, float],
                 default: float = DEFAULT_CONCURRENCY_LIMIT) -> None:
        self.maxima = {k.lower(): v for k, v in maxima.items()}
        self.prefix_defaults = {k.lower(): v for k, v in prefix_defaults.items()}
        self.default = default
        self.counts: dict[str, float] = {}

    def maximum(self, name: str) -> float:
        name = name.lower()
        if name in self.maxima:
            return self.maxima[name]
        prefix, dot, _ = name.partition(".")
        if dot and prefix in self.prefix_defaults:
            return self.prefix_defaults[prefix]
        return self.default

    def add(self, text: str) -> None:
        for name, inc in parse_limits(text):
            self.counts[name] = self.counts.get(name, 0.0) + inc

    def count_slots(self, slots: Iterable[ClassAd], context: EvalContext) -> None:
        """Rebuild the counts from the slots the startds report (``LoadLimits``), expressions
        evaluated in the cycle's ``context``."""
        self.counts.clear()
        for ad in slots:
            exprs = ad._exprs  # most slots define none of the three: looked up before evaluating
            for key, attr in _LIMIT_ATTRS:
                if key in exprs and (key != "matchedconcurrencylimits" or literal(ad, "State", context) == "Matched"):
                    v = literal(ad, attr, context)
                    if type(v) is str:
                        self.add(v)

    def exhausted(self, text: str) -> str | None:
        """The first limit of ``text`` that a job consuming it would take past its cap, or None."""
        for name, inc in parse_limits(text):
            count = self.counts.get(name, 0.0)
            if count < 0 or count + inc > self.maximum(name):
                return name
        return None
