"""One pool per local directory (issue 19, item 4).

The attacks, each kept here: two ``htcpool up`` at once on one directory started two masters and
two sets of daemons on one queue database; a master killed with SIGKILL left its daemons running
with nobody to supervise them; a pid file naming a pid that another process now has made
``htcpool down`` signal that process. Now the master holds an exclusive lock for its life, its
daemons shut down when it is gone (and a new master ends any that remain before it starts its
own), and pid files record the process's start time as well as its pid.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from htcpool.protocol import How
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pidfile import (
    ProcessIdentity,
    identity_of,
    is_live,
    live_pid,
    read_pid_file,
    signal_identified,
    start_of,
    write_pid_file,
)
from htcpool.runtime.pool import PoolAlreadyRunning, master_pid, start_pool, stop_pool
from htcpool.runtime.poollock import InstanceLock, PoolLocked
from htcpool.runtime.spawn import end_orphans, pid_file
from tests.e2e.pool import LivePool


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A live process that has nothing to do with any pool: nothing may signal it."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process
    process.kill()
    process.wait()


def _stale_identity(pid: int) -> ProcessIdentity:
    """What a pid file would hold had ``pid`` belonged to a process that started at another time."""
    identity = identity_of(pid)
    assert identity is not None
    return ProcessIdentity(pid, identity.start - 100)


# ---------------------------------------------------------------------------- pid files and the lock
def test_a_pid_file_names_one_process_not_a_reused_pid(tmp_path: Path, bystander: subprocess.Popen[bytes]) -> None:
    path = tmp_path / "x.pid"
    written = write_pid_file(path, bystander.pid)
    assert written is not None and read_pid_file(path) == written and live_pid(path) == bystander.pid
    path.write_text(_stale_identity(bystander.pid).text())  # the pid now belongs to another process
    assert live_pid(path) is None
    assert not signal_identified(_stale_identity(bystander.pid), signal.SIGTERM)
    path.write_text(f"{bystander.pid}\n")  # a pid alone cannot be checked: stale
    assert read_pid_file(path) is None and live_pid(path) is None
    assert bystander.poll() is None
    assert signal_identified(written, signal.SIGTERM)  # the right process is signalled
    assert bystander.wait(10) == -signal.SIGTERM
    assert not is_live(written)  # gone (reaped): the file names nobody now


def test_the_lock_admits_one_master_and_names_the_holder(tmp_path: Path) -> None:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    first = InstanceLock.acquire(layout.run, layout.master_pid)
    write_pid_file(layout.master_pid, os.getpid())
    with pytest.raises(PoolLocked) as refused:
        InstanceLock.acquire(layout.run, layout.master_pid, patience=0.2)
    assert refused.value.holder == os.getpid()
    assert f"a pool is already running in {layout.root} (master pid {os.getpid()})" in str(refused.value)
    first.release()
    InstanceLock.acquire(layout.run, layout.master_pid, patience=0.2).release()  # free again


def test_down_leaves_alone_a_process_that_got_the_masters_pid(tmp_path: Path,
                                                              bystander: subprocess.Popen[bytes]) -> None:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    layout.ensure_token()
    for stale in (_stale_identity(bystander.pid).text(), f"{bystander.pid}\n"):
        layout.master_pid.write_text(stale)
        assert master_pid(layout) is None
        assert stop_pool(layout, How.FAST, timeout=5) is False
        assert not layout.master_pid.exists() or read_pid_file(layout.master_pid) is None
        assert bystander.poll() is None, "down signalled a process that is not the master"


# ---------------------------------------------------------------------------- live
def _up(layout: PoolLayout) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "htcpool", "up", "--local-dir", str(layout.root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _daemons(layout: PoolLayout) -> dict[str, ProcessIdentity]:
    """The daemons the master recorded in ``run/<name>.pid`` (its own file left out)."""
    found = {}
    for path in layout.run.glob("*.pid"):
        identity = read_pid_file(path)
        if path != layout.master_pid and identity is not None:
            found[path.stem] = identity
    return found


def _processes_of(layout: PoolLayout, *argv_words: str) -> list[int]:
    """The running processes of this local directory whose command line has ``argv_words``."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            # a daemon forked from the master's fork server has its command line as one title
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").replace("\0", " ").split()
        except OSError:
            continue
        if str(layout.root) in argv and all(w in argv for w in argv_words) and start_of(int(entry.name)):
            pids.append(int(entry.name))
    return pids


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[LivePool]:
    live = LivePool(tmp_path)
    yield live
    stop_pool(live.layout, How.FAST, timeout=30)
    for identity in _daemons(live.layout).values():  # nothing of the test may outlive it
        signal_identified(identity, signal.SIGKILL)


def test_two_ups_at_once_start_one_pool_and_the_second_names_the_first(pool: LivePool) -> None:
    layout = pool.layout
    ups = [_up(layout), _up(layout)]
    results = [(p.wait(90), *p.communicate()) for p in ups]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 1], results
    running = master_pid(layout)
    assert running is not None
    _, out, _ = next(r for r in results if r[0] == 0)
    _, _, err = next(r for r in results if r[0] == 1)
    assert f"(master pid {running})" in out
    assert f"htcpool up: a pool is already running in {layout.root} (master pid {running})" in err, err
    assert _processes_of(layout, "htcpool.runtime.master_main") == [running]
    assert len(_processes_of(layout, "htcpool.runtime.services", "schedd")) == 1  # one schedd on the queue database
    with pytest.raises(PoolAlreadyRunning) as again:
        start_pool(layout, timeout=30)
    assert again.value.pid == running


def test_a_killed_masters_daemons_go_and_a_new_up_starts_one_pool(pool: LivePool,
                                                                  bystander: subprocess.Popen[bytes]) -> None:
    layout = pool.layout
    first = start_pool(layout, timeout=60)
    daemons = _daemons(layout)
    assert sorted(daemons) == ["collector", "negotiator", "schedd", "startd"]
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while any(is_live(i) for i in daemons.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = {name: i.pid for name, i in daemons.items() if is_live(i)}
    assert not left, f"daemons still running 30 s after their master was killed: {left}"
    # the pid file is stale now; make it name a live process that is not a master (its pid reused)
    layout.master_pid.write_text(_stale_identity(bystander.pid).text())
    second = start_pool(layout, timeout=60)
    assert second != first and master_pid(layout) == second
    assert _processes_of(layout, "htcpool.runtime.master_main") == [second]
    assert stop_pool(layout, How.FAST, timeout=30)
    assert bystander.poll() is None


def test_a_new_master_ends_daemons_its_predecessor_left(tmp_path: Path) -> None:
    """Daemons that outlive their master (one that ignores its master's death here) are waited for,
    then killed, before the new master starts its own: never two schedds on one queue."""
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGQUIT, "
                                 "signal.SIG_IGN); print('ready', flush=True); time.sleep(120)"],
                                stdout=subprocess.PIPE, text=True)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        assert stubborn.stdout is not None and stubborn.stdout.readline() == "ready\n"
        write_pid_file(pid_file(layout, "schedd"), stubborn.pid)
        write_pid_file(pid_file(layout, "negotiator"), gone.pid)
        gone.wait()  # its file is stale now
        write_pid_file(layout.master_pid, os.getpid())
        found = asyncio.run(end_orphans(layout, 0.5, keep=lambda path: path == layout.master_pid))
        assert found == ["schedd"]
        assert stubborn.wait(10) == -signal.SIGKILL
        assert sorted(p.name for p in layout.run.glob("*.pid")) == ["master.pid"]
    finally:
        stubborn.kill()
        stubborn.wait()
