"""The central manager's examples (examples/negotiator), each on a live pool, with the outcome
docs/negotiator.md shows for it: hierarchical group quotas with surplus inside a capped parent,
claimed slots publishing the group a match was negotiated for (and a PREEMPTION_REQUIREMENTS
written with it), concurrency limits counted from the running jobs' slots, a submitter ceiling
set with ``htcpool userprio``, and the schedd claiming a partitionable slot's leftovers outside
the negotiator's quotas, as HTCondor 25's does.

Jobs sleep until removed; each test waits for the counts it is about and then checks that they
stay so over two more negotiation cycles."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.e2e.pool import LivePool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "negotiator"


def config(*names: str, extra: str = "") -> str:
    return "".join((EXAMPLES / n).read_text() for n in names) + extra


def submit(pool: LivePool, count: int, group: str = "", user: str = "", limits: str = "") -> int:
    """``count`` sleeping jobs, in accounting group ``group`` as ``user`` when given."""
    lines = ["executable = /bin/sleep", "arguments = 600", "request_memory = 16", f"queue {count}"]
    if group:
        lines[-1:-1] = [f"accounting_group = {group}", f"accounting_group_user = {user}"]
    if limits:
        lines[-1:-1] = [f"concurrency_limits = {limits}"]
    return pool.submit("\n".join(lines) + "\n")


def running(pool: LivePool) -> Counter[str]:
    """The running jobs by accounting group (by owner for jobs without one)."""
    out: Counter[str] = Counter()
    for ad in pool.jobs("JobStatus == 2"):
        out[str(ad.get("AcctGroup") or ad.get("Owner"))] += 1
    return out


def by_limit(pool: LivePool) -> Counter[str]:
    return Counter(str(ad.get("ConcurrencyLimits", "")).lower() for ad in pool.jobs("JobStatus == 2"))


def by_cluster(pool: LivePool) -> Counter[int]:
    return Counter(int(ad["ClusterId"]) for ad in pool.jobs("JobStatus == 2"))


def settle(pool: LivePool, probe, expected, what: str) -> None:  # type: ignore[no-untyped-def]
    """``probe()`` reaches ``expected`` and keeps it over two more negotiation cycles."""
    pool.wait_for(lambda: probe() == expected, 40, what, show=probe)
    pool.holds_for(lambda: probe() == expected, what, cycles=2, show=probe)


def userprio(pool: LivePool, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("CONDOR_CONFIG", "COLUMNS")}
    env["HTCPOOL_LOCAL_DIR"] = str(pool.layout.root)
    done = subprocess.run([sys.executable, "-m", "htcpool", "userprio", *args], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0 and done.stderr == "", (args, done.stdout, done.stderr)
    return done.stdout


def test_group_quotas_example_caps_physics_and_publishes_the_groups(make_pool) -> None:
    """hep alone: 4 (hep's 3 plus lep's unused slot, never past physics' 4, though 2 slots stay
    free); chemistry then takes its 2. Each claimed slot names its job's group and the group it
    was negotiated for; ``htcpool userprio -quotas`` shows the quotas."""
    pool = make_pool(config("static-slots.config", "group-quotas.config"))
    submit(pool, 8, "group_physics.hep", "higgs")
    settle(pool, lambda: running(pool), Counter({"group_physics.hep": 4}), "hep held at physics' cap of 4")
    submit(pool, 4, "group_chemistry", "curie")
    settle(pool, lambda: running(pool), Counter({"group_physics.hep": 4, "group_chemistry": 2}),
           "chemistry given its quota of 2")
    claimed = [s for s in pool.slots() if s.get("State") == "Claimed"]
    groups = Counter((s.get("RemoteGroup"), s.get("RemoteNegotiatingGroup"), s.get("RemoteAutoregroup"))
                     for s in claimed)
    assert groups == Counter({("group_physics.hep", "group_physics.hep", False): 4,
                              ("group_chemistry", "group_chemistry", False): 2}), groups
    quotas = {line.split()[0]: line.split()[1:5]
              for line in userprio(pool, "-quotas", "-allusers").splitlines()[4:-2]}
    # physics' own effective quota is what its children leave of its 4: nothing
    assert quotas["group_physics"] == ["0.00", "4.00", "no", "4.00"]
    assert quotas["group_physics.hep"] == ["3.00", "3.00", "ByQuota", "3.00"]
    assert quotas["group_chemistry"] == ["2.00", "2.00", "no", "2.00"]


def test_surplus_taken_through_autoregroup_is_preempted_first(make_pool) -> None:
    """group_a takes 2 slots in its own round and 4 more as surplus under ``<none>``; group_b's
    2 jobs then preempt two of the surplus slots (RemoteNegotiatingGroup == "<none>") and none of
    group_a's own two."""
    pool = make_pool(config("static-slots.config", "surplus-preemption.config"))
    submit(pool, 6, "group_a", "ann")
    settle(pool, lambda: running(pool), Counter({"group_a": 6}), "group_a on all 6 slots")
    own = {s["Name"] for s in pool.slots() if s.get("RemoteNegotiatingGroup") == "group_a"}
    assert len(own) == 2 and all(s.get("RemoteAutoregroup") is True for s in pool.slots()
                                 if s.get("RemoteNegotiatingGroup") == "<none>")
    submit(pool, 2, "group_b", "bob")
    settle(pool, lambda: running(pool), Counter({"group_a": 4, "group_b": 2}), "group_b preempting surplus only")
    still_a = {s["Name"] for s in pool.slots() if s.get("RemoteGroup") == "group_a"}
    assert own <= still_a, (own, still_a)


