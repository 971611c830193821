"""``htcpool tail``: condor_tail, the output of a running job.

    htcpool tail [-f] [-maxbytes N] [-stderr] [-no-stdout] [-auto-retry] JOB [FILE ...]

Prints the last ``-maxbytes`` bytes (default 1024) of the job's standard output, then of its
standard error with ``-stderr`` (``-no-stdout`` leaves stdout out), then of each FILE the job
writes in its scratch directory. ``-f`` follows them, printing what is appended, until the job
stops running.

How the files are found: htcpool's starter writes the job's ``Out`` and ``Err`` straight to
their place under the job's ``Iwd`` (``runtime/launch.py``), and the schedd records the
scratch directory the startd gave the job (``CondorScratchDir``). A personal pool's execute
point is this machine, so the tool reads those files itself; that is the simplest reading
that is correct for a pool whose startds share the tool's filesystem. A job that is not
running is an error (``-auto-retry`` waits for it to start instead).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from typing import Any

from htcpool.cli.common import ToolError, connect, request, run_tool
from htcpool.protocol import QueueQuery

ACTIVE = (2, 6, 7)  # Running, Transferring Output, Suspended
POLL_SECONDS = 0.5


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="condor_tail", description="Show a running job's output.")
    p.add_argument("-f", "-follow", dest="follow", action="store_true", help="follow the files while the job runs")
    p.add_argument("-maxbytes", type=int, default=1024, metavar="N", help="bytes of each file (default 1024)")
    p.add_argument("-stderr", action="store_true", help="the job's standard error too")
    p.add_argument("-no-stdout", action="store_true", help="not the job's standard output")
    p.add_argument("-auto-retry", action="store_true", help="wait for the job to start running")
    p.add_argument("-debug", action="store_true", help="(accepted for HTCondor's sake)")
    p.add_argument("job", help="cluster.proc (cluster alone means proc 0)")
    p.add_argument("files", nargs="*", help="files the job writes in its scratch directory")
    return p


def job_files(job: Any, *, stdout: bool, stderr: bool, extra: list[str]) -> list[str]:
    """The paths to show for ``job``'s ad, in order; ToolError for a stream the job sends nowhere."""
    iwd = str(job.get("Iwd", "") or "")
    scratch = str(job.get("CondorScratchDir", "") or "")
    shared = str(job.get("ShouldTransferFiles", "") or "").upper() == "NO"
    paths = []
    for wanted, attr in ((stdout, "Out"), (stderr, "Err")):
        if not wanted:
            continue
        name = str(job.get(attr, "") or "")
        if not name or name == "/dev/null":
            raise ToolError(f"the job's {'stdout' if attr == 'Out' else 'stderr'} goes nowhere ({attr} is not set)")
        paths.append(os.path.join(iwd, os.path.expanduser(name)))
    base = iwd if shared or not scratch else scratch
    paths.extend(os.path.join(base, name) for name in extra)
    return paths


def tail_bytes(path: str, limit: int) -> tuple[bytes, int]:
    """The last ``limit`` bytes of ``path`` and the file's size (b"", 0 when it is not there yet)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            return f.read(), size
    except FileNotFoundError:
        return b"", 0
    except OSError as e:
        raise ToolError(f"cannot read {path}: {e.strerror or e}") from None


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)

    def body() -> int:
        found = re.fullmatch(r"(\d+)(?:\.(\d+))?", args.job)
        if found is None:
            raise ToolError(f"{args.job!r} is not a job id (cluster.proc)")
        cluster, proc = int(found.group(1)), int(found.group(2) or 0)
        client = connect()

        def job_ad() -> Any:
            ads = request(client, "schedd", QueueQuery(f"ClusterId == {cluster} && ProcId == {proc}")).ads
            return ads[0] if ads else None

        job = job_ad()
        while job is not None and job.get("JobStatus") not in ACTIVE and args.auto_retry:
            time.sleep(POLL_SECONDS)
            job = job_ad()
        if job is None:
            raise ToolError(f"job {cluster}.{proc} is not in the queue")
        if job.get("JobStatus") not in ACTIVE:
            raise ToolError(f"job {cluster}.{proc} is not running")
        paths = job_files(job, stdout=not args.no_stdout, stderr=args.stderr, extra=args.files)
        if not paths:
            raise ToolError("nothing to show (-no-stdout without -stderr or files)")
        out = sys.stdout.buffer
        sizes = {}
        for path in paths:
            data, sizes[path] = tail_bytes(path, max(0, args.maxbytes))
            out.write(data)
        out.flush()
        while args.follow:
            time.sleep(POLL_SECONDS)
            for path in paths:
                data, size = tail_bytes(path, 1 << 20)
                grown = size - sizes[path]
                if grown > 0:
                    out.write(data[-grown:])
                sizes[path] = size
            out.flush()
            job = job_ad()
            if job is None or job.get("JobStatus") not in ACTIVE:
                return 0
        return 0

    return run_tool("condor_tail", body)
