"""Starting, finding and stopping a personal pool, and talking to its daemons from tools.

``start_pool(layout)`` makes the local directory, writes the personal
configuration when there is none, creates the pool's signing key and the
daemons' token (docs/security.md) and starts the master
in the background (its own session, so it outlives the command); it returns
once the daemons have written their addresses and the startd's slots are in
the collector. A local directory has one pool: when a master already runs there
(its pid file names a live process, ``runtime/pidfile.py``, or it holds the
directory's lock, ``runtime/poollock.py``) ``start_pool`` raises
``PoolAlreadyRunning`` naming it. ``stop_pool`` asks the master to shut down and
waits for it; it signals only the process the pid file names, never one that
was given the pid after the master was gone.
``PoolClient`` is what the command-line tools use: it finds the daemons in the
local directory and reaches each on its Unix socket when it has one there (the
user is then known by their uid, no token needed), else on its TCP address with
the first token of the user's that the pool issued (``client_token``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from htcpool.protocol import AdList, Command, DaemonCommand, How, QueryAds
from htcpool.runtime.hostplan import HostPlan, HostSetupError, prepare_host, read_plan
from htcpool.runtime.http_client import RequestRefused, SyncClient
from htcpool.runtime.layout import PoolLayout, default_local_dir
from htcpool.runtime.pidfile import (
    is_live,
    live_pid,
    read_pid_file,
    remove_pid_file,
    signal_identified,
)
from htcpool.runtime.poollock import EXIT_LOCKED
from htcpool.runtime.security import ownership

PERSONAL_CONFIG = """\
# The configuration of an htcpool personal pool (HTCondor's configuration language).
# Written once by `htcpool up`; edit it and run `htcpool reconfig` or `htcpool restart`.

LOCAL_DIR = {local_dir}
LOG = $(LOCAL_DIR)/log
SPOOL = $(LOCAL_DIR)/spool
EXECUTE = $(LOCAL_DIR)/execute

use ROLE : Personal
DAEMON_LIST = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD

# One partitionable slot with the whole machine, as HTCondor's personal pool has.
use FEATURE : PartitionableSlot

# A personal pool should answer at once: short intervals (HTCondor's defaults
# are minutes, made for pools of thousands of machines).
NEGOTIATOR_INTERVAL = 10
NEGOTIATOR_MIN_INTERVAL = 0.2
SCHEDD_INTERVAL = 5
PERIODIC_EXPR_INTERVAL = 5
UPDATE_INTERVAL = 10
POLLING_INTERVAL = 1
STARTER_UPDATE_INTERVAL = 5
MASTER_BACKOFF_CONSTANT = 1
MASTER_BACKOFF_CEILING = 30
ALIVE_INTERVAL = 30
SHUTDOWN_GRACEFUL_TIMEOUT = 30
"""

class PoolNotRunning(RuntimeError):
    pass


class PoolAlreadyRunning(PoolNotRunning):
    """A start that started nothing: another master runs the pool in that local directory."""

    def __init__(self, root: Path, pid: int | None) -> None:
        self.pid = pid
        who = f"master pid {pid}" if pid is not None else "another master"
        super().__init__(f"a pool is already running in {root} ({who}); stop it with `htcpool down` first")


def write_personal_config(layout: PoolLayout) -> None:
    if not layout.config.exists():
        layout.config.write_text(PERSONAL_CONFIG.format(local_dir=layout.root))


def master_pid(layout: PoolLayout) -> int | None:
    """The pid of the pool's running master; None when the pid file is absent or stale."""
    return live_pid(layout.master_pid)


def start_pool(layout: PoolLayout, *, foreground: bool = False, timeout: float = 60.0) -> int:
    """Start the master; returns its pid (in the foreground: runs until it stops and returns 0)."""
    if untrusted := ownership.problems(layout):  # docs/reliability.md, "A local directory others control"
        raise PoolNotRunning(f"refusing to start a pool in {layout.root}:\n  " + "\n  ".join(untrusted))
    layout.make()
    write_personal_config(layout)
    try:
        plan = prepare_host(layout)  # a host joining a pool on other hosts: its keys, its collector
    except HostSetupError as e:
        raise PoolNotRunning(str(e)) from None
    layout.ensure_token()
    running = master_pid(layout)
    if running is not None:
        raise PoolAlreadyRunning(layout.root, running)
    command = [sys.executable, "-m", "htcpool.runtime.master_main", "--local-dir", str(layout.root)]
    env = dict(os.environ, CONDOR_CONFIG=str(layout.config))
    if foreground:
        return subprocess.call(command, env=env)  # a refused master says why on this terminal
    with open(layout.log / "MasterLog.out", "ab") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    wait_until_ready(layout, timeout, process, plan)
    return process.pid


