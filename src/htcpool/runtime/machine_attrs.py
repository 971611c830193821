"""The static attributes a startd publishes about its machine and its abilities.

The startd core publishes slots and resources; the attributes that describe the
machine itself come from here: the platform (``Arch``, ``OpSys`` and the
``OpSys…`` family, from the configuration's probed values), the domains
(``FILESYSTEM_DOMAIN``, ``UID_DOMAIN``), the version strings that submit's
generated Requirements test, and what htcpool's starter can do, container runtimes
included (``HasContainer``, ``HasDocker`` …: only those a test container ran with,
``container_probe``).
"""

from __future__ import annotations

from typing import Any

from htcpool.config import Config
from htcpool.runtime.container_probe import probe_machine

#: the HTCondor release whose behaviour htcpool follows (condor_submit's Requirements test it)
CONDOR_VERSION = "25.14.0"


def version_string(date: str = "2026-11-24") -> str:
    return f"$CondorVersion: {CONDOR_VERSION} {date} htcpool $"


def machine_attributes(config: Config) -> dict[str, Any]:
    """The attributes of this machine: its platform and what its container runtimes can do."""
    attrs = platform_attributes(config)
    attrs.update(probe_machine(config))
    return attrs


def platform_attributes(config: Config) -> dict[str, Any]:
    """The attributes the configuration alone decides (no probe of the host): the simulator's
    machines have these, and the abilities their machine file gives them."""

    def text(name: str, default: str = "") -> str:
        value = config.get_str(name, subsystem="STARTD")
        return value if value else default

    arch = text("ARCH", "X86_64")
    opsys = text("OPSYS", "LINUX")
    host = text("FULL_HOSTNAME", "localhost")
    attrs: dict[str, Any] = {
        "Arch": arch,
        "OpSys": opsys,
        "OpSysAndVer": text("OPSYSANDVER", opsys),
        "OpSysName": text("OPSYSNAME", opsys),
        "OpSysLongName": text("OPSYSLONGNAME", opsys),
        "FileSystemDomain": text("FILESYSTEM_DOMAIN", host),
        "UidDomain": text("UID_DOMAIN", host),
        "CondorVersion": version_string(),
        "CondorPlatform": f"$CondorPlatform: {arch}-{opsys.capitalize()} $",
        "HasFileTransfer": True,
        "HasJobDeferral": True,
        "HasReconnect": True,
        "HasVM": False,
        "HasCheckpointing": False,
        "IsLocalStartd": False,
    }
    major = config.get_int("OPSYSMAJORVER", subsystem="STARTD")
    if major is not None:
        attrs["OpSysMajorVer"] = major
    return attrs

