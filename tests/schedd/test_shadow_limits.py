"""A starter's usage and its out-of-memory exit, as the schedd records them (``schedd.shadow``)."""

from __future__ import annotations

from htcpool.protocol import JobEvent
from htcpool.protocol.startd import ReleaseClaim
from htcpool.schedd import JobStatus
from tests.schedd.helpers import T0, run, schedd, submit, to_startd, update

OOM = ("Error from slot1_1@ep: Job has gone over cgroup memory limit of 128 megabytes. Last measured usage: "
       "129 megabytes.  Consider resubmitting with a higher request_memory.")


def test_disk_and_cpus_usage_are_recorded() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    core.handle(update("c1", JobEvent.USAGE, rss_kb=4000, disk_usage_kb=2048, cpus_usage=1.25), T0 + 5)
    ad = core.queue.jobs[(1, 0)]
    assert (ad.eval("DiskUsage"), ad.eval("CpusUsage"), ad.eval("MemoryUsage")) == (2048, 1.25, 4)


def test_an_exit_with_a_hold_code_holds_the_job_and_releases_the_claim() -> None:
    core = schedd()
    submit(core, "")
    run(core, (1, 0))
    out = core.handle(update("c1", JobEvent.EXITED, exit_signal=9, killed=True, rss_kb=131072,
                             hold_code=34, hold_subcode=0, message=OOM), T0 + 10)
    ad = core.queue.jobs[(1, 0)]
    assert core.queue.status((1, 0)) == JobStatus.HELD
    assert (ad.eval("HoldReasonCode"), ad.eval("HoldReasonSubCode"), ad.eval("HoldReason")) == (34, 0, OOM)
    assert ad.eval("NumJobStarts") == 1 and ad.eval("ResidentSetSize") == 131072
    assert to_startd(out) == [ReleaseClaim("c1")]
