"""The simulator against the live pool and against the manual's worked examples (docs/simulator.md,
"How close is the simulator to the pool").

1. The same small workload runs in a live personal pool and in the simulator: six single-core
   slots, alice (priority factor 1) and bob (factor 3) outside any group and carol in
   ``group_q`` with a quota of 2, each with a queue of jobs of 2, 3 and 4 seconds in turn (so
   that jobs started together do not all end together), ``CLAIM_WORKLIFE = 0`` so
   that every slot goes back to the negotiator after each job. The simulator replays the live
   pool's own history (``condor_history -long``: the same submit times and run times) with the
   same condor_config. While all three have jobs waiting, HTCondor gives carol her quota (2 of
   6) and splits the other 4 slots 3:1 (inverse effective priorities): shares 1/3, 1/2 and 1/6
   ("User Priorities and Negotiation": the pie spin; "Group Accounting" quotas). Tolerances:
   each user's share of the CPU time used in that contended window is within 0.1 of that
   split in both runs and within 0.15 of the other run's (the live pool works in whole seconds,
   a slot waits for the next cycle after each job, and on a loaded machine its timing moves
   alice's share between about 0.48 and 0.57 from run to run), and the users finish in the
   same order. The live pool frees
   its slots one or two at a time; so does the simulator, even where the replay's whole-second
   run times end several jobs at one instant (each end is settled, and the cycle it asks for
   run, before the next: ``sim/events.py``). Were they freed together, HTCondor's pie arithmetic
   would differ: alice's slice of 4 slots is a little under 3 (her effective priority has grown
   a little more than a third of bob's), so she gets 2 of them, and the fourth goes to
   ``group_q`` as surplus in the next allocation round (docs/simulator.md).
2. The worked examples of the manual, reproduced by the simulator alone with their numbers:
   the fair-share split (EUPs 5, 10 and 20 get slots 4 : 2 : 1), group quotas (20 and 10 of
   30 slots; scaled to 10 and 5 when half the pool is gone; not grown when the pool doubles;
   the same with dynamic quotas; surplus shared when accepted; subgroups within their parent's
   quota), and RANK preemption (Garrison's machine ``bass`` of "The RANK Expression").
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from htcpool.cli.formats import format_long
from htcpool.protocol import UserprioCommand
from htcpool.sim.options import SimOptions
from htcpool.sim.run import simulate
from tests.e2e.pool import LivePool, script

EPOCH = 1_767_225_600  # QDate of the hand-written histories' first job

# -- the live pool and the simulator on one workload

LIVE_CONFIG = """
UID_DOMAIN = fidelity.test
NUM_CPUS = 6
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = 6
SLOT_TYPE_1_PARTITIONABLE = false
CLAIM_WORKLIFE = 0
GROUP_NAMES = group_q
GROUP_QUOTA_group_q = 2
GROUP_ACCEPT_SURPLUS = True
"""
FACTORS = {"alice": 1, "bob": 3}
QUEUES = {"alice": 24, "bob": 12, "carol": 10}
EXPECTED_SHARES = {"alice": 1 / 2, "bob": 1 / 6, "carol": 1 / 3}
SHARE_TOLERANCE = 0.1  # of each run's shares from HTCondor's split
LIVE_DIFFERENCE = 0.15  # between the simulator's shares and one live run's


def _contended_shares(jobs: Iterable[tuple[str, float, float]]) -> tuple[dict[str, float], list[str]]:
    """Each user's share of the CPU time used from the first start until the first user has
    no job left, and the users in the order they finished. ``jobs``: (owner, start, end)."""
    jobs = list(jobs)
    first = min(start for _, start, _ in jobs)
    last: dict[str, float] = {}
    for owner, _, end in jobs:
        last[owner] = max(last.get(owner, first), end)
    window_end = min(last.values())
    used = {owner: 0.0 for owner in last}
    for owner, start, end in jobs:
        used[owner] += max(0.0, min(end, window_end) - start)
    total = sum(used.values())
    return {owner: value / total for owner, value in used.items()}, sorted(last, key=lambda o: (last[o], o))


def _run_live(root: Path) -> tuple[str, Path, list[tuple[str, float, float]]]:
    pool = LivePool(root, LIVE_CONFIG)
    pool.start()
    try:
        for user, factor in FACTORS.items():
            pool.c.send("negotiator", UserprioCommand("setfactor", f"{user}@fidelity.test", factor))
        exe = script(pool.jobs_dir, "short.sh", 'sleep $(( $1 % 3 + 2 ))\n')
        for user, count in QUEUES.items():
            group = "accounting_group = group_q\n" if user == "carol" else ""
            pool.submit(f"executable = {exe}\narguments = $(Process)\n{group}queue {count}\n", owner=user)
        total = sum(QUEUES.values())
        pool.wait_for(lambda: len(pool.history("JobStatus == 4")) == total, 90,
                      f"all {total} jobs completed", every=0.5)
        ads = pool.history()
        history = root / "history.txt"
        history.write_text(format_long(ads))
        config = pool.layout.config.read_text()
    finally:
        pool.stop("fast")
    jobs = [(str(ad["Owner"]), float(ad["JobStartDate"]), float(ad["CompletionDate"])) for ad in ads]
    return config, history, jobs


def _jobs_csv(out: Path) -> list[dict[str, str]]:
    with (out / "jobs.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def test_the_simulator_shares_the_pool_as_the_live_pool_does(tmp_path: Path) -> None:
    config, history, live_jobs = _run_live(tmp_path / "live")
    (tmp_path / "condor_config").write_text(config)
    (tmp_path / "machines").write_text("1 NUM_CPUS=6 MEMORY=24576\n")
    out = tmp_path / "sim"
    factors = " ".join(f"{user}:{factor}" for user, factor in FACTORS.items())
    summary = simulate(SimOptions(tmp_path / "condor_config", tmp_path / "machines", history, out,
                                  overrides=(("SIM_PRIORITY_FACTORS", factors),)))
    assert summary["jobs_completed"] == sum(QUEUES.values()), summary
    sim_jobs = [(row["owner"], float(row["start_s"]), float(row["end_s"])) for row in _jobs_csv(out)]

    live_shares, live_order = _contended_shares(live_jobs)
    sim_shares, sim_order = _contended_shares(sim_jobs)
    seen = f"live {live_shares} finishing {live_order}; simulated {sim_shares} finishing {sim_order}"
    for user, expected in EXPECTED_SHARES.items():  # the live pool shares as HTCondor does
        assert abs(live_shares[user] - expected) <= SHARE_TOLERANCE, seen
    for user, expected in EXPECTED_SHARES.items():  # and the simulator as HTCondor and the live pool
        assert abs(sim_shares[user] - expected) <= SHARE_TOLERANCE, seen
        assert abs(sim_shares[user] - live_shares[user]) <= LIVE_DIFFERENCE, seen
    assert sim_order == live_order, seen


# -- the manual's worked examples, in the simulator


def _history(jobs: Iterable[tuple[str, float, float, str | None]]) -> str:
    """``condor_history -long`` text of completed jobs: (owner, submitted at, runtime, group)."""
    blocks = []
    for proc, (owner, at, runtime, group) in enumerate(jobs):
        lines = ["ClusterId = 1", f"ProcId = {proc}", f'Owner = "{owner}"', f"QDate = {EPOCH + int(at)}",
                 f"RemoteWallClockTime = {runtime:.1f}", "RequestCpus = 1", "RequestMemory = 128",
                 "JobStatus = 4"]
        if group:
            lines.append(f'AccountingGroup = "{group}.{owner}"')
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _simulate(tmp_path: Path, config: str, slots: int, jobs: Iterable[tuple[str, float, float, str | None]],
              until: float) -> tuple[dict[str, Any], Path]:
    (tmp_path / "condor_config").write_text(
        f"UID_DOMAIN = seeds.test\nNEGOTIATOR_INTERVAL = 60\nSCHEDD_INTERVAL = 5\n"
        f"SLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = {slots}\n" + config)
    (tmp_path / "machines").write_text(f"1 NUM_CPUS={slots} MEMORY={slots * 1024}\n")
    (tmp_path / "history").write_text(_history(jobs))
    out = tmp_path / "out"
    summary = simulate(SimOptions(tmp_path / "condor_config", tmp_path / "machines", tmp_path / "history", out,
                                  until=until))
    return summary, out


def _cpus_at(out: Path, kind: str, at: float) -> dict[str, float]:
    """cpus_in_use per name of ``kind`` in the last usage.csv sample at or before ``at``."""
    found: dict[str, float] = {}
    sample = None
    with (out / "usage.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            time = float(row["time_s"])
            if time > at:
                break
            if row["kind"] != kind:
                continue
            if time != sample:
                sample, found = time, {}
            found[row["name"]] = float(row["cpus_in_use"])
    return found


def test_fair_share_inverse_to_effective_priority(tmp_path: Path) -> None:
    """3.6.2 Effective User Priority: users with EUPs 5, 10 and 20 get resources in the ratio
    4 : 2 : 1. Every RUP starts at 0.5, so factors 10, 20 and 40 give exactly those EUPs; a
    half-life far longer than the run keeps them there. Seven slots, every slot back to the
    negotiator after each job."""
    config = ("PRIORITY_HALFLIFE = 1e9\nCLAIM_WORKLIFE = 0\n"
              "SIM_PRIORITY_FACTORS = userA:10, userB:20, userC:40\n")
    jobs = [(user, 0, 300, None) for user in ("userA", "userB", "userC") for _ in range(40)]
    _, out = _simulate(tmp_path, config, 7, jobs, until=2400)
    for at in (1000, 1400, 2000):  # between the cycles at which all jobs end together
        assert _cpus_at(out, "user", at) == {"userA": 4, "userB": 2, "userC": 1}, at


GROUPS = "GROUP_NAMES = group_physics, group_chemistry\n"
STATIC = GROUPS + "GROUP_QUOTA_group_physics = 20\nGROUP_QUOTA_group_chemistry = 10\n"
DYNAMIC = GROUPS + "GROUP_QUOTA_DYNAMIC_group_physics = 0.66\nGROUP_QUOTA_DYNAMIC_group_chemistry = 0.33\n"


def _group_jobs(count: int = 60) -> list[tuple[str, float, float, str | None]]:
    return ([("einstein", 0, 7200, "group_physics")] * count + [("curie", 0, 7200, "group_chemistry")] * count)


@pytest.mark.parametrize(("config", "slots", "physics", "chemistry"), [
    (STATIC, 30, 20, 10),  # the example: 20 physics and 10 chemistry slots of 30
    (STATIC + "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = False\n", 15, 10, 5),  # half the pool gone
    (STATIC, 60, 20, 10),  # the pool doubled: quotas are not scaled up
    (DYNAMIC, 30, 19, 9),  # two thirds and one third of 30, 19.8 and 9.9: whole slots only
    (STATIC + "GROUP_ACCEPT_SURPLUS = True\n", 60, 40, 20),  # surplus shared in proportion to quota
], ids=["static", "scaled-down", "not-scaled-up", "dynamic", "surplus"])
def test_group_quotas(tmp_path: Path, config: str, slots: int, physics: int, chemistry: int) -> None:
    """3.6.8 Accounting Groups with Hierarchical Group Quotas, the flat examples."""
    _, out = _simulate(tmp_path, config, slots, _group_jobs(), until=600)
    assert _cpus_at(out, "group", 600) == {"group_physics": physics, "group_chemistry": chemistry}


HIERARCHY = ("GROUP_NAMES = group_physics, group_physics.hep, group_physics.lep, group_chemistry\n"
             "GROUP_QUOTA_group_physics = 20\nGROUP_QUOTA_group_physics.hep = 15\n"
             "GROUP_QUOTA_group_physics.lep = 5\nGROUP_QUOTA_group_chemistry = 10\n")
SUBGROUP_SURPLUS = ("GROUP_ACCEPT_SURPLUS_group_physics = false\nGROUP_ACCEPT_SURPLUS_group_physics.lep = true\n"
                    "GROUP_ACCEPT_SURPLUS_group_physics.hep = true\n")


@pytest.mark.parametrize(("config", "slots", "submitters", "expected"), [
    (HIERARCHY, 30, ("hep", "lep", "chemistry"),
     {"group_physics.hep": 15, "group_physics.lep": 5, "group_chemistry": 10}),
    # lep has no jobs: hep takes its unused quota, but not past physics' 20, even with slots idle
    (HIERARCHY + SUBGROUP_SURPLUS, 40, ("hep", "chemistry"), {"group_physics.hep": 20, "group_chemistry": 10}),
], ids=["subgroups", "surplus-within-parent"])
def test_hierarchical_group_quotas(tmp_path: Path, config: str, slots: int, submitters: tuple[str, ...],
                                   expected: dict[str, int]) -> None:
    """3.6.8, the subgroup examples: hep 15 and lep 5 within physics' 20; with surplus accepted
    by the subgroups and not by physics, hep and lep may exceed their quotas but not, together,
    their parent's."""
    users = {"hep": ("higgs", "group_physics.hep"), "lep": ("fermi", "group_physics.lep"),
             "chemistry": ("curie", "group_chemistry")}
    jobs = [(users[s][0], 0, 7200, users[s][1]) for s in submitters for _ in range(40)]
    _, out = _simulate(tmp_path, config, slots, jobs, until=600)
    assert _cpus_at(out, "group", 600) == expected


