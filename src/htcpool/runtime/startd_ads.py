"""What the startd adds to its core's ads before they leave the machine.

The core's slot ads say everything HTCondor's policy decides; the live startd adds
where it can be reached and who may claim it:

* ``slot_update``: a slot ad for the collector, with ``MyAddress`` (this startd's
  URL), ``StartdIpAddr`` (the same in HTCondor's ``<host:port>`` form),
  ``TargetType``, ``ClientMachine`` of a claimed slot, and the slot's claim ids as
  private attributes (``ClaimId``, ``PreemptClaimId``, and a consumption-policy
  p-slot's unused claim ids, space-separated, as ``ClaimIdList``), which only the
  negotiator sees;
* ``leftovers``: the partitionable slot ad a claim reply carries after carving, with
  the partitionable slot's fresh claim id and the startd's addresses, so the schedd
  can claim the rest without another negotiation;
* ``provisioned``: what a claimed slot gives its job, as the job ad's
  ``…Provisioned`` attributes, ``ProvisionedResources`` and ``CondorScratchDir``;
* ``FreedSlots``: which advertised slot has just become Unclaimed (from another
  state; a new slot does not count), after which the startd asks the negotiator for
  a cycle soon, since resources were freed.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad import ClassAd, as_number
from htcpool.protocol import UpdateAd
from htcpool.startd import Slot, State

#: the resources whose amounts a job learns as ``<name>Provisioned``
PROVISIONED = ("Cpus", "Disk", "Memory", "GPUs")


def slot_update(ad: ClassAd, slot: Slot | None, url: str, sinful: str) -> UpdateAd:
    """The collector update for one slot ad (``slot`` None: a slot already gone, no claim ids)."""
    ad = ad.copy()
    ad["MyAddress"] = url
    ad["StartdIpAddr"] = sinful
    ad["TargetType"] = "Job"
    schedd = ad.get("RemoteScheddName")
    if isinstance(schedd, str) and schedd:
        ad["ClientMachine"] = schedd.rpartition("@")[2]
    private = ClassAd()
    if slot is not None:
        private["ClaimId"] = slot.claim.id
        if slot.preempting_id:
            private["PreemptClaimId"] = slot.preempting_id
        if slot.spare_claims:
            private["ClaimIdList"] = " ".join(c.id for c in slot.spare_claims)
    return UpdateAd(ad, private)


def leftovers(ad: ClassAd, pslot: Slot, url: str, sinful: str) -> ClassAd:
    """The partitionable slot's ad as a claim reply carries it."""
    out = ad.copy()
    out["ClaimId"] = pslot.claim.id
    out["MyAddress"] = url
    out["StartdIpAddr"] = sinful
    return out


def provisioned(slot: Slot | None, scratch_dir: str) -> dict[str, Any]:
    """What the claimed slot gives its job, as job ad attributes."""
    out: dict[str, Any] = {}
    if slot is not None:
        names = [n for n in PROVISIONED if n in slot.ad]
        for name in names:
            value = as_number(slot.ad.get(name))
            if value is not None:
                out[f"{name}Provisioned"] = value
        out["ProvisionedResources"] = ",".join(names)
    out["CondorScratchDir"] = scratch_dir
    return out


class FreedSlots:
    """The last advertised state of each slot, to tell when one has just been freed."""

    def __init__(self) -> None:
        self.last_state: dict[str, str] = {}

    def freed(self, name: str, ad: ClassAd) -> bool:
        """Record ``ad``'s state; True when the slot went from another state to Unclaimed."""
        state = ad.get("State")
        before = self.last_state.get(name)
        self.last_state[name] = state if isinstance(state, str) else ""
        return state == State.UNCLAIMED.value and before not in (None, State.UNCLAIMED.value)


__all__ = ["FreedSlots", "leftovers", "provisioned", "slot_update"]
