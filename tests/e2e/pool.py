"""A live personal pool for end-to-end tests: real daemons and jobs, loopback only, bounded in time."""

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
from htcpool.protocol import HistoryQuery, JobAction, QueryAds, QueueQuery, Submit
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import PERSONAL_CONFIG, PoolClient, start_pool, stop_pool
from htcpool.submit import SubmitHost, submit_description

FAST = """
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_MIN_INTERVAL = 0.1
SCHEDD_INTERVAL = 2
UPDATE_INTERVAL = 2
POLLING_INTERVAL = 1
MASTER_BACKOFF_CONSTANT = 0.5
"""


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
        start_pool(self.layout, timeout=60)
        self.client = PoolClient(self.layout)

    def stop(self, how: str = "fast") -> None:
        if self.client is not None:
            self.client.close()
        stop_pool(self.layout, how, timeout=30)

    def pid_of(self, daemon: str) -> int:
        client = self.c
        from htcpool.protocol import DaemonCommand
        rows = client.send("master", DaemonCommand("status")).rows
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

    def wait_for(self, test: Callable[[], Any], timeout: float = 30, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = test()
            except Exception:  # a daemon restarting
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}; logs in {self.layout.log}")

    def sensors(self, **values: Any) -> None:
        tmp = self.layout.sensors.with_suffix(".tmp")
        tmp.write_text(json.dumps(values))
        os.replace(tmp, self.layout.sensors)

    def log_text(self, daemon: str) -> str:
        return self.layout.log_file(daemon).read_text()


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
