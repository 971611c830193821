"""Local and scheduler universe jobs in the schedd core: started by the schedd itself, never
offered, stopped when they leave Running, finished through the queue (schedd/localjobs.py)."""

from __future__ import annotations

from htcpool.protocol import FetchRequests, JobAction, JobActionKind, JobEvent, JobUpdate, UpdateAd
from htcpool.schedd import (
    JobStatus,
    LocalJobReport,
    MemoryStore,
    Outcome,
    Schedd,
    ScheddSettings,
    StartLocalJob,
    StopLocalJob,
    ToCollector,
)
from htcpool.schedd.eventlog import ABORTED, EVICTED, EXECUTE, HELD, TERMINATED
from htcpool.schedd.localjobs import run_as
from tests.schedd.helpers import T0, schedd, submit

LOCAL = 'JobUniverse = 12; Owner = "alice"; Cmd = "/bin/true"; Iwd = "/tmp"'
SCHEDULER = 'JobUniverse = 7; Owner = "alice"; Cmd = "/bin/true"; Iwd = "/tmp"'


def starts(outcome: Outcome) -> list[StartLocalJob]:
    return [a for a in outcome.actions if isinstance(a, StartLocalJob)]


def stops(outcome: Outcome) -> list[StopLocalJob]:
    return [a for a in outcome.actions if isinstance(a, StopLocalJob)]


def submit_local(core: Schedd, *extras: str, now: float = T0) -> tuple[int, Outcome]:
    from htcpool.protocol import Submit
    from tests.schedd.helpers import job

    outcome = core.handle(Submit("alice", tuple(job(e) for e in extras)), now)
    return int(outcome.reply.cluster), outcome


def report(run_id: str, event: JobEvent, subcode: int = 0, **fields: object) -> LocalJobReport:
    return LocalJobReport(JobUpdate(run_id, run_id, event, **fields), subcode)  # type: ignore[arg-type]


def event_codes(core: Schedd) -> list[int]:
    return [e.code for e, _ in core.take_log_events()]


def test_a_local_job_starts_at_once_on_the_access_point_and_completes() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL)
    [start] = starts(outcome)
    assert (start.cluster, start.proc) == (cluster, 0) and start.user == ""
    ad = core.queue.jobs[(cluster, 0)]
    assert ad["JobStatus"] == JobStatus.RUNNING and ad["JobStartDate"] == int(T0)
    assert "RemoteHost" not in ad and ad["NumJobStarts"] == 1
    core.handle(report(start.run_id, JobEvent.EXITED, exit_code=3, wall=2.0), T0 + 2)
    assert (cluster, 0) not in core.queue.jobs
    [done] = core.queue.store.history  # type: ignore[attr-defined]
    assert done["ExitCode"] == 3 and done["JobStatus"] == JobStatus.COMPLETED
    assert core.local.runs == {}


def test_events_execute_and_terminated_are_written() -> None:
    core = schedd()
    _, outcome = submit_local(core, SCHEDULER)
    [start] = starts(outcome)
    core.handle(report(start.run_id, JobEvent.EXITED, exit_code=0), T0 + 1)
    codes = event_codes(core)
    assert codes[-2:] == [EXECUTE, TERMINATED]


def test_local_jobs_are_never_offered_to_the_negotiator() -> None:
    core = schedd(start_local_universe="False")
    submit_local(core, LOCAL)
    submit(core, "")  # a vanilla job
    reply = core.handle(FetchRequests(()), T0).reply
    assert [ad.get("JobUniverse") for ad in reply.ads] == [None]


def test_start_local_universe_false_keeps_the_job_idle() -> None:
    core = schedd(start_local_universe="False")
    cluster, outcome = submit_local(core, LOCAL)
    assert starts(outcome) == []
    assert core.queue.status((cluster, 0)) == JobStatus.IDLE
    assert starts(core.handle_timer(core.next_deadline(T0 + 400))) == []


