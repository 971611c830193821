"""``$(Cluster)`` is the id the schedd gives the cluster (condor_submit's NewCluster), live.

``htcpool submit`` reserves the cluster id before it expands the submit file, so two
submissions of ``output = out.$(Cluster).$(Process)`` write two sets of files; ids never
repeat, not even after a schedd restart or for a reservation that was never used; and the
examples that name their output after the cluster (examples/deferred.sub, examples/cron.sub)
run and write where they say.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from htcpool.protocol.schedd import ClusterReserved, NewCluster
from tests.e2e.pool import LivePool
from tests.e2e.test_tools import USER, ok, run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

OUT_PER_CLUSTER = """\
executable = /bin/echo
arguments = job $(Cluster).$(Process)
output = out.$(Cluster).$(Process)
log = jobs.log
queue 2
"""


def submitted_cluster(stdout: str) -> int:
    """The cluster id in condor_submit's ``N job(s) submitted to cluster C.`` line."""
    for line in stdout.splitlines():
        if "submitted to cluster" in line:
            return int(line.rstrip(".").rsplit(" ", 1)[1])
    raise AssertionError(f"no cluster in {stdout!r}")


def finished(pool: LivePool, cluster: int, procs: int) -> bool:
    return all(pool.status(cluster, p) == 4 for p in range(procs))


def test_two_submissions_write_their_own_files(make_pool) -> None:
    pool = make_pool()
    (pool.jobs_dir / "echo.sub").write_text(OUT_PER_CLUSTER)
    first = submitted_cluster(ok(pool, "submit", "echo.sub"))
    second = submitted_cluster(ok(pool, "submit", "echo.sub"))
    assert second > first
    for cluster in (first, second):
        pool.wait_for(lambda c=cluster: finished(pool, c, 2), 60, f"cluster {cluster} to complete",
                      show=lambda: sorted(p.name for p in pool.jobs_dir.iterdir()))
        for proc in (0, 1):
            out = pool.jobs_dir / f"out.{cluster}.{proc}"
            assert out.read_text() == f"job {cluster}.{proc}\n", out
    done = pool.history(f"ClusterId == {second}")
    assert sorted(str(ad["Out"]) for ad in done) == [f"out.{second}.0", f"out.{second}.1"]

    # a reservation that is never used is skipped; a restarted schedd goes on after it
    reserved = pool.c.send("schedd", NewCluster(USER))
    assert isinstance(reserved, ClusterReserved) and reserved.cluster == second + 1
    pool.wait_restarted("schedd", pool.kill("schedd"))
    third = pool.wait_for(lambda: int(ok(pool, "submit", "-terse", "echo.sub").split(".")[0]), 30,
                          "a submission to the restarted schedd")
    assert third > reserved.cluster
    # a dry run asks the schedd nothing and numbers the cluster 1, as condor_submit's does
    dry = ok(pool, "submit", "-dry-run", "-", "echo.sub")
    assert 'Out="out.1.0"' in dry and "Out=\"out.1.1\"" in dry


@pytest.mark.slow  # $(Cluster) runs live above; deferral runs live in tests/e2e/test_jobs.py
def test_the_deferral_example_runs_and_names_its_output_after_the_cluster(make_pool) -> None:
    pool = make_pool()
    shutil.copy(EXAMPLES / "deferred.sub", pool.jobs_dir)
    (pool.jobs_dir / "out").mkdir()
    # the example waits 20 s; the same file with the deferral brought forward to 3 s
    done = run(pool, "submit", "deferred.sub", "-append", "deferral_time = (QDate + 3)")
    assert done.returncode == 0, done.stderr
    cluster = submitted_cluster(done.stdout)
    ad = pool.job(cluster) or pool.history(f"ClusterId == {cluster}")[0]
    assert ad["Out"] == f"out/deferred.{cluster}.out"
    pool.wait_for(lambda: finished(pool, cluster, 1), 40, "the deferred job to complete")
    ended = pool.history(f"ClusterId == {cluster}")[0]
    assert int(ended["CompletionDate"]) >= int(ended["QDate"]) + 3  # not before its deferral time
    assert (pool.jobs_dir / "out" / f"deferred.{cluster}.out").read_text().strip()


@pytest.mark.slow
def test_the_cron_example_runs_at_the_minute_into_its_cluster_file(make_pool) -> None:
    pool = make_pool()
    shutil.copy(EXAMPLES / "cron.sub", pool.jobs_dir)
    (pool.jobs_dir / "out").mkdir()
    cluster = submitted_cluster(ok(pool, "submit", "cron.sub"))
    out = pool.jobs_dir / "out" / f"cron.{cluster}.out"
    pool.wait_for(lambda: out.exists() and out.read_text().strip(), 90, f"{out.name} to be written")
    ok(pool, "rm", str(cluster))
