"""Late materialization, live: ``htcpool submit`` of a file with ``max_materialize`` or ``max_idle``.

The schedd keeps the factory, not its jobs: examples/factory.sub runs each of its items once
with at most ``max_idle`` jobs waiting; a 1,000,000-job cluster has only its limit in the
queue, and jobs appear as others leave (max_materialize); the factory goes on
after a schedd restart; condor_rm of the cluster removes it; ``htcpool q`` counts its jobs as
condor_q does (TOTAL is TotalSubmitProcs, DONE the jobs made and gone) and ``-factory`` shows
the factory; the user log has the cluster's own events, and SCHEDD_MATERIALIZE_LOG all the
factories' events.
"""

from __future__ import annotations

import shutil

import pytest

from tests.e2e.pool import LivePool
from tests.e2e.test_submit_cluster import EXAMPLES, submitted_cluster
from tests.e2e.test_tools import ok

MILLION = """\
executable = /bin/sleep
arguments = 600
requirements = false
max_materialize = 3
queue 1000000
"""


def procs(pool: LivePool, cluster: int) -> list[int]:
    return sorted(int(ad["ProcId"]) for ad in pool.jobs(f"ClusterId == {cluster}"))


@pytest.mark.long
def test_factories_make_their_jobs_as_the_limits_allow(make_pool) -> None:
    pool = make_pool("NUM_CPUS = 2\nSCHEDD_MATERIALIZE_LOG = $(LOG)/MaterializeLog\n")
    example_runs_each_item_once(pool)
    a_million_job_factory_holds_only_its_limit_survives_a_restart_and_is_removed(pool)


def example_runs_each_item_once(pool: LivePool) -> None:
    shutil.copy(EXAMPLES / "factory.sub", pool.jobs_dir)
    (pool.jobs_dir / "out").mkdir()
    cluster = submitted_cluster(ok(pool, "submit", "factory.sub"))

    def all_done() -> bool:
        idle = pool.jobs(f"ClusterId == {cluster} && JobStatus == 1")
        assert len(idle) <= 2, f"max_idle = 2, but {len(idle)} jobs are idle"
        return len(pool.history(f"ClusterId == {cluster}")) == 6

    pool.wait_for(all_done, 90, "the six items to run",
                  show=lambda: sorted(p.name for p in (pool.jobs_dir / "out").iterdir()))
    items = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
    for proc, item in enumerate(items):
        out = pool.jobs_dir / "out" / f"factory.{cluster}.{proc}"
        assert out.read_text() == f"item {item} is job {proc}\n"
    assert pool.jobs(f"ClusterId == {cluster}") == []  # the cluster is complete: nothing is left
    events = (pool.jobs_dir / "out" / "factory.log").read_text().splitlines()
    assert sum(line.startswith("000 (") for line in events) == 6  # a submit event for each job
    # the cluster's own events: submitted before its first job, removed once complete
    assert events[0].startswith(f"035 ({cluster:03d}.-01.000) ") and "Cluster submitted" in events[0], events
    removed = events.index(next(line for line in events if line.startswith("036 (")))
    assert events[removed + 1] == "\tMaterialized 6 jobs from 6 items.\tComplete", events


def a_million_job_factory_holds_only_its_limit_survives_a_restart_and_is_removed(pool: LivePool) -> None:
    """Nothing of it can run (``requirements = false``): the queue holds max_materialize jobs."""
    (pool.jobs_dir / "million.sub").write_text(MILLION)
    cluster = submitted_cluster(ok(pool, "submit", "million.sub"))
    assert procs(pool, cluster) == [0, 1, 2]
    ad = pool.job(cluster, 2)
    assert ad is not None and (ad["TotalSubmitProcs"], ad["JobMaterializeLimit"]) == (1_000_000, 3)
    # no user log, but the schedd's materialization log has the cluster and the jobs it made
    record = (pool.layout.log / "MaterializeLog").read_text()
    assert f"035 ({cluster:03d}.-01.000)" in record and f"000 ({cluster:03d}.002.000)" in record, record
    batch = ok(pool, "q", "-allusers").splitlines()
    [line] = [row for row in batch if f"{cluster}.0-2" in row] or ["\n".join(batch)]
    assert line.split()[-2:] == ["1000000", f"{cluster}.0-2"], batch

    owner = str(ad["Owner"])  # the identity the schedd authenticated the submission as
    pool.act("hold", f"{cluster}.0", user=owner)  # a held job is still in the queue: no room
    pool.wait_restarted("schedd", pool.kill("schedd"))
    pool.wait_for(lambda: procs(pool, cluster) == [0, 1, 2], 30, "the restarted schedd's queue",
                  show=lambda: procs(pool, cluster))
    pool.act("remove", f"{cluster}.1", user=owner)
    pool.wait_for(lambda: procs(pool, cluster) == [0, 2, 3], 30, "proc 3 to take proc 1's place",
                  show=lambda: procs(pool, cluster))
    batch = ok(pool, "q", "-allusers").splitlines()
    [line] = [row for row in batch if f"{cluster}.0-3" in row] or ["\n".join(batch)]
    done, run, idle, held, total = line.split()[-6:-1]  # one made and gone: DONE counts it
    assert (done, run, idle, held, total) == ("1", "_", "2", "1", "1000000"), batch

    # the tools' print-format files, live
    (pool.jobs_dir / "ids.cpf").write_text(f"SELECT NOTITLE\n  ClusterId AS C\n  ProcId AS P\n"
                                           f"WHERE ClusterId == {cluster}\nSUMMARY NONE\n")
    assert ok(pool, "q", "-allusers", "-pr", str(pool.jobs_dir / "ids.cpf")) == \
        f"C P\n{cluster} 0\n{cluster} 2\n{cluster} 3\n"
    (pool.jobs_dir / "slots.cpf").write_text("SELECT\n  Name AS NAME WIDTH -30\n  State\nSUMMARY NONE\n")
    slots = ok(pool, "status", "-print-format", str(pool.jobs_dir / "slots.cpf")).splitlines()
    assert slots[0] == "NAME                           State" and slots[1] == "" and "@" in slots[2], slots
    assert ok(pool, "status", "-absent") == ""  # no ABSENT_REQUIREMENTS: nothing is kept absent

    factories = ok(pool, "q", "-allusers", "-factory").splitlines()
    [line] = [row for row in factories if row.startswith(f"{cluster:>4}.")] or ["\n".join(factories)]
    assert line.split()[-7:] == ["3", "3", "0", "2", "1", "4", "Norm"], factories  # LIMIT .. MODE

    result = pool.act("remove", str(cluster), user=owner)
    assert not result.errors and len(result.done) == 3, result
    pool.wait_for(lambda: procs(pool, cluster) == [], 30, "the factory's jobs to leave")
    ok(pool, "reschedule")
    pool.holds_for(lambda: procs(pool, cluster) == [], "no job of the removed factory", seconds=2)