def test_start_expressions_see_the_running_totals() -> None:
    core = schedd(start_local_universe="TotalLocalJobsRunning < 2",
                  start_scheduler_universe="TotalSchedulerJobsRunning < 1")
    _, outcome = submit_local(core, LOCAL, LOCAL, LOCAL, SCHEDULER, SCHEDULER)
    started = starts(outcome)
    assert sorted(a.job["JobUniverse"] for a in started) == [7, 12, 12]
    first_local = next(a for a in started if a.job["JobUniverse"] == 12)
    outcome = core.handle(report(first_local.run_id, JobEvent.EXITED, exit_code=0), T0 + 1)
    assert [a.job["JobUniverse"] for a in starts(outcome)] == [12]


def test_the_scheduler_ad_counts_local_and_scheduler_jobs_apart() -> None:
    core = schedd(start_scheduler_universe="False")
    submit_local(core, LOCAL, SCHEDULER)
    outcome = core.handle_timer(core.next_advert)
    ads = {a.message.ad["MyType"]: a.message.ad for a in outcome.actions
           if isinstance(a, ToCollector) and isinstance(a.message, UpdateAd)}
    scheduler, submitter = ads["Scheduler"], ads["Submitter"]
    assert (scheduler["TotalLocalJobsRunning"], scheduler["TotalSchedulerJobsIdle"]) == (1, 1)
    assert (scheduler["TotalIdleJobs"], scheduler["TotalRunningJobs"]) == (0, 0)
    assert (submitter["LocalJobsRunning"], submitter["SchedulerJobsIdle"], submitter["IdleJobs"]) == (1, 1, 0)


def test_requirements_false_keeps_it_idle_but_machine_clauses_do_not() -> None:
    core = schedd()
    _, outcome = submit_local(core, LOCAL + "; Requirements = false",
                              LOCAL + '; Requirements = (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX")')
    assert [(a.cluster, a.proc) for a in starts(outcome)] == [(1, 1)]


def test_scheduler_jobs_per_owner_limit() -> None:
    core = schedd(max_running_scheduler_jobs_per_owner=1)
    _, outcome = submit_local(core, SCHEDULER, SCHEDULER)
    assert len(starts(outcome)) == 1


def test_hold_stops_the_run_and_the_exit_report_is_then_ignored() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL + '; HoldKillSig = "SIGINT"; JobMaxVacateTime = 3')
    [start] = starts(outcome)
    outcome = core.handle(JobAction(JobActionKind.HOLD, "alice", targets=(f"{cluster}.0",)), T0 + 1)
    assert stops(outcome) == [StopLocalJob(start.run_id, "SIGINT", 3.0)]
    core.handle(report(start.run_id, JobEvent.EXITED, killed=True, exit_signal=2), T0 + 2)
    ad = core.queue.jobs[(cluster, 0)]
    assert ad["JobStatus"] == JobStatus.HELD and "ExitCode" not in ad
    # released: it starts again once the old run has ended
    outcome = core.handle(JobAction(JobActionKind.RELEASE, "alice", targets=(f"{cluster}.0",)), T0 + 3)
    assert len(starts(outcome)) == 1 and core.queue.status((cluster, 0)) == JobStatus.RUNNING


def test_a_job_does_not_restart_while_its_old_run_is_stopping() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL)
    [start] = starts(outcome)
    outcome = core.handle(JobAction(JobActionKind.VACATE, "alice", targets=(f"{cluster}.0",)), T0 + 1)
    assert outcome.reply.errors == () and len(stops(outcome)) == 1 and starts(outcome) == []
    assert core.queue.status((cluster, 0)) == JobStatus.IDLE
    outcome = core.handle(report(start.run_id, JobEvent.EXITED, killed=True), T0 + 2)
    assert len(starts(outcome)) == 1
    assert EVICTED in event_codes(core)


