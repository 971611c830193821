"""The whole-machine howto's recipes (examples/whole-machine), each on a live pool.

Every pool pretends a machine of two cores: slots 1 and 2 take single-core jobs, slot 3 the
whole machine (``WHOLE_MACHINE_CORES = 2``). The tests submit single-core and whole-machine
jobs and read the order of the user log's events (001 execute, 004 evicted, 005 terminated,
010 suspended, 011 unsuspended) and the slots' states: what each recipe promises
(docs/defrag.md, "Whole-machine slots").
"""

from __future__ import annotations

import re
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from tests.e2e.pool import LivePool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "whole-machine"
SIZE = "\nWHOLE_MACHINE_CORES = 2\nWHOLE_MACHINE_MEMORY = 1024\n"

SINGLE = """
executable = /bin/sleep
arguments = {seconds}
request_memory = 64
log = jobs.log
queue {count}
"""
WHOLE = """
executable = {executable}
arguments = {arguments}
request_cpus = 2
request_memory = 64
+RequiresWholeMachine = True
requirements = (Target.CAN_RUN_WHOLE_MACHINE =?= True)
output = {output}
log = jobs.log
queue
"""

MakePool = Callable[[str], LivePool]


def recipe(*names: str, extra: str = "") -> str:
    return "".join((EXAMPLES / name).read_text() for name in names) + SIZE + extra


class Log:
    """The user log's events in the order written: (code, "cluster.proc")."""

    def __init__(self, pool: LivePool) -> None:
        self.path = pool.jobs_dir / "jobs.log"

    def events(self) -> list[tuple[str, str]]:
        text = self.path.read_text() if self.path.exists() else ""
        return [(code, f"{int(c)}.{int(p)}")
                for code, c, p in re.findall(r"^(\d{3}) \((\d+)\.(\d+)\.\d+\)", text, re.M)]

    def at(self, code: str, job: str, nth: int = 1) -> int:
        """The position of the nth ``code`` event of ``job`` (a large number when not yet written)."""
        seen = 0
        for i, event in enumerate(self.events()):
            if event == (code, job):
                seen += 1
                if seen == nth:
                    return i
        return 1 << 30

    def has(self, code: str, job: str, nth: int = 1) -> bool:
        return self.at(code, job, nth) < 1 << 30

    def codes(self, job: str) -> list[str]:
        return [code for code, j in self.events() if j == job and code != "006"]


def states(pool: LivePool) -> dict[str, str]:
    return {str(a["Name"]).split("@")[0]: f"{a['State']}/{a['Activity']}" for a in pool.slots()}


def submit_singles(pool: LivePool, seconds: int, count: int = 2) -> list[str]:
    cluster = pool.submit(SINGLE.format(seconds=seconds, count=count))
    return [f"{cluster}.{p}" for p in range(count)]


def submit_whole(pool: LivePool, executable: str = "/bin/sleep", arguments: str = "2",
                 output: str = "/dev/null") -> str:
    return f"{pool.submit(WHOLE.format(executable=executable, arguments=arguments, output=output))}.0"


def running(pool: LivePool, jobs: list[str]) -> bool:
    ids = {f"{a['ClusterId']}.{a['ProcId']}" for a in pool.jobs("JobStatus == 2")}
    return set(jobs) <= ids


def test_whole_machine_job_waits_suspended_and_single_core_jobs_wait_for_it(make_pool: MakePool) -> None:
    pool = make_pool(recipe("static-slots.config"))
    log = Log(pool)
    pool.wait_for(lambda: states(pool).get("slot3") == "Owner/Idle", 20, "the whole-machine slot in Owner",
                  show=lambda: states(pool))
    singles = submit_singles(pool, 4)
    pool.wait_for(lambda: running(pool, singles), 20, "the single-core jobs running")
    whole = submit_whole(pool)
    pool.wait_for(lambda: log.has("010", whole), 20, "the whole-machine job suspended", show=log.events)
    assert log.at("001", whole) < log.at("010", whole)
    late = submit_singles(pool, 1, count=1)[0]
    pool.wait_for(lambda: log.has("005", late), 30, "every job done", show=log.events)
    # the whole-machine job stayed suspended until the single-core jobs ended, and the late
    # single-core job did not start while the whole-machine slot was claimed
    ends = max(log.at("005", s) for s in singles)
    assert ends < log.at("011", whole) < log.at("005", whole) < log.at("001", late), log.events()
    assert log.codes(whole) == ["000", "001", "010", "011", "005"]


