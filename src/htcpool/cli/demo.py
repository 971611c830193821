"""``htcpool demo``: the README's first command — a personal pool running the examples.

It starts a personal pool in a fresh temporary directory, sets two users'
priority factors (alice 1000, bob 2000: alice should get about twice bob's
share while both wait), submits the jobs in ``examples/`` (alice's and bob's
computations, a job with a deferral time, a crontab job and a job that traps
its kill signal), shows ``q``, ``status`` and ``userprio`` while they run,
vacates the trapping job once so it checkpoints and resumes, waits for
everything, removes the crontab job after its first run, prints the history
and stops the pool. The pool's directory is kept for inspection.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from htcpool.protocol import HistoryQuery, How, QueueQuery
from htcpool.runtime.daemon import daemon_config
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import PERSONAL_CONFIG, PoolClient, start_pool, stop_pool

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DEMO_CONFIG = """
# The demonstration: four single-core slots whatever this machine has (fair
# share is decided slot by slot), quick cycles, and every claim given back after
# one job so that each slot is negotiated again and the shares show within a
# minute (HTCondor's default keeps a claim for 20 minutes).
NUM_CPUS = 4
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = 4
SLOT_TYPE_1_PARTITIONABLE = false
NEGOTIATOR_INTERVAL = 5
CLAIM_WORKLIFE = 0
"""
SUBMIT_FILES = ("alice.sub", "bob.sub", "deferred.sub", "cron.sub", "trap.sub")


def _tool(*argv: str) -> str:
    from htcpool.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(list(argv))
    return out.getvalue()


def _show(title: str, *argv: str) -> None:
    print(f"\n$ htcpool {' '.join(argv)}    # {title}")
    sys.stdout.write(_tool(*argv))
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool demo", description=__doc__)
    p.add_argument("--examples", default=str(EXAMPLES), help="the folder of example submit files")
    p.add_argument("--timeout", type=float, default=240.0, help="give up after this many seconds")
    args = p.parse_args(argv)
    examples = Path(args.examples)
    if not (examples / "alice.sub").exists():
        print(f"htcpool demo: no examples in {examples}", file=sys.stderr)
        return 1
    root = Path(tempfile.mkdtemp(prefix="htcpool-demo-"))
    layout = PoolLayout(root / "pool")
    work = root / "jobs"
    shutil.copytree(examples, work)
    (work / "out").mkdir(exist_ok=True)
    layout.make()
    layout.config.write_text(PERSONAL_CONFIG.format(local_dir=layout.root) + DEMO_CONFIG)
    os.environ["HTCPOOL_LOCAL_DIR"] = str(layout.root)
    print(f"Starting a personal pool in {layout.root} ...")
    started = time.monotonic()
    start_pool(layout)
    print(f"The pool is up ({time.monotonic() - started:.1f} s): collector, negotiator, schedd, startd.")
    old_cwd = os.getcwd()
    os.chdir(work)
    os.environ["PWD"] = str(work)  # what $ENV(PWD) in a submit file reads
    try:
        return _run(layout, work, args.timeout)
    finally:
        os.chdir(old_cwd)
        print(f"\nStopping the pool (its files stay in {root}) ...")
        stop_pool(layout, How.FAST)


def _run(layout: PoolLayout, work: Path, timeout: float) -> int:
    config = daemon_config(layout, "SCHEDD")
    domain = config.get_str("ACCOUNTING_DOMAIN") or config.get_str("UID_DOMAIN") or ""
    suffix = f"@{domain}" if domain else ""
    _show("alice gets the better factor", "userprio", "-setfactor", f"alice{suffix}", "1000")
    _show("bob's factor is twice hers", "userprio", "-setfactor", f"bob{suffix}", "2000")
    clusters: dict[str, int] = {}
    for name in SUBMIT_FILES:
        print(f"\n$ htcpool submit {name}")
        text = _tool("submit", name)
        sys.stdout.write(text)
        for word in text.split():
            if word.rstrip(".").isdigit() and "cluster" in text:
                clusters[name] = int(word.rstrip("."))
    client = PoolClient(layout)
    progress = _Progress(len(list(client.send("schedd", QueueQuery()).ads)))
    deadline = time.monotonic() + timeout
    shown = vacated = cron_removed = False
    try:
        time.sleep(3)
        _show("the queue", "q", "-allusers")
        _show("the slots", "status")
        while time.monotonic() < deadline:
            jobs = list(client.send("schedd", QueueQuery()).ads)
            trap = [j for j in jobs if j.get("ClusterId") == clusters.get("trap.sub")]
            if not vacated and trap and trap[0].get("JobStatus") == 2 and \
                    time.time() - float(trap[0].get("JobCurrentStartDate", time.time())) > 4:
                _show("vacate the trapping job: it gets SIGUSR1 and checkpoints", "vacate_job",
                      f"{clusters['trap.sub']}.0")
                vacated = True
            if not shown and sum(1 for j in jobs if j.get("JobStatus") == 2) >= 3:
                _show("while they run", "q", "-allusers", "-nobatch")
                _show("usage and priorities", "userprio")
                shown = True
            cron = [j for j in jobs if j.get("ClusterId") == clusters.get("cron.sub")]
            if cron and not cron_removed and int(cron[0].get("NumJobCompletions", 0) or 0) >= 1:
                _show("the crontab job ran once; remove it", "rm", str(clusters["cron.sub"]))
                cron_removed = True
            others = [j for j in jobs if j.get("ClusterId") != clusters.get("cron.sub")]
            if not others and (cron_removed or not cron):
                break
            progress.update(jobs)
            time.sleep(1)
        else:
            print(f"\nhtcpool demo: gave up after {timeout:.0f} s", file=sys.stderr)
            _show("what is left", "q", "-allusers", "-nobatch")
            return 1
        history = list(client.send("schedd", HistoryQuery()).ads)
    finally:
        progress.stop()
        client.close()
    _show("every job that left the queue", "history")
    _show("priorities after the run", "userprio")
    _report(work, history, clusters)
    return 0


class _Progress:
    """A one-line progress display of the queue between the tools' outputs (rich)."""

    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.total = total
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[states]}"),
                            TimeElapsedColumn(), transient=True)
        self.task = self.bar.add_task("jobs done", total=total, states="")
        self.bar.start()

    def update(self, jobs: list) -> None:
        running = sum(1 for j in jobs if j.get("JobStatus") == 2)
        idle = sum(1 for j in jobs if j.get("JobStatus") == 1)
        suspended = sum(1 for j in jobs if j.get("JobStatus") == 7)
        self.bar.update(self.task, completed=max(0, self.total - len(jobs)),
                        states=f"{running} running, {idle} idle, {suspended} suspended")

    def stop(self) -> None:
        self.bar.stop()


def _report(work: Path, history: list, clusters: dict[str, int]) -> None:
    def starts(user: str) -> list[float]:
        return sorted(float(a.get("JobStartDate", 0)) for a in history
                      if a.get("AccountingGroup") == user or a.get("AcctGroupUser") == user)

    alice, bob = starts("alice"), starts("bob")
    if alice and bob:
        first = min(alice[0], bob[0])
        print(f"\nFair share: alice's jobs started on average {sum(alice) / len(alice) - first:.1f} s "
              f"after the first start, bob's {sum(bob) / len(bob) - first:.1f} s (factor 1000 vs 2000).")
    for name in ("trap.out", "deferred.out"):
        path = work / "out" / name
        if path.exists():
            print(f"\n--- out/{name}\n{path.read_text().rstrip()}")
    log = work / "out" / "trap.log"
    if log.exists():
        events = [line.split(" ", 1)[0] for line in log.read_text().splitlines() if line[:3].isdigit()]
        print(f"\nThe trapping job's user log events: {' '.join(events)} (004 = evicted, 005 = terminated)")
