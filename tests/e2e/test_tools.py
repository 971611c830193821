"""The pool tools (``htcpool q``, ``status``, ``userprio``, ``prio``, ``hold`` …) run as commands
against a live pool: their output has the shape of HTCondor 25's (the goldens in
../shared/golden/tools: headings, column layout and wording; times, hosts, users and sizes
vary) and their effect on the pool is the one the command asks for.

The pool of the goldens (one partitionable slot of 4 CPUs and 4096 MB, groups
``group_physics`` and ``group_chemistry`` with quotas 2 and 2, accepting surplus) runs the
goldens' three submit files; the tools run as user ``alice`` (``$LOGNAME``), so the owners and
the hold reason read as in the goldens. Read-only views of one pool state run in parallel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from htcpool.classad import ClassAd, ParserType, parseAds
from htcpool.classad.unparse import unparse_old
from htcpool.protocol import HistoryQuery, QueryAds, QueueQuery, UserprioQuery
from htcpool.runtime.http import RequestRefused
from tests.e2e.pool import LivePool
from tests.shared import SHARED

GOLDEN = SHARED / "golden" / "tools"
USER = "alice"

# The goldens' pool. CONSUMPTION_POLICY works around a negotiator bug (a partitionable-slot match
# is charged the whole slot's weight, so quotas below its 4 CPUs match nothing; see
# test_group_quota_below_the_partitionable_slot_weight_still_matches); with it each match costs
# the CPUs the job takes, as the goldens' pool charged (3 jobs of group_physics in use).
GROUPS = """
NUM_CPUS = 4
MEMORY = 4096
GROUP_NAMES = group_physics, group_chemistry
GROUP_QUOTA_group_physics = 2
GROUP_QUOTA_group_chemistry = 2
GROUP_ACCEPT_SURPLUS = true
"""
CONSUMPTION = "CONSUMPTION_POLICY = True\n"

SCHEDD_LINE = re.compile(r"-- Schedd: \S+@\S+ : <127\.0\.0\.1:\d+\?\.\.\. @ \d\d/\d\d/\d\d \d\d:\d\d:\d\d")
TOTALS = re.compile(r"Total for (query|all users): (\d+) jobs; (\d+) completed, (\d+) removed, (\d+) idle, "
                    r"(\d+) running, (\d+) held, (\d+) suspended")


# ------------------------------------------------------------------ running the tools


def tool_env(pool_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CONDOR_CONFIG", "COLUMNS")}
    env.update(HTCPOOL_LOCAL_DIR=str(pool_dir), LOGNAME=USER, USER=USER, **extra)
    return env


def run(pool: LivePool, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """``htcpool ARGS`` as a user types it, in the pool's job directory."""
    return subprocess.run([sys.executable, "-m", "htcpool", *args], input=stdin, capture_output=True,
                          text=True, timeout=60, cwd=pool.jobs_dir, env=tool_env(pool.layout.root, **env))


def ok(pool: LivePool, *args: str, stdin: str | None = None) -> str:
    """The standard output of a tool that must succeed without complaint."""
    done = run(pool, *args, stdin=stdin)
    assert done.returncode == 0 and done.stderr == "", (args, done.returncode, done.stderr)
    return done.stdout


def ok_all(pool: LivePool, commands: dict[str, Sequence[str]]) -> dict[str, str]:
    """Several read-only tools at once (one pool state), by name."""
    with ThreadPoolExecutor(max_workers=8) as workers:
        futures = {name: workers.submit(ok, pool, *args) for name, args in commands.items()}
        return {name: f.result() for name, f in futures.items()}


def fails(done: subprocess.CompletedProcess[str], prog: str) -> str:
    """A tool that failed as HTCondor's tools do: status 1, one line on standard error, no traceback."""
    assert done.returncode == 1, (done.args, done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"htcpool {prog}: "), done.stderr
    return done.stderr


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


def golden_lines(name: str) -> list[str]:
    return golden(name).split("\n")


# ------------------------------------------------------------------ helpers on the pool


def steady(pool: LivePool, running: int, timeout: float = 30) -> list[ClassAd]:
    """Wait until ``running`` jobs run (the slot is full, so nothing changes until they end)."""
    pool.wait_for(lambda: len(pool.jobs("JobStatus == 2")) == running, timeout, f"{running} running jobs")
    return pool.jobs()


def ads(text: str) -> list[ClassAd]:
    return list(parseAds(text, ParserType.Old))


def column_of(heading: str, title: str) -> int:
    return heading.index(title)


# ------------------------------------------------------------------ the goldens' session


