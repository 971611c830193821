"""The startd's starters: one starter process per started job, its scratch directory, its events.

The startd core decides when a job starts (``StartJob``, at once or at its deferral
time) and how its starter is signalled (``SuspendJob``, ``ContinueJob``, ``SoftKill``,
``HardKill``, ``KillStarterFamily``); ``Starters`` carries that out and nothing more:

* each activation gets a fresh scratch directory (``dir_<time>_<n>``) under its slot's
  ``SLOT<N>_EXECUTE`` when that is set, else under the startd's ``EXECUTE``, named when the activation is accepted - the schedd learns it
  as ``CondorScratchDir`` before the job starts - or when the job starts, whichever
  comes first, and forgotten when the activation ends;
* ``start`` turns the job ad into a launch (``launch.launch_spec``, through the
  startd's ``USER_JOB_WRAPPER`` when one is set, with the slot's ad as the job's
  machine ad; a bad ad is reported as the job's ``error``) and spawns the starter
  in the background.
  Commands given while the starter is being spawned wait, and are given to it in order
  once it is up; a kill given before the spawn began means the job is not started at
  all (it is reported exited, killed);
* the starter's events become ``JobUpdate`` messages (``report``, which the startd
  sends to the claim's schedd) and its end a call of ``exited``, which the startd
  turns into ``StarterExited`` for its core.
* confinement (``runtime.confinement``): each job gets the cgroup its slot's ``Memory``
  and ``Cpus`` call for, when the machine allows it (the kernel's wait before the starter's
  move into it is paid on a worker thread as the start begins: ``cgroup_moves``);
  why it does not is logged once, when the startd starts, and a cgroup or limit the kernel
  refuses in one line per job. The
  starter reads the job every ``CGROUP_POLLING_INTERVAL`` (the slot's job load comes from
  each reading); the readings marked as updates (every ``STARTER_UPDATE_INTERVAL``) go to
  the schedd and, as ``JobUsage``, to the startd core's copy of the job ad, where the
  policy reads them (with ``GPUsUsage`` and ``GPUsMemoryUsage`` for a job given NVIDIA devices,
  when NVML can read them: ``usage.GpuUsage``). A job the kernel killed for its memory limit is reported exited with a
  hold (code 34, HTCondor's message), never as an ordinary exit that would run it again.

Where the startd runs as root (and ``DISABLE_SETUID`` is not true), each job runs as the account
``runas.decide_account`` names (its owner, ``SLOT<N>_USER`` or nobody), with that account's
``HOME``; a job that may run as no account (root, a missing slot user) is reported as an error.

``JOB_RENICE_INCREMENT`` is evaluated against each job's ad and the job runs that much nicer
(0 to 19); one that is no number is a warning, and the job runs without it.

The starter itself is ``starter_client.StarterHandle``; ``spawn`` may be replaced (an
in-process test gives a fake one; the startd gives ``forked_starters``, whose starters its
fork server forks, ``runtime.forkserver``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from htcpool.classad import ClassAd, ExprTree, as_number
from htcpool.protocol import JobEvent, JobUpdate
from htcpool.protocol import startd as m
from htcpool.runtime.cgroup_moves import needs_prepared_move, prepare_move
from htcpool.runtime.cgroups import CgroupSpec, JobCgroup
from htcpool.runtime.confinement import Enforcement, cgroup_spec
from htcpool.runtime.exit_notes import note_path
from htcpool.runtime.forkserver import ForkServer
from htcpool.runtime.job_setup import parse_renice, renice_increment, slot_number
from htcpool.runtime.launch import DEFAULT_USAGE_INTERVAL, LaunchError, LaunchSpec, launch_spec
from htcpool.runtime.runas import Account, RunAsError, RunAsSettings, decide_account, os_account
from htcpool.runtime.starter_client import EventCallback, StarterHandle
from htcpool.runtime.starter_wire import StarterEvent

log = logging.getLogger("htcpool.startd")

Command = m.SuspendJob | m.ContinueJob | m.SoftKill | m.HardKill
KILLS = (m.SoftKill, m.HardKill)


class Starter(Protocol):
    """What the startd needs of a running starter (``StarterHandle`` has it)."""

    @property
    def done(self) -> bool: ...

    async def suspend(self) -> None: ...

    async def continue_(self) -> None: ...

    async def soft_kill(self, sig: str | int | None = None) -> None: ...

    async def hard_kill(self) -> None: ...

    async def kill_family(self) -> None: ...


Spawn = Callable[[LaunchSpec, EventCallback, str], Awaitable[Starter]]
#: a starter forked ahead, given its job without waiting for the event loop; None when none waits:
#: the job's start then goes through ``Spawn`` (the next turn of the loop may be milliseconds away
#: on a busy startd, and the slot's job waits that long)
Warm = Callable[[LaunchSpec, EventCallback, str], "Starter | None"]
Report = Callable[[JobUpdate, str], None]
Exited = Callable[[str, str], Awaitable[None]]
TellCore = Callable[[m.JobUsage], Awaitable[object]]
JOB_OUT_OF_RESOURCES = 34  # HTCondor's hold code for a job over its memory limit


async def spawn_starter(spec: LaunchSpec, on_event: EventCallback, stderr_path: str) -> Starter:
    """A real starter process (``python -m htcpool.runtime.starter``)."""
    return await StarterHandle.spawn(spec, on_event, stderr_path=stderr_path)


def forked_starters(server: ForkServer) -> Spawn:
    """Starters forked by ``server`` (``forkserver``) instead of started as new interpreters."""

    async def spawn(spec: LaunchSpec, on_event: EventCallback, stderr_path: str) -> Starter:
        return await StarterHandle.spawn(spec, on_event, stderr_path=stderr_path, forkserver=server)

    return spawn


def warm_starters(server: ForkServer) -> Warm:
    """Starters ``server`` forked ahead, each given its job the moment the job starts (``Warm``)."""

    def warm(spec: LaunchSpec, on_event: EventCallback, stderr_path: str) -> Starter | None:
        return StarterHandle.warm(server, spec, on_event, stderr_path)

    return warm


@dataclass
class RunningStarter:
    """The starter of one claim's job."""

    slot: str
    claim_id: str
    schedd: str  # where its reports go when the claim is no longer known (released meanwhile)
    scratch: str
    handle: Starter | None = None
    killed: bool = False
    cpu_load: float = 0.0
    pending: list[Command] = field(default_factory=list)  # given before the starter was up
    started_at: float = 0.0  # epoch seconds (the job's JobCurrentStartDate for the policy)
    cgroup: CgroupSpec | None = None  # the job's cgroup, emptied and removed here if the starter is killed
    suspended: bool = False


