"""How a job gets into its cgroup and how its end is seen there (``confined.CgroupEntry``,
``starter_family.reap_family``), against fake cgroup trees and, where the machine allows it, the real
cgroups with real starters: the job is born inside its cgroup, the starter goes back to its own,
and what the job leaves behind is gone when its exit is reported."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os
import signal
import subprocess
from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.runtime.cgroup_moves import (
    home_entry_files,
    needs_prepared_move,
    own_cgroups,
    prepare_move,
)
from htcpool.runtime.cgroups import CgroupSpec, CgroupVersion, JobCgroup, MemoryLimits, detect
from htcpool.runtime.confined import CgroupEntry, open_job_cgroup
from htcpool.runtime.forkserver import ForkServer
from htcpool.runtime.launch import LaunchSpec
from htcpool.runtime.starter_client import StarterHandle, child_environment
from tests.runtime import test_starter as base
from tests.runtime.test_cgroups import spec as fake_spec
from tests.runtime.test_cgroups import v1_tree, v2_tree

REAL = detect()
_SERIAL = itertools.count(1)
needs_cgroups = pytest.mark.skipif(REAL.version is None, reason=f"no usable cgroups here: {REAL.reason}")


# ---------------------------------------------------------------------------- fake trees
def test_the_starter_finds_its_own_cgroups_under_the_root(tmp_path: Path) -> None:
    own = own_cgroups()
    root = v1_tree(tmp_path / "v1")
    for controller in ("memory", "cpu", "cpuacct", "freezer"):
        home = root / controller / own.get(controller, "/").lstrip("/")
        home.mkdir(parents=True, exist_ok=True)
        (home / "tasks").write_text("")  # v1: a thread moves itself through its cgroup's tasks file
    cgroup = JobCgroup(fake_spec(root, CgroupVersion.V1))
    known = all(c in own for c in cgroup.dirs)  # a host without v1 hierarchies names none of them
    assert home_entry_files(cgroup) == ([str(root / c / own[c].lstrip("/") / "tasks") for c in cgroup.dirs]
                                        if known else None)
    v2 = JobCgroup(fake_spec(v2_tree(tmp_path / "v2"), CgroupVersion.V2))
    assert home_entry_files(v2) is None  # nothing of this process's under that root
    if "" in own:
        home = tmp_path / "v2" / own[""].lstrip("/")
        home.mkdir(parents=True, exist_ok=True)
        (home / "cgroup.procs").write_text("")  # v2: whole processes only
        assert home_entry_files(v2) == [str(home / "cgroup.procs")]


def test_only_whole_process_moves_are_prepared_ahead(tmp_path: Path) -> None:
    """v1 moves the starter's thread (``tasks``), which does not wait for the kernel; v2 moves
    the process, whose wait the startd pays ahead (``prepare_move``)."""
    v1 = fake_spec(v1_tree(tmp_path / "v1"), CgroupVersion.V1)
    v2 = fake_spec(v2_tree(tmp_path / "v2"), CgroupVersion.V2)
    assert [Path(f).name for f in JobCgroup(v1).entry_files()] == ["tasks"] * 4
    assert [Path(f).name for f in JobCgroup(v2).entry_files()] == ["cgroup.procs"]
    assert not needs_prepared_move(v1) and needs_prepared_move(v2)


def test_without_its_own_cgroups_the_jobs_process_joins_by_itself(tmp_path: Path) -> None:
    cgroup, _ = open_job_cgroup(fake_spec(v1_tree(tmp_path), CgroupVersion.V1))
    assert cgroup is not None
    for file in cgroup.entry_files():
        Path(file).write_text("")
    entry = CgroupEntry(cgroup, by_starter=True)  # the fake tree has no cgroup of this process
    try:
        assert not entry.by_starter and entry.hook is not None
        with entry.around():  # nothing to step into
            pass
        assert all(Path(f).read_text() == "" for f in cgroup.entry_files())
        entry.hook()
        assert all(Path(f).read_text() == "0" for f in cgroup.entry_files())
    finally:
        entry.close()


def test_kill_all_spares_the_process_that_calls_it(tmp_path: Path) -> None:
    """A starter the kernel kept inside its job's cgroup kills the job, not itself, and freezes
    nothing (it would freeze itself)."""
    cgroup, _ = open_job_cgroup(fake_spec(v1_tree(tmp_path), CgroupVersion.V1))
    assert cgroup is not None
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        Path(cgroup.dirs["memory"], "cgroup.procs").write_text(f"{os.getpid()}\n{sleeper.pid}\n")
        assert cgroup.kill_all(patience=0.1) is False  # the fake file never empties
        assert sleeper.wait(5) == -signal.SIGKILL
        assert not Path(cgroup.dirs["freezer"], "freezer.state").exists()
        Path(cgroup.dirs["memory"], "cgroup.procs").write_text(f"{os.getpid()}\n")
        assert cgroup.kill_all(patience=0) is True
    finally:
        if sleeper.poll() is None:
            sleeper.kill()


def test_preparing_a_move_changes_nothing_and_never_fails(tmp_path: Path) -> None:
    before = Path("/proc/self/cgroup").read_text()
    prepare_move(fake_spec(v2_tree(tmp_path), CgroupVersion.V2))  # no cgroup of ours in there
    if REAL.version is not None:
        prepare_move(CgroupSpec("/sys/fs/cgroup", REAL.version, "htcondor", "unused"))
    assert Path("/proc/self/cgroup").read_text() == before


# ---------------------------------------------------------------------------- the real cgroups
def _confined(tmp_path: Path, body: str, **changes: object) -> tuple[LaunchSpec, str]:
    assert REAL.version is not None
    name = f"htcpool_entry_{os.getpid()}_{next(_SERIAL)}"
    cgroup = CgroupSpec("/sys/fs/cgroup", REAL.version, "htcondor", name, MemoryLimits(hard_mb=256))
    spec = base.make_spec(tmp_path, base.script(tmp_path, body))
    return dataclasses.replace(spec, cgroup=cgroup, **changes), name  # type: ignore[arg-type]


def _cgroup_lines(pid: int | str) -> dict[str, str]:
    """A process's cgroup path by controller (``""`` for v2), from /proc."""
    out: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            out[controller] = path
    return out