@pytest.mark.long
def test_views_and_job_actions_like_the_goldens(make_pool) -> None:
    pool = make_pool(GROUPS + CONSUMPTION)
    for name in ("submit_a.sub", "submit_b.sub", "submit_c.sub"):
        (pool.jobs_dir / name).write_text(golden(name))

    # condor_submit: byte for byte the goldens (clusters 1, 2, 3); as in the goldens, cluster 1
    # runs before the others arrive (then one job of cluster 2 fills the fourth CPU)
    assert ok(pool, "submit", "submit_a.sub") == golden("submit_a.txt")
    steady(pool, running=3)
    for name in ("submit_b", "submit_c"):
        assert ok(pool, "submit", f"{name}.sub") == golden(f"{name}.txt")
    # someone else's job, which never matches (it asks for more memory than the slot has)
    other = pool.submit("executable = /bin/sleep\narguments = 300\nrequest_memory = 999999\nqueue\n",
                        owner="tester")
    assert other == 4

    # -dry-run: the ads, and nothing queued
    dry = ok(pool, "submit", "-dry-run", "-", stdin=golden("submit_a.sub"))
    assert dry.startswith("Dry-Run job(s)\nClusterId=") and dry.endswith("3 job(s) dry-run to cluster 1.\n")
    assert dry.count("\n.\n") == 3 and 'Cmd="/bin/sleep"' in dry
    assert len(pool.jobs()) == 9

    jobs = steady(pool, running=4)
    mine = sorted((j for j in jobs if j["Owner"] == USER), key=lambda j: (j["ClusterId"], j["ProcId"]))
    assert len(mine) == 8 and all(j["JobStatus"] == 2 for j in mine if j["ClusterId"] == 1)
    status = {(j["ClusterId"], j["ProcId"]): j["JobStatus"] for j in mine}
    running = sorted(k for k, s in status.items() if s == 2)
    idle = sorted(k for k, s in status.items() if s == 1)
    assert len(running) == 4 and (3, 0) in idle
    domain = str(mine[0]["User"]).split("@", 1)[1]

    views = ok_all(pool, {
        "batch": ["q"], "batch2": ["q", "-batch"], "nobatch": ["q", "-nobatch"], "run": ["q", "-run"],
        "hold": ["q", "-hold"], "totals": ["q", "-totals"], "af": ["q", "-af", "ClusterId", "ProcId", "JobStatus"],
        "long": ["q", "-long", "1.0"], "json": ["q", "-json"], "prio5": ["q", "-constraint", "JobPrio == 5",
                                                                          "-af", "ClusterId", "ProcId"],
        "analyze3": ["q", "-better-analyze", "3.0"], "analyze23": ["q", "-better-analyze", "2.3"],
        "tester": ["q", "tester", "-af", "ClusterId", "Owner"], "everyone": ["q", "-allusers", "-totals"],
        "mine_af": ["q", USER, "-af", "ClusterId"],
        "status": ["status"], "status_af": ["status", "-af", "Name", "State", "Activity", "Cpus", "Memory"],
        "status_long": ["status", "-long"], "status_total": ["status", "-total"], "status_run": ["status", "-run"],
        "status_avail": ["status", "-available"],
        "status_128": ["status", "-constraint", "Memory == 128", "-af", "Name"],
        "schedd": ["status", "-schedd"], "negotiator": ["status", "-negotiator"],
        "negotiator_long": ["status", "-negotiator", "-long"],
        "userprio": ["userprio"], "userprio_most": ["userprio", "-most"], "userprio_all": ["userprio", "-all"],
        "quotas": ["userprio", "-quotas"],
    })
    slots = pool.slots()
    direct = ok(pool, "status", "-direct", str(slots[0]["Machine"]), "-af", "Name", "State", "LastHeardFrom")

    _check_queue_views(views, mine, running, idle)
    _check_long_and_json(pool, views)
    _check_analyze(views)
    _check_status_views(views, slots, direct, running)
    _check_userprio_views(views, domain)

    # condor_prio: "20" is a cluster, not a priority (the golden's usage error), then -p 20
    wrong = run(pool, "prio", "20", "2.0")
    assert (wrong.returncode, wrong.stdout, wrong.stderr) == (1, "", golden("condor_prio.txt"))
    alone = run(pool, "prio")
    assert (alone.returncode, alone.stderr) == (1, golden("condor_prio.txt"))
    assert ok(pool, "prio", "-p", "20", "2.0") == ""
    assert pool.job(2, 0)["JobPrio"] == 20 and pool.job(2, 1)["JobPrio"] == 5
    assert ok(pool, "prio", "+2", "2") == ""
    assert [pool.job(2, p)["JobPrio"] for p in range(4)] == [22, 7, 7, 7]
    missing = run(pool, "prio", "-p", "3", "99.0")
    assert (missing.returncode, missing.stderr) == (1, "Couldn't retrieve current priority for 99.0.\n")

    # condor_hold 2.1, condor_q -hold, condor_release 2.1
    assert ok(pool, "hold", "2.1") == golden("condor_hold.txt")
    held = pool.job(2, 1)
    assert held["JobStatus"] == 5 and held["HoldReason"] == f"via condor_hold (by user {USER})"
    assert held["HoldReasonCode"] == 1 and held["HoldReasonSubCode"] == 0
    again = run(pool, "hold", "2.1")
    assert (again.returncode, again.stdout, again.stderr) == (1, "Job 2.1 already held\n", "")
    hold_view = ok(pool, "q", "-hold").split("\n")
    want = golden_lines("condor_q_hold.txt")
    assert hold_view[:2] == ["", ""] and SCHEDD_LINE.fullmatch(hold_view[2]) and hold_view[3] == want[3]
    assert re.fullmatch(rf"   2\.1   {USER} +\d\d/\d\d \d\d:\d\d    1/0   via condor_hold \(by user {USER}\)",
                        hold_view[4]), hold_view[4]
    assert TOTALS.fullmatch(hold_view[6].rstrip()).group(2, 7) == ("1", "1")
    assert ok(pool, "release", "2.1") == golden("condor_release.txt")
    assert pool.job(2, 1)["JobStatus"] != 5
    not_held = run(pool, "release", "2.1")
    assert (not_held.returncode, not_held.stdout, not_held.stderr) == (1, "Job 2.1 not held to be released\n", "")

    # condor_rm 3, then condor_history shows it removed
    assert ok(pool, "rm", "3") == golden("condor_rm.txt")
    pool.wait_for(lambda: pool.job(3, 0) is None, 10, "job 3.0 leaving the queue")
    gone = run(pool, "rm", "3")
    assert (gone.returncode, gone.stdout) == (1, "Couldn't find/remove all jobs in cluster 3\n")
    history = ok_all(pool, {"table": ["history"], "long": ["history", "-long"],
                            "af": ["history", "-af", "ClusterId", "ProcId", "JobStatus", "Owner"],
                            "one": ["history", "3.0", "-af", "ClusterId"]})
    table = history["table"].split("\n")
    assert table[0] == golden_lines("condor_history.txt")[0]
    assert re.fullmatch(rf"3\.0 +{USER} +\d\d/\d\d \d\d:\d\d   0\+00:00:00 X +sleep 300", table[1]), table[1]
    assert len(table[1]) == len(golden_lines("condor_history.txt")[1])  # the same columns
    assert [(a["ClusterId"], a["JobStatus"], a["Cmd"]) for a in ads(history["long"])] == [(3, 3, "/bin/sleep")]
    assert history["af"] == f"3 0 3 {USER}\n" and history["one"] == "3\n"

    # condor_vacate_job 1.0: the running job goes back to Idle (no negotiator to restart it)
    assert ok(pool, "off", "-daemon", "negotiator") == 'Sent "Kill-Daemon" command for "negotiator" to local master\n'
    pool.wait_for(lambda: pool.layout.read_address("negotiator") is None, 15, "the negotiator to stop")
    assert ok(pool, "vacate_job", "1.0") == golden("condor_vacate_job.txt")
    pool.wait_for(lambda: pool.status(1, 0) == 1, 15, "job 1.0 back to Idle")
    idle_now = ok(pool, "q", "-nobatch", "1.0").split("\n")
    assert re.match(r" +1\.0 .* I +0 ", idle_now[4]), idle_now
    waiting = pool.jobs(f'Owner == "{USER}" && JobStatus == 1 && ClusterId == 2')[0]
    job = f"{waiting['ClusterId']}.{waiting['ProcId']}"
    not_running = run(pool, "vacate_job", job)
    assert (not_running.returncode, not_running.stdout) == (1, f"Job {job} not running to be vacated\n")
    assert ok(pool, "on", "-daemon", "negotiator") == 'Sent "Spawn-Daemon" command for "negotiator" to local master\n'
    pool.wait_for(lambda: pool.layout.read_address("negotiator") is not None, 15, "the negotiator back")

    _check_userprio_changes(pool, f"group_physics.einstein@{domain}")