class Starters:
    """Every starter of one startd, by claim id."""

    def __init__(self, execute: Path, starter_log: Path, report: Report, exited: Exited,
                 clock: Callable[[], float] = time.time, spawn: Spawn = spawn_starter,
                 wrapper: str | None = None, enforcement: Enforcement | None = None,
                 tell_core: TellCore | None = None, renice: str | None = None, warm: Warm | None = None,
                 report_started: bool = True) -> None:
        self.execute = execute
        self.slot_execute: dict[int, Path] = {}  # SLOT<N>_EXECUTE, by N (``slot_execute_dirs``)
        self.renice = parse_renice(renice)  # JOB_RENICE_INCREMENT
        self.wrapper = wrapper or ""  # USER_JOB_WRAPPER
        self.starter_log = starter_log
        self.report = report
        self.exited = exited
        self.clock = clock
        self.spawn = spawn
        self.warm = warm
        #: whether a job's start is reported. The startd's are not: its schedd counted the run as begun
        #: when the activation was accepted (the execute event), and the report would only renew the
        #: claim's lease, which that reply has just done (a request and a queue transaction per job).
        #: The schedd's local universe starts its jobs on that report.
        self.report_started = report_started
        self.running: dict[str, RunningStarter] = {}
        self._scratch: dict[str, str] = {}
        self._dirs = itertools.count(1)
        self.enforcement = enforcement or Enforcement(update_interval=DEFAULT_USAGE_INTERVAL,
                                                      initial_update_interval=DEFAULT_USAGE_INTERVAL)
        self.tell_core = tell_core
        #: where the startd runs as root: which account each job runs as (``runas``); None: the startd's
        self.run_as: RunAsSettings | None = None
        self.accounts: Callable[[str], Account | None] = os_account
        #: where each starter notes its job's exit before reporting it (``exit_notes``); None: no notes
        self.notes: Path | None = None
        self._draining: set[Starter] = set()  # forgotten starters whose events are still being read
        if enforcement is not None:  # said once, when the startd starts
            for problem in enforcement.problems:
                log.warning("%s", problem)
            (log.info if enforcement.version is not None else log.warning)("%s", enforcement.describe())

    # ------------------------------------------------------------------ activations
    def scratch_dir(self, claim_id: str, slot: str = "") -> str:
        """The scratch directory of the claim's current activation (named on first use), under
        the slot's own execute directory (``SLOT<N>_EXECUTE``) or else ``EXECUTE``."""
        path = self._scratch.get(claim_id)
        if path is None:
            root = self.execute_of(slot)
            path = self._scratch[claim_id] = str(root / f"dir_{int(self.clock())}_{next(self._dirs)}")
        return path

    def execute_of(self, slot: str) -> Path:
        """Where the jobs of ``slot`` (``slotN`` or its dynamic ``slotN_M``) get their scratch directories."""
        n = slot_number(slot)
        return self.slot_execute.get(n, self.execute) if n is not None else self.execute

    def activation_ended(self, claim_id: str) -> None:
        """The activation is over without a starter of its own (its job never started)."""
        if claim_id not in self.running:
            self._scratch.pop(claim_id, None)

    def find(self, claim_id: str, slot: str) -> RunningStarter | None:
        """The starter of the claim, or else the one running on the slot."""
        found = self.running.get(claim_id)
        return found or next((s for s in self.running.values() if s.slot == slot), None)

    def loads(self) -> dict[str, float]:
        """Each slot's job CPU load as its starter last measured it."""
        return {s.slot: s.cpu_load for s in self.running.values()}

    def any_running(self) -> bool:
        return any(s.handle is not None and not s.handle.done for s in self.running.values())

    # ------------------------------------------------------------------ the core's actions
    def start(self, action: m.StartJob, schedd: str, machine_ad: ClassAd | None = None,
              extra_env: Mapping[str, str] | None = None) -> None:
        """Start the job's starter; ``machine_ad`` (the slot's ad) is given to the job as HTCondor's
        ``_CONDOR_MACHINE_AD`` file, ``extra_env`` (its devices' variables) in its environment."""
        starter = RunningStarter(action.slot, action.claim_id, schedd, self.scratch_dir(action.claim_id, action.slot))
        self.running[action.claim_id] = starter
        try:
            spec = self._confine(launch_spec(action.job, starter.scratch, action.slot, extra_env or {}, machine_ad,
                                             self.wrapper, now=self.clock()), action, machine_ad)
            spec = self._noted(self._account(spec, action), action, schedd)
        except (LaunchError, RunAsError) as e:
            self._not_started(starter, JobUpdate(starter.claim_id, starter.slot, JobEvent.ERROR, message=str(e)))
            return
        starter.cgroup = spec.cgroup
        loop = asyncio.get_running_loop()
        if spec.cgroup is not None and needs_prepared_move(spec.cgroup):  # the kernel's wait, paid meanwhile
            loop.run_in_executor(None, prepare_move, spec.cgroup)
        handle = self.warm(spec, self._on_event(starter), str(self.starter_log)) if self.warm is not None else None
        if handle is not None:
            starter.handle = handle
        else:
            loop.create_task(self._launch(starter, spec))

    def _confine(self, spec: LaunchSpec, action: m.StartJob, machine_ad: ClassAd | None) -> LaunchSpec:
        """The launch with the job's cgroup and the starter's reading and update intervals."""
        enf = self.enforcement
        cgroup, problems = cgroup_spec(enf, action.job, machine_ad, spec.scratch_dir, action.slot, self.clock())
        if problems:
            log.warning("job on %s: %s", action.slot, "; ".join(problems))
        return replace(spec, cgroup=cgroup, usage_interval=enf.polling_interval, nice=renice_increment(self.renice, action),
                       update_interval=enf.update_interval, initial_update_interval=enf.initial_update_interval)

    def _noted(self, spec: LaunchSpec, action: m.StartJob, schedd: str) -> LaunchSpec:
        """The launch with where its starter notes the job's exit, and what the note names."""
        if self.notes is None:
            return spec
        job = f"{action.job.get('ClusterId')}.{action.job.get('ProcId')}"
        return replace(spec, exit_note=str(note_path(self.notes, action.claim_id)),
                       exit_context={"claim_id": action.claim_id, "slot": action.slot, "schedd": schedd, "job": job})

    def _account(self, spec: LaunchSpec, action: m.StartJob) -> LaunchSpec:
        """The launch run as the account ``runas`` decides, with that account's ``HOME`` (as
        HTCondor's STARTER_SETS_HOME_ENV), when the startd runs as root."""
        if self.run_as is None:
            return spec
        account = decide_account(action.job, slot_number(action.slot), self.run_as, self.accounts)
        log.info("job on %s runs as %s (uid %d)", action.slot, account.name, account.uid)
        owner = action.job.eval("Owner")
        found = self.accounts(owner) if isinstance(owner, str) and owner else None
        submitter = found if found is not None and found.uid != 0 and found != account else None
        return replace(spec, run_as=account, owner_account=submitter,
                       environment={"HOME": account.home, **spec.environment})

    async def command(self, action: Command) -> None:
        starter = self.find(action.claim_id, action.slot)
        if starter is None:
            return
        if isinstance(action, KILLS):
            starter.killed = True
        if starter.handle is None:
            starter.pending.append(action)
            return
        await _give(starter.handle, action)

    async def kill_family(self, action: m.KillStarterFamily) -> None:
        starter = self.find(action.claim_id, action.slot)
        if starter is not None and starter.handle is not None:
            starter.killed = True
            await starter.handle.kill_family()
            release_cgroup(starter.cgroup)

    async def stop(self, patience: float) -> None:
        """Let the starters end for up to ``patience`` seconds, then kill what is left."""
        deadline = time.monotonic() + patience
        while self.any_running() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        for starter in list(self.running.values()):
            if starter.handle is not None and not starter.handle.done:
                await starter.handle.kill_family()
                release_cgroup(starter.cgroup)

    # ------------------------------------------------------------------ the starter's life
    async def _launch(self, starter: RunningStarter, spec: LaunchSpec) -> None:
        if any(isinstance(c, KILLS) for c in starter.pending):  # killed before it began
            self._not_started(starter, JobUpdate(starter.claim_id, starter.slot, JobEvent.EXITED, killed=True))
            return
        try:
            starter.handle = await self.spawn(spec, self._on_event(starter), str(self.starter_log))
        except OSError as e:
            if starter.killed or any(isinstance(c, KILLS) for c in starter.pending):
                # killed while it was starting (the startd shutting down took the fork server
                # with it): the job never ran, it is not the job's error to be held for
                self._not_started(starter, JobUpdate(starter.claim_id, starter.slot, JobEvent.EXITED,
                                                     killed=True))
            else:
                self._not_started(starter, JobUpdate(starter.claim_id, starter.slot, JobEvent.ERROR,
                                                     message=f"could not start the starter: {e}"))
            return
        pending, starter.pending = starter.pending, []
        for command in pending:
            await _give(starter.handle, command)

    def _on_event(self, starter: RunningStarter) -> EventCallback:
        """What the starter's events are given to (each handled in a task of its own)."""

        def on_event(event: dict[str, Any]) -> None:
            asyncio.get_running_loop().create_task(self._event(starter, event))

        return on_event

    def _not_started(self, starter: RunningStarter, update: JobUpdate) -> None:
        """The job never started: report it, then end the starter's turn."""
        self.report(update, starter.schedd)
        self._forget(starter)
        asyncio.get_running_loop().create_task(self._ended(starter))

    def _forget(self, starter: RunningStarter) -> None:
        if self.running.get(starter.claim_id) is starter:
            del self.running[starter.claim_id]
        # Held until its events are all read: a forked starter's reading task is otherwise reachable
        # only through its pipe's protocol, which holds the stream weakly, so once the fork server
        # has told the starter's end the collector could destroy the task while it still waits
        # (asyncio's "Task was destroyed but it is pending!").
        self._draining = {handle for handle in self._draining if not handle.done}
        if starter.handle is not None and not starter.handle.done:
            self._draining.add(starter.handle)

    async def _ended(self, starter: RunningStarter) -> None:
        """The activation is over: its scratch directory name goes, the core hears of it."""
        if starter.claim_id not in self.running:
            self._scratch.pop(starter.claim_id, None)
        await self.exited(starter.slot, starter.claim_id)

    async def _event(self, starter: RunningStarter, event: dict[str, Any]) -> None:
        try:
            handler = _EVENTS[StarterEvent(str(event.get("event")))]
        except (ValueError, KeyError):
            log.warning("starter of %s sent an unknown event %r", starter.slot, event.get("event"))
            return
        await handler(self, starter, event)

    async def _usage(self, starter: RunningStarter, event: dict[str, Any]) -> None:
        """Every reading gives the slot's job load; an update also goes to the schedd and the core."""
        starter.cpu_load = _real(event, "cpu_load")
        if event.get("update") is False:
            return
        rss = _whole(event, "rss_peak_kb") or _whole(event, "rss_kb")
        update = JobUpdate(starter.claim_id, starter.slot, JobEvent.USAGE, user_cpu=_real(event, "user_cpu"),
                           sys_cpu=_real(event, "sys_cpu"), rss_kb=rss, image_size_kb=_whole(event, "image_size_kb"),
                           disk_usage_kb=_whole(event, "disk_usage_kb"), cpus_usage=_real(event, "cpus_usage"),
                           **_gpu_fields(event))
        self.report(update, starter.schedd)
        if self.tell_core is not None:
            await self.tell_core(m.JobUsage(starter.slot, starter.claim_id, job_attributes(update, starter)))

    async def _progress(self, starter: RunningStarter, event: dict[str, Any]) -> None:
        """started, suspended, continued: reported with how many of the job's processes (started
        only where ``report_started`` says so)."""
        kind = JobEvent(str(event["event"]))
        if kind is JobEvent.STARTED:
            starter.started_at = self.clock()
            problems = event.get("confinement_problems") or []
            if problems:
                log.warning("job on %s: %s", starter.slot, "; ".join(str(p) for p in problems))
            if not self.report_started:
                return
        elif kind in (JobEvent.SUSPENDED, JobEvent.CONTINUED):
            starter.suspended = kind is JobEvent.SUSPENDED
        self.report(JobUpdate(starter.claim_id, starter.slot, kind,
                              processes=_whole(event, "processes")), starter.schedd)

    async def _error(self, starter: RunningStarter, event: dict[str, Any]) -> None:
        self.report(JobUpdate(starter.claim_id, starter.slot, JobEvent.ERROR,
                              message=str(event.get("message", ""))), starter.schedd)

    async def _exited(self, starter: RunningStarter, event: dict[str, Any]) -> None:
        self._forget(starter)
        if not event.get("reported_error"):
            # a starter that says its job was not killed saw the job end before the kill came:
            # that end is the job's own and is reported as such
            killed = starter.killed and event.get("killed") is not False
            self.report(exit_update(starter.claim_id, starter.slot, event, killed), starter.schedd)
            # let the report's sending task write it before the core's bookkeeping of the end (the
            # slot's state, its ads, the log): the schedd answers meanwhile, and its answer, the
            # claim's next job, is what the slot waits for
            await asyncio.sleep(0)
        await self._ended(starter)


