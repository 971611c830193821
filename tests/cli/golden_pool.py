"""The pool state behind ../shared/golden/tools, rebuilt as ads for the formatter tests.

The goldens were captured from HTCondor 25 and then had the user and host names
replaced with ``alice`` and ``node1``. The replacement changed the length of
the names but not the padding HTCondor had put after them, so the golden
columns line up with the lengths of the original names: a 7-letter user (the
batch view's OWNER column is 7 wide, the 14-wide owner column of the job
views is followed by two spaces too few) and a 2-letter host (the 34-wide
Name column of condor_status is followed by three spaces too many). The tests
therefore build the ads with names of those lengths, format them, and apply
the same replacement before comparing with the golden bytes.
"""

from __future__ import annotations

from htcpool.classad import ClassAd, parseAds
from tests.shared import SHARED

GOLDEN = SHARED / "golden" / "tools"

CAPTURE_USER = "alice42"  # stands for the 7-letter user of the capture
CAPTURE_HOST = "zq"  # stands for the 2-letter host of the capture

SCHEDD_NAME = "alice@node1"
SCHEDD_ADDRESS = "<127.0.0.1:10247?addrs=127.0.0.1-10247&alias=node1>"

SUBMIT_TIME = 1795308448  # 11/22/26 00:47:28 UTC
START_TIME = 1795308453  # cluster 1 started running
QUERY_TIME = 1795308508  # 11/22/26 00:48:28, the condor_q runs
HOLD_TIME = 1795308507  # 00:48:27, condor_hold 2.1
HOLD_QUERY_TIME = 1795308509  # 00:48:29, condor_q -hold


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


def sanitize(text: str) -> str:
    """The name replacement the goldens went through."""
    return text.replace(CAPTURE_USER, "alice").replace("@" + CAPTURE_HOST, "@node1")


def _job(base: ClassAd, cluster: int, proc: int, **attrs: object) -> ClassAd:
    job = base.copy()
    job["ClusterId"] = cluster
    job["ProcId"] = proc
    job["Owner"] = CAPTURE_USER
    job["GlobalJobId"] = f"alice@node1#{cluster}.{proc}#{SUBMIT_TIME}"
    for key, value in attrs.items():
        if value is None:
            if key in job:
                del job[key]
        else:
            job[key] = value
    return job


_NOT_STARTED = dict.fromkeys(
    (
        "RemoteHost", "ShadowBday", "JobCurrentStartDate", "JobCurrentStartExecutingDate",
        "JobStartDate", "LastMatchTime", "LastRejMatchTime", "LastRejMatchReason",
        "LastRejMatchNegotiator", "FirstJobMatchDate", "PublicClaimId", "StartdIpAddr",
        "StartdPrincipal", "RemoteSlotID",
    )
)  # fmt: skip


def queue_jobs(hold_2_1: bool = False) -> list[ClassAd]:
    """The eight jobs of submit_a/b/c about a minute after submission."""
    base = next(iter(parseAds(golden("condor_q_long_1.0.txt"))))
    jobs = [
        _job(base, 1, p, RemoteHost=f"slot1_{p + 1}@{CAPTURE_HOST}", RemoteSlotID=p + 1)
        for p in range(3)
    ]
    idle = dict(
        _NOT_STARTED,
        JobStatus=1,
        LastJobStatus=0,
        EnteredCurrentStatus=SUBMIT_TIME,
        JobRunCount=0,
        NumJobMatches=0,
        NumShadowStarts=0,
        CurrentHosts=0,
    )
    for p in range(4):
        extra: dict[str, object] = dict(idle)
        if hold_2_1 and p == 1:
            extra.update(
                JobStatus=5,
                LastJobStatus=1,
                EnteredCurrentStatus=HOLD_TIME,
                HoldReason=f"via condor_hold (by user {CAPTURE_USER})",
                HoldReasonCode=1,
                HoldReasonSubCode=0,
            )
        jobs.append(
            _job(
                base,
                2,
                p,
                JobPrio=5,
                RequestMemory=256,
                TotalSubmitProcs=4,
                AcctGroup="group_chemistry",
                AcctGroupUser="curie",
                AccountingGroup="group_chemistry.curie",
                JobSubmitFile="b.sub",
                **extra,
            )
        )
    jobs.append(
        _job(
            base,
            3,
            0,
            RequestMemory=999999,
            TotalSubmitProcs=1,
            AcctGroup=None,
            AcctGroupUser=None,
            AccountingGroup=None,
            JobSubmitFile="c.sub",
            **idle,
        )
    )
    return jobs


def slot_ads() -> list[ClassAd]:
    """The partitionable slot and its three dynamic slots, named on the 2-letter host."""
    slots = []
    for ad in parseAds(golden("condor_status_long.txt")):
        name = ad["Name"]
        ad["Name"] = name.replace("@node1", "@" + CAPTURE_HOST)
        ad["Machine"] = CAPTURE_HOST
        slots.append(ad)
    return slots
