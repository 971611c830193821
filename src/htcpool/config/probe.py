"""Facts about the machine that become configuration macros before any file is read.

HTCondor inserts values it detects (``DETECTED_CORES``, ``DETECTED_MEMORY``,
``FULL_HOSTNAME``, ``ARCH``, ``OPSYS``, ``IP_ADDRESS``...) into the configuration as if
a file had defined them. Here they come from a :class:`MachineFacts` value: tests build
one by hand (:func:`fake_machine`), daemons call :func:`probe_machine`, which asks the
standard library (``os``, ``socket``, ``platform``) and ``/proc``. The macros themselves
are computed from the facts by :func:`detected_macros`, a pure function.
"""

from __future__ import annotations

import getpass
import os
import platform
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from htcpool.config.conditions import CONDOR_VERSION

_ARCH_NAMES = {"x86_64": "X86_64", "amd64": "X86_64", "aarch64": "AARCH64", "arm64": "AARCH64",
               "i386": "INTEL", "i686": "INTEL", "ppc64le": "PPC64LE"}


@dataclass(frozen=True, slots=True)
class MachineFacts:
    """What the configuration needs to know about the machine and the process."""

    full_hostname: str = "localhost"
    ipv4_address: str = "127.0.0.1"
    ipv6_address: str = ""
    logical_cpus: int = 1  # what the OS schedules (hyper-threads included)
    physical_cpus: int = 1
    memory_mib: int = 1024
    uname_sysname: str = "Linux"
    uname_machine: str = "x86_64"
    os_name: str = "Linux"  # distribution name, e.g. "Debian", "AlmaLinux"
    os_major_version: str = "0"
    username: str = "condor"
    uid: int = 0
    gid: int = 0
    pid: int = 1
    ppid: int = 0
    condor_home: str = ""  # home directory of the 'condor' user (TILDE), if any


def fake_machine(**overrides: object) -> MachineFacts:
    """A deterministic machine for tests: 4 CPUs, 8 GiB, host ``test.example.org``."""
    base: dict[str, object] = {
        "full_hostname": "test.example.org",
        "ipv4_address": "192.0.2.10",
        "logical_cpus": 4,
        "physical_cpus": 4,
        "memory_mib": 8192,
        "os_name": "TestOS",
        "os_major_version": "1",
        "username": "condor",
        "pid": 1000,
        "ppid": 999,
    }
    base.update(overrides)
    return MachineFacts(**base)  # type: ignore[arg-type]


def detected_macros(
    facts: MachineFacts,
    subsystem: str | None,
    local_name: str | None,
    environ: Mapping[str, str],
    count_hyperthreads: bool = True,
) -> dict[str, str]:
    """The macros HTCondor inserts from detected facts, name -> value."""
    cpus = facts.logical_cpus if count_hyperthreads else facts.physical_cpus
    limit = cpus
    for variable in ("OMP_THREAD_LIMIT", "SLURM_CPUS_ON_NODE"):
        text = environ.get(variable, "").strip()
        if text.isdigit() and int(text) > 0:
            limit = min(limit, int(text))
    hostname = facts.full_hostname.split(".")[0]
    ip_address = facts.ipv4_address or facts.ipv6_address
    out = {
        "DETECTED_CORES": str(facts.logical_cpus),
        "DETECTED_PHYSICAL_CPUS": str(facts.physical_cpus),
        "DETECTED_CPUS": str(cpus),
        "DETECTED_CPUS_LIMIT": str(limit),
        "DETECTED_MEMORY": str(facts.memory_mib),
        "FULL_HOSTNAME": facts.full_hostname,
        "HOSTNAME": hostname,
        "IP_ADDRESS": ip_address,
        "ARCH": _ARCH_NAMES.get(facts.uname_machine.lower(), facts.uname_machine.upper()),
        "OPSYS": facts.uname_sysname.upper(),
        "OPSYSANDVER": f"{facts.os_name}{facts.os_major_version}",
        "OPSYSMAJORVER": facts.os_major_version,
        "OPSYSNAME": facts.os_name,
        "UNAME_ARCH": facts.uname_machine,
        "UNAME_OPSYS": facts.uname_sysname,
        "USERNAME": facts.username,
        "REAL_UID": str(facts.uid),
        "REAL_GID": str(facts.gid),
        "PID": str(facts.pid),
        "PPID": str(facts.ppid),
        "CONDOR_VERSION": ".".join(str(part) for part in CONDOR_VERSION),
        "CondorIsAdmin": "false",
        "SUBSYSTEM": subsystem or "",
        "LOCALNAME": local_name or subsystem or "",
    }
    if facts.ipv4_address:
        out["IPV4_ADDRESS"] = facts.ipv4_address
    if facts.ipv6_address:
        out["IPV6_ADDRESS"] = facts.ipv6_address
    if facts.condor_home:
        out["TILDE"] = facts.condor_home
    return out


def _memory_mib() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return 0


def _physical_cpus(logical: int) -> int:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            cores = {
                line.split(":")[1].strip()
                for line in handle
                if line.startswith(("core id", "physical id"))
            }
    except OSError:
        return logical
    return max(1, min(logical, len(cores))) if cores else logical


def _os_release() -> tuple[str, str]:
    try:
        with open("/etc/os-release", encoding="utf-8") as handle:
            fields = dict(
                line.rstrip("\n").split("=", 1) for line in handle if "=" in line
            )
    except OSError:
        return platform.system(), "0"
    name = fields.get("NAME", platform.system()).strip('"').split()[0]
    version = fields.get("VERSION_ID", "0").strip('"').split(".")[0]
    return name, version


def _address(family: socket.AddressFamily, hostname: str) -> str:
    try:
        infos = socket.getaddrinfo(hostname, None, family)
    except OSError:
        return ""
    return str(infos[0][4][0]) if infos else ""


def probe_machine() -> MachineFacts:
    """Facts about the machine this process runs on (standard library only)."""
    logical = os.cpu_count() or 1
    short = socket.gethostname()
    fqdn = socket.getfqdn()
    if not fqdn.startswith(short):
        fqdn = short
    uname = platform.uname()
    name, version = _os_release()
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    try:
        import pwd

        home = pwd.getpwnam("condor").pw_dir
    except (KeyError, ImportError):
        home = ""
    return MachineFacts(
        full_hostname=fqdn,
        ipv4_address=_address(socket.AF_INET, socket.gethostname()),
        ipv6_address=_address(socket.AF_INET6, socket.gethostname()),
        logical_cpus=logical,
        physical_cpus=_physical_cpus(logical),
        memory_mib=_memory_mib(),
        uname_sysname=uname.system,
        uname_machine=uname.machine,
        os_name=name,
        os_major_version=version,
        username=user,
        uid=os.getuid(),
        gid=os.getgid(),
        pid=os.getpid(),
        ppid=os.getppid(),
        condor_home=home,
    )
