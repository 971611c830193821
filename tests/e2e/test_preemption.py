"""Preemption on a live pool: the machine's RANK, retirement, user priority with
PREEMPTION_REQUIREMENTS, and fair share between users (the HTCondor manual's "Policy Configuration
for Execution Points": "The RANK Expression" and "The Claimed State and Leases"; its "User
Priorities and Negotiation": "Priorities in Negotiation and Preemption" and "The Layperson's
Description of the Pie Spin and Pie Slice").

Submitters are told apart by ``Owner`` (``pool.submit(..., owner=...)``); their accounting names are
``owner@e2e.test``. Every HTCondor user starts with priority factor 1000 (DEFAULT_PRIO_FACTOR), so a
test gives one user a better priority by lowering its factor."""

from __future__ import annotations

import re
import time

import pytest

from htcpool.protocol import UserprioCommand, UserprioQuery
from tests.e2e.pool import script

DOMAIN = "e2e.test"


def _static_slots(n: int) -> str:
    return f"""
UID_DOMAIN = {DOMAIN}
NUM_CPUS = {n}
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = {n}
SLOT_TYPE_1_PARTITIONABLE = false
"""


# A job that runs until it is evicted: it notes its start and its SIGTERM (the default KillSig)
# in files named after its first argument, in the jobs directory.
def _worker(pool) -> str:
    return script(pool.jobs_dir, "worker.sh",
                  'trap \'echo "$(date +%s.%N)" >> "$2/$1.term"; exit 0\' TERM\n'
                  'echo start >> "$2/$1.runs"\nsleep 300 &\nwait\n')


def _submit(pool, owner: str, count: int = 1) -> int:
    exe = _worker(pool)
    return pool.submit(f"executable = {exe}\narguments = {owner}.$(Process) {pool.jobs_dir}\n"
                       f"log = {owner}.log\nqueue {count}\n", owner=owner)


def _running(pool, cluster: int, count: int = 1) -> bool:
    return all(pool.status(cluster, p) == 2 for p in range(count))


def _remote_owners(pool) -> list[str]:
    return sorted(str(s.get("RemoteOwner", "")).split("@")[0] for s in pool.slots())


def _evictions(pool, owner: str) -> int:
    log = (pool.jobs_dir / f"{owner}.log").read_text()
    return len(re.findall(r"^004 ", log, re.M))


def _began(pool, owner: str, cluster: int) -> bool:
    """Running in the queue (activated) and running its trap: the job's own note is written."""
    return _running(pool, cluster) and (pool.jobs_dir / f"{owner}.0.runs").exists()


def _wait_evicted(pool, owner: str, cluster: int, count: int = 1) -> None:
    """The preempted jobs back to Idle with one eviction each in their log. The schedd hears of the eviction
    and of the new claim on their own ways (as HTCondor's shadow and the startd's claim reply), so
    the preempting job can be Running a moment before the preempted one is Idle."""
    def observed() -> tuple:
        return [pool.status(cluster, p) for p in range(count)], _evictions(pool, owner)

    pool.wait_for(lambda: observed() == ([1] * count, count), 15, f"{owner}'s jobs evicted back to Idle",
                  show=observed)


def _setfactor(pool, user: str, factor: float) -> None:
    pool.c.send("negotiator", UserprioCommand("setfactor", f"{user}@{DOMAIN}", factor))


def _priorities(pool) -> dict[str, dict]:
    return {str(r["Name"]).split("@")[0]: r for r in pool.c.send("negotiator", UserprioQuery()).rows}