def _check_queue_views(views: dict[str, str], mine: list[ClassAd], running: list, idle: list) -> None:
    # the batch view: a line per cluster, the two totals
    batch = views["batch"].split("\n")
    want = golden_lines("condor_q.txt")
    assert batch[:2] == ["", ""] and SCHEDD_LINE.fullmatch(batch[2]), batch[:3]
    assert re.fullmatch(r"OWNER +BATCH_NAME +SUBMITTED +DONE +RUN +IDLE +TOTAL JOB_IDS", batch[3])
    rows = [re.fullmatch(rf"{USER} +ID: (\d) +\d\d/\d\d \d\d:\d\d +(_|\d) +(_|\d) +(_|\d) +(\d) (\S+)", line)
            for line in batch[4:7]]
    assert all(rows), batch[4:7]
    counts = {c: (sum(1 for k in running if k[0] == c), sum(1 for k in idle if k[0] == c)) for c in (1, 2, 3)}
    for row, cluster, ids in zip(rows, (1, 2, 3), ("1.0-2", "2.0-3", "3.0"), strict=True):
        run_, idle_ = counts[cluster]
        assert row.groups() == (str(cluster), "_", str(run_ or "_"), str(idle_ or "_"),
                                str(run_ + idle_), ids)
    assert len(batch) == len(want) and [i for i, x in enumerate(batch) if not x] == [
        i for i, x in enumerate(want) if not x]
    query, everyone = (TOTALS.fullmatch(line.rstrip()) for line in batch[8:10])
    assert query.groups()[1:] == ("8", "0", "0", str(len(idle)), str(len(running)), "0", "0")
    assert everyone.groups()[1:3] == ("9", "0") and batch[8].endswith("suspended ") == want[8].endswith(" ")
    assert views["batch2"].split("\n")[3:] == batch[3:]

    # -nobatch: a line per job under the golden's headings, status and priority in their columns
    nobatch = views["nobatch"].split("\n")
    heading = golden_lines("condor_q_nobatch.txt")[3]
    assert nobatch[3] == heading
    st, pri = column_of(heading, "ST"), column_of(heading, "PRI")
    job_rows = nobatch[4:12]
    for job, line in zip(mine, job_rows, strict=True):
        assert re.fullmatch(rf" +{job['ClusterId']}\.{job['ProcId']} +{USER} +\d\d/\d\d \d\d:\d\d +"
                            r"\d+\+\d\d:\d\d:\d\d [IR] +\d+ +[\d.]+ sleep 300", line), line
        assert line[st] == {1: "I", 2: "R"}[job["JobStatus"]]
        assert line[pri:].split()[0] == str(job["JobPrio"])
    assert nobatch[12] == "" and TOTALS.fullmatch(nobatch[13].rstrip())

    # -run: the running jobs and their slots, nothing after them
    run_view = views["run"].split("\n")
    assert run_view[3] == golden_lines("condor_q_run.txt")[3] and run_view[-1] == ""
    hosts = {(j["ClusterId"], j["ProcId"]): j["RemoteHost"] for j in mine if j["JobStatus"] == 2}
    assert len(run_view) == 4 + len(running) + 1
    for line in run_view[4:-1]:
        found = re.fullmatch(r" +(\d+)\.(\d+) +\S+ +\d\d/\d\d \d\d:\d\d +\d+\+\d\d:\d\d:\d\d (slot1_\d+@\S+)", line)
        assert found and hosts[(int(found[1]), int(found[2]))] == found[3], line

    # -hold with nothing held; -totals
    hold = views["hold"].split("\n")
    assert hold[3] == golden_lines("condor_q_hold.txt")[3] and hold[4] == ""
    assert TOTALS.fullmatch(hold[5].rstrip()).group(2) == "0"
    totals = views["totals"].split("\n")
    assert len(totals) == len(golden_lines("condor_q_totals.txt")) and totals[3:5] == batch[8:10]

    # -af, -constraint, users
    assert views["af"] == "".join(f"{j['ClusterId']} {j['ProcId']} {j['JobStatus']}\n" for j in mine)
    assert views["prio5"] == "".join(f"2 {p}\n" for p in range(4))
    assert views["tester"] == "4 tester\n"
    assert views["mine_af"] == "1\n1\n1\n2\n2\n2\n2\n3\n"
    everyone = views["everyone"].split("\n")
    assert TOTALS.fullmatch(everyone[3].rstrip()).group(2) == "9"


