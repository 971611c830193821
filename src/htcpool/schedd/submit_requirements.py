"""Submit requirements (``SUBMIT_REQUIREMENT_NAMES``) checked on every new job ad.

Each requirement is evaluated with MY = the schedd's ad and TARGET = the job
ad (unscoped names look in the schedd ad first). In list order: a result that
is not a boolean rejects the submission; false rejects it with the reason,
unless the requirement is a warning (``_IS_WARNING``), which records the
reason and goes on. The reason is the ``_REASON`` expression's string value,
else "Submit requirement N not met.". ``check`` returns the warnings and
raises ``SubmitRejected`` at the first failure.
"""

from __future__ import annotations

from dataclasses import dataclass

from htcpool.classad import ClassAd, EvalContext
from htcpool.classad.errors import ClassAdError
from htcpool.classad.nodes import Node
from htcpool.classad.parser import parse_expression
from htcpool.schedd.errors import SubmitRejected


@dataclass(frozen=True)
class SubmitRequirement:
    name: str
    expr: Node
    reason: Node | None = None
    is_warning: bool = False

    @classmethod
    def from_text(cls, name: str, expr: str, reason: str | None = None,
                  is_warning: bool = False) -> SubmitRequirement:
        return cls(name, parse_expression(expr), parse_expression(reason) if reason else None, is_warning)

    def reason_text(self, schedd_ad: ClassAd, job: ClassAd, context: EvalContext) -> str:
        if self.reason is not None:
            try:
                value = schedd_ad._evaluate_node(self.reason, job, context)
            except ClassAdError:
                value = None
            if isinstance(value, str):
                return value
        return f"Submit requirement {self.name} not met."


def check(requirements: list[SubmitRequirement], schedd_ad: ClassAd, job: ClassAd,
          context: EvalContext) -> list[str]:
    """Warnings for ``job``; raises SubmitRejected at the first requirement it fails."""
    warnings: list[str] = []
    for req in requirements:
        try:
            value = schedd_ad._evaluate_node(req.expr, job, context)
        except ClassAdError:
            raise SubmitRejected(f"Submit requirement {req.name} failed to evaluate.") from None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = value != 0
        if not isinstance(value, bool):
            raise SubmitRejected(f"Submit requirement {req.name} evaluated to non-boolean.")
        if value:
            continue
        reason = req.reason_text(schedd_ad, job, context)
        if req.is_warning:
            warnings.append(reason)
            continue
        raise SubmitRejected(reason)
    return warnings
