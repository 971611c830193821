"""Several startds under one master (examples/several-machines), and drained jobs never lost.

One live pool runs the example's three startds: the pool's own (a partitionable slot of 2
cores), B (4 static one-core slots, started with ``-local-name B``) and C (one core, START only
for jobs that ask for it). The test checks that each is a machine of its own (Machine, slot
Names, address file, log, execute directory), that jobs match on every startd and C's policy is
its own, and that ``htcpool drain B@host`` drains B alone. The jobs the drain evicts go back to
Idle and run again to completion, with the user log's 001, 004, 001, 005 (docs/defrag.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from htcpool.cli.drain import drain
from tests.e2e.pool import LivePool

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "several-machines" / "condor_config.local"

JOBS = """
executable = /bin/sleep
arguments = {seconds}
request_cpus = 1
request_memory = 64
log = jobs.log
{extra}
queue {count}
"""


def _events(log_text: str) -> dict[str, list[str]]:
    """The user log's event codes per job (``1.2`` -> ["000", "001", ...])."""
    out: dict[str, list[str]] = {}
    for code, cluster, proc in re.findall(r"^(\d{3}) \((\d+)\.(\d+)\.\d+\)", log_text, re.M):
        out.setdefault(f"{int(cluster)}.{int(proc)}", []).append(code)
    return out


def test_three_startds_are_three_machines_and_a_drain_of_one_loses_no_job(
        make_pool: Callable[[str], LivePool], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pool = make_pool(EXAMPLE.read_text())
    slots = pool.wait_for(lambda: (lambda s: s if len(s) == 6 else None)(pool.slots()), 30,
                          "the six slots of the three startds", show=lambda: [a["Name"] for a in pool.slots()])
    host = next(str(a["Machine"]) for a in slots if str(a["Name"]).count("@") == 1)
    machines = {str(a["Name"]): str(a["Machine"]) for a in slots}
    assert machines == {"slot1@" + host: host, "slot1@C@" + host: "C@" + host,
                        **{f"slot{i}@B@{host}": "B@" + host for i in range(1, 5)}}
    assert {int(a["Cpus"]) for a in slots if a["Machine"] == "B@" + host} == {1}
    layout = pool.layout
    assert layout.read_address("startd_b") and layout.read_address("startd_c")
    assert layout.read_address("startd_b") != layout.read_address("startd")
    assert (layout.log / "StartdLog.B").exists() and (layout.log / "StartdLog.C").exists()
    assert (layout.root / "execute.B").is_dir() and (layout.root / "execute.C").is_dir()

    # long enough for B's four to be running still when the seventh has begun and the drain comes,
    # on a loaded host too (with 3 s, all six had ended before C's job began in one CI run)
    cluster = pool.submit(JOBS.format(seconds=12, extra="", count=6))
    wanting_c = pool.submit(JOBS.format(seconds=30, extra="+WantMachineC = true", count=1))

    def hosts() -> dict[str, str]:
        # running and begun on its startd (a job is Running from the moment its activation is sent)
        began = "JobStatus == 2 && JobCurrentStartExecutingDate isnt undefined"
        return {f"{a['ClusterId']}.{a['ProcId']}": str(a.get("RemoteHost")) for a in pool.jobs(began)}

    running = pool.wait_for(lambda: (lambda h: h if len(h) == 7 else None)(hosts()), 30,
                            "all seven jobs running", show=hosts)
    assert running[f"{wanting_c}.0"].endswith(f"@C@{host}")  # C is partitionable: slot1_1@C@host
    on_b = sorted(j for j, h in running.items() if h.endswith(f"@B@{host}"))
    assert len(on_b) == 4 and all(h.endswith("@" + host) for h in running.values())

    monkeypatch.setenv("HTCPOOL_LOCAL_DIR", str(layout.root))
    assert drain(["-graceful", "-resume-on-completion", f"B@{host}"]) == 0
    assert f"with B@{host}" in capsys.readouterr().out

    def evicted_from_b() -> bool:
        return all(int(a.get("NumJobStarts") or 0) >= 2 or a["JobStatus"] == 1
                   for a in pool.jobs(f"ClusterId == {cluster}") if f"{a['ClusterId']}.{a['ProcId']}" in on_b)
    pool.wait_for(evicted_from_b, 20, "the drain to evict B's jobs")
    others = [a for a in pool.slots() if a["Machine"] != "B@" + host]
    assert all(a["State"] != "Drained" for a in others), [(a["Name"], a["State"]) for a in others]

    def completed() -> bool:
        return len(pool.history(f"ClusterId == {cluster} && JobStatus == 4")) == 6
    pool.wait_for(completed, 45, "every job of the drained machine to run again to completion",
                  show=lambda: [(a["ProcId"], a["JobStatus"]) for a in pool.jobs(f"ClusterId == {cluster}")])
    events = _events((pool.jobs_dir / "jobs.log").read_text())
    for job in on_b:
        codes = [c for c in events[job] if c in ("001", "004", "005")]
        assert codes[:3] == ["001", "004", "001"] and codes[-1] == "005" and codes.count("005") == 1, (job, codes)
    assert pool.status(wanting_c) == 2  # C's job was never touched
