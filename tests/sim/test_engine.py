"""The simulator on small pools with known answers: the real cores decide, the virtual clock runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.protocol import JobEvent, JobUpdate
from htcpool.protocol.startd import ActivateReply
from htcpool.sim.errors import SimInputError
from htcpool.sim.transport import Transport
from tests.sim.pool_files import rows, run, swf_line

STATIC = "NEGOTIATOR_INTERVAL = 60\n"


def test_one_job_runs_for_its_runtime(tmp_path: Path) -> None:
    summary = run(tmp_path, STATIC, "1 NUM_CPUS=1 MEMORY=1024\n", [swf_line(1, 10, 300, user=1)])
    (job,) = rows(tmp_path / "out" / "jobs.csv")
    assert job["owner"] == "u1" and float(job["qdate_s"]) == 10
    start, end = float(job["start_s"]), float(job["end_s"])
    assert 10 <= start <= 12 and end - start == 300 and float(job["runtime_s"]) == 300
    assert summary["jobs_completed"] == 1 and summary["stop_reason"] == "all jobs done"
    assert summary["users"]["u1"]["cpu_s"] == 300 and summary["users"]["u1"]["share"] == 1.0
    assert summary["makespan_s"] == end - 10 and summary["preemptions"] == 0


def test_a_job_no_machine_can_take_stalls_and_the_run_ends(tmp_path: Path) -> None:
    summary = run(tmp_path, STATIC, "1 NUM_CPUS=1 MEMORY=1024\n", [swf_line(1, 0, 30, user=1, cpus=8)])
    assert summary["stop_reason"].startswith("stalled") and summary["jobs_left"] == 1
    assert summary["simulated_s"] < 600


FAIR = """NEGOTIATOR_INTERVAL = 60
PRIORITY_HALFLIFE = 600
CLAIM_WORKLIFE = 0
SIM_PRIORITY_FACTORS = u1:1, u2:3
"""


def _fair_trace() -> list[str]:
    lines, n = [], 1
    for _ in range(80):
        for user in (1, 2):
            lines.append(swf_line(n, 0, 120, user=user))
            n += 1
    return lines


def test_priority_factors_1_and_3_share_the_pool_3_to_1(tmp_path: Path) -> None:
    run(tmp_path, FAIR, "1 NUM_CPUS=4 MEMORY=8192\n", _fair_trace(), until=3000)
    at = {r["name"]: float(r["cpu_s"]) for r in rows(tmp_path / "out" / "usage.csv")
          if r["kind"] == "user" and float(r["time_s"]) <= 3000}
    ratio = at["u1"] / at["u2"]
    assert 2.4 <= ratio <= 3.8, f"u1:u2 = {at['u1']}:{at['u2']}"


def test_a_group_quota_caps_the_group(tmp_path: Path) -> None:
    config = STATIC + ("use FEATURE : StaticSlots\n"
                       "GROUP_NAMES = group_g1, group_g2\nGROUP_QUOTA_group_g1 = 1\nGROUP_QUOTA_group_g2 = 3\n")
    trace = [swf_line(n, 0, 200, user=1 if n % 2 else 2, group=1 if n % 2 else 2) for n in range(1, 21)]
    summary = run(tmp_path, config, "1 NUM_CPUS=4 MEMORY=8192\n", trace)
    usage = [r for r in rows(tmp_path / "out" / "usage.csv") if r["kind"] == "group"]
    assert max(float(r["cpus_in_use"]) for r in usage if r["name"] == "group_g1") == 1
    assert max(float(r["cpus_in_use"]) for r in usage if r["name"] == "group_g2") == 3
    assert summary["jobs_completed"] == 20
    assert summary["groups"]["group_g2"]["wait_p95_s"] < summary["groups"]["group_g1"]["wait_p95_s"]


def test_startd_rank_preempts_a_running_job(tmp_path: Path) -> None:
    config = STATIC + 'NUM_SLOTS = 1\nRANK = TARGET.Owner == "u2"\n'
    summary = run(tmp_path, config, "1 NUM_CPUS=1 MEMORY=1024\n",
                  [swf_line(1, 0, 1000, user=1), swf_line(2, 100, 50, user=2)])
    jobs = {r["owner"]: r for r in rows(tmp_path / "out" / "jobs.csv")}
    assert summary["preemptions"] == 1 and jobs["u1"]["preemptions"] == "1"
    assert float(jobs["u2"]["end_s"]) < float(jobs["u1"]["end_s"])
    assert float(jobs["u1"]["end_s"]) >= float(jobs["u2"]["end_s"]) + 1000  # u1 ran again from the start
    assert 0 < summary["badput_s"] <= 200


def test_periodic_remove_of_the_schedd_applies(tmp_path: Path) -> None:
    submit = ("executable = /bin/work\n+SimRuntime = 5000\nperiodic_remove = (time() - QDate) > 100\n"
              "queue 2\n")
    summary = run(tmp_path, STATIC, "1 NUM_CPUS=2 MEMORY=2048\n", submit, name="jobs.sub")
    assert summary["jobs_removed"] == 2 and summary["jobs_completed"] == 0
    assert summary["simulated_s"] < 1000
    assert all(float(r["end_s"]) > 100 for r in rows(tmp_path / "out" / "jobs.csv"))


def test_suspension_stops_the_job_clock(tmp_path: Path) -> None:
    config = STATIC + ("NUM_SLOTS = 1\nSUSPEND = (time() - JobStart) > 50 && (time() - JobStart) < 200\n"
                       "CONTINUE = (time() - JobStart) >= 200\nWANT_SUSPEND = true\nUPDATE_INTERVAL = 10\n")
    run(tmp_path, config, "1 NUM_CPUS=1 MEMORY=1024\n", [swf_line(1, 0, 100, user=1)])
    (job,) = rows(tmp_path / "out" / "jobs.csv")
    assert float(job["end_s"]) - float(job["start_s"]) > 150  # ran 100 s and waited while suspended


def test_a_configuration_error_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(SimInputError, match=r"condor_config:2: "):
        run(tmp_path, "NEGOTIATOR_INTERVAL = 60\nif version > \n", "1 NUM_CPUS=1\n", [swf_line(1, 0, 1, user=1)])


def test_defrag_drains_machines_when_the_daemon_list_names_it(tmp_path: Path) -> None:
    config = ("NEGOTIATOR_INTERVAL = 60\nDAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD, DEFRAG\n"
              "DEFRAG_INTERVAL = 60\nDEFRAG_DRAINING_MACHINES_PER_HOUR = 60\nDEFRAG_MAX_CONCURRENT_DRAINING = 1\n"
              "DEFRAG_MAX_WHOLE_MACHINES = 2\n")
    trace = [swf_line(n, 0, 600, user=1) for n in range(1, 17)]
    summary = run(tmp_path, config, "4 NUM_CPUS=4 MEMORY=4096\n", trace, until=900)
    assert summary["defrag_drains"] >= 1 and summary["preemptions"] >= 1
    without = run(tmp_path, config.replace(", DEFRAG\n", "\n"), "4 NUM_CPUS=4 MEMORY=4096\n", trace, until=900)
    assert without["defrag_drains"] == 0 and without["preemptions"] == 0


def test_a_deferred_job_starts_at_its_deferral_time(tmp_path: Path) -> None:
    submit = "executable = /bin/work\n+SimRuntime = 10\ndeferral_time = QDate + 500\nqueue 1\n"
    summary = run(tmp_path, STATIC, "1 NUM_CPUS=1 MEMORY=1024\n", submit, name="jobs.sub")
    (job,) = rows(tmp_path / "out" / "jobs.csv")
    assert summary["jobs_completed"] == 1 and float(job["end_s"]) == 510
    assert summary["users"]["submitter"]["cpu_s"] == 10  # it held its slot from activation, ran from 500


def test_a_job_longer_than_its_lease_finishes_without_preemption(tmp_path: Path) -> None:
    """The modelled starter reports usage as the live one does, and every report renews the
    schedd's claim lease (JobLeaseDuration, 2,400 s by default): a 3,000 s job runs through."""
    summary = run(tmp_path, STATIC, "1 NUM_CPUS=1 MEMORY=1024\n", [swf_line(1, 0, 3000, user=1)], until=20_000)
    (job,) = rows(tmp_path / "out" / "jobs.csv")
    assert summary["jobs_completed"] == 1 and summary["preemptions"] == 0, summary
    assert float(job["end_s"]) - float(job["start_s"]) == 3000 and job["preemptions"] == "0"