#: a starter's event kind -> what the startd makes of it
_EVENTS: dict[StarterEvent, Callable[[Starters, RunningStarter, dict[str, Any]], Awaitable[None]]] = {
    StarterEvent.USAGE: Starters._usage,
    StarterEvent.STARTED: Starters._progress,
    StarterEvent.SUSPENDED: Starters._progress,
    StarterEvent.CONTINUED: Starters._progress,
    StarterEvent.ERROR: Starters._error,
    StarterEvent.EXITED: Starters._exited,
}


#: one of the core's commands -> what the starter is told
_COMMANDS: dict[type, Callable[[Starter, Any], Awaitable[None]]] = {
    m.SuspendJob: lambda handle, _: handle.suspend(),
    m.ContinueJob: lambda handle, _: handle.continue_(),
    m.SoftKill: lambda handle, command: handle.soft_kill(command.kill_sig),
    m.HardKill: lambda handle, _: handle.hard_kill(),
}


async def _give(handle: Starter, command: Command) -> None:
    """Pass one of the core's commands to a running starter."""
    await _COMMANDS[type(command)](handle, command)


def release_cgroup(spec: CgroupSpec | None) -> None:
    """After a starter was killed (it could not clean up): kill what is left in its job's cgroup
    and remove it."""
    if spec is not None:
        cgroup = JobCgroup(spec)
        cgroup.kill_all(patience=1.0)
        cgroup.remove()


