"""The rows of a print format's query type (``SELECT FROM AUTOCLUSTER``, ``SELECT UNIQUE``).

The manual's "Print Format Tables" give condor_q two query types besides its jobs:

* ``FROM AUTOCLUSTER``: one row per autocluster of the idle and running jobs, the ads of
  ``qviews.autocluster_ads`` (``AutoClusterId``, ``JobCount``, ``JobIDs`` and the attributes
  that define the autocluster), as ``condor_q -autocluster`` groups them.
* ``UNIQUE``: one row per distinct combination of the values of the columns and of the ``GROUP
  BY`` keys (``JobCount``, ``JobIDs`` and ``AutoClusterId`` left out of the combination), in
  order of the first job with it: that job's ad with ``JobCount`` (how many jobs share the
  values), ``JobIDs`` (their ids, space-separated) and ``AutoClusterId`` (the row's number from 1).

``WHERE`` chooses the jobs before they are grouped; ``GROUP BY`` orders the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, fixed_clock
from htcpool.classad.unparse import unparse
from htcpool.cli.formats.fields import job_id
from htcpool.cli.formats.printformat import PrintFormat, QueryType
from htcpool.cli.formats.qviews import autocluster_ads, job_ids_text

#: the attributes an aggregate row gets, which do not count toward a UNIQUE combination
AGGREGATE_ATTRS = frozenset({"jobcount", "jobids", "autoclusterid"})


def _value_text(tree: ExprTree, ad: ClassAd, context: EvalContext) -> str:
    try:
        return unparse(tree.evaluate(ad, None, context))
    except ClassAdError:
        return "error"


def unique_rows(pf: PrintFormat, jobs: Sequence[ClassAd], now: int) -> list[ClassAd]:
    """The ``SELECT UNIQUE`` rows of ``jobs`` (see the module rules)."""
    exprs = [column.expr for column in pf.columns] + [expr for expr, _ in pf.group_by]
    trees = [ExprTree(e) for e in exprs if e.strip().lower() not in AGGREGATE_ATTRS]
    context = EvalContext(clock=fixed_clock(now))
    groups: dict[tuple[str, ...], list[ClassAd]] = {}
    for job in sorted(jobs, key=job_id):
        groups.setdefault(tuple(_value_text(t, job, context) for t in trees), []).append(job)
    rows = []
    for number, members in enumerate(groups.values(), 1):
        row = members[0].copy()
        row.update({"JobCount": len(members), "JobIDs": job_ids_text(members), "AutoClusterId": number})
        rows.append(row)
    return rows


def query_rows(pf: PrintFormat, jobs: Sequence[ClassAd], now: int) -> list[ClassAd]:
    """The ads a print format's rows come from: the jobs themselves, their autoclusters or their
    unique combinations."""
    if pf.query is QueryType.AUTOCLUSTER:
        return autocluster_ads(jobs)
    if pf.query is QueryType.UNIQUE:
        return unique_rows(pf, jobs, now)
    return list(jobs)


__all__ = ["AGGREGATE_ATTRS", "query_rows", "unique_rows"]
