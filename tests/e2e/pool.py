"""A live personal pool for end-to-end tests: real daemons and jobs, loopback only, bounded in time.

Tests never sleep and then look. They wait for the outcome they are about with
``LivePool.wait_for`` (a deadline; on timeout it fails with the last value or error the probe
gave), or hold an outcome that must not change over a window with ``LivePool.holds_for`` (every
poll is checked; the first one that does not hold fails the test with what it saw). Both
failures carry a picture of the pool: the queue's and the history's job states, the slots'
states, the log directory, and the last traceback of every daemon log that has one.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from htcpool.classad import ClassAd
from htcpool.cli.submit import DiskFileSystem
from htcpool.protocol import DaemonCommand, HistoryQuery, JobAction, QueryAds, QueueQuery, Submit
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import PERSONAL_CONFIG, PoolClient, PoolNotRunning, start_pool, stop_pool
from htcpool.submit import SubmitHost, submit_description

FAST = """
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_MIN_INTERVAL = 0.1
SCHEDD_INTERVAL = 2
UPDATE_INTERVAL = 2
POLLING_INTERVAL = 1
MASTER_BACKOFF_CONSTANT = 1
"""

JOB_STATUS = {1: "Idle", 2: "Running", 3: "Removed", 4: "Completed", 5: "Held",
              6: "TransferringOutput", 7: "Suspended"}
_LISTED = 12  # jobs or slots named in a failure's picture of the pool; the rest are counted


class LivePool:
    def __init__(self, root: Path, extra_config: str = "") -> None:
        self.layout = PoolLayout(root / "pool")
        self.jobs_dir = root / "jobs"
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self.layout.make()
        self.layout.config.write_text(PERSONAL_CONFIG.format(local_dir=self.layout.root) + FAST
                                      + extra_config)
        self.client: PoolClient | None = None

    # -- life
    def start(self) -> None:
        try:
            start_pool(self.layout, timeout=60)
        except PoolNotRunning as e:
            master = self.layout.log_file("master")
            tail = master.read_text().splitlines()[-10:] if master.exists() else ["(no MasterLog)"]
            raise AssertionError("\n".join([f"the pool did not start: {e}", "MasterLog ends:", *tail,
                                             *self._tracebacks()])) from None
        self.client = PoolClient(self.layout)

    def stop(self, how: str = "fast") -> None:
        if self.client is not None:
            self.client.close()
        stop_pool(self.layout, how, timeout=30)

    def pid_of(self, daemon: str) -> int:
        rows = self.c.send("master", DaemonCommand("status")).rows
        return next(int(r["Pid"]) for r in rows if r["Name"] == daemon)

    def kill(self, daemon: str, sig: int = signal.SIGKILL) -> int:
        pid = self.pid_of(daemon)
        os.kill(pid, sig)
        return pid

    def wait_restarted(self, daemon: str, old_pid: int, timeout: float = 20) -> None:
        self.wait_for(lambda: self.pid_of(daemon) not in (0, old_pid)
                      and self.layout.read_address(daemon) is not None, timeout, f"{daemon} restarted")

    @property
    def c(self) -> PoolClient:
        assert self.client is not None
        return self.client

    # -- jobs
    def submit(self, text: str, owner: str = "tester") -> int:
        host = SubmitHost(user=owner, cwd=str(self.jobs_dir), now=int(time.time()),
                          environ=dict(os.environ), file_system_domain="localhost")
        result = submit_description(text, file="test.sub", host=host, fs=DiskFileSystem())
        reply = self.c.send("schedd", Submit(owner, tuple(result.jobs)))
        return int(reply.cluster)

    def jobs(self, constraint: str = "") -> list[ClassAd]:
        return list(self.c.send("schedd", QueueQuery(constraint)).ads)

    def history(self, constraint: str = "") -> list[ClassAd]:
        return list(self.c.send("schedd", HistoryQuery(constraint)).ads)

    def act(self, action: str, *targets: str, user: str = "tester", **kw: Any) -> Any:
        return self.c.send("schedd", JobAction(action, user, tuple(targets), **kw))

    def slots(self, constraint: str = "") -> list[ClassAd]:
        return list(self.c.send("collector", QueryAds("Machine", constraint)).ads)

    def job(self, cluster: int, proc: int = 0) -> ClassAd | None:
        found = self.jobs(f"ClusterId == {cluster} && ProcId == {proc}")
        return found[0] if found else None

    def status(self, cluster: int, proc: int = 0) -> int | None:
        """JobStatus in the queue, or in the history (4 completed, 3 removed); None if unknown."""
        ad = self.job(cluster, proc)
        if ad is None:
            done = self.history(f"ClusterId == {cluster} && ProcId == {proc}")
            return int(done[0]["JobStatus"]) if done else None
        return int(ad["JobStatus"])

    def idle_jobs_advertised(self, owner: str) -> int:
        """IdleJobs of the owner's submitter ads in the collector: what the negotiator will see."""
        ads = self.c.send("collector", QueryAds("Submitter")).ads
        return sum(int(ad.get("IdleJobs") or 0) for ad in ads
                   if str(ad.get("Name", "")).split("@")[0].split(".")[-1] == owner)

    def negotiation_cycles(self) -> set[int]:
        """The start times (whole seconds) of the cycles in the negotiator's ad
        (LastNegotiationCycleTime0, 1, ...)."""
        ads = self.c.send("collector", QueryAds("Negotiator")).ads
        prefix = "LastNegotiationCycleTime"
        return {int(ad[name]) for ad in ads for name in ad
                if name.startswith(prefix) and name[len(prefix):].isdigit() and ad[name]}

    # -- waiting
    def wait_for(self, test: Callable[[], Any], timeout: float = 30, what: str = "condition",
                 every: float = 0.1, show: Callable[[], Any] | None = None) -> Any:
        """Ask ``test`` every ``every`` seconds until it gives something true, and return that.
        An error from ``test`` counts as not yet (a daemon may be restarting). At the deadline
        fail with the last value or error it gave, what ``show`` gives then (for a test that
        answers only yes or no) and a picture of the pool."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = test()
            except Exception as e:  # reported if it is the last thing seen
                seen = f"it raised {e!r}"
            else:
                if value:
                    return value
                seen = f"it gave {value!r}"
            if time.monotonic() >= deadline:
                raise AssertionError(self.report(f"timed out after {timeout} s waiting for {what}; "
                                                 f"last {seen}{_shown(show)}"))
            time.sleep(every)

    def holds_for(self, test: Callable[[], Any], what: str, seconds: float = 0.0, cycles: int = 0,
                  timeout: float = 30, every: float = 0.2, show: Callable[[], Any] | None = None) -> int:
        """Check that ``test`` stays true on every poll for ``seconds`` and, with ``cycles``, until
        that many negotiation cycles that began after this call have ended (the window in which a
        match would have happened). The first poll where it is false or raises fails the test with
        what it gave and what ``show`` gives then; so do cycles that have not ended within
        ``timeout``. Returns the polls made."""
        started = time.time()
        end = time.monotonic() + seconds
        deadline = time.monotonic() + max(timeout, seconds)
        after: set[int] = set()
        polls = 0
        while True:
            try:
                value = test()
            except Exception as e:  # the pool should be steady in such a window
                value, seen = None, f"it raised {e!r}"
            else:
                seen = f"it gave {value!r}"
            polls += 1
            if not value:
                raise AssertionError(self.report(
                    f"{what} stopped holding after {time.time() - started:.1f} s "
                    f"({len(after)} of {cycles} negotiation cycles); {seen}{_shown(show)}"))
            if cycles:
                after |= {t for t in self.negotiation_cycles() if t > int(started)}
            if time.monotonic() >= end and len(after) >= cycles:
                return polls
            if time.monotonic() >= deadline:
                raise AssertionError(self.report(
                    f"only {len(after)} of {cycles} negotiation cycles ended in {timeout} s "
                    f"while checking that {what} holds"))
            time.sleep(every)

    def sample(self, probe: Callable[[], Any], seconds: float, every: float = 0.2) -> list[Any]:
        """The values of ``probe`` taken every ``every`` seconds over ``seconds``: a measurement,
        for tests whose outcome is an average over a window."""
        end = time.monotonic() + seconds
        values = [probe()]
        while time.monotonic() < end:
            time.sleep(every)
            values.append(probe())
        return values

    # -- reporting
    def report(self, headline: str) -> str:
        """``headline`` with a picture of the pool, for a failure message."""
        lines = [headline, f"pool logs in {self.layout.log}"]
        try:
            client = PoolClient(self.layout, timeout=5)
        except Exception as e:
            return "\n".join([*lines, f"no client for the pool: {e!r}", *self._tracebacks()])
        try:
            for name, daemon, message in (("queue", "schedd", QueueQuery("")),
                                          ("history", "schedd", HistoryQuery("")),
                                          ("slots", "collector", QueryAds("Machine"))):
                try:
                    ads = list(client.send(daemon, message).ads)
                except Exception as e:
                    lines.append(f"{name}: unavailable ({e!r})")
                    continue
                shown = [_slot_state(ad) if name == "slots" else _job_state(ad) for ad in ads]
                more = f", and {len(shown) - _LISTED} more" if len(shown) > _LISTED else ""
                lines.append(f"{name}: " + (", ".join(shown[:_LISTED]) + more if shown else "none"))
        finally:
            client.close()
        return "\n".join(lines + self._tracebacks())

    def _tracebacks(self) -> list[str]:
        found = []
        for path in sorted(self.layout.log.glob("*")):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            at = text.rfind("Traceback (most recent call last)")
            if at >= 0:
                count = text.count("Traceback (most recent call last)")
                excerpt = text[at:].splitlines()[:25]
                found.append(f"{path.name} has {count} traceback(s); the last:\n  " + "\n  ".join(excerpt))
        return found or ["no traceback in the daemon logs"]

    # -- the machine
    def sensors(self, **values: Any) -> None:
        tmp = self.layout.sensors.with_suffix(".tmp")
        tmp.write_text(json.dumps(values))
        os.replace(tmp, self.layout.sensors)

    def log_text(self, daemon: str) -> str:
        return self.layout.log_file(daemon).read_text()


def _shown(show: Callable[[], Any] | None) -> str:
    if show is None:
        return ""
    try:
        return f"; then {show()!r}"
    except Exception as e:
        return f"; then showing it raised {e!r}"


def _job_state(ad: ClassAd) -> str:
    status = ad.get("JobStatus")
    text = f"{ad.get('ClusterId')}.{ad.get('ProcId')} {ad.get('Owner')} {JOB_STATUS.get(status, status)}"
    if status == 5:
        text += f" ({ad.get('HoldReason')})"
    return text


def _slot_state(ad: ClassAd) -> str:
    text = f"{ad.get('Name')} {ad.get('State')}/{ad.get('Activity')}"
    owner = ad.get("RemoteOwner")
    return text + (f" for {owner}" if isinstance(owner, str) else "")


def script(directory: Path, name: str, body: str) -> str:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def process_state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


__all__ = ["LivePool", "process_state", "script", "sys"]
