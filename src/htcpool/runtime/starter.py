"""The starter: runs one job as a process group and reports on it, ``python -m htcpool.runtime.starter``.

The startd talks to the starter over the starter's stdin and stdout, one JSON
object per line. The first line in is ``{"spec": <LaunchSpec.to_json()>}``;
after it come commands::

    {"cmd": "suspend"}                         SIGSTOP to the job's process group
    {"cmd": "continue"}                        SIGCONT to the group
    {"cmd": "soft_kill", "signal": "SIGTERM"}  that signal to the group (then SIGCONT if stopped)
    {"cmd": "hard_kill"}                       SIGCONT, then SIGKILL to the group

and events go out: ``started`` (with the job's ``pid`` and the confinement
problems met), ``suspended``, ``continued``, ``usage`` every
``spec.usage_interval`` seconds (``update`` true on those due as reports, every
``spec.update_interval``), ``exited`` exactly once at the end (with ``oom``
when the kernel killed the job for its memory limit), or ``error`` when the job
cannot be started, after which the starter exits.

With ``spec.cgroup`` the job runs in a cgroup of its own (``confined``): made
before the job starts and entered before the job's first instruction (the starter steps into
it around the job's fork, so the job is born inside and ``subprocess`` can ``vfork``; a reniced
job, or one run as another account, enters it itself between fork and exec), read for
the usage (``usage.JobUsageSampler``), watched for OOM kills (the rest of the
job is then killed and ``exited`` carries the limit and the peak), emptied of
every process at the end and removed. A cgroup that cannot be made, or a job
that could not enter it, leaves the job running unconfined, as ``started`` says.

How it works. The starter makes the scratch directory, writes the job ad into
it, copies the input files, and starts the job with ``start_new_session`` so
the job leads its own process group, niced by ``spec.nice`` (JOB_RENICE_INCREMENT). On Linux the starter also becomes a child
subreaper, so processes the job orphans stay its descendants: they are counted
in the usage and reaped here, and every signal to the group also goes to those
that left it (``setsid``), so none escapes suspension or the final kill. One thread reads commands; the main thread waits
for the leader's exit on a pidfd (at once when it exits; naps of 50 ms where the kernel has no
pidfds), checks it with ``waitid(WNOHANG | WNOWAIT)`` and samples usage between. The leader is left a zombie for a moment, which keeps its
process-group id from being reused while the remaining members are SIGKILLed;
then it is reaped (with a cgroup, the cgroup's emptiness says that nothing of the job is left,
without a walk of the process table), outputs go back to ``Iwd`` and ``exited`` is written; the cgroup and the
scratch directory are removed after that, off the path from the job's end to its report. End of file on stdin means the startd is gone: the
group is SIGKILLed and nothing is transferred. SIGTERM, SIGHUP or SIGINT to the
starter itself does the same. The peak resident set size comes from the samples
only: a child's ``ru_maxrss`` still counts the Python process it was forked from.
The sampler and the cgroup code live in ``usage``, ``confined`` and ``cgroups``, the scratch
directory and the files in and out in ``starter_sandbox``, the process-family helpers in
``starter_family``; this module holds only the hooks.

With ``spec.run_as`` (a root startd, ``runas``) the starter stays root and the job does not:
the scratch directory is the account's (0700), the job's files are read and written with the
account's identity, and the job's process becomes the account after entering its cgroup
(``job_account``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import IO, Any

from htcpool.runtime import container
from htcpool.runtime.confined import CgroupEntry, JobConfinement
from htcpool.runtime.exit_notes import write_note
from htcpool.runtime.job_account import drop_to, switching
from htcpool.runtime.launch import LaunchError, LaunchSpec, signal_number
from htcpool.runtime.starter_family import (
    become_subreaper,
    exit_watch,
    job_process_count,
    leader_exited,
    reap_family,
    signal_strays,
)
from htcpool.runtime.starter_sandbox import (
    StartupFailure,
    open_streams,
    output_names,
    prepare_scratch,
    remove_scratch,
    staged_executable,
    transfer_outputs,
)
from htcpool.runtime.starter_wire import StarterCommand, StarterEvent
from htcpool.runtime.usage import JobUsageSampler, UpdateSchedule, assigned_devices


class EventWriter:
    """JSON lines to stdout; a vanished reader is not an error."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.lock = threading.Lock()

    def __call__(self, event: StarterEvent, **fields: Any) -> None:
        line = json.dumps({"event": event, **fields})
        with self.lock, contextlib.suppress(OSError, ValueError):
            self.stream.write(line + "\n")
            self.stream.flush()


