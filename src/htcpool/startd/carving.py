"""Partitionable slots: carving dynamic slots for claims and giving resources back.

A claim request on a partitionable slot (``claim_partitionable``) - Unclaimed, Owner,
or Drained (then the slot's Requirements are the draining START ``&&
WithinResourceLimits``, so only jobs the drain accepts fit):

1. copies the request and applies ``MODIFY_REQUEST_EXPR_Request<X>`` (request as MY,
   slot as TARGET; the defaults quantize cpus to 1, memory to 128 MiB, disk to
   ``DiskQuantum`` or 1024 KiB); if the modified request no longer satisfies the slot's
   Requirements and ``MUST_MODIFY_REQUEST_EXPRS`` is false, the original is used;
2. takes the amounts - the evaluated ``Consumption<X>`` attributes under a consumption
   policy, otherwise ``_condor_Request<X>`` or ``Request<X>`` (cpus default 1, custom
   resources 0; memory and disk must be given), choosing custom-resource instances
   that satisfy the job's ``Require<Res>``;
3. preempts the listed dynamic slots (the negotiator's pslot preemption) when every
   one's retirement has expired: each is killed (hard kill), its schedd told the claim
   is gone ("Preempted for a Priority user") and its resources return at once; the
   slot is removed and its starter's KILLING_TIMEOUT is tracked by claim id
   (``Startd.dying``) until the starter is reported gone;
4. subtracts the amounts, creates ``<prefix><N>_<k>`` (the smallest free k) which takes
   the claim and enters Claimed/Idle (5); the partitionable slot gets a fresh claim id
   and its reply carries the slot ad as "leftovers".

Under a consumption policy the p-slot offers several claim ids at once (``spare_claims``:
``NUM_CLAIMS``, by default one per core, advertised as ``ClaimIdList``), because the
negotiator matches it once per job in a cycle and hands each match its own id. A request
naming one of them takes that claim for the new dynamic slot and a fresh one replaces it
(HTCondor's ``ResMgr::get_by_any_id``). Such a reply carries no leftovers: what is left of
the slot is the negotiator's to share among submitters by fair share in its next cycle,
not the claiming schedd's to give to the same user (HTCondor 25's startd would send them
when the schedd asks; htcpool keeps the consumption policy's split).

A dynamic slot reaching Owner or Unclaimed is deleted and its resources returned.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd
from htcpool.classad.match import requirements_hold
from htcpool.classad.nodes import Node
from htcpool.protocol.startd import ClaimReply, Notice, NotifySchedd, RequestClaim, SendAd
from htcpool.startd.claim import Claim
from htcpool.startd.layout import Resources, satisfies
from htcpool.startd.policy import eval_float, parse
from htcpool.startd.settings import StartdSettings
from htcpool.startd.slot import DYNAMIC, Slot
from htcpool.startd.states import Activity, Event, State

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

_STANDARD = {"Cpus": "CPUS", "Memory": "MEMORY", "Disk": "DISK"}


def consumption_nodes(settings: StartdSettings, slot: Slot, custom: list[str]) -> Mapping[str, Node]:
    """``Consumption<X>`` expressions for a slot type with a consumption policy."""
    if not slot.consumption_policy:
        return {}
    stype = settings.slot_types.get(slot.slot_type)
    per_type = stype.consumption if stype else {}
    out: dict[str, Node] = {}
    for attr in [*_STANDARD, *custom]:
        key = _STANDARD.get(attr, attr)
        text = next((v for k, v in per_type.items() if k.upper() == key.upper()), None)
        if text is None:
            text = next((v for k, v in settings.consumption.items() if k.upper() == key.upper()), None)
        if text is None:
            text = f"ifthenelse(target.Request{attr} =?= undefined, 0, target.Request{attr})"
        out[f"Consumption{attr}"] = parse(text)
    return out


def _modified(startd: Startd, pslot: Slot, request: ClassAd) -> ClassAd:
    mod = request.copy()
    for attr, node in startd.modify_request.items():
        if attr not in request:
            continue
        v = eval_float(request._evaluate_node(node, pslot.ad, startd.ctx))
        if v is not None:
            mod[attr] = int(v)
    return mod


def _amount(startd: Startd, pslot: Slot, request: ClassAd, attr: str) -> float | None:
    if pslot.consumption_policy:
        return eval_float(pslot.ad.evaluate(f"Consumption{attr}", startd.ctx, request))
    for name in (f"_condor_Request{attr}", f"Request{attr}"):
        if name in request:
            return eval_float(request.evaluate(name, startd.ctx, pslot.ad))
    return None


def claim_partitionable(startd: Startd, pslot: Slot, msg: RequestClaim, now: float) -> None:
    """Carve a dynamic slot for ``msg`` out of ``pslot`` (steps 1-4 of the module docstring),
    or refuse the claim saying why."""
    from htcpool.startd import dynamic, transitions

    def refuse(reason: str) -> None:
        startd.emit(ClaimReply(msg.claim_id, False, reason, slot=pslot.name))

    if pslot.state not in (State.UNCLAIMED, State.OWNER, State.DRAINED):
        refuse(f"partitionable slot is {pslot.state.value}")
        return
    blocked = _preempt_children(startd, pslot, msg.preempt_claim_ids, now)
    if blocked is not None:
        refuse(f"dynamic slot with claim {blocked} cannot be preempted yet")
        return
    dynamic.publish_dynamic(startd, pslot, now)
    request = _modified(startd, pslot, msg.request)
    if not requirements_hold(pslot.ad, request, startd.ctx):
        if startd.settings.must_modify_request_exprs or not requirements_hold(pslot.ad, msg.request, startd.ctx):
            refuse("partitionable slot Requirements do not match the request")
            return
        request = msg.request
    take = _share(startd, pslot, request)
    if isinstance(take, str):
        refuse(take)
        return
    _subtract(pslot.resources, take)
    dslot = _dynamic_slot(startd, pslot, msg, take, now)
    dynamic.publish_dynamic(startd, pslot, now)
    leftovers = None if pslot.consumption_policy else pslot.ad.copy()
    startd.emit(ClaimReply(msg.claim_id, True, slot=dslot.name, leftovers=leftovers))
    startd.mark_changed(pslot)
    transitions.change(startd, dslot, Event.CLAIM, now)


def _preempt_children(startd: Startd, pslot: Slot, claim_ids: tuple[str, ...], now: float) -> str | None:
    """Preempt the dynamic slots holding ``claim_ids`` and give their resources back (step 3);
    the first claim id that cannot be preempted yet, with nothing done, or None."""
    from htcpool.startd import retirement

    for cid in claim_ids:
        victim = next((c for c in pslot.children if c.claim.id == cid), None)
        if victim is None or (victim.claim.job is not None and not retirement.retirement_expired(startd, victim, now)):
            return cid
    for cid in claim_ids:
        victim = next(c for c in pslot.children if c.claim.id == cid)
        victim.claim.vacate_reason = "Preempted for a Priority user"
        retirement.kill_claim(startd, victim, now)
        if startd.is_live(victim):
            gone = victim.claim
            if gone.request is not None and not gone.schedd_closed:
                startd.emit(NotifySchedd(gone.schedd, gone.id, Notice.RELEASE, gone.vacate_reason))
            release_resources(startd, victim, now)
    return None


def _share(startd: Startd, pslot: Slot, request: ClassAd) -> Resources | str:
    """What the request takes from the partitionable slot (step 2), or why it cannot have it."""
    cpus = _amount(startd, pslot, request, "Cpus")
    memory = _amount(startd, pslot, request, "Memory")
    disk = _amount(startd, pslot, request, "Disk")
    if memory is None or disk is None:
        return "request has no RequestMemory or RequestDisk"
    take = Resources(cpus=max(1.0, cpus if cpus is not None else 1.0), memory=max(1, int(memory)),
                     disk=max(0, int(disk)))
    left = pslot.resources
    if take.cpus > left.cpus + 1e-9 or take.memory > left.memory or take.disk > left.disk:
        return "not enough resources left in the partitionable slot"
    for name, have in left.custom.items():
        want = int(math.ceil(_amount(startd, pslot, request, name) or 0))
        if want > have:
            return f"not enough {name} left in the partitionable slot"
        take.custom[name] = want
        if name in left.ids and want:
            constraint = request.get(f"Require{name}")
            text = None if constraint is None else (f'"{constraint}"' if isinstance(constraint, str)
                                                    else repr(constraint))
            chosen = [d for d in left.ids[name]
                      if satisfies(text, d, startd.inventory.properties.get(d), startd.ctx, request)][:want]
            if len(chosen) < want:
                return f"no {name} satisfies Require{name}"
            take.ids[name] = chosen
    return take


def _dynamic_slot(startd: Startd, pslot: Slot, msg: RequestClaim, take: Resources, now: float) -> Slot:
    """Create ``<prefix><N>_<k>`` (the smallest free k) with the claim and the resources taken;
    the partitionable slot gets a fresh claim id (step 4)."""
    sub_id = 1
    used = {c.sub_id for c in pslot.children}
    while sub_id in used:
        sub_id += 1
    id_str = f"{pslot.id_str}_{sub_id}"
    claim = _claim_for(startd, pslot, msg.claim_id)
    claim.request, claim.schedd = msg.request, msg.schedd
    dslot = Slot(pslot.slot_id, pslot.slot_type, DYNAMIC, id_str, f"{id_str}@{startd.settings.hostname}",
                 take, take.copy(), pslot.policy, claim, sub_id=sub_id, parent=pslot,
                 state=State.UNCLAIMED, activity=Activity.IDLE, entered_state=now, entered_activity=now,
                 accounted_at=now)
    startd.index_claims(pslot)
    pslot.children.append(dslot)
    startd.add_slot(dslot, startd.slots.index(pslot) + len(pslot.children))
    startd.publish_static(dslot)
    startd.publish_static(pslot)
    claim.rank = startd.rank_of(dslot, msg.request)
    claim.start_lease(msg.alive_interval, startd.settings.max_claim_alives_missed, now)
    return dslot


def _claim_for(startd: Startd, pslot: Slot, claim_id: str) -> Claim:
    """The claim the new dynamic slot takes: the spare claim named (replaced by a fresh one),
    or the p-slot's own claim (the p-slot gets a fresh one)."""
    fresh = Claim(startd.new_claim_id(pslot.id_str))
    for n, spare in enumerate(pslot.spare_claims):
        if spare.id == claim_id:
            pslot.spare_claims[n] = fresh
            return spare
    claim, pslot.claim = pslot.claim, fresh
    return claim