def test_fourteen_long_4_core_jobs_finish_without_preemption(tmp_path: Path) -> None:
    trace = [swf_line(n, 0, 3000, user=1 + n % 2, cpus=4) for n in range(1, 15)]
    summary = run(tmp_path, STATIC, "2 NUM_CPUS=16 MEMORY=65536\n", trace, until=20_000)
    assert summary["jobs_completed"] == 14 and summary["preemptions"] == 0, summary
    assert summary["badput_s"] == 0
    assert all(r["preemptions"] == "0" for r in rows(tmp_path / "out" / "jobs.csv"))


def _running_at(out: Path, at: float) -> dict[str, int]:
    return {r["name"]: int(r["running_jobs"]) for r in rows(out / "usage.csv")
            if r["kind"] == "user" and float(r["time_s"]) == at}


@pytest.mark.parametrize(("layout", "first_cycle", "second_cycle"), [
    # the default: one partitionable slot; the first submitter's schedd claims its leftovers
    ("", {"u1": 7}, {"u1": 7}),
    # one match per partitionable slot and cycle, no leftovers claimed: one job a cycle, by turns
    ("CLAIM_PARTITIONABLE_LEFTOVERS = False\n", {"u1": 1}, {"u1": 1, "u2": 1}),
    # seven static slots: the pie is split (7 / 3 each, whole slots)
    ("SLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 7\n", {"u1": 2, "u2": 2, "u3": 2}, {"u1": 3, "u2": 2, "u3": 2}),
], ids=["partitionable-leftovers", "partitionable-no-leftovers", "static"])
def test_slot_layout_decides_how_the_first_cycles_split_a_machine(
        tmp_path: Path, layout: str, first_cycle: dict[str, int], second_cycle: dict[str, int]) -> None:
    """docs/simulator.md, "Slot layouts and claimed leftovers": as the live pool (and HTCondor) does."""
    trace = [swf_line(n, 0, 600, user=1 + (n - 1) // 10) for n in range(1, 31)]
    run(tmp_path, STATIC + layout, "1 NUM_CPUS=7 MEMORY=7168\n", trace, until=130)
    out = tmp_path / "out"
    assert (_running_at(out, 60), _running_at(out, 120)) == (first_cycle, second_cycle)


def test_jobs_ending_together_free_their_slots_one_at_a_time(tmp_path: Path) -> None:
    """A live startd's jobs never end at the very same instant: the first freed slot asks for a
    cycle, which runs at once (the last one was long ago) and sees that slot alone; the slots
    freed just after wait NEGOTIATOR_MIN_INTERVAL for the next. The simulator settles each job's
    end, the timers it makes due included, before the next end of the same instant."""
    config = STATIC + "NEGOTIATOR_MIN_INTERVAL = 1\nCLAIM_WORKLIFE = 0\nSLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 4\n"
    trace = [swf_line(n, 0, 100, user=1) for n in range(1, 9)]
    run(tmp_path, config, "1 NUM_CPUS=4 MEMORY=4096\n", trace)
    starts = sorted(float(r["start_s"]) for r in rows(tmp_path / "out" / "jobs.csv"))
    first_wave, second_wave = starts[:4], starts[4:]
    assert len(set(first_wave)) == 1, starts
    ended = first_wave[0] + 100
    assert second_wave == [ended, ended + 1, ended + 1, ended + 1], starts


@pytest.mark.parametrize(("config", "expected"), [
    ("", [8, 308, 608, 908]),  # HTCondor's defaults: STARTER_INITIAL_UPDATE_INTERVAL 8, then every 300 s
    ("STARTER_UPDATE_INTERVAL = 400\nSTARTER_INITIAL_UPDATE_INTERVAL = 2\n", [2, 402, 802]),
    ("STARTER_UPDATE_INTERVAL = 5\nSTARTER_INITIAL_UPDATE_INTERVAL = 30\n", [5 * n for n in range(1, 200)]),
])
def test_a_running_job_reports_its_usage_when_the_live_starter_would(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, expected: list[int]) -> None:
    """The modelled starter sends the schedd its usage at STARTER_INITIAL_UPDATE_INTERVAL after the
    start, then every STARTER_UPDATE_INTERVAL, as the live starter's reports reach the schedd (the
    first at most the second: runtime.confinement.update_intervals)."""
    reports: list[float] = []
    started: list[float] = []
    send = Transport.send

    def spy(self: Transport, address: str, message: object) -> None:
        if isinstance(message, JobUpdate) and message.event == JobEvent.USAGE:
            reports.append(self.loop.now)
        if isinstance(message, ActivateReply) and message.accepted:  # the run begins (its execute event)
            started.append(self.loop.now)
        send(self, address, message)

    monkeypatch.setattr(Transport, "send", spy)
    summary = run(tmp_path, STATIC + config, "1 NUM_CPUS=1 MEMORY=1024\n", [swf_line(1, 0, 1000, user=1)])
    assert summary["jobs_completed"] == 1 and len(started) == 1
    assert [round(t - started[0]) for t in reports] == expected
