"""Sharing proc 0's transform, requirement and priority outcomes gives what per-job work gives."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.schedd import JobQueue, SubmitRejected, settings_from_config
from htcpool.schedd.admission import admit
from htcpool.schedd.priority import Key, priority_key, submitter_of
from htcpool.schedd.settings import ScheddSettings
from htcpool.schedd.shapes import Footprint, reads_of
from htcpool.schedd.submit_requirements import check
from tests.schedd.test_seeds import NOW, jobs

TRANSFORM_BODIES = {
    # reads nothing that varies: shared
    "Tag": 'SET Site = "local"\nDEFAULT ProjectName = "none"\nCOPY Cmd OriginalCmd\n',
    # evaluates a per-job attribute: must run per job
    "Half": "EVALSET Half = ProcId / 2\n",
    # reads ProcId only through another attribute's expression
    "Indirect": "SET Bucket = ProcId % 3\nEVALSET Level = Bucket * 10\n",
    # $(MY.…) and if conditions on a per-job attribute
    "Macro": 'if $(MY.ProcId) > 1\n  SET Late = true\nelse\n  SET Early = "$(MY.Args)"\nendif\n',
    # requirements on a per-job attribute
    "Odd": "REQUIREMENTS ProcId % 2 == 1\nSET Odd = true\nRENAME Odd IsOdd\n",
    # names, not values: the regex forms
    "Regex": "COPY /^Request(.*)/ Asked\\1\nDELETE /^TransferIn$/\n",
    "Eval": 'EVALMACRO size = RequestMemory * 2\nSET Doubled = $(size)\nEVALSET When = time()\n',
}
REQUIREMENTS = {
    "SUBMIT_REQUIREMENT_NAMES": "Memory Few",
    "SUBMIT_REQUIREMENT_Memory": "RequestMemory >= 64",
    "SUBMIT_REQUIREMENT_Few": "ProcId < 4",
    "SUBMIT_REQUIREMENT_Few_REASON": 'strcat("proc ", ProcId, " is too many")',
    "SUBMIT_REQUIREMENT_Few_IS_WARNING": "true",
}
SUBMITS = [
    "arguments = 60\nqueue 6\n",
    "arguments = $(Process)\npriority = $(Process)\nqueue 5\n",
    "request_memory = $(Item)\nqueue Item in (100, 100, 200)\n",
    "accounting_group = group_a\n+PostJobPrio1 = ProcId\nqueue 4\n",
]


def settings(names: str, requirements: str = "Memory Few") -> ScheddSettings:
    config = {"JOB_TRANSFORM_NAMES": names, **REQUIREMENTS, "SUBMIT_REQUIREMENT_NAMES": requirements}
    config.update({f"JOB_TRANSFORM_{n}": body for n, body in TRANSFORM_BODIES.items()})
    config["UID_DOMAIN"] = "example.org"
    return settings_from_config(config.get)


def one_by_one(ads: list[ClassAd], s: ScheddSettings, schedd_ad: ClassAd, ctx: EvalContext
               ) -> tuple[list[ClassAd], list[str], list[Key], list[str]]:
    """The plain per-job path: every step computed for every job."""
    out: list[ClassAd] = []
    submitters: list[str] = []
    keys: list[Key] = []
    warnings: list[str] = []
    for proc, source in enumerate(ads):
        ad = source.copy()
        ad["ClusterId"], ad["ProcId"], ad["Owner"] = 7, proc, "alice"
        ad["QDate"] = ad["EnteredCurrentStatus"] = NOW
        for t in s.transforms:
            t.apply(ad, ctx)
        warnings += [w for w in check(s.submit_requirements, schedd_ad, ad, ctx) if w not in warnings]
        out.append(ad)
        submitters.append(submitter_of(ad, s.accounting_domain, ctx))
        keys.append(priority_key(ad, (7, proc), ctx))
    return out, submitters, keys, warnings


@pytest.mark.parametrize("names", ["Tag", "Half", "Indirect", "Macro", "Odd", "Regex", "Eval",
                                   "Tag Half Indirect Macro Odd Regex Eval"])
@pytest.mark.parametrize("text", SUBMITS)
@pytest.mark.parametrize("requirements", ["Memory", "Memory Few"])
def test_shared_outcomes_equal_per_job_outcomes(names: str, text: str, requirements: str) -> None:
    s = settings(names, requirements)
    source = jobs(text)
    schedd_ad = ClassAd({"MyType": "Scheduler"})
    ctx = EvalContext(clock=fixed_clock(NOW))
    admitted = admit(source, 7, "alice", NOW, transforms=s.transforms,
                     requirements=s.submit_requirements, schedd_ad=schedd_ad, context=ctx,
                     accounting_domain=s.accounting_domain)
    ads, submitters, keys, warnings = one_by_one(source, s, schedd_ad, ctx)
    for got, want in zip(admitted.ads, ads, strict=True):
        assert got._names == want._names
        assert got.same_as(want), (repr(got), repr(want))
    assert admitted.submitters == submitters
    assert admitted.keys == keys
    assert admitted.warnings == warnings


def test_copies_share_and_per_job_attributes_do_not() -> None:
    s = settings("Tag Half")
    ctx = EvalContext(clock=fixed_clock(NOW))
    kwargs = {"transforms": s.transforms, "requirements": s.submit_requirements,
              "schedd_ad": ClassAd(), "context": ctx}
    plain = admit(jobs("queue 10\n"), 1, "alice", NOW, **kwargs)  # type: ignore[arg-type]
    # Tag, the Memory requirement and the priority key are shared for procs 1-9; Half and
    # the Few requirement (ProcId) are not
    assert plain.shared == 9 * 2
    assert plain.warnings == [f"proc {p} is too many" for p in range(4, 10)]
    assert settings("Tag Half", "Memory").submit_requirements[0].name == "Memory"
    assert admit(jobs("queue 10\n"), 1, "alice", NOW, **{**kwargs, "requirements":  # type: ignore[arg-type]
                 settings("Tag", "Memory").submit_requirements}).shared == 9 * 3
    assert [ad["Half"] for ad in plain.ads] == [p // 2 for p in range(10)]
    varied = admit(jobs("priority = $(Process)\nqueue 3\n"), 1, "alice", NOW, **kwargs)  # type: ignore[arg-type]
    assert [k[2] for k in varied.keys] == [0, -1, -2]


def test_footprint_follows_expressions_and_spots_opaque_functions() -> None:
    ad = ClassAd({"A": ExprTree("B + 1"), "B": ExprTree("ProcId * 2"), "ProcId": 0})
    assert Footprint.close(["a"], [ad._exprs]).names == ("a", "b", "procid")
    assert reads_of(ExprTree("random(10) + x")._node) == ({"x"}, True)
    assert reads_of(ExprTree('eval("Proc" + "Id")')._node)[1] is True
    other = ad.copy()
    other["ProcId"] = 1
    assert not Footprint.close(["a"], [ad._exprs]).same(ad, other)
    assert Footprint.close(["c"], [ad._exprs]).same(ad, other)


def test_rejection_on_a_later_proc_rejects_the_cluster() -> None:
    q = JobQueue(settings_from_config({"SUBMIT_REQUIREMENT_NAMES": "Two",
                                       "SUBMIT_REQUIREMENT_Two": "ProcId < 2"}.get))
    with pytest.raises(SubmitRejected):
        q.submit("alice", jobs("queue 3\n"), NOW)
    assert not q.jobs and not q.events
