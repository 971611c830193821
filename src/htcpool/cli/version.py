"""``htcpool version``: condor_version.

    htcpool version [-arch] [-opsys] [-syscall]

Prints the two lines HTCondor's tools and daemons carry in their ads: ``$CondorVersion: …$``
(the HTCondor release htcpool follows, the build date and ``htcpool``) and
``$CondorPlatform: …$`` (this machine's architecture and operating system). ``-arch`` prints
only the architecture, ``-opsys`` only the operating system, as condor_version does;
``-syscall`` (the standard universe's library, long gone from HTCondor) prints nothing.
"""

from __future__ import annotations

import argparse
import platform

from htcpool.runtime.machine_attrs import version_string


def platform_names() -> tuple[str, str]:
    """(architecture, operating system) as HTCondor names them: X86_64 / LINUX …"""
    machine = platform.machine().upper().replace("AMD64", "X86_64")
    return (machine or "UNKNOWN"), (platform.system().upper() or "UNKNOWN")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool version", description="Print the version (condor_version).")
    p.add_argument("-arch", action="store_true", help="the architecture only")
    p.add_argument("-opsys", action="store_true", help="the operating system only")
    p.add_argument("-syscall", action="store_true", help="(no standard universe: prints nothing)")
    args = p.parse_args(argv)
    arch, opsys = platform_names()
    if args.arch or args.opsys:
        print(arch if args.arch else opsys)
        return 0
    if args.syscall:
        return 0
    print(version_string())
    print(f"$CondorPlatform: {arch}-{opsys.capitalize()} $")
    return 0
