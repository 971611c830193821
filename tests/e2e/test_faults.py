"""Faults on a live pool: daemons killed with SIGKILL, malformed requests (issue: live pool, faults)."""

from __future__ import annotations

import json
import re
import signal

import httpx

from tests.e2e.pool import script


def _sleeper(pool, seconds: int, count: int = 1, extra: str = "") -> int:
    exe = script(pool.jobs_dir, "sleeper.sh", 'echo "run $1 started"; sleep "$2"; echo done\n')
    return pool.submit(f"""
executable = {exe}
arguments = $(Process) {seconds}
output = sleeper.$(Cluster).$(Process).out
log = sleeper.log
{extra}
queue {count}
""")


def test_schedd_killed_mid_run_reconnects_without_losing_or_duplicating(make_pool) -> None:
    pool = make_pool()
    cluster = _sleeper(pool, 6, count=2)
    pool.wait_for(lambda: all(pool.status(cluster, p) == 2 for p in range(2)), 20, "both running")
    old = pool.kill("schedd", signal.SIGKILL)
    pool.wait_restarted("schedd", old)
    # after the restart the queue still holds both jobs
    assert sorted(int(j["ProcId"]) for j in pool.jobs(f"ClusterId == {cluster}")) == [0, 1]
    seen: set[int | None] = set()

    def completed() -> bool:
        statuses = [pool.status(cluster, p) for p in range(2)]
        seen.update(statuses)
        return statuses == [4, 4]

    pool.wait_for(completed, 30, "completion", show=lambda: seen)
    # reconnected: running on until they completed, never sent back to Idle
    assert seen - {None} <= {2, 4}, seen
    for proc in range(2):
        out = (pool.jobs_dir / f"sleeper.{cluster}.{proc}.out").read_text()
        assert out.count("started") == 1, out  # ran once: no duplicate start
        assert len(pool.history(f"ClusterId == {cluster} && ProcId == {proc}")) == 1


def test_acknowledged_submit_survives_a_schedd_crash(make_pool) -> None:
    pool = make_pool("START = False\n")
    cluster = _sleeper(pool, 1, count=50)
    old = pool.kill("schedd", signal.SIGKILL)
    pool.wait_restarted("schedd", old)
    assert len(pool.jobs(f"ClusterId == {cluster}")) == 50
    next_cluster = _sleeper(pool, 1)
    assert next_cluster == cluster + 1


def test_startd_killed_jobs_go_back_to_idle_and_run_again(make_pool) -> None:
    pool = make_pool("JOB_DEFAULT_LEASE_DURATION = 6\nALIVE_INTERVAL = 2\n")
    cluster = _sleeper(pool, 4, extra="job_lease_duration = 6")
    # Running in the queue is the activation sent; a startd killed before it started the job
    # sends the job back to Idle unrun. Its execute event says it began.
    log = pool.jobs_dir / "sleeper.log"
    pool.wait_for(lambda: pool.status(cluster) == 2 and re.search(r"^001 \(", log.read_text(), re.M), 20,
                  "running")
    old = pool.kill("startd", signal.SIGKILL)
    # the startd comes back (new claim ids); the schedd's lease runs out and the job runs again
    pool.wait_restarted("startd", old)
    pool.wait_for(lambda: pool.status(cluster) == 4, 40, "completion after the restart")
    done = pool.history(f"ClusterId == {cluster}")[0]
    assert done["NumJobStarts"] >= 2
    # the user log: started, evicted back to Idle, started again, terminated
    events = re.findall(r"^(\d{3}) \(", log.read_text(), re.M)
    runs = [e for e in events if e in ("001", "004", "005")]
    assert runs[:3] == ["001", "004", "001"] and runs[-1] == "005", events


def test_negotiator_and_collector_killed_pool_recovers(make_pool) -> None:
    pool = make_pool()
    for daemon in ("negotiator", "collector"):
        old = pool.kill(daemon, signal.SIGKILL)
        pool.wait_restarted(daemon, old)
    pool.wait_for(lambda: pool.slots(), 20, "slots back in the collector")
    cluster = _sleeper(pool, 1)
    pool.wait_for(lambda: pool.status(cluster) == 4, 30, "a job run after the recovery")


def test_malformed_requests_are_refused_without_harm(make_pool) -> None:
    pool = make_pool()
    pids = {d: pool.pid_of(d) for d in ("collector", "negotiator", "schedd", "startd")}
    token = pool.layout.read_token()
    for daemon in ("collector", "negotiator", "schedd", "startd", "master"):
        url = pool.layout.read_address(daemon) + "/v1/message"
        assert httpx.post(url, json={"type": "Ok"}).status_code == 401  # no token
        auth = {"Authorization": f"Bearer {token}"}
        bad = [b"not json", json.dumps({"type": "NoSuchMessage"}).encode(),
               json.dumps({"type": "Submit", "owner": 3, "ads": []}).encode(),
               json.dumps({"type": "QueryAds", "my_type": "Machine", "constraint": "(("}).encode(),
               json.dumps({"type": "JobAction", "action": "explode", "user": "x"}).encode(),
               json.dumps({"type": "RequestClaim", "claim_id": "nope", "request": {"$ad": "[ x = ]"}}).encode()]
        for body in bad:
            r = httpx.post(url, content=body, headers=auth)
            assert 400 <= r.status_code < 500, (daemon, body, r.status_code, r.text)
            assert r.json()["type"] == "Failure"
    cluster = _sleeper(pool, 1)  # every daemon still works, none was restarted
    pool.wait_for(lambda: pool.status(cluster) == 4, 30, "a job after the bad requests")
    assert {d: pool.pid_of(d) for d in pids} == pids
