"""What the negotiator asks of the other daemons and tells them, decided without any I/O.

A driver runs a cycle in three steps: it gathers the slot and submitter ads from the collector and
the idle jobs from the schedds, runs ``negotiate``, and sends what each match becomes. The rules
of the first and last steps are here, so every driver follows the same ones:

* ``submitters_by_schedd(ads)``: the Submitter ads worth negotiating for (``IdleJobs`` or
  ``RunningJobs`` above 0: running jobs alone still count toward the submitter's usage), grouped
  by their schedd's address (``MyAddress``), in the collector's order.
* ``fetch_request(ads)``: what to ask one schedd for (``FetchRequests`` naming its submitters),
  or None when none of them has an idle job.
* ``submitter_entries(schedd, ads, idle, table, now)``: the cycle's ``SubmitterAd`` for each
  submitter, its idle jobs (from the schedd's ``IdleJobs`` answer) folded into resource requests
  (priority expressions read at ``now``).
* ``match_messages(match, slots, used)`` (``slots``: the cycle outcome's ``slot_ads``): a match becomes ``MatchNotification`` for the startd and
  ``MatchInfo`` for the schedd. The claim id is the slot's own (``ClaimId``) for an idle slot or a
  partitionable slot, the first of a consumption-policy p-slot's ``ClaimIdList`` not yet handed
  out in this cycle (``used``, which the driver keeps for the cycle; HTCondor's negotiator offers
  each claim id once per cycle, so every match of such a slot becomes its own claim), the
  pre-made ``PreemptClaimId`` for a preemption of a whole slot; the claim
  ids of dynamic slots a partitionable-slot preemption frees go with it. The schedd gets the slot
  ad without its claim ids, and the match's accounting group, negotiating group and autoregroup
  flag, which end up in the claimed slot's ``RemoteGroup``, ``RemoteNegotiatingGroup`` and
  ``RemoteAutoregroup``. A slot without a claim id or an address gives None: the match is dropped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from htcpool.classad import ClassAd, as_int
from htcpool.negotiator.cycle import SubmitterAd
from htcpool.negotiator.outcomes import Match, PreemptState
from htcpool.negotiator.requests import AutoclusterTable, resource_requests
from htcpool.protocol import FetchRequests, IdleJobs, MatchInfo
from htcpool.protocol.startd import MatchNotification

__all__ = ["MatchMessages", "fetch_request", "match_messages", "submitter_entries",
           "submitters_by_schedd"]

#: a slot ad's attributes that only the matched schedd may see
CLAIM_ID_ATTRS = ("ClaimId", "PreemptClaimId", "ClaimIdList")


def submitters_by_schedd(ads: Iterable[ClassAd]) -> dict[str, list[ClassAd]]:
    by_schedd: dict[str, list[ClassAd]] = defaultdict(list)
    for ad in ads:
        url = ad.get("MyAddress")
        if isinstance(url, str) and (as_int(ad.get("IdleJobs")) > 0 or as_int(ad.get("RunningJobs")) > 0):
            by_schedd[url].append(ad)
    return dict(by_schedd)


def fetch_request(ads: Sequence[ClassAd]) -> FetchRequests | None:
    if not any(as_int(a.get("IdleJobs")) for a in ads):
        return None
    return FetchRequests(tuple(str(a["Name"]) for a in ads))


def submitter_entries(schedd: str, ads: Sequence[ClassAd], idle: IdleJobs | None,
                      table: AutoclusterTable, now: float) -> list[SubmitterAd]:
    per: dict[str, list[ClassAd]] = defaultdict(list)
    if idle is not None:
        for name, job in zip(idle.submitters, idle.ads, strict=False):
            per[name].append(job)
    out = []
    for ad in ads:
        name = str(ad["Name"])
        out.append(SubmitterAd(name, schedd=schedd, requests=resource_requests(per.get(name, []), table, now),
                               running_jobs=as_int(ad.get("RunningJobs"))))
    return out


@dataclass(frozen=True, slots=True)
class MatchMessages:
    """What one match becomes: a message for the slot's startd and one for the job's schedd."""

    startd: str
    notification: MatchNotification
    schedd: str
    info: MatchInfo


def match_messages(match: Match, slots: Mapping[str, ClassAd], used: set[str] | None = None) -> MatchMessages | None:
    slot = slots.get(match.slot)
    if slot is None:
        return None
    preempting = match.reason != PreemptState.NONE and not match.preempted_dslots \
        and slot.get("PartitionableSlot") is not True
    claim_id = _claim_id(slot, preempting, set() if used is None else used)
    startd = slot.get("MyAddress")
    if not isinstance(claim_id, str) or not isinstance(startd, str):
        return None
    freed = tuple(str(slots[d].get("ClaimId")) for d in match.preempted_dslots
                  if d in slots and isinstance(slots[d].get("ClaimId"), str))
    public = slot.copy()
    for attr in CLAIM_ID_ATTRS:
        if attr in public:
            del public[attr]
    info = MatchInfo(claim_id, public, match.job[0], match.job[1], match.submitter, freed,
                     group=match.group or "", negotiating_group=match.negotiating_group,
                     autoregroup=match.autoregroup)
    return MatchMessages(startd, MatchNotification(claim_id), match.schedd, info)


def _claim_id(slot: ClassAd, preempting: bool, used: set[str]) -> object:
    """The claim id a match of ``slot`` is offered (see ``match_messages``); None when none is left."""
    listed = slot.get("ClaimIdList")
    if isinstance(listed, str) and not preempting:
        free = next((c for c in listed.split() if c not in used), None)
        if free is not None:
            used.add(free)
        return free
    return slot.get("PreemptClaimId" if preempting else "ClaimId")
