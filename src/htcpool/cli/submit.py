"""``htcpool submit``: condor_submit's command line.

    htcpool submit [-dry-run FILE] [-append LINE]... [-queue ARGS] [-batch-name NAME]
                   [SUBMIT_FILE | -] [name=value]...

With ``-dry-run FILE`` the job ads are printed in condor_submit's dry-run
format to FILE (``-`` for standard output) and nothing is submitted; warnings
go to standard error as ``WARNING: …`` lines, errors as ``ERROR: …`` with
exit status 1. This module is the boundary with the machine: it reads the
clock, the environment, the user name and the disk and hands them to the
submit core as a ``SubmitHost`` and a ``FileSystemView``.
"""

from __future__ import annotations

import argparse
import getpass
import os
import platform
import sys
from pathlib import Path

from htcpool.clock import wall_clock
from htcpool.submit import SubmitError, SubmitHost, format_dry_run, submit_description


class DiskFileSystem:
    """The submit core's view of the real file system."""

    def size(self, path: str) -> int | None:
        try:
            return os.stat(path).st_size
        except OSError:
            return None

    def read_text(self, path: str) -> str | None:
        try:
            return Path(path).read_text()
        except OSError:
            return None

    def list_dir(self, path: str) -> list[tuple[str, bool]] | None:
        try:
            with os.scandir(path) as entries:
                return sorted((e.name, e.is_dir()) for e in entries)
        except OSError:
            return None


def local_host() -> SubmitHost:
    """The submitting user and machine as this process sees them."""
    machine = platform.machine().upper().replace("AMD64", "X86_64")
    return SubmitHost(user=getpass.getuser(), cwd=os.getcwd(), now=int(wall_clock()),
                      environ=dict(os.environ), arch=machine, opsys=platform.system().upper(),
                      file_system_domain=platform.node() or "localhost")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool submit", description="Submit jobs (condor_submit).")
    p.add_argument("-dry-run", "-dry", dest="dry_run", metavar="FILE",
                   help="print the job ads to FILE ('-' for standard output) instead of submitting")
    p.add_argument("-append", "-a", dest="append", action="append", default=[], metavar="LINE",
                   help="add a submit command before the queue statement")
    p.add_argument("-queue", dest="queue", metavar="ARGS", help="queue statement replacing the file's")
    p.add_argument("-batch-name", dest="batch_name", metavar="NAME", help="set batch_name")
    p.add_argument("-terse", dest="terse", action="store_true", help="print only the job ids")
    p.add_argument("args", nargs="*", help="submit file ('-' for standard input) and name=value pairs")
    return p


def main(argv: list[str]) -> int:
    options = _parser().parse_args(argv)
    files = [a for a in options.args if "=" not in a]
    extra = [a for a in options.args if "=" in a] + list(options.append)
    if options.batch_name:
        extra.append(f"batch_name = {options.batch_name}")
    if len(files) > 1:
        print(f"ERROR: only one submit file may be given, not {' '.join(files)}", file=sys.stderr)
        return 1
    name = files[0] if files else "-"
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text()
    except OSError as e:
        print(f"ERROR: Failed to open command file ({e.strerror})", file=sys.stderr)
        return 1
    try:
        result = submit_description(text, file="" if name == "-" else name, host=local_host(),
                                    fs=DiskFileSystem(), extra_commands=extra,
                                    queue_args=options.queue)
    except SubmitError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f"WARNING: {warning}", file=sys.stderr)
    if options.dry_run is None:
        return _submit_to_schedd(result.jobs, options.terse)
    listing = format_dry_run(result.jobs, result.cluster_id)
    if options.dry_run == "-":
        sys.stdout.write(listing)
    else:
        Path(options.dry_run).write_text(listing)
    return 0


def _submit_to_schedd(jobs: list, terse: bool) -> int:
    """Send the cluster to the pool's schedd and print what condor_submit prints."""
    from htcpool.protocol import Submit
    from htcpool.runtime.http import RequestRefused
    from htcpool.runtime.pool import PoolClient, PoolNotRunning, local_layout

    if not jobs:
        print("ERROR: no jobs queued", file=sys.stderr)
        return 1
    try:
        client = PoolClient(local_layout())
        reply = client.send("schedd", Submit(getpass.getuser(), tuple(jobs)))
    except (PoolNotRunning, RequestRefused) as e:
        print(f"\nERROR: Failed submitting the job(s): {e}", file=sys.stderr)
        return 1
    for warning in reply.warnings:
        print(f"WARNING: {warning}", file=sys.stderr)
    if terse:
        last = reply.count - 1
        print(f"{reply.cluster}.0 - {reply.cluster}.{last}")
    else:
        from htcpool.cli.formats import format_submit_result
        sys.stdout.write(format_submit_result([(reply.cluster, reply.count)]))
    return 0
