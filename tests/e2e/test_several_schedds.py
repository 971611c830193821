"""Several schedds in one pool (examples/several-schedds): each its own name, queue and ads.

One live pool runs the pool's own schedd and a second one started with ``-local-name B``. The
test checks that each keeps its own queue (its own spool), advertises its own Scheduler and
Submitter ads (one user submitting to both is two Submitter ads, one per ScheddName, and one
customer of the accountant), that the negotiator runs the jobs of both, and that ``htcpool q
-name``, ``q -global``, ``submit -name`` and ``status -schedd`` address them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from htcpool.cli.q import main as condor_q
from htcpool.cli.status import main as condor_status
from htcpool.cli.submit import DiskFileSystem
from htcpool.cli.submit import main as condor_submit
from htcpool.protocol import HistoryQuery, QueueQuery, Submit, UserprioQuery
from htcpool.submit import SubmitHost, submit_description
from tests.e2e.pool import LivePool

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "several-schedds" / "condor_config.local"

JOB = """
executable = /bin/true
request_cpus = 1
request_memory = 64
log = {log}
queue
"""


def test_two_schedds_keep_their_own_queues_and_both_run_jobs(
        make_pool: Callable[[str], LivePool], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pool = make_pool(EXAMPLE.read_text() + "NUM_CPUS = 2\n")
    schedds = pool.wait_for(
        lambda: (lambda ads: ads if len(ads) == 2 else None)(pool.c.query("Scheduler")), 30,
        "the Scheduler ads of both schedds", show=lambda: pool.c.query("Scheduler"))
    by_name = {str(ad["Name"]): str(ad["MyAddress"]) for ad in schedds}
    assert "B" in by_name and len(set(by_name.values())) == 2
    b_url = by_name["B"]
    assert pool.layout.read_address("schedd_b") == b_url
    assert (pool.layout.log / "SchedLog.B").exists()

    first = pool.submit(JOB.format(log="a.log"))
    host = SubmitHost(user="tester", cwd=str(pool.jobs_dir), now=int(time.time()),
                      environ=dict(os.environ), file_system_domain="localhost")
    jobs = submit_description(  # the same user, to the second schedd
        JOB.format(log="b.log"), file="b.sub", host=host, fs=DiskFileSystem()).jobs
    second = int(pool.c.send_to(b_url, Submit("tester", tuple(jobs))).cluster)
    assert first == second == 1  # two queues, each numbering its own clusters

    def submitters() -> list[tuple[str, str]]:
        return sorted((str(a["Name"]), str(a["ScheddName"])) for a in pool.c.query("Submitter"))
    seen = pool.wait_for(lambda: (lambda s: s if len(s) == 2 else None)(submitters()), 20,
                         "a Submitter ad per schedd", show=submitters)
    assert seen[0][0] == seen[1][0] and {s for _, s in seen} == set(by_name)

    def done() -> bool:
        a = list(pool.c.send("schedd", HistoryQuery("ClusterId == 1")).ads)
        b = list(pool.c.send_to(b_url, HistoryQuery("ClusterId == 1")).ads)
        return len(a) == 1 and len(b) == 1
    pool.wait_for(done, 40, "the job of each schedd completed, in its own history",
                  show=lambda: (pool.jobs(), list(pool.c.send_to(b_url, QueueQuery("")).ads)))
    assert (pool.layout.root / "spool" / "job_queue.db").exists()
    assert (pool.layout.root / "spool.B" / "job_queue.db").exists()
    assert "005 (001.000.000)" in (pool.jobs_dir / "b.log").read_text()
    rows = pool.c.send("negotiator", UserprioQuery()).rows
    customers = {str(r.get("Name")) for r in rows if str(r.get("Name", "")).startswith("tester@")}
    assert len(customers) == 1, customers  # one user at two schedds is one customer

    monkeypatch.setenv("HTCPOOL_LOCAL_DIR", str(pool.layout.root))
    monkeypatch.delenv("CONDOR_CONFIG", raising=False)
    sub = pool.jobs_dir / "c.sub"
    sub.write_text("executable = /bin/sleep\narguments = 60\nhold = true\nqueue\n")
    monkeypatch.chdir(pool.jobs_dir)
    assert condor_submit(["-name", "B", str(sub)]) == 0
    assert "submitted to cluster 2" in capsys.readouterr().out
    assert condor_q(["-name", "B", "-allusers", "-af", "ClusterId", "JobStatus"]) == 0
    assert capsys.readouterr().out.split("\n")[0] == "2 5"
    assert condor_q(["-global", "-allusers", "-nobatch"]) == 0
    text = capsys.readouterr().out
    assert text.count("-- Schedd: ") == 2 and "-- Schedd: B " in text, text
    assert condor_q(["-name", "nosuch"]) != 0
    assert "Can't find address for schedd nosuch" in capsys.readouterr().err
    assert condor_status(["-schedd", "-af", "Name"]) == 0
    assert sorted(capsys.readouterr().out.split()) == sorted(by_name)