def test_rank_preemption_on_garrisons_machine(make_pool) -> None:
    """The RANK Expression (the HTCondor manual's "Policy Configuration for Execution Points"): on
    ``bass``, RANK = (Owner == "coltrane") + (Owner == "tyner") + ((Owner == "garrison") * 10) +
    (Owner == "jones"). Elvin Jones' job (rank 1) preempts an outsider's (rank 0); Jimmy Garrison's
    (rank 10) preempts Jones'; Coltrane's (rank 1) does not preempt Garrison's. RANK preemption
    needs no PREEMPTION_REQUIREMENTS (false here, as by default)."""
    pool = make_pool(_static_slots(1) + """
RANK = (Owner == "coltrane") + (Owner == "tyner") + ((Owner == "garrison") * 10) + (Owner == "jones")
PREEMPTION_REQUIREMENTS = False
""")
    outsider = _submit(pool, "miles")
    pool.wait_for(lambda: _began(pool, "miles", outsider), 30, "the outsider's job running")

    jones = _submit(pool, "jones")
    pool.wait_for(lambda: _began(pool, "jones", jones), 30, "Jones' job preempting the outsider's")
    _wait_evicted(pool, "miles", outsider)
    assert (pool.jobs_dir / "miles.0.term").exists()  # vacated with its KillSig
    slot = pool.slots()[0]
    assert str(slot["RemoteOwner"]).startswith("jones@") and slot["CurrentRank"] == 1

    garrison = _submit(pool, "garrison")
    pool.wait_for(lambda: _running(pool, garrison), 30, "Garrison's job preempting Jones'")
    _wait_evicted(pool, "jones", jones)
    assert pool.slots()[0]["CurrentRank"] == 10

    coltrane = _submit(pool, "coltrane")
    pool.wait_for(lambda: pool.idle_jobs_advertised("coltrane") == 1, 15,
                  "Coltrane's idle job in his submitter ad")

    def observed() -> tuple:  # the two jobs' states, the slot's owner, a KillSig to Garrison's
        return (pool.status(garrison), pool.status(coltrane), _remote_owners(pool),
                (pool.jobs_dir / "garrison.0.term").exists())

    # rank 1 < 10: two cycles that saw Coltrane's job leave Garrison's alone
    pool.holds_for(lambda: observed() == (2, 1, ["garrison"], False), "Garrison's job running, Coltrane's idle",
                   cycles=2, show=observed)
    assert (pool.jobs_dir / "miles.0.runs").read_text() == "start\n"  # evicted jobs waited


@pytest.mark.parametrize("early", [False, True], ids=["retire-then-match", "early-preemption"])
def test_rank_preemption_waits_for_max_job_retirement_time(make_pool, early: bool) -> None:
    """Claimed State, transitions 13 and 18 (the HTCondor manual's "Policy Configuration for
    Execution Points"): a job preempted for a better-ranked one first retires - it keeps running for
    MAXJOBRETIREMENTTIME counted from its start - and is then vacated. Without
    NEGOTIATOR_CONSIDER_EARLY_PREEMPTION the negotiator leaves the claim alone until its retirement
    is over (the slot stays Claimed/Busy); with it the preempting claim arrives at once and the slot
    shows Claimed/Retiring for the rest of the retirement. A retiring job is sent its KillSig early
    enough that the whole MachineMaxVacateTime fits in its retirement (HTCondor's
    ``Resource::retirementExpired``), so the vacate time here is short: 2 s of 8."""
    retirement, vacate = 8, 2
    pool = make_pool(_static_slots(1) + f"""
RANK = Owner == "coltrane"
MAXJOBRETIREMENTTIME = {retirement}
MachineMaxVacateTime = {vacate}
NEGOTIATOR_CONSIDER_EARLY_PREEMPTION = {early}
""")
    garrison = _submit(pool, "garrison")
    pool.wait_for(lambda: _running(pool, garrison), 30, "Garrison's job running")
    # the schedd counts the job running from its activation on; the slot's ad in the collector shows
    # JobStart at the startd's next update after the job began
    job_start = int(pool.wait_for(lambda: pool.slots()[0].get("JobStart"), 30, "the slot's JobStart"))
    coltrane = _submit(pool, "coltrane")
    seen: set[str] = set()

    def slot_state() -> str:
        slot = pool.slots()[0]
        seen.add(f"{slot['State']}/{slot['Activity']}")
        return f"{slot['State']}/{slot['Activity']}"

    def observed() -> tuple:  # the two jobs' states, the slot's, a KillSig to Garrison's job
        return (pool.status(garrison), pool.status(coltrane), slot_state(),
                (pool.jobs_dir / "garrison.0.term").exists())

    # the retirement: Garrison's job keeps running, untouched, until its KillSig is due
    kill_due = job_start + retirement - (vacate if early else 0)
    pool.holds_for(lambda: observed() in ((2, 1, "Claimed/Busy", False), (2, 1, "Claimed/Retiring", False)),
                   "Garrison's job retiring", seconds=kill_due - 1 - time.time(), show=observed)
    pool.wait_for(lambda: slot_state() and (pool.jobs_dir / "garrison.0.term").exists(), 15,
                  "Garrison's job vacated")
    term_at = float((pool.jobs_dir / "garrison.0.term").read_text().split()[0])
    if early:
        assert term_at >= job_start + retirement - vacate - 1, (term_at - job_start, seen)
        assert "Claimed/Retiring" in seen, seen
    else:
        assert term_at >= job_start + retirement - 1, (term_at - job_start, seen)
        assert "Claimed/Retiring" not in seen, seen
    pool.wait_for(lambda: _running(pool, coltrane), 20, "Coltrane's job running")
    _wait_evicted(pool, "garrison", garrison)
    assert _remote_owners(pool) == ["coltrane"]


