"""Building a schedd core for back-to-back tests: fake clock, in-memory store, no I/O."""

from __future__ import annotations

from typing import Any

from htcpool.classad import ClassAd, parseOne
from htcpool.protocol import JobEvent, JobUpdate, MatchInfo, Submit
from htcpool.protocol.startd import ActivateReply, ClaimReply
from htcpool.schedd import MemoryStore, Outcome, Schedd, ScheddSettings, ToStartd

T0 = 1_000_000.0
STARTD = "http://startd.example:9618"
SLOT = ('[Name = "slot1@ep"; MyAddress = "http://startd.example:9618"; Memory = 4096; Cpus = 4; '
        'Requirements = true]')


def job(extra: str = "") -> ClassAd:
    return parseOne(f"[JobStatus = 1; RemoteWallClockTime = 0.0; Requirements = TARGET.Memory >= 512; {extra}]")


def schedd(store: MemoryStore | None = None, **settings: Any) -> Schedd:
    core = Schedd(ScheddSettings(schedd_name="schedd@submit", **settings), T0, store=store or MemoryStore(),
                  host="submit")
    core.start(T0, "http://submit:1", "<127.0.0.1:1>")
    return core


def submit(core: Schedd, *extras: str, owner: str = "alice", now: float = T0) -> int:
    reply = core.handle(Submit(owner, tuple(job(e) for e in extras)), now).reply
    return int(reply.cluster)


def match(core: Schedd, job_id: tuple[int, int], claim_id: str = "c1", slot: str = SLOT,
          now: float = T0, preempt: tuple[str, ...] = ()) -> Outcome:
    return core.handle(MatchInfo(claim_id, parseOne(slot), job_id[0], job_id[1], "alice", preempt), now)


def run(core: Schedd, job_id: tuple[int, int], claim_id: str = "c1", now: float = T0) -> None:
    """Match, claim and activate: the job runs on ``claim_id``."""
    match(core, job_id, claim_id, now=now)
    core.handle(ClaimReply(claim_id, True, slot="slot1_1@ep"), now)
    core.handle(ActivateReply(claim_id, True), now)


def update(claim_id: str, event: JobEvent, **fields: Any) -> JobUpdate:
    return JobUpdate(claim_id, "slot1_1@ep", event, **fields)


def to_startd(outcome: Outcome) -> list[Any]:
    """The messages an outcome sends to startds, each with its address checked."""
    messages = []
    for action in outcome.actions:
        if isinstance(action, ToStartd):
            assert action.address == STARTD
            messages.append(action.message)
    return messages


def kinds(outcome: Outcome) -> list[str]:
    return [type(a).__name__ + ":" + type(a.message).__name__ for a in outcome.actions]