def test_suspend_single_core_variant_suspends_the_single_core_jobs(make_pool: MakePool) -> None:
    pool = make_pool(recipe("static-slots.config", "suspend-single-core.config"))
    log = Log(pool)
    singles = submit_singles(pool, 5)
    pool.wait_for(lambda: running(pool, singles), 20, "the single-core jobs running")
    whole = submit_whole(pool, arguments="2")
    pool.wait_for(lambda: all(log.has("010", s) for s in singles), 20, "the single-core jobs suspended",
                  show=log.events)
    pool.wait_for(lambda: all(log.has("005", s) for s in singles), 30, "every job done", show=log.events)
    for single in singles:
        assert log.at("001", whole) < log.at("010", single) < log.at("005", whole) < log.at("011", single)
    assert "010" not in log.codes(whole)


# A single-core job's retirement runs out 8 s after the whole-machine slot (slot 3) was
# claimed, however long the job had run by then (a loaded host may take longer than a fixed
# retirement to match the whole-machine job, and the single-core jobs then go at once,
# before the whole-machine job could be suspended).
RETIRE_AFTER_WHOLE_CLAIMED = """
STARTD_SLOT_EXPRS = $(STARTD_SLOT_EXPRS) EnteredCurrentState
MaxJobRetirementTime = ifThenElse(Slot3_State =?= "Claimed" && isInteger(Slot3_EnteredCurrentState), \\
  Slot3_EnteredCurrentState - MY.JobStart + 8, 8)
"""


def test_retirement_variant_evicts_single_core_jobs_after_their_retirement(make_pool: MakePool) -> None:
    pool = make_pool(recipe("static-slots.config", "retirement.config", extra=RETIRE_AFTER_WHOLE_CLAIMED))
    log = Log(pool)
    singles = submit_singles(pool, 60)
    pool.wait_for(lambda: running(pool, singles), 20, "the single-core jobs running")
    whole = submit_whole(pool)
    pool.wait_for(lambda: all(log.has("004", s) for s in singles), 25, "the single-core jobs evicted",
                  show=log.events)
    assert all(log.at("001", whole) < log.at("004", s) < log.at("011", whole) for s in singles), log.events()
    assert log.at("010", whole) < log.at("011", whole)
    # evicted, not lost: they run again once the whole-machine job is over
    pool.wait_for(lambda: all(log.has("001", s, 2) for s in singles), 30, "the single-core jobs again",
                  show=log.events)
    assert all(log.at("005", whole) < log.at("001", s, 2) for s in singles), log.events()
    pool.act("remove", *singles)


def test_sticky_whole_machine_slot_keeps_single_core_jobs_off_for_a_while(make_pool: MakePool) -> None:
    pool = make_pool(recipe("static-slots.config", "sticky.config", extra="STICKY_SECONDS = 4\n"))
    log = Log(pool)
    first = submit_whole(pool, arguments="1")
    pool.wait_for(lambda: log.has("005", first), 20, "the first whole-machine job done", show=log.events)
    single = submit_singles(pool, 1, count=1)[0]
    second = submit_whole(pool, arguments="1")
    pool.wait_for(lambda: log.has("001", second), 20, "the next whole-machine job started", show=log.events)
    pool.holds_for(lambda: not log.has("001", single), "the single-core job kept off", seconds=2,
                   show=log.events)
    pool.wait_for(lambda: log.has("005", single), 30, "the single-core job run in the end", show=log.events)
    assert log.at("005", second) < log.at("001", single), log.events()


def _wrapper(where: Path, sleep_time: int) -> Path:
    """The example wrapper, pointed at this htcpool and made to sleep ``sleep_time`` seconds."""
    text = (EXAMPLES / "whole_machine_job_wrapper").read_text()
    htcpool = shutil.which("htcpool", path=str(Path(sys.executable).parent)) or "htcpool"
    text = re.sub(r"^HTCPOOL=.*$", f"HTCPOOL={htcpool}", text, flags=re.M)
    text = re.sub(r"^SLEEP_TIME=.*$", f"SLEEP_TIME={sleep_time}", text, flags=re.M)
    path = where / "whole_machine_job_wrapper"
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IRUSR)
    return path