def test_priority_preemption_with_preemption_requirements(make_pool) -> None:
    """Priorities in Negotiation and Preemption (the HTCondor manual's "User Priorities and
    Negotiation"; "Negotiation", rule 4): a user with a much better effective priority preempts the
    jobs of a worse one when PREEMPTION_REQUIREMENTS holds - here the usual 20 % better priority,
    and only once the running claims are older than a few seconds ("deny preemption if a current
    running job has been running for a relatively short period of time")."""
    hold_off = 6
    pool = make_pool(_static_slots(2) + f"""
PREEMPTION_REQUIREMENTS = (time() - EnteredCurrentState) > {hold_off} && RemoteUserPrio > SubmitterUserPrio * 1.2
""")
    _setfactor(pool, "bob", 1)
    tester = _submit(pool, "tester", 2)
    pool.wait_for(lambda: _running(pool, tester, 2), 30, "tester filling both slots")
    claimed_at = max(int(s["EnteredCurrentState"]) for s in pool.slots())
    bob = _submit(pool, "bob", 2)
    pool.wait_for(lambda: _running(pool, bob, 2), hold_off + 20, "bob's jobs preempting")
    prio = _priorities(pool)
    assert prio["bob"]["Priority"] * 1.2 < prio["tester"]["Priority"]
    for proc in range(2):
        term_at = float((pool.jobs_dir / f"tester.{proc}.term").read_text().split()[0])
        assert term_at >= claimed_at + hold_off - 1, term_at - claimed_at
    _wait_evicted(pool, "tester", tester, 2)
    assert _remote_owners(pool) == ["bob", "bob"]
    # tester's idle jobs, with the worse priority, never win the slots back
    pool.wait_for(lambda: pool.idle_jobs_advertised("tester") == 2, 15, "tester's idle jobs advertised")
    pool.holds_for(lambda: _running(pool, bob, 2) and _remote_owners(pool) == ["bob", "bob"],
                   "bob's jobs on both slots", cycles=2)


def test_no_priority_preemption_when_the_negotiator_does_not_consider_it(make_pool) -> None:
    """NEGOTIATOR_CONSIDER_PREEMPTION = False (the HTCondor manual's "Priorities in Negotiation and
    Preemption"):
    the negotiator leaves claimed slots out of matchmaking, so even a much better priority
    and a true PREEMPTION_REQUIREMENTS preempt nothing."""
    pool = make_pool(_static_slots(1) + """
PREEMPTION_REQUIREMENTS = True
NEGOTIATOR_CONSIDER_PREEMPTION = False
""")
    _setfactor(pool, "bob", 1)
    tester = _submit(pool, "tester")
    pool.wait_for(lambda: _running(pool, tester), 30, "tester's job running")
    bob = _submit(pool, "bob")
    pool.wait_for(lambda: pool.idle_jobs_advertised("bob") == 1, 15, "bob's idle job in his submitter ad")

    def observed() -> tuple:
        return pool.status(tester), pool.status(bob), _remote_owners(pool)

    pool.holds_for(lambda: observed() == (2, 1, ["tester"]), "tester's job running, bob's idle", cycles=2,
                   show=observed)


