"""The HTCondor manual's Python bindings tour, as a script: submit, query, hold, release,
remove, wait on the job event log, and read the history.

Written for HTCondor's ``htcondor2``; on htcpool only the import line changes::

    from htcpool import htcondor2          # was: import htcondor2

Run it against a running pool (``htcpool up``), from a scratch directory:
``python manual_tour.py``. It prints what it did and exits 0 when every step
went as the manual says.
"""

from __future__ import annotations

import os
import sys

from htcpool import htcondor2  # the only line that differs from the HTCondor version


def main() -> int:
    schedd = htcondor2.Schedd()
    log = os.path.abspath("tour.log")

    # Submit one job that succeeds, and a cluster of three that sleep.
    hello = htcondor2.Submit({
        "executable": "/bin/sh",
        "arguments": '"-c \'echo hello from $(Cluster).$(Process)\'"',
        "output": "hello.out",
        "error": "hello.err",
        "log": log,
        "request_cpus": "1",
        "request_memory": "32MB",
    })
    result = schedd.submit(hello)
    print(f"submitted cluster {result.cluster()} ({result.num_procs()} job)")

    sleepers = htcondor2.Submit({"executable": "/bin/sleep", "arguments": "600", "log": log,
                                 "request_memory": "32MB"})
    batch = schedd.submit(sleepers, count=3)
    print(f"submitted cluster {batch.cluster()} ({batch.num_procs()} jobs)")

    # Query the queue with a constraint and a projection.
    for ad in schedd.query(constraint=f"ClusterId == {batch.cluster()}",
                           projection=["ClusterId", "ProcId", "JobStatus"]):
        print("  queued", f"{ad['ClusterId']}.{ad['ProcId']}", htcondor2.JobStatus(ad["JobStatus"]).name)

    # Hold one sleeper, release it, then remove the whole cluster.
    held = schedd.act(htcondor2.JobAction.Hold, [f"{batch.cluster()}.0"], reason="the tour holds it")
    print("held:", held["TotalSuccess"])
    status = schedd.query(f"ClusterId == {batch.cluster()} && ProcId == 0", ["JobStatus", "HoldReason"])[0]
    if status["JobStatus"] != htcondor2.JobStatus.HELD:
        print("the job was not held", file=sys.stderr)
        return 1
    print("  hold reason:", status["HoldReason"])
    released = schedd.act(htcondor2.JobAction.Release, f"ClusterId == {batch.cluster()} && ProcId == 0")
    print("released:", released["TotalSuccess"])
    removed = schedd.act(htcondor2.JobAction.Remove, f"ClusterId == {batch.cluster()}")
    print("removed:", removed["TotalSuccess"])

    # Wait on the event log for the first job's end.
    exit_code = None
    for event in htcondor2.JobEventLog(log).events(stop_after=120):
        if event.cluster == result.cluster() and event.type == htcondor2.JobEventType.JOB_TERMINATED:
            exit_code = event["ReturnValue"]
            break
    if exit_code is None:
        print("the job did not finish in time", file=sys.stderr)
        return 1
    print(f"job {result.cluster()}.0 exited with {exit_code}; it said:",
          open("hello.out").read().strip())

    # The history has the finished job.
    for ad in schedd.history(constraint=f"ClusterId == {result.cluster()}",
                             projection=["ClusterId", "ProcId", "ExitCode", "JobStatus"], match=1):
        print("history:", f"{ad['ClusterId']}.{ad['ProcId']}", "exit code", ad["ExitCode"])
        return 0 if ad["ExitCode"] == 0 else 1
    print("the job is not in the history", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