def test_concurrency_limits_and_a_ceiling_hold_across_cycles(make_pool) -> None:
    """matlab (MATLAB_LIMIT 2) runs 2 of 4 jobs; license.a and license.b (default for license.*:
    1) one each; db (CONCURRENCY_LIMIT_DEFAULT 3) with db:2 one job. The limits are counted again
    every cycle from the running jobs' slots. Then a submitter with ``-setceiling 1`` gets 1 slot
    of the one left."""
    pool = make_pool(config("static-slots.config", "concurrency-limits.config"))
    # one submission, so that the first cycle sees every job (see docs/negotiator.md on limits)
    pool.submit("executable = /bin/sleep\narguments = 600\nrequest_memory = 16\n"
                "concurrency_limits = $(lim)\nqueue lim in (matlab, matlab, matlab, matlab, license.a, license.a, "
                "License.B, License.B, db:2, db:2)\n")
    expected = Counter({"matlab": 2, "license.a": 1, "license.b": 1, "db:2": 1})
    settle(pool, lambda: by_limit(pool), expected, "each limit at its cap")
    limits = Counter(str(s.get("ConcurrencyLimits", "")).lower() for s in pool.slots() if s.get("State") == "Claimed")
    assert limits == expected, limits  # what the negotiator counts again each cycle
    domain = str(pool.jobs()[0]["User"]).rpartition("@")[2]
    carol_name = f"lab.carol@{domain}"  # a second submitter: the schedd knows its users by their identity
    assert f"The ceiling of {carol_name} was set to 0" in userprio(pool, "-setceiling", carol_name, "0")
    carol = submit(pool, 2, "lab", "carol")
    pool.holds_for(lambda: by_cluster(pool)[carol] == 0, "a ceiling of 0 keeps carol out", cycles=2)
    userprio(pool, "-setceiling", carol_name, "1")
    settle(pool, lambda: by_cluster(pool)[carol], 1, "carol at her ceiling of 1")


def test_leftovers_fill_the_partitionable_slot_as_htcondors_schedd_does(make_pool) -> None:
    """One 6-core partitionable slot: the negotiator matches one hep job within physics' cap and
    the schedd claims the leftovers for more of hep's jobs at once, past the cap, as HTCondor 25's
    schedd does (docs/negotiator.md, "Partitionable-slot leftovers")."""
    pool = make_pool(config("group-quotas.config", "leftovers.config"))
    submit(pool, 8, "group_physics.hep", "higgs")
    settle(pool, lambda: running(pool), Counter({"group_physics.hep": 6}), "hep on every core")
