"""Local and scheduler universe jobs, run by the schedd on the access point.

The schedd core decides which of these jobs start and stop (``schedd/localjobs.py``);
this driver carries out its ``StartLocalJob`` and ``StopLocalJob`` actions with the
very starters the execute point uses (``runtime.starters.Starters`` over
``starter_client.StarterHandle``), keyed by the core's run id where the startd keys
them by claim id:

* each run gets a scratch directory under ``LOCAL_UNIV_EXECUTE`` (default
  ``$(SPOOL)/local_univ_execute``, as in HTCondor) holding the job ad, named in
  ``_CONDOR_SCRATCH_DIR``; the job itself runs in its ``Iwd`` with nothing
  transferred, since it runs where it was submitted;
* where the schedd runs as root the starter, and so the job, runs as the account the
  core named (the job's owner): the scratch directory is made and given to that
  account first; an owner unknown on this machine is a start failure;
* a stop is the job's kill signal, then SIGKILL when the run is still there after
  the grace the core gave;
* everything the starter reports goes back to the core, in order, as a
  ``LocalJobReport`` (``deliver``), a start failure with the system error number
  when the message names one;
* when the schedd stops, the runs are killed (HTCondor's schedd ends its local
  starters too); the core vacates those jobs when it starts again.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import pwd
from collections.abc import Callable
from pathlib import Path

from htcpool.protocol import JobEvent, JobUpdate
from htcpool.protocol import startd as m
from htcpool.runtime.launch import LaunchSpec
from htcpool.runtime.starter_client import EventCallback, StarterHandle
from htcpool.runtime.starters import Starter, Starters
from htcpool.schedd import LocalJobReport, StartLocalJob, StopLocalJob

log = logging.getLogger("htcpool.schedd")
Deliver = Callable[[LocalJobReport], None]
#: system error messages a start failure may carry, and their numbers (the hold's subcode)
_ERRNO_BY_MESSAGE = {os.strerror(code): code for code in (errno.ENOENT, errno.EACCES, errno.ENOEXEC,
                                                          errno.ENOTDIR, errno.EISDIR)}


def error_number(message: str) -> int:
    """The system error number a starter's failure message names, 0 when none."""
    return next((code for text, code in _ERRNO_BY_MESSAGE.items() if text in message), 0)


class LocalUniverse:
    """The schedd's local runs."""

    def __init__(self, execute: Path, starter_log: Path, deliver: Deliver,
                 clock: Callable[[], float]) -> None:
        self.execute = execute
        self.deliver = deliver
        self.starters = Starters(execute, starter_log, self._report, self._exited, clock=clock,
                                 spawn=self._spawn)
        #: the account each run's starter runs as, by scratch directory (empty: the schedd's)
        self._users: dict[str, str] = {}

    def start(self, action: StartLocalJob) -> None:
        """Start the run's starter; a failure is reported like the starter's own."""
        self.execute.mkdir(parents=True, exist_ok=True)
        scratch = self.starters.scratch_dir(action.run_id)
        try:
            if action.user:
                _give_to(scratch, action.user)
        except (KeyError, OSError) as e:
            why = f"no account {action.user!r} on this machine" if isinstance(e, KeyError) else str(e)
            self.starters.activation_ended(action.run_id)
            self._report(JobUpdate(action.run_id, action.run_id, JobEvent.ERROR,
                                   message=f"cannot run the job as its owner: {why}"), "")
            self._report(JobUpdate(action.run_id, action.run_id, JobEvent.EXITED, killed=True), "")
            return
        self._users[scratch] = action.user
        job = action.job.copy()
        job["ShouldTransferFiles"] = "NO"  # it runs where it was submitted, in its Iwd
        self.starters.start(m.StartJob(action.run_id, action.run_id, job), schedd="")

    async def stop(self, action: StopLocalJob) -> None:
        """The job's kill signal now, SIGKILL after the grace if the run is still there."""
        await self.starters.command(m.SoftKill(action.run_id, action.run_id, action.kill_sig, action.grace))
        asyncio.get_running_loop().create_task(self._hard_kill_later(action))

    async def _hard_kill_later(self, action: StopLocalJob) -> None:
        await asyncio.sleep(action.grace)
        if action.run_id in self.starters.running:
            await self.starters.command(m.HardKill(action.run_id, action.run_id))

    async def close(self) -> None:
        """The schedd stops: kill every run."""
        await self.starters.stop(0.0)

    # ------------------------------------------------------------------ the starters' side
    async def _spawn(self, spec: LaunchSpec, on_event: EventCallback, stderr_path: str) -> Starter:
        user = self._users.pop(spec.scratch_dir, "")
        return await StarterHandle.spawn(spec, on_event, stderr_path=stderr_path, user=user or None)

    def _report(self, update: JobUpdate, schedd: str) -> None:
        subcode = error_number(update.message) if update.event == JobEvent.ERROR else 0
        self.deliver(LocalJobReport(update, subcode))

    async def _exited(self, slot: str, run_id: str) -> None:
        """The run is over; a run that never started has reported no exit, so one goes now (the
        core ignores a second one)."""
        self.deliver(LocalJobReport(JobUpdate(run_id, run_id, JobEvent.EXITED, killed=True)))


def _give_to(path: str, user: str) -> None:
    """Make the scratch directory ``path`` and give it to ``user`` (KeyError: no such account)."""
    account = pwd.getpwnam(user)
    os.makedirs(path, mode=0o700, exist_ok=True)
    os.chown(path, account.pw_uid, account.pw_gid)


__all__ = ["LocalUniverse", "error_number"]