def test_user_job_wrapper_takes_the_suspension_before_the_job_begins(make_pool: MakePool,
                                                                      tmp_path: Path) -> None:
    """The job proper (``date``) begins only once the single-core jobs are gone: the suspension
    fell in the wrapper's sleep. Without the wrapper it would print a time seconds before."""
    wrapper = _wrapper(tmp_path, 3)
    pool = make_pool(recipe("static-slots.config", extra=f"USER_JOB_WRAPPER = {wrapper}\n"))
    log = Log(pool)
    singles = submit_singles(pool, 5)
    pool.wait_for(lambda: running(pool, singles), 20, "the single-core jobs running")
    out = pool.jobs_dir / "whole.out"
    whole = submit_whole(pool, executable="/bin/date", arguments="+%s.%N", output=str(out))
    pool.wait_for(lambda: log.has("005", whole), 40, "the whole-machine job done", show=log.events)
    assert log.at("001", whole) < log.at("010", whole) < log.at("011", whole) < log.at("005", whole), \
        log.events()
    done = pool.history("JobStatus == 4")
    assert len(done) == 3, [(a["ClusterId"], a["ProcId"], a.get("HoldReason")) for a in pool.history()]
    singles_end = max(int(a["CompletionDate"]) for a in done if f"{a['ClusterId']}.{a['ProcId']}" in singles)
    began = float(out.read_text().strip())
    assert began >= singles_end - 1, (began, singles_end)


def test_partitionable_slots_and_defrag_give_a_whole_machine(make_pool: MakePool) -> None:
    """Two 2-core machines full of single-core jobs; the defrag daemon drains one, the
    whole-machine job (of a user with a better priority) takes it, the evicted jobs run again."""
    fast = "DEFRAG_INTERVAL = 2\nDEFRAG_UPDATE_INTERVAL = 2\nDEFRAG_DRAINING_MACHINES_PER_HOUR = 1800\n" \
           "MaxJobRetirementTime = 0\n"
    pool = make_pool((EXAMPLES / "partitionable-defrag.config").read_text() + fast)
    pool.wait_for(lambda: len({a["Machine"] for a in pool.slots()}) == 2, 20, "the two machines")
    log = Log(pool)
    singles = submit_singles(pool, 20, count=4)
    pool.wait_for(lambda: running(pool, singles), 20, "four single-core jobs filling both machines")
    whole = pool.submit(WHOLE.format(executable="/bin/sleep", arguments="1", output="/dev/null")
                        .replace("requirements = (Target.CAN_RUN_WHOLE_MACHINE =?= True)\n", ""),
                        owner="whole")
    pool.wait_for(lambda: log.has("005", f"{whole}.0"), 40, "the whole-machine job run", show=log.events)
    assert log.codes(f"{whole}.0") == ["000", "001", "005"]  # never drained itself
    evicted = [s for s in singles if log.has("004", s)]
    assert len(evicted) >= 2, log.events()  # at least one machine's jobs
    defrag = pool.wait_for(lambda: [a for a in pool.c.query("Defrag") if int(a.get("DrainSuccesses", 0)) >= 1],
                           20, "the Defrag ad counting the drain")
    # the refusals a busy test host may cause, both of a poll 2 s after a change that still sees the
    # machine's ads from before it (HTCondor's defrag keeps no list of its own drains either): a
    # drain already running, or the drain's check (defrag.core.check_expr: the expected completion
    # and badput no worse than the ads said) failing on the startd, a job having started since
    refusals = [line for line in pool.log_text("defrag").splitlines() if "refused the drain" in line
                or "no answer" in line]
    assert int(defrag[0]["DrainFailures"]) <= len(refusals), refusals  # the ad may lag the log
    assert all("DRAINING_ALREADY_IN_PROGRESS" in line or "DRAINING_CHECK_EXPR_FAILED" in line
               for line in refusals), refusals
    pool.wait_for(lambda: all(log.has("001", s, 2) for s in evicted), 30, "the evicted jobs running again",
                  show=log.events)
    pool.act("remove", *singles)