def job_attributes(u: JobUpdate, starter: RunningStarter) -> dict[str, Any]:
    """A usage update as the job ad's attributes, for the startd's policy (HTCondor's names)."""
    attrs: dict[str, Any] = {
        "JobState": "Suspended" if starter.suspended else "Running",
        "RemoteUserCpu": float(u.user_cpu), "RemoteSysCpu": float(u.sys_cpu),
        "CpusUsage": float(u.cpus_usage), "DiskUsage": int(u.disk_usage_kb),
    }
    if starter.started_at:
        attrs["JobCurrentStartDate"] = int(starter.started_at)
    if u.rss_kb:
        attrs["ResidentSetSize"] = int(u.rss_kb)
        attrs["MemoryUsage"] = ExprTree("((ResidentSetSize + 1023) / 1024)")
    if u.image_size_kb:
        attrs["ImageSize"] = int(u.image_size_kb)
    if u.gpus_usage is not None:
        attrs["GPUsUsage"] = float(u.gpus_usage)
    if u.gpus_memory_mb is not None:
        attrs["GPUsMemoryUsage"] = int(round(u.gpus_memory_mb))
    return attrs


def exit_update(claim_id: str, slot: str, event: Mapping[str, Any], killed: bool) -> JobUpdate:
    """A starter's ``exited`` event as the startd's report to the schedd; ``killed`` when the
    startd had the job killed. A job the kernel killed for its memory limit is held
    (``out_of_memory``) unless the startd was killing it anyway."""
    oom = event.get("oom") if not killed else None
    hold = out_of_memory(slot, oom) if isinstance(oom, dict) else {}
    code, sig = as_number(event.get("exit_code")), as_number(event.get("exit_signal"))
    return JobUpdate(
        claim_id, slot, JobEvent.EXITED,
        exit_code=None if code is None else int(code), exit_signal=None if sig is None else int(sig),
        killed=killed or bool(event.get("killed")) or bool(hold), wall=_real(event, "wall"),
        user_cpu=_real(event, "user_cpu"), sys_cpu=_real(event, "sys_cpu"),
        rss_kb=_whole(event, "rss_kb"), image_size_kb=_whole(event, "image_size_kb"),
        disk_usage_kb=_whole(event, "disk_usage_kb"), cpus_usage=_real(event, "cpus_usage"),
        **_gpu_fields(event), **hold)


