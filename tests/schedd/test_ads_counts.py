"""The schedd's ads count each job once by its own status, submitter and universe, however the
counting is shortcut (jobs with equal literal values share one evaluation)."""

from __future__ import annotations

from htcpool.schedd.ads import SubmitterAds, schedd_ads
from htcpool.schedd.priority import submitter_of
from htcpool.schedd.states import JobStatus
from tests.schedd.helpers import T0, schedd, submit


def test_counts_match_each_job_evaluated_on_its_own() -> None:
    core = schedd()
    submit(core, "", "", 'AccountingGroup = "g1.alice"', "JobStatus = 5",
           owner="alice")
    submit(core, "", "JobUniverse = 7", "JobStatus = 1 + 0", 'AccountingGroup = "g1.bob"', owner="bob")
    submit(core, "JobUniverse = 12", "JobStatus = 5", owner="carol")
    ctx = core.queue.context(T0)
    expected: dict[str, list[int]] = {}
    for ad in core.queue.jobs.values():
        status = JobStatus(ad.evaluate("JobStatus", ctx))
        if ad.get("JobUniverse") in (7, 12):
            continue  # counted apart (local and scheduler universe)
        row = expected.setdefault(submitter_of(ad, core.settings.accounting_domain, ctx), [0, 0])
        row[0 if status is JobStatus.IDLE else 1] += status in (JobStatus.IDLE, JobStatus.HELD)
    ads = schedd_ads(core.queue, "submit", "http://submit:1", T0, T0)
    got = {str(a["Name"]): [a["IdleJobs"], a["HeldJobs"]] for a in ads[1:]}
    assert got == expected
    assert ads[0]["TotalIdleJobs"] == sum(r[0] for r in expected.values())
    assert ads[0]["TotalHeldJobs"] == sum(r[1] for r in expected.values())
    assert ads[0]["TotalLocalJobsRunning"] == 1 and ads[0]["TotalSchedulerJobsRunning"] == 1  # started at once


def test_an_unchanged_submitters_ad_is_sent_again_as_the_same_object() -> None:
    """Building every submitter's ad on every advertisement was a fifth of a simulated pool's
    filling: an ad whose attributes are unchanged is the one made before; a changed one is new,
    and a submitter whose jobs have all left is forgotten."""
    core = schedd()
    submit(core, "", owner="alice")
    submit(core, "", owner="bob")
    made = SubmitterAds()
    first = {str(a["Name"]): a for a in schedd_ads(core.queue, "submit", "http://submit:1", T0, T0, made=made)[1:]}
    submit(core, "", owner="bob")
    again = {str(a["Name"]): a for a in schedd_ads(core.queue, "submit", "http://submit:1", T0, T0, made=made)[1:]}
    alice, bob = (name for name in sorted(first))
    assert again[alice] is first[alice]
    assert again[bob] is not first[bob] and (first[bob]["IdleJobs"], again[bob]["IdleJobs"]) == (1, 2)
    made.keep_only([alice])
    third = {str(a["Name"]): a for a in schedd_ads(core.queue, "submit", "http://submit:1", T0, T0, made=made)[1:]}
    assert third[alice] is first[alice] and third[bob] is not again[bob] and third[bob]["IdleJobs"] == 2
    assert made.idle == {alice, bob}  # the submitters whose ads show idle jobs (the schedd's advertised_idle)


def test_a_submitter_whose_jobs_left_is_advertised_once_without_jobs() -> None:
    """HTCondor 25's schedd sends one more ad for a submitter whose last job left, every count 0
    (``updateSubmitterAd``: ``absentUpdateSent``), then no more: the collector does not go on
    showing the jobs it last heard of until the ad's lifetime ends."""
    core = schedd()
    submit(core, "", owner="alice")
    bob = submit(core, "", owner="bob")
    made = SubmitterAds()

    def submitters() -> dict[str, tuple[int, int, int]]:
        ads = schedd_ads(core.queue, "submit", "http://submit:1", T0, T0, made=made)[1:]
        return {str(a["Name"]).split("@")[0]: (a["IdleJobs"], a["RunningJobs"], a["HeldJobs"]) for a in ads}

    assert submitters() == {"alice": (1, 0, 0), "bob": (1, 0, 0)}
    core.queue.remove((bob, 0), None, T0)
    assert submitters() == {"alice": (1, 0, 0), "bob": (0, 0, 0)}
    assert submitters() == {"alice": (1, 0, 0)}
    submit(core, "", owner="bob")  # back with a job: advertised again
    assert submitters() == {"alice": (1, 0, 0), "bob": (1, 0, 0)}