def _subtract(left: Resources, take: Resources) -> None:
    left.cpus -= take.cpus
    left.memory -= take.memory
    left.disk -= take.disk
    for name, n in take.custom.items():
        left.custom[name] = left.custom.get(name, 0) - n
        for dev in take.ids.get(name, []):
            left.ids[name].remove(dev)


def release_resources(startd: Startd, dslot: Slot, now: float) -> None:
    """Give a dynamic slot's resources back to its parent and forget the slot; a starter
    still running there is hard-killed and its KILLING_TIMEOUT tracked (``Startd.bury``)."""
    parent = dslot.parent
    if not startd.is_live(dslot) or parent is None:
        return
    if dslot.starter_active:
        startd.bury(dslot, now)
    back = dslot.provisioned
    left = parent.resources
    left.cpus += back.cpus
    left.memory += back.memory
    left.disk += back.disk
    for name, n in back.custom.items():
        left.custom[name] = left.custom.get(name, 0) + n
        if back.ids.get(name):
            order = list(startd.inventory.ids.get(name, ()))
            left.ids[name] = sorted(left.ids.get(name, []) + back.ids[name], key=order.index)
    parent.children.remove(dslot)
    startd.remove_slot(dslot)
    startd.changed.pop(dslot.name, None)
    startd.publish_static(parent)
    startd.mark_changed(parent)
    startd.emit(SendAd(dslot.name, None, invalidate=True))


def delete_dslot(startd: Startd, dslot: Slot, now: float) -> None:
    release_resources(startd, dslot, now)