def _check_long_and_json(pool: LivePool, views: dict[str, str]) -> None:
    text = views["long"]
    assert text.endswith("\n\n")
    (long_ad,) = ads(text)
    names = [line.split(" = ", 1)[0] for line in text.split("\n") if line]
    assert names == sorted(names, key=str.lower)  # HTCondor's order: by name, ignoring case
    assert "ClaimId" not in long_ad  # a capability: never printed
    schedd_ad = pool.job(1, 0)
    for attr in ("ClusterId", "ProcId", "Owner", "Cmd", "Args", "JobStatus", "AcctGroup", "AccountingGroup",
                 "RequestMemory", "Requirements", "RemoteHost"):
        assert unparse_old(long_ad.lookup(attr).node) == unparse_old(schedd_ad.lookup(attr).node), attr
    listed = json.loads(views["json"])
    assert [(j["ClusterId"], j["ProcId"]) for j in listed] == [
        (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (2, 3), (3, 0)]
    assert all(list(j) == sorted(j, key=str.lower) and "ClaimId" not in j for j in listed)


def _normalized_analysis(text: str) -> str:
    """``-better-analyze`` output with what varies (schedd, host, machine sizes, versions) masked."""
    text = re.sub(r"-- Schedd: \S+ : <[^>]*?\?\.\.\.", "-- Schedd: SCHEDD : <ADDRESS?...", text)
    text = re.sub(r"^slot1@\S+ has", "slot1@HOST has", text, flags=re.M)
    text = re.sub(r'FileSystemDomain = "[^"]*"', 'FileSystemDomain = "DOMAIN"', text)
    text = re.sub(r'CondorVersion = "[^"]*"', 'CondorVersion = "VERSION"', text)
    return re.sub(r"TARGET\.(Disk|Memory) = \d+", r"TARGET.\1 = N", text)


def _check_analyze(views: dict[str, str]) -> None:
    # the job asking for 999999 MB: the Memory clause matches no slot, and the warning
    assert _normalized_analysis(views["analyze3"]) == _normalized_analysis(golden("condor_q_better_analyze_3.0.txt"))
    assert "[7]           0  TARGET.Memory >= RequestMemory\n" in views["analyze3"]
    assert views["analyze3"].endswith("WARNING:  Be advised:\n   No machines matched the job's constraints\n\n")
    # a job that fits: every clause matches the slot
    analysis = views["analyze23"]
    want = golden("condor_q_better_analyze_2.3.txt")
    assert "[7]           1  TARGET.Memory >= RequestMemory\n" in analysis
    head = want.split("\n002.003:")[0]
    assert _normalized_analysis(analysis).startswith(_normalized_analysis(head))
    assert "002.003:  Run analysis summary ignoring user priority.  Of 1 slots on 1 machines,\n" in analysis
    assert "      0 slots are rejected by your job's requirements\n" in analysis


def _check_status_views(views: dict[str, str], slots: list[ClassAd], direct: str, running: list) -> None:
    by_name = {str(s["Name"]): s for s in slots}
    claimed = sorted(n for n, s in by_name.items() if s["State"] == "Claimed")
    assert len(by_name) == 5 and len(claimed) == len(running) == 4

    table = views["status"].split("\n")
    want = golden_lines("condor_status.txt")
    assert table[0] == want[0] and table[1] == ""
    rows = table[2:7]
    for line in rows:
        found = re.fullmatch(r"(slot1(?:_\d+)?@\S+) +LINUX +X86_64 +(Unclaimed|Claimed) +(Idle|Busy) +"
                             r"\d+\.\d{3} +(\d+) +\d+\+\d\d:\d\d:\d\d", line)
        assert found, line
        slot = by_name[found[1]]
        assert (found[2], found[3], int(found[4])) == (slot["State"], slot["Activity"], slot["Memory"])
        for title in ("State", "Activity", "ActvtyTime"):  # the golden's columns
            assert line[column_of(want[0], title) - 1] == " "
    assert table[7] == "" and table[8:] == [
        want[7], "", "  X86_64/LINUX     5     0       4         1       0          0      0        0      0",
        "", "         Total     5     0       4         1       0          0      0        0      0", ""]
    assert views["status_total"].split("\n") == ["", *table[8:]]
    assert len(views["status_total"].split("\n")) == len(golden_lines("condor_status_total.txt"))

    af = {line.split()[0]: line.split()[1:] for line in views["status_af"].splitlines()}
    assert list(af) == sorted(by_name)
    for name, (state, activity, cpus, memory) in af.items():
        slot = by_name[name]
        assert (state, activity, int(cpus), int(memory)) == (slot["State"], slot["Activity"], slot["Cpus"],
                                                             slot["Memory"])
    # -direct: the startd's own ads (no LastHeardFrom: only the collector adds it)
    assert direct == "".join(f"{n} {af[n][0]} undefined\n" for n in af)

    long_ads = ads(views["status_long"])
    assert [str(a["Name"]) for a in long_ads] == list(af)
    assert all(a["MyType"] == "Machine" and "ClaimId" not in a for a in long_ads)

    # -run lists the claimed slots (the golden condor_status_run.txt of HTCondor 25 is empty)
    run_rows = views["status_run"].split("\n")[2:2 + len(claimed)]
    assert [line.split()[0] for line in run_rows] == claimed
    available = views["status_avail"].split("\n")
    assert available[2].startswith("slot1@") and available[3] == ""
    assert views["status_128"].split() == sorted(n for n, s in by_name.items() if s["Memory"] == 128)

    schedd = views["schedd"].split("\n")
    assert schedd[0].split() == ["Name", "Machine", "RunningJobs", "IdleJobs", "HeldJobs"] and schedd[1] == ""
    assert schedd[2].split()[2:] == ["4", "5", "0"] and schedd[3:] == [""]
    negotiator = views["negotiator"].split("\n")
    assert negotiator[0].split() == ["Name", "Machine"] and len(negotiator) == 4
    (negotiator_ad,) = ads(views["negotiator_long"])
    assert negotiator_ad["MyType"] == "Negotiator"
    golden_names = {line.split(" = ")[0] for line in golden_lines("condor_status_negotiator_long.txt") if line}
    assert {"LastNegotiationCycleMatches0", "LastNegotiationCycleDuration0"} <= golden_names & set(negotiator_ad)


def _check_userprio_views(views: dict[str, str], domain: str) -> None:
    table = views["userprio"].split("\n")
    want = golden_lines("condor_userprio.txt")
    assert re.fullmatch(r"Last Priority Update: \d\d/\d\d \d\d:\d\d", table[0])
    assert _words(table[1:4]) == _words(want[1:4])  # headings and rules; widths follow the names
    groups = [line.split()[0] for line in table[4:-3] if not line.startswith("  ")]
    users = [line.split()[0] for line in table[4:-3] if line.startswith("  ")]
    assert set(groups) <= {"group_physics", "group_chemistry"} and "group_physics" in groups
    assert f"einstein@{domain}" in users
    physics = next(line for line in table if line.startswith("group_physics "))
    assert physics.split()[1:3] == ["2.00", "ByQuota"]
    # the footer's time is the accountant's last update less (now - 1 day), as HTCondor's is: 0+23:59,
    # or 1+00:00 when the negotiator updated the accountant in the second the tool read the clock
    assert re.fullmatch(rf"Number of users: {len(users)} +ByQuota +\d+ +[\d.]+ +(0\+23:59|1\+00:00) *",
                        table[-2])
    assert views["userprio_most"].split("\n")[1:4] == table[1:4]
    everything = views["userprio_all"].split("\n")
    assert _words(everything[1:4]) == _words(golden_lines("condor_userprio_all.txt")[1:4])
    quotas = views["quotas"].split("\n")
    assert _words(quotas[1:4]) == _words(golden_lines("condor_userprio_quotas.txt")[1:4])
    assert re.fullmatch(r"group_physics +2\.00 +2\.00 ByQuota +2\.00 +3", next(
        line for line in quotas if line.startswith("group_physics")))


def _words(lines: list[str]) -> list[list[str]]:
    """The words of table lines, each rule of dashes as one ``-`` (its width follows the names)."""
    return [re.sub(r"-+", "-", line).split() for line in lines]


def _check_userprio_changes(pool: LivePool, einstein: str) -> None:
    def row(name: str, *options: str) -> list[str]:
        text = ok(pool, "userprio", *options)
        return next(line.split() for line in text.split("\n") if line.split()[:1] == [name.split(".")[-1]])

    assert ok(pool, "userprio", "-setfactor", einstein, "20") == f"The priority factor of {einstein} was set to 20.000000\n"
    assert row(einstein)[2] == "20.00"  # Priority Factor
    assert ok(pool, "userprio", "-setprio", einstein, "7") == f"The priority of {einstein} was set to 7.000000\n"
    effective, real, factor = row(einstein, "-all")[1:4]
    # real × factor; a negotiation cycle between the two commands has decayed the priority a little
    # (the default PRIORITY_HALFLIFE of a day takes 0.01 off 140 in 9 s: seen on a loaded host)
    assert (real, factor) == ("7.00", "20.00") and 139.5 <= float(effective) <= 140.0, (effective, real, factor)
    reset_at = time.monotonic()
    assert ok(pool, "userprio", "-resetusage", einstein) == f"The accumulated usage of {einstein} was reset\n"
    # Total Usage (wghted-hrs) starts again from nothing, and grows at once with the user's running
    # jobs: at most the pool's four cpus since the reset (0.01 after 9 s: seen on a loaded host),
    # to the table's two decimals
    usage = float(row(einstein, "-all")[5])
    assert usage <= 4 * (time.monotonic() - reset_at) / 3600 + 0.005, usage
    assert ok(pool, "userprio", "-setceiling", einstein, "5", "-duration", "600") == \
        f"Set ceiling lease on {einstein} to 5 for 600 seconds\n"
    assert ok(pool, "userprio", "-setfloor", einstein, "1") == f"The floor of {einstein} was set to 1\n"
    record = next(r for r in pool.c.send("negotiator", UserprioQuery()).rows if r["Name"] == einstein)
    assert (record["Ceiling"], record["Floor"]) == (5, 1) and record["CeilingLeaseExpiration"] > 0
    stranger = "nobody@" + einstein.split("@")[1]
    ok(pool, "userprio", "-setfactor", stranger, "3")
    assert stranger in ok(pool, "userprio", "-allusers", "-all")
    assert ok(pool, "userprio", "-delete", stranger) == f"The accountant record named {stranger} was deleted\n"
    assert stranger not in ok(pool, "userprio", "-allusers", "-all")
    short = run(pool, "userprio", "-setfactor", "einstein", "2")
    assert "You must specify the full name of the submittor" in short.stderr and short.returncode == 1
    low = run(pool, "userprio", "-setfactor", einstein, "0.5")
    assert fails(low, "userprio") == "htcpool userprio: Priority factors must be greater than or equal to 1.\n"


# ------------------------------------------------------------------ the execute side and the daemons


@pytest.mark.long
def test_machine_and_daemon_commands(make_pool) -> None:
    pool = make_pool("NUM_CPUS = 2\nMEMORY = 2048\n")
    ok(pool, "submit", "-", stdin="executable = /bin/sleep\narguments = 300\nlog = jobs.log\nqueue 2\n")
    steady(pool, running=2)
    machine = str(pool.slots()[0]["Machine"])

    # condor_who: the jobs this machine runs
    who = ok(pool, "who").split("\n")
    assert who[0] == "OWNER                     CLIENT          SLOT JOB        RUNTIME"
    assert sorted(line.split()[3] for line in who[1:-1]) == ["1.0", "1.1"]
    assert all(line.startswith(f"{USER}@") for line in who[1:-1])
    assert ok(pool, "reschedule") == 'Sent "Reschedule" command to local schedd\n'

    # condor_drain -graceful: the jobs are evicted, the machine is Drained; -cancel brings it back
    drained = ok(pool, "drain", "-graceful", machine)
    assert re.fullmatch(rf"Sent request to drain the startd <127\.0\.0\.1:\d+\?[^>]*> with {machine}\. This only "
                        r"affects the single startd; any other startds running on the same host will not be "
                        r"drained\.\n", drained), drained
    pool.wait_for(lambda: [s["State"] for s in pool.slots()] == ["Drained"], 20, "a drained machine")
    pool.wait_for(lambda: all(j["JobStatus"] == 1 for j in pool.jobs()), 10, "the jobs back to Idle")
    again = run(pool, "drain", machine)  # condor_drain's two lines
    assert again.returncode == 1 and re.fullmatch(
        r"htcpool drain: Attempt to send DRAIN_JOBS to startd <[^>]+> failed\nDraining already in progress\.\n",
        again.stderr), again.stderr
    assert ok(pool, "drain", "-cancel") == f"Sent request to cancel draining on {machine}\n"
    steady(pool, running=2)
    unknown = run(pool, "drain", "elsewhere")
    assert fails(unknown, "drain") == "htcpool drain: Can't find address for startd elsewhere\n"

    # condor_vacate: every claim of the machine is vacated (the jobs are evicted, then run again)
    evicted = (pool.jobs_dir / "jobs.log").read_text().count("Job was evicted.")
    assert ok(pool, "vacate") == 'Sent "Vacate-All-Claims" command to local startd\n'
    pool.wait_for(lambda: (pool.jobs_dir / "jobs.log").read_text().count("Job was evicted.") == evicted + 2,
                  15, "two more evictions in the user log")
    steady(pool, running=2)
    assert ok(pool, "vacate", machine) == f'Sent "Vacate-All-Claims" command to startd {machine}\n'
    steady(pool, running=2)

    # condor_off / condor_on of one daemon
    assert ok(pool, "off", "-daemon", "negotiator") == 'Sent "Kill-Daemon" command for "negotiator" to local master\n'
    pool.wait_for(lambda: pool.layout.read_address("negotiator") is None, 15, "the negotiator to stop")
    fails(run(pool, "userprio"), "userprio")
    assert ok(pool, "on", "-daemon", "negotiator") == 'Sent "Spawn-Daemon" command for "negotiator" to local master\n'
    pool.wait_for(lambda: pool.layout.read_address("negotiator") is not None, 15, "the negotiator back")
    pool.wait_for(lambda: run(pool, "userprio").returncode == 0, 10, "userprio answering")

    # condor_restart -daemon schedd: a new schedd, the same jobs, still running
    steady(pool, running=2)  # the negotiator was off: let it place the jobs again first
    before = {(j["ClusterId"], j["ProcId"]): j["JobStatus"] for j in pool.jobs()}
    old_pid = pool.pid_of("schedd")
    assert ok(pool, "restart", "-daemon", "schedd") == 'Sent "Restart" command to local schedd\n'
    pool.wait_restarted("schedd", old_pid)
    pool.wait_for(lambda: {(j["ClusterId"], j["ProcId"]): j["JobStatus"] for j in pool.jobs()} == before, 20,
                  "the jobs after the restart")
    totals = ok(pool, "q", "-totals").split("\n")
    assert TOTALS.fullmatch(totals[3].rstrip()).group(2, 6) == ("2", "2")

    # condor_reconfig: the negotiator takes the new interval; condor_config_val reads the pool's file
    config = dict(CONDOR_CONFIG=str(pool.layout.config))
    assert run(pool, "config_val", "NEGOTIATOR_INTERVAL", **config).stdout == "2\n"
    with pool.layout.config.open("a") as f:
        f.write("NEGOTIATOR_INTERVAL = 3\n")
    assert run(pool, "config_val", "NEGOTIATOR_INTERVAL", **config).stdout == "3\n"
    assert ok(pool, "reconfig") == 'Sent "Reconfig" command to local master\n'
    pool.wait_for(lambda: pool.c.query("Negotiator")[0].get("NegotiatorInterval") == 3, 20,
                  "the negotiator's new interval")

    # malformed constraints: a clear one-line error, and no daemon hurt by them
    pids = {d: pool.pid_of(d) for d in ("collector", "negotiator", "schedd", "startd")}
    for prog, args in (("q", ["-constraint", "JobPrio =="]), ("status", ["-constraint", "Memory >"]),
                       ("history", ["-constraint", "(("]), ("hold", ["-constraint", "Owner == "]),
                       ("q", ["-af", "foo("])):
        message = fails(run(pool, prog, *args), prog)
        assert "is not a valid ClassAd expression" in message and repr(args[1]) in message, message
    for daemon, message in (("schedd", QueueQuery("JobPrio ==")), ("schedd", HistoryQuery("((")),
                            ("collector", QueryAds("Machine", "Memory >")),
                            ("startd", QueryAds("Machine", "Memory >"))):
        with pytest.raises(RequestRefused) as refused:
            pool.c.send(daemon, message)
        assert refused.value.status == 400
    assert {d: pool.pid_of(d) for d in pids} == pids
    assert len(pool.jobs()) == 2 and len(pool.slots()) == 3


@pytest.mark.parametrize("completion", ["-restart-on-completion", "-reconfig-on-completion"])
def test_drain_restart_or_reconfig_on_completion_restarts_the_startd(make_pool, completion: str) -> None:
    """condor_drain -restart-on-completion (and -reconfig-on-completion, which reconfigures an idle
    startd by restarting it): once the machine is drained the master starts a new startd, which
    comes up without the drain, ready for jobs."""
    pool = make_pool("NUM_CPUS = 1\nMEMORY = 1024\n")
    machine = str(pool.slots()[0]["Machine"])
    old_pid = pool.pid_of("startd")
    assert ok(pool, "drain", completion, machine).startswith("Sent request to drain the startd")
    pool.wait_restarted("startd", old_pid, timeout=30)
    pool.wait_for(lambda: [(s["State"], s.get("Draining")) for s in pool.slots()] == [("Unclaimed", None)],
                  20, "the new startd's slot, not draining",
                  show=lambda: [(s["State"], s.get("Draining")) for s in pool.slots()])
    cluster = pool.submit("executable = /bin/true\nqueue\n")
    pool.wait_for(lambda: pool.status(cluster) == 4, 30, "a job run by the new startd")


def test_tools_without_a_pool(tmp_path: Path) -> None:
    """No pool in the local directory, or one whose daemons are not running: one line, status 1."""
    from htcpool.runtime.layout import PoolLayout

    stopped = PoolLayout(tmp_path / "stopped")
    stopped.make()
    stopped.ensure_token()
    everything = [("q",), ("status", "-schedd"), ("userprio", "-setprio", "a@b", "3"), ("history",),
                  ("who",), ("reschedule",), ("drain",), ("vacate",), ("hold", "1.0"), ("rm", USER),
                  ("vacate_job", "1.0"), ("prio", "-p", "3", "1.0"), ("off",), ("on", "-daemon", "schedd"),
                  ("restart",), ("reconfig",)]
    some = [("q", "-long"), ("status",), ("userprio",), ("release", "1"), ("drain", "-cancel"), ("off",)]
    jobs = [(c, tool_env(tmp_path / "nothing")) for c in everything]
    jobs += [(c, tool_env(stopped.root)) for c in some]

    def one(job: tuple[tuple[str, ...], dict[str, str]]) -> subprocess.CompletedProcess[str]:
        args, environment = job
        return subprocess.run([sys.executable, "-m", "htcpool", *args], capture_output=True, text=True,
                              timeout=60, cwd=tmp_path, env=environment, stdin=subprocess.DEVNULL)

    with ThreadPoolExecutor(max_workers=8) as workers:
        results = list(workers.map(one, jobs))
    for done in results:
        prog = done.args[3]
        message = fails(done, prog)
        assert "no pool in" in message or "is not running" in message, message
        assert done.stdout == ""
    submitted = one((("submit", "-"), jobs[0][1]))
    assert submitted.returncode == 1 and "Traceback" not in submitted.stderr


# ------------------------------------------------------------------ groups on a partitionable slot


def test_group_quota_below_the_partitionable_slot_weight_still_matches(make_pool) -> None:
    """A match on a partitionable slot is charged the weight of the dynamic slot it carves (one
    core), so a group whose quota (2) is below the p-slot's weight (4 cores) still gets it, as in
    the goldens' pool (condor_userprio_quotas.txt: group_physics with 3 in use)."""
    pool = make_pool(GROUPS)
    pool.submit("executable = /bin/sleep\narguments = 300\naccounting_group = group_physics\n"
                "accounting_group_user = einstein\nqueue\n", owner=USER)
    pool.wait_for(lambda: pool.status(1) == 2, 6, "the group_physics job running")
