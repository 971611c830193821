"""Procs that are proc 0's copies take proc 0's outcome whole; anything per-job turns that off."""

from __future__ import annotations

from htcpool.classad import ClassAd, EvalContext, fixed_clock
from htcpool.schedd import JobQueue, settings_from_config
from htcpool.schedd.admission import Admitted, CopyOf, admit
from htcpool.schedd.states import JobStatus
from htcpool.schedd.store import MemoryStore
from tests.schedd.test_admission import one_by_one, settings
from tests.schedd.test_seeds import NOW, jobs

CTX = EvalContext(clock=fixed_clock(NOW))


def admitted(text: str, names: str = "Tag", requirements: str = "Memory") -> Admitted:
    s = settings(names, requirements)
    return admit(jobs(text), 7, "alice", NOW, transforms=s.transforms, requirements=s.submit_requirements,
                 schedd_ad=ClassAd({"MyType": "Scheduler"}), context=CTX, accounting_domain=s.accounting_domain)


def test_copies_are_marked_and_equal_the_per_job_outcome() -> None:
    got = admitted("arguments = 60\nqueue 6\n")
    assert got.copies == [False] + [True] * 5
    s = settings("Tag", "Memory")
    ads, submitters, keys, _ = one_by_one(jobs("arguments = 60\nqueue 6\n"), s, ClassAd({"MyType": "Scheduler"}), CTX)
    for ad, want in zip(got.ads, ads, strict=True):
        assert ad._names == want._names and ad.same_as(want), (repr(ad), repr(want))
    assert got.submitters == submitters and got.keys == keys
    assert [ad["ProcId"] for ad in got.ads] == list(range(6))


def test_a_step_that_reads_procid_or_a_per_job_value_takes_no_copies() -> None:
    assert admitted("queue 4\n", "Tag Half").copies == [False] * 4  # EVALSET Half = ProcId / 2
    assert admitted("queue 4\n", "Tag", "Memory Few").copies == [False] * 4  # ProcId < 4
    assert admitted("queue 4\n", "Macro").copies == [False] * 4  # if $(MY.ProcId) > 1
    assert admitted("queue 4\n", "Eval").copies == [False] + [True] * 3  # time() is the submit's, one for all
    assert admitted("arguments = $(Process)\nqueue 4\n").copies == [False] * 4  # the ads differ


def test_a_transform_that_sets_procid_sets_it_for_every_proc_as_before() -> None:
    config = {"JOB_TRANSFORM_NAMES": "Pin", "JOB_TRANSFORM_Pin": "SET ProcId = 5\n"}
    s = settings_from_config(config.get)
    got = admit(jobs("queue 3\n"), 7, "alice", NOW, transforms=s.transforms, requirements=[],
                schedd_ad=ClassAd(), context=CTX)
    assert got.copies == [False] * 3 and [ad["ProcId"] for ad in got.ads] == [5, 5, 5]


def test_a_copy_shares_proc_0s_names_until_either_changes() -> None:
    ads = admitted("queue 3\n").ads
    assert ads[1]._names is ads[0]._names
    ads[1]["Extra"] = 1
    ads[0]["Other"] = 2
    assert "Extra" not in ads[0] and "Extra" not in ads[2] and "Other" not in ads[2]
    assert ads[1]["Extra"] == 1 and ads[0]["Other"] == 2 and "Other" not in ads[1]


def test_screened_attributes_are_dropped_from_every_proc() -> None:
    source = jobs("queue 3\n")
    for ad in source:
        ad["ClaimId"] = "stolen"
    s = settings("Tag", "Memory")
    got = admit(source, 7, "alice", NOW, transforms=s.transforms, requirements=s.submit_requirements,
                schedd_ad=ClassAd(), context=CTX)
    assert all("ClaimId" not in ad for ad in got.ads)
    assert got.warnings == ["ClaimId is set by the schedd; the submitted value is ignored"]


def test_copy_of_tells_a_copy_whatever_its_procid() -> None:
    base = ClassAd({"A": 1, "ProcId": 0, "B": "x"})
    is_copy = CopyOf(base)
    same = base.copy()
    same["ProcId"] = 9
    assert is_copy(same) and is_copy(base)
    respelled = ClassAd._from_tables(dict(base._exprs), {**base._names, "a": "a"})
    reordered = ClassAd._from_tables({k: base._exprs[k] for k in ("b", "procid", "a")}, dict(base._names))
    longer = base.copy()
    longer["C"] = 2
    equal_not_same = base.copy()
    equal_not_same["B"] = "x"  # an equal literal, another object
    assert not any(is_copy(ad) for ad in (respelled, reordered, longer, equal_not_same))


def test_the_queue_stores_counts_and_indexes_copies_as_proc_0() -> None:
    store = MemoryStore()
    q = JobQueue(settings_from_config({}.get), store=store)
    cluster, _ = q.submit("alice", jobs("queue 5\n"), NOW)
    assert sorted(store.jobs) == [(cluster, p) for p in range(5)]
    for job_id, ad in q.jobs.items():
        assert store.jobs[job_id].same_as(ad)
    assert sum(q.tally.counts.values()) == 5 and not q.tally.volatile
    assert list(q.ordered_jobs(q.submitters()[0])) == [(cluster, p) for p in range(5)]
    q.hold((cluster, 3), "alice", NOW + 1)
    assert q.status((cluster, 3)) == JobStatus.HELD and q.status((cluster, 4)) == JobStatus.IDLE
    assert (cluster, 3) not in list(q.ordered_jobs(q.submitters()[0]))