def wait_until_ready(layout: PoolLayout, timeout: float, process: subprocess.Popen[bytes] | None = None,
                     plan: HostPlan | None = None) -> None:
    """Wait until the daemons of this host (``plan``, by default the configuration's) are up."""
    plan = plan if plan is not None else read_plan(layout)
    deadline = time.monotonic() + timeout
    client = PoolClient(layout)
    last = ""
    try:
        while time.monotonic() < deadline:
            if process is not None and process.poll() == EXIT_LOCKED:
                raise PoolAlreadyRunning(layout.root, master_pid(layout))
            if process is not None and process.poll() is not None:
                raise PoolNotRunning(f"the master exited (status {process.returncode}); "
                                     f"see {layout.log_file('master')}")
            ours = process is None or master_pid(layout) == process.pid  # not another master's pool
            if ours and plan.addresses_written(layout):
                try:
                    if _host_ready(client, layout, plan):
                        return
                except (PoolNotRunning, httpx.HTTPError, RequestRefused) as e:
                    last = f"{type(e).__name__}: {e}"
            time.sleep(0.05)
    finally:
        client.close()
    where = ""
    if plan.remote_collector and not plan.runs("collector"):
        where = f" (the collector at {plan.remote_collector}: {last or 'no ad of this host yet'})"
    raise PoolNotRunning(f"the pool did not come up in {timeout:.0f} s{where}; see {layout.log}")


def _host_ready(client: PoolClient, layout: PoolLayout, plan: HostPlan) -> bool:
    """The startd's slots are in the collector; without a startd, the collector answers."""
    startd = layout.read_address("startd") if plan.runs("startd") else None
    if startd is not None:
        return bool(client.query("Machine", f'MyAddress == "{startd}"', ("Name",)))
    if plan.runs("startd"):  # only startds under other names: any of this pool's slots will do
        return bool(client.query("Machine", "", ("Name",)))
    client.query("Collector", "", ("Name",))
    return True


def stop_pool(layout: PoolLayout, how: How = How.GRACEFUL, timeout: float = 60.0) -> bool:
    """Ask the master to shut the pool down; False when no pool was running (a stale pid file, one
    whose process is gone or whose pid another process now has, is removed and that process left
    alone)."""
    master = read_pid_file(layout.master_pid)
    if master is None or not is_live(master):
        if master is not None:
            remove_pid_file(layout.master_pid, master.pid)
        return False
    client = PoolClient(layout)
    try:
        client.send("master", DaemonCommand(Command.OFF, how))
    except (PoolNotRunning, httpx.HTTPError, RequestRefused):
        signal_identified(master, signal.SIGQUIT if how == How.FAST else signal.SIGTERM)
    finally:
        client.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and is_live(master):
        time.sleep(0.05)
    signal_identified(master, signal.SIGKILL)  # only if it is still that master
    return True


class PoolClient:
    """Synchronous access to a pool's daemons for the command-line tools."""

    def __init__(self, layout: PoolLayout, timeout: float = 30.0) -> None:
        from htcpool.runtime.security.credentials import client_chooser, client_token

        self.layout = layout
        if not layout.token_file.exists():
            raise PoolNotRunning(f"no pool in {layout.root} (run `htcpool up`)")
        self.client = SyncClient(lambda: client_token(layout), timeout, layout.ca_file, client_chooser(layout))

    def url(self, daemon: str) -> str:
        url = self.layout.read_address(daemon)
        if url is None:
            raise PoolNotRunning(f"the {daemon} of the pool in {self.layout.root} is not running "
                                 "(run `htcpool up`)")
        return url

    def route(self, daemon: str) -> str:
        """Where to send to ``daemon``: its Unix socket when it has one, else its URL."""
        sock = self.layout.socket_file(daemon)
        if sock.exists():
            return f"unix:{sock}"
        return self.url(daemon)

    def send(self, daemon: str, message: Any) -> Any:
        try:
            return self.client.send(self.route(daemon), message)
        except (httpx.ConnectError, httpx.ConnectTimeout, PoolNotRunning) as e:
            if daemon == "collector" and self.layout.read_collectors():
                return self._next_collector(message)
            if not isinstance(e, httpx.ConnectError):
                raise
            raise PoolNotRunning(f"cannot reach the {daemon} at {self.url(daemon)}") from None

    def _next_collector(self, message: Any) -> Any:
        """``message`` to the collectors ``run/collectors`` lists, in order, the first that answers
        (COLLECTOR_HOST with several collectors: docs/security.md)."""
        tried = [url for url in (self.layout.read_address("collector"),) if url]
        for url in self.layout.read_collectors():
            if url in tried:
                continue
            try:
                return self.client.send(url, message)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                tried.append(url)
        raise PoolNotRunning(f"no collector answers (tried {', '.join(tried)})")

    def send_to(self, url: str, message: Any) -> Any:
        """``message`` to the daemon at ``url`` (one of several startds), on its socket when local."""
        return self.client.send(self.layout.local_route(url), message)

    def query(self, my_type: str, constraint: str = "", projection: tuple[str, ...] = ()) -> list[Any]:
        reply = self.send("collector", QueryAds(my_type, constraint, projection))
        return list(reply.ads) if isinstance(reply, AdList) else []

    def close(self) -> None:
        self.client.close()


def local_layout(path: str | None = None) -> PoolLayout:
    return PoolLayout(Path(path) if path else default_local_dir())
