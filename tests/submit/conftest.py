"""The world the golden outputs were made in: user alice in /home/alice/jobs."""

from __future__ import annotations

import pytest

from htcpool.submit import MemoryFileSystem, SubmitHost
from tests.shared import SHARED

GOLDEN = SHARED / "golden" / "submit"
CWD = "/home/alice/jobs"
VERSION = "$CondorVersion: 25.14.0 2026-11-21 PRE-RELEASE-UWCS $"
PLATFORM = "$CondorPlatform: X86_64-Debian_12 $"
ENVIRON = {"HOME": "/home/alice", "PATH": "/usr/local/bin:/usr/bin:/bin"}
# sizes in KiB of the executables on the machine the goldens came from
EXECUTABLES = {"/bin/true": 35, "/bin/sleep": 43, "/bin/echo": 43, "/bin/cat": 43, "/usr/bin/env": 48}


def golden_fs() -> MemoryFileSystem:
    fs = MemoryFileSystem()
    for path, kib in EXECUTABLES.items():
        fs.sizes[path] = kib * 1024 - 300
    fs.files[f"{CWD}/items.txt"] = "one\ntwo\nthree\n"
    for name in ("a.dat", "b.dat", "c.dat"):
        fs.files[f"{CWD}/{name}"] = ""
    fs.dirs.update({f"{CWD}/run_0", f"{CWD}/run_1"})
    return fs


def golden_host(now: int = 1795307086) -> SubmitHost:
    return SubmitHost(user="alice", cwd=CWD, now=now, environ=ENVIRON, arch="X86_64", opsys="LINUX",
                      file_system_domain="localhost", condor_version=VERSION, condor_platform=PLATFORM)


@pytest.fixture
def fs() -> MemoryFileSystem:
    return golden_fs()


@pytest.fixture
def host() -> SubmitHost:
    return golden_host()