def test_rank_preemption_on_garrisons_machine(tmp_path: Path) -> None:
    """The RANK Expression: on ``bass`` Elvin Jones' job (rank 1) preempts an outsider's
    (rank 0), Jimmy Garrison's (rank 10) preempts Jones', and Coltrane's (rank 1) waits for
    Garrison's to finish. RANK preemption needs no PREEMPTION_REQUIREMENTS."""
    config = ('RANK = (Owner == "coltrane") + (Owner == "tyner") + ((Owner == "garrison") * 10)'
              ' + (Owner == "jones")\nPREEMPTION_REQUIREMENTS = False\n')
    jobs = [("miles", 0, 1000, None), ("jones", 100, 1000, None), ("garrison", 200, 300, None),
            ("coltrane", 300, 100, None)]
    summary, out = _simulate(tmp_path, config, 1, jobs, until=4000)
    rows = {row["owner"]: row for row in _jobs_csv(out)}
    seen = f"{summary['preemptions']} preemptions; jobs {rows}"
    assert rows["miles"]["preemptions"] != "0" and rows["jones"]["preemptions"] != "0", seen
    garrison = rows["garrison"]
    assert garrison["preemptions"] == "0" and 200 <= float(garrison["start_s"]) <= 200 + 60, seen
    assert float(garrison["end_s"]) - float(garrison["start_s"]) == pytest.approx(300), seen
    assert float(rows["coltrane"]["start_s"]) >= float(garrison["end_s"]), seen
    assert summary["jobs_completed"] == 4, seen