def out_of_memory(slot: str, oom: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an exit the kernel caused by the job's memory limit: held with HTCondor's
    code (34, JobOutOfResources) and message, as its starter words it."""
    limit, usage = as_number(oom.get("limit_mb")), as_number(oom.get("usage_mb"))
    if limit is not None and limit >= 0:
        text = (f"Job has gone over cgroup memory limit of {int(limit)} megabytes. Last measured usage: "
                f"{int(usage or 0)} megabytes.  Consider resubmitting with a higher request_memory.")
    else:
        text = "Job has encountered an out-of-memory event."
    return {"hold_code": JOB_OUT_OF_RESOURCES, "hold_subcode": 0,
            "message": f"Error from {slot}: {text}"}


def _real(event: Mapping[str, Any], key: str) -> float:
    value = as_number(event.get(key))
    return 0.0 if value is None else float(value)


def _gpu_fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """The job's GPU readings (``GPUsUsage``, ``GPUsMemoryUsage``) when the starter had any."""
    out: dict[str, Any] = {}
    for key in ("gpus_usage", "gpus_memory_mb"):
        value = as_number(event.get(key))
        if value is not None:
            out[key] = float(value)
    return out


def _whole(event: Mapping[str, Any], key: str) -> int:
    value = as_number(event.get(key))
    return 0 if value is None else int(value)


__all__ = ["RunningStarter", "Starter", "Starters", "exit_update", "forked_starters", "spawn_starter"]