def test_fair_share_follows_the_inverse_effective_priorities(make_pool) -> None:
    """The Pie Spin and Pie Slice (the HTCondor manual's "User Priorities and Negotiation", with
    "Priority Calculation"): each cycle a user's slice of the pool is proportional to 1/EUP, EUP
    = RUP x factor. With factors 1 and 3 (and RUPs at the 0.5 floor for the length of the test,
    under the default one-day PRIORITY_HALFLIFE) tester should get three slots for each of bob's.
    Tester starts with all four slots; CLAIM_WORKLIFE = 0 sends every slot back to the negotiator
    after each job, so the shares converge without preemption. Slots are freed one at a time and
    each waits for the next cycle, so the running counts wobble: the check is on averages over a
    window."""
    pool = make_pool(_static_slots(4) + "CLAIM_WORKLIFE = 0\n")
    _setfactor(pool, "tester", 1)
    _setfactor(pool, "bob", 3)
    exe = script(pool.jobs_dir, "short.sh", "sleep 3\n")
    tester = pool.submit(f"executable = {exe}\nqueue 60\n", owner="tester")

    def running() -> tuple[int, int]:
        jobs = pool.jobs("JobStatus == 2")
        return (sum(1 for j in jobs if j["ClusterId"] == tester),
                sum(1 for j in jobs if j["ClusterId"] == bob))

    bob = -1
    pool.wait_for(lambda: running() == (4, 0), 30, "tester on all four slots")
    bob = pool.submit(f"executable = {exe}\nqueue 60\n", owner="bob")
    pool.wait_for(lambda: running() == (3, 1), 25, "the shares converged to 3:1")

    before = _priorities(pool)
    # 20 s: some seven turns of each slot; over 10 s a loaded host once saw 1.44 for 3
    samples: list[tuple[int, int]] = pool.sample(running, 20)
    after = _priorities(pool)

    expected = after["bob"]["Priority"] / after["tester"]["Priority"]  # the 1/EUP ratio
    assert 2.5 < expected < 3.5, expected
    mean_tester = sum(t for t, _ in samples) / len(samples)
    mean_bob = sum(b for _, b in samples) / len(samples)
    assert mean_bob > 0 and expected / 2 < mean_tester / mean_bob < expected * 1.6, samples
    # the usage ratio follows the shares: whoever got more slots accumulated more
    usage = {u: after[u]["AccumulatedUsage"] - before[u]["AccumulatedUsage"] for u in ("tester", "bob")}
    assert usage["tester"] > 1.5 * usage["bob"] > 0, usage
    pool.act("remove", str(tester), user="tester")
    pool.act("remove", str(bob), user="bob")


def test_accumulated_usage_is_the_slot_time_used(make_pool) -> None:
    """Priority Calculation (the HTCondor manual's "User Priorities and Negotiation"): RUP is
    recomputed "over non-uniform time intervals without affecting the calculation"; the accumulated
    usage grows by the resources used times the time passed, so one job alone on one slot for 12 s
    adds about 12 slot-seconds, however often the accountant is asked. About: the accountant charges
    the claims its last cycle saw, so a claim counts from the first cycle whose slot ads show it
    (up to NEGOTIATOR_INTERVAL, 2 s here, after it began, more when the slot's ad is late on a
    loaded host) to the first that no longer does, in whole seconds."""
    pool = make_pool(_static_slots(1))
    exe = script(pool.jobs_dir, "twelve.sh", "sleep 12\n")
    cluster = pool.submit(f"executable = {exe}\nqueue\n")
    pool.wait_for(lambda: pool.status(cluster) == 2, 30, "the job running")
    # condor_userprio, asked about once a second, brings the accountant up to date each time
    pool.wait_for(lambda: (_priorities(pool), pool.status(cluster) == 4)[1], 30, "the job completed",
                  every=0.9)
    wall = float(pool.history(f"ClusterId == {cluster}")[0]["RemoteWallClockTime"])
    assert wall >= 11, wall
    usage = pool.wait_for(lambda: (lambda used: used if used >= wall - 4 else 0.0)(
        float(_priorities(pool)["tester"]["AccumulatedUsage"])), 5, f"a usage of {wall} - 4 s")
    assert usage <= wall + 5, (usage, wall)