class Starter:
    """One job's run: start, commands, usage, exit, cleanup."""

    def __init__(self, spec: LaunchSpec, emit: EventWriter) -> None:
        self.spec = spec
        self.emit = emit
        self.lock = threading.RLock()  # signalling against reaping; re-entered by signal handlers
        self.proc: subprocess.Popen[bytes] | None = None
        self.reaped = False
        self.stopped = False
        self.killed = False
        self.orphaned = False  # stdin closed: the startd is gone
        self.told = False  # the startd asked for the job to be killed (a soft or hard kill)
        self.confinement = JobConfinement(spec.cgroup)
        self.sampler = JobUsageSampler(spec.scratch_dir, self.confinement.cgroup,
                                       assigned_devices(dict(spec.environment)))
        self.entry: CgroupEntry | None = None

    def _spawn(self, streams: list[IO[bytes]]) -> subprocess.Popen[bytes]:
        """Start the job. "Text file busy" (ETXTBSY) is retried for a moment: Linux refuses to run
        a file some process still holds open for writing, which a just-written script can be
        while any process that inherited the descriptor has not yet exec'd."""
        entry = self.entry
        for attempt in range(8):
            try:
                argv, env, cwd = container.adapt(self.spec)  # a container job runs inside its image
                with entry.around() if entry is not None else contextlib.nullcontext():
                    return subprocess.Popen(
                        argv, executable=argv[0],
                        cwd=cwd, env=env, stdin=streams[0],
                        stdout=streams[1], stderr=streams[2], start_new_session=True, close_fds=True,
                        preexec_fn=self._in_child())
            except OSError as e:
                if e.errno != errno.ETXTBSY or attempt == 7:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _plain(self) -> bool:
        """Whether the job's process needs no Python between fork and exec (no renice, no other
        account), so that the starter may put it in its cgroup from outside (``CgroupEntry``)."""
        return self.spec.nice <= 0 and not switching(self.spec.run_as)

    def _in_child(self) -> Callable[[], None] | None:
        """What the job's process does before it execs: enter its cgroup (unless the starter put
        it there), lower its priority by ``spec.nice`` (JOB_RENICE_INCREMENT), become the job's
        account (``spec.run_as``). None when there is nothing to do: ``subprocess`` can then
        ``vfork``."""
        joining = self.entry.hook if self.entry is not None else None
        nice, account = self.spec.nice, self.spec.run_as
        if self._plain():
            return joining

        def prepare() -> None:
            if joining is not None:
                joining()
            if nice > 0:
                os.nice(nice)
            drop_to(account)

        return prepare

    def start(self) -> dict[str, tuple[int, int]]:
        before = prepare_scratch(self.spec)
        self.spec = staged_executable(self.spec)
        streams = open_streams(self.spec)
        try:
            self.entry = self.confinement.entry(by_starter=self._plain())
            self.proc = self._spawn(streams)
        except OSError as e:
            program = self.spec.argv[0]
            where = f" ({e.filename})" if e.filename and e.filename != program else ""
            what = "USER_JOB_WRAPPER " if self.spec.wrapper else ""
            raise StartupFailure(f"cannot execute {what}{program}: {e.strerror or e}{where}") from None
        finally:
            for f in set(streams):
                f.close()
            if self.entry is not None:
                self.entry.close()
        self.confinement.check_entered(self.proc.pid)
        self.sampler.cgroup = self.confinement.cgroup
        self.emit(StarterEvent.STARTED, pid=self.proc.pid, confinement_problems=self.confinement.problems)
        if self.orphaned:  # told to stop while starting
            self.abandon()
        return before

    # -- commands (reader thread or signal handler)
    def signal_group(self, sig: int) -> bool:
        """``sig`` to the job's group and to the job's processes that left it (``setsid``):
        all are the job's family, as in HTCondor. False when the job is already gone."""
        if self.proc is None or self.reaped:
            return False
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        signal_strays(self.proc.pid, sig)
        return True

    def command(self, message: dict[str, Any]) -> None:
        cmd = message.get("cmd")
        try:
            handler = _COMMANDS[StarterCommand(str(cmd))]
        except (ValueError, KeyError):
            raise LaunchError(f"unknown command {cmd!r}") from None
        with self.lock:
            if handler in (Starter._soft_kill, Starter._hard_kill) and self._leader_running():
                self.told = True
            handler(self, message)

    def _suspend(self, message: dict[str, Any]) -> None:
        if self.signal_group(signal.SIGSTOP):
            self.stopped = True
            self.emit(StarterEvent.SUSPENDED, processes=job_process_count())

    def _soft_kill(self, message: dict[str, Any]) -> None:
        sig = signal_number(message.get("signal") or self.spec.kill_sig)
        if self.signal_group(sig):
            self.killed = True
            self._continue()

    def _continue(self, message: dict[str, Any] | None = None) -> None:
        if self.signal_group(signal.SIGCONT) and self.stopped:
            self.stopped = False
            self.emit(StarterEvent.CONTINUED)

    def _hard_kill(self, message: dict[str, Any] | None = None) -> None:
        self.signal_group(signal.SIGCONT)
        if self.signal_group(signal.SIGKILL):
            self.killed = True
        if not self.reaped:
            self.confinement.kill_all(patience=0)

    def abandon(self) -> None:
        """The startd is gone (stdin closed) or the starter was told to stop."""
        with self.lock:
            self.orphaned = self.orphaned or self._leader_running()  # an ended job is reported as it ended
            self._hard_kill()

    def _leader_running(self) -> bool:
        """The job's leader has not exited (a look that leaves it unreaped): a kill after the
        job's own end does not make that end a lost run."""
        if self.proc is None or self.reaped:
            return self.proc is None
        try:
            found = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return False
        return found is None or found.si_pid == 0

    def read_commands(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            try:
                message = json.loads(raw)
                if not isinstance(message, dict):
                    raise LaunchError("a command is a JSON object")
                self.command(message)
            except (ValueError, LaunchError) as e:
                print(f"starter: ignoring command {raw!r}: {e}", file=sys.stderr, flush=True)
        self.abandon()

    # -- the main thread
    def wait(self) -> tuple[int, Any]:
        """Wait for the leader, sampling usage; then kill the rest of the group and reap."""
        assert self.proc is not None
        pid = self.proc.pid
        updates = UpdateSchedule(self.spec)
        next_sample = time.monotonic() + updates.step
        exited = exit_watch(pid)
        while not leader_exited(pid):
            if time.monotonic() >= next_sample:
                update = updates.due(time.monotonic())
                reading = self.sampler.sample(with_disk=update)
                self._watch_oom()
                self.emit(StarterEvent.USAGE, update=update, **reading)
                next_sample = time.monotonic() + updates.step
            exited(max(0.0, next_sample - time.monotonic()))
        exited(None)
        self.sampler.sample(with_disk=True)  # the last look at the job, for the totals
        self._watch_oom()
        with self.lock:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            _, status, rusage = os.wait4(pid, 0)
            self.reaped = True
            self.proc.returncode = os.waitstatus_to_exitcode(status)
        reap_family(pid, self.confinement)
        return status, rusage

    def _watch_oom(self) -> None:
        """The kernel killed a process of the job for its memory limit: the job is over (held, as in
        HTCondor, not left running without that process); kill the rest."""
        if self.confinement.oom_killed(self.sampler.oom_kills, self.killed):
            with self.lock:
                self.signal_group(signal.SIGKILL)
                self.confinement.kill_all(patience=1.0)

    def finish(self, before: dict[str, tuple[int, int]], status: int, rusage: Any,
               started: float) -> None:
        """Transfer outputs (unless the startd is gone), write ``exited``, then empty and remove the
        cgroup and the scratch directory: the job's processes are all gone by now (``wait``), and
        the slot may take its next job while this starter cleans up."""
        code = os.waitstatus_to_exitcode(status)
        # Ended by itself: not killed on the startd's word, and not killed here because the startd
        # went away while it ran (either came after the leader's end, or the leader exited with a
        # status, before any SIGKILL).
        alone = not self.told and (not self.orphaned or os.WIFEXITED(status))
        try:
            problems = transfer_outputs(self.spec, output_names(self.spec, before)) if alone or not self.orphaned else []
            fields = dict(exit_code=code if code >= 0 else None, exit_signal=-code if code < 0 else None,
                          user_cpu=max(rusage.ru_utime, self.sampler.user_cpu),
                          sys_cpu=max(rusage.ru_stime, self.sampler.sys_cpu),
                          wall=round(time.monotonic() - started, 3), rss_kb=self.sampler.rss_peak_kb,
                          image_size_kb=self.sampler.image_size_kb, disk_usage_kb=self.sampler.disk_usage_kb,
                          cpus_usage=self.sampler.cpus_usage(), killed=self.killed and not alone,
                          transfer_errors=problems, **self.sampler.gpus.report(),
                          oom=self.confinement.report(self.sampler.rss_peak_kb))
            if alone and self.spec.exit_note:  # before the report, which a dying startd may never read
                write_note(self.spec.exit_note, self.spec.exit_context, fields)
            self.emit(StarterEvent.EXITED, **fields)
        finally:
            self.confinement.release()
            remove_scratch(self.spec)


#: a command from the startd -> what the starter does (with the starter's lock held)
_COMMANDS: dict[StarterCommand, Callable[[Starter, dict[str, Any]], None]] = {
    StarterCommand.SUSPEND: Starter._suspend,
    StarterCommand.CONTINUE: Starter._continue,
    StarterCommand.SOFT_KILL: Starter._soft_kill,
    StarterCommand.HARD_KILL: Starter._hard_kill,
}


def main() -> int:
    emit = EventWriter(sys.stdout)
    stdin = sys.stdin.buffer
    line = stdin.readline()
    if not line:  # forked ahead and never given a job (runtime/forkserver.py)
        return 0
    try:
        first = json.loads(line)
        if not isinstance(first, dict) or "spec" not in first:
            raise LaunchError('the first line must be {"spec": ...}')
        spec = LaunchSpec.from_json(first["spec"])
    except (ValueError, LaunchError) as e:
        emit(StarterEvent.ERROR, message=f"bad launch description: {e}")
        return 2
    become_subreaper()
    starter = Starter(spec, emit)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, lambda *_: starter.abandon())
    started = time.monotonic()
    try:
        before = starter.start()
    except StartupFailure as e:
        remove_scratch(spec)
        starter.confinement.release()
        emit(StarterEvent.ERROR, message=str(e))
        return 1
    threading.Thread(target=starter.read_commands, args=(stdin,), daemon=True).start()
    try:
        status, rusage = starter.wait()
    except BaseException:
        starter.abandon()  # never leave the job behind
        raise
    starter.finish(before, status, rusage, started)
    return 0


def run() -> None:
    """Run ``main`` and leave with ``os._exit``: the command thread may still hold stdin's lock."""
    code = 70
    try:
        code = main()
    except BaseException:
        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