def _hierarchies() -> tuple[str, ...]:
    assert REAL.version is not None
    if REAL.version is CgroupVersion.V2:
        return ("",)
    return tuple(c for c in ("memory", "cpu", "cpuacct", "freezer") if os.path.isdir(f"/sys/fs/cgroup/{c}"))


@needs_cgroups
def test_the_starter_steps_into_the_jobs_cgroup_and_back() -> None:
    assert REAL.version is not None
    cgroup, problems = open_job_cgroup(CgroupSpec("/sys/fs/cgroup", REAL.version, "htcondor",
                                                  f"htcpool_entry_{os.getpid()}_{next(_SERIAL)}"))
    assert cgroup is not None and problems == []
    entry = CgroupEntry(cgroup, by_starter=True)
    mine = _cgroup_lines("self")
    try:
        assert entry.by_starter and entry.hook is None
        with entry.around():
            inside = _cgroup_lines("self")
            assert cgroup.members() == [os.getpid()]
        assert all(inside[h].endswith(f"/htcondor/{cgroup.spec.name}") for h in _hierarchies()), inside
        assert _cgroup_lines("self") == mine and cgroup.members() == []
    finally:
        entry.close()
        cgroup.remove()


@needs_cgroups
@pytest.mark.parametrize("forked", [False, True], ids=["exec", "forked"])
def test_the_job_is_born_in_its_cgroup_and_the_starter_goes_back(tmp_path: Path, forked: bool) -> None:
    spec, name = _confined(tmp_path, "cat /proc/self/cgroup > cgroup.txt\nsleep 30\n")
    mine = _cgroup_lines("self")

    async def test() -> None:
        server = ForkServer(child_environment()) if forked else None
        try:
            events = base.Events()
            handle = await StarterHandle.spawn(spec, events, forkserver=server)
            base.HANDLES.append(handle)
            started = await events.until("started")
            assert started["confinement_problems"] == [], started
            starter = _cgroup_lines(handle.pid)
            assert all(starter[h] == mine[h] for h in _hierarchies()), (starter, mine)
            seen = tmp_path / "scratch" / "cgroup.txt"
            await base.poll(lambda: seen.exists() and f"/htcondor/{name}" in seen.read_text())
            job = _cgroup_lines(started["pid"])
            assert all(job[h].endswith(f"/htcondor/{name}") for h in _hierarchies()), job
            await handle.hard_kill()
            assert (await events.until("exited"))["exit_signal"] == signal.SIGKILL
            await handle.wait()
        finally:
            if server is not None:
                await server.close()

    base.run(test)
    assert not any(os.path.exists(d) for d in JobCgroup(spec.cgroup).dirs.values())  # type: ignore[arg-type]


@needs_cgroups
def test_what_the_job_leaves_in_its_cgroup_is_gone_when_its_exit_is_reported(tmp_path: Path) -> None:
    spec, _ = _confined(tmp_path, "setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' &\n"
                                  "while [ ! -s escaped.pid ]; do sleep 0.05; done\n")

    async def test() -> None:
        handle, events, _ = await base.start(spec)
        found = tmp_path / "scratch" / "escaped.pid"
        await base.poll(lambda: found.exists() and found.read_text().strip() != "")
        escaped = int(found.read_text())
        exited = await events.until("exited")
        assert exited["exit_code"] == 0 and base.gone(escaped), base.status(escaped)
        await handle.wait()

    base.run(test)


@needs_cgroups
def test_a_reniced_job_joins_its_cgroup_by_itself(tmp_path: Path) -> None:
    spec, name = _confined(tmp_path, "cut -d' ' -f19 /proc/$$/stat\ncat /proc/self/cgroup\n", nice=5)

    async def test() -> None:
        _, events, _ = await base.start(spec)
        assert events.seen[0]["confinement_problems"] == []
        assert (await events.until("exited"))["exit_code"] == 0

    base.run(test)
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert int(lines[0]) == min(os.getpriority(os.PRIO_PROCESS, 0) + 5, 19)
    assert f"/htcondor/{name}" in "\n".join(lines[1:])


def test_a_first_line_larger_than_the_pipe_reaches_a_forked_starter(tmp_path: Path) -> None:
    """The launch description goes into the starter's stdin before the fork; what does not fit
    in the pipe follows once the starter is up."""
    ad = str(ClassAd({"Big": "x" * (300 * 1024)}))
    spec = dataclasses.replace(base.make_spec(tmp_path, base.script(tmp_path, 'wc -c < "$_CONDOR_JOB_AD"\n')),
                               job_ad_text=ad)

    async def test() -> None:
        server = ForkServer(child_environment())
        try:
            events = base.Events()
            handle = await StarterHandle.spawn(spec, events, forkserver=server)
            base.HANDLES.append(handle)
            assert (await events.until("exited"))["exit_code"] == 0, events.seen
            await asyncio.wait_for(handle.wait(), 5)
        finally:
            await server.close()

    base.run(test)
    assert (tmp_path / "out.txt").read_text().strip() == str(len(ad.encode()))
