"""condor_defrag on a live pool (HTCondor's manual, "Defragmenting Dynamic Slots"): a pool started
with DEFRAG in DAEMON_LIST whose partitionable slot is fragmented by small jobs is drained gracefully
(the jobs keep running through their retirement), the Defrag ad in the collector counts the drain,
and once the jobs are done the machine is whole again, the drain resumes and the ad counts it whole."""

from __future__ import annotations

import os
import subprocess
import sys

from htcpool.classad import ClassAd
from htcpool.protocol import QueryAds
from tests.e2e.pool import script

DEFRAG = """
NUM_CPUS = 4
MEMORY = 1024
DAEMON_LIST = $(DAEMON_LIST) DEFRAG
DEFRAG_INTERVAL = 1
DEFRAG_UPDATE_INTERVAL = 1
DEFRAG_DRAINING_MACHINES_PER_HOUR = 7200
DEFRAG_MAX_CONCURRENT_DRAINING = 1
MaxJobRetirementTime = 3600
MachineMaxVacateTime = 5
"""


def test_fragmented_machine_is_drained_and_the_defrag_ad_counts_it(make_pool) -> None:
    pool = make_pool(DEFRAG)

    def defrag_ad() -> ClassAd | None:
        ads = pool.c.send("collector", QueryAds("Defrag")).ads
        return ads[0] if ads else None

    def pslot() -> ClassAd:
        return pool.slots("PartitionableSlot =?= true")[0]

    gate = pool.jobs_dir / "go"
    exe = script(pool.jobs_dir, "wait.sh", f'while [ ! -e "{gate}" ]; do sleep 0.2; done\n')
    cluster = pool.submit(f"executable = {exe}\nrequest_cpus = 1\nrequest_memory = 128\nqueue 2\n")
    pool.wait_for(lambda: all(pool.status(cluster, p) == 2 for p in range(2)), 30, "both jobs running")

    ad = pool.wait_for(lambda: (lambda a: a if a is not None and a.get("DrainSuccesses") == 1
                                and a.get("MachinesDraining") == 1 else None)(defrag_ad()),
                       30, "the Defrag ad counting one drain", show=defrag_ad)
    assert str(ad["Name"]).startswith("DEFRAG@")
    drained = pslot()
    assert drained["Draining"] is True and drained["DrainReason"] == f"Defrag {ad['Name']}"
    assert all(pool.status(cluster, p) == 2 for p in range(2))  # graceful: they retire, still running
    log = pool.log_text("defrag")
    assert "Initiating graceful draining of" in log
    # a poll may run on slot ads older than the startd's state: a drain sent after the first is
    # refused as already in progress, and one sent before the second job's claim reached the
    # collector fails its check (the expected badput grew); the list counts each drain sent, as
    # HTCondor's does
    refusals = [line for line in log.splitlines() if "refused the drain" in line]
    assert all("DRAINING_ALREADY_IN_PROGRESS" in line or "DRAINING_CHECK_EXPR_FAILED" in line
               for line in refusals), refusals
    assert [d["what"] for d in ad["RecentDrainsList"]] == ["graceful"] * (1 + ad["DrainFailures"]), ad

    env = {k: v for k, v in os.environ.items() if k != "CONDOR_CONFIG"}
    env["HTCPOOL_LOCAL_DIR"] = str(pool.layout.root)
    tools = {view: subprocess.Popen([sys.executable, "-m", "htcpool", "status", view], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, env=env) for view in ("-defrag", "-any")}
    shown = {}
    for view, process in tools.items():
        out, err = process.communicate(timeout=60)
        shown[view] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    assert shown["-defrag"].returncode == 0, shown["-defrag"].stderr
    heading, _, row = shown["-defrag"].stdout.splitlines()[:3]
    assert heading.split() == ["Name", "Draining", "Peak", "TotalDrained"] and row.split()[:3] == [ad["Name"], "1", "1"]
    assert any(line.split()[:1] == ["Defrag"] for line in shown["-any"].stdout.splitlines())

    gate.write_text("")  # the jobs end: the machine becomes whole, the drain completes and resumes
    pool.wait_for(lambda: all(pool.status(cluster, p) == 4 for p in range(2)), 30, "both jobs completed")
    pool.wait_for(lambda: pslot().get("Draining") is None and pslot()["Cpus"] == 4, 30,
                  "the machine whole and no longer draining", show=lambda: dict(pslot()))
    final = pool.wait_for(lambda: (lambda a: a if a is not None and a.get("WholeMachines") == 1
                                   and a.get("MachinesDraining") == 0 else None)(defrag_ad()),
                          30, "the Defrag ad counting one whole machine", show=defrag_ad)
    assert (final["DrainSuccesses"], final["MachinesDrainingPeak"], final["WholeMachinesPeak"]) == (1, 1, 1)