def test_remove_stops_the_run() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL + '; RemoveKillSig = "SIGQUIT"')
    [start] = starts(outcome)
    outcome = core.handle(JobAction(JobActionKind.REMOVE, "alice", targets=(f"{cluster}.0",)), T0 + 1)
    assert stops(outcome)[0].kill_sig == "SIGQUIT"
    assert (cluster, 0) not in core.queue.jobs and ABORTED in event_codes(core)
    core.handle(report(start.run_id, JobEvent.EXITED, killed=True), T0 + 2)
    assert core.local.runs == {}


def test_periodic_remove_stops_a_running_local_job() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL + "; PeriodicRemove = time() > QDate + 100")
    [start] = starts(outcome)
    outcome = core.handle_timer(T0 + 500)
    assert [s.run_id for s in stops(outcome)] == [start.run_id]
    assert (cluster, 0) not in core.queue.jobs


def test_a_missing_executable_holds_the_job_with_the_starters_reason() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL)
    [start] = starts(outcome)
    message = "cannot execute /nope: No such file or directory"
    core.handle(report(start.run_id, JobEvent.ERROR, subcode=2, message=message), T0 + 1)
    core.handle(report(start.run_id, JobEvent.EXITED, killed=True), T0 + 1)
    ad = core.queue.jobs[(cluster, 0)]
    assert ad["JobStatus"] == JobStatus.HELD
    assert (ad["HoldReasonCode"], ad["HoldReasonSubCode"]) == (6, 2)
    assert ad["HoldReason"] == f"Error from starter on submit: {message}"
    assert HELD in event_codes(core) and core.local.runs == {}


def test_on_exit_hold_applies_to_local_jobs() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL + "; OnExitHold = ExitCode != 0")
    [start] = starts(outcome)
    core.handle(report(start.run_id, JobEvent.EXITED, exit_code=1), T0 + 1)
    assert core.queue.status((cluster, 0)) == JobStatus.HELD


def test_a_deferred_local_job_starts_at_its_deferral_time() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL + f"; DeferralTime = {int(T0) + 50}; DeferralWindow = 0")
    assert starts(outcome) == []
    assert core.next_deadline(T0) <= T0 + 50
    assert len(starts(core.handle_timer(T0 + 50))) == 1


def test_a_restarted_schedd_starts_its_running_local_jobs_again() -> None:
    store = MemoryStore()
    core = schedd(store)
    cluster, _ = submit_local(core, LOCAL)
    jobs = {job_id: ad.copy() for job_id, ad in core.queue.jobs.items()}
    again = Schedd(ScheddSettings(schedd_name="schedd@submit"), T0 + 10, store=store, jobs=jobs, host="submit")
    outcome = again.start(T0 + 10, "http://submit:1", "<127.0.0.1:1>")
    assert len(starts(outcome)) == 1
    assert again.queue.jobs[(cluster, 0)]["NumJobStarts"] == 2
    assert EVICTED in event_codes(again)


def test_usage_reports_go_into_the_ad() -> None:
    core = schedd()
    cluster, outcome = submit_local(core, LOCAL)
    [start] = starts(outcome)
    core.handle(report(start.run_id, JobEvent.USAGE, image_size_kb=2048, rss_kb=1024, user_cpu=1.5), T0 + 5)
    ad = core.queue.jobs[(cluster, 0)]
    assert (ad["ImageSize"], ad["ResidentSetSize"], ad["RemoteUserCpu"]) == (2048, 1024, 1.5)


def test_runs_as_the_owner_only_when_the_schedd_is_root() -> None:
    assert run_as("alice", schedd_is_root=True) == "alice"
    assert run_as("alice", schedd_is_root=False) == ""
    assert run_as("root", schedd_is_root=True) == ""
    core = Schedd(ScheddSettings(), T0, store=MemoryStore(), schedd_is_root=True)
    core.start(T0, "http://submit:1", "<127.0.0.1:1>")
    _, outcome = submit_local(core, LOCAL)
    assert starts(outcome)[0].user == "alice"
