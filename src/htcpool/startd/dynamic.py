"""Machine-wide and per-slot values that change with time.

``compute_machine`` turns the latest ``SensorReadings`` into per-slot load and idle
times, as HTCondor does (``Resource::compute_condor_usage``, ``assign_load_to_slots``):

* Condor load: every computation pushes the slot's job CPU load (in cores, from the
  readings; 0 without a running job) into a 60-entry queue, once per second elapsed
  since the last computation (at least 1, at most ``POLLING_INTERVAL`` entries).
  ``CondorLoadAvg`` = queue mean × max(ncpus, TotalLoadAvg) / ncpus, capped at
  ``TotalLoadAvg`` (ncpus = the detected cores), so a job reaches its full load a
  minute after it starts. ``TotalCondorLoadAvg`` is the sum.
* Owner load = ``TotalLoadAvg`` − ``TotalCondorLoadAvg`` (not below 0), handed out to
  the static and partitionable slots in state order - Owner, then Unclaimed, then the
  rest, slot order within a group - each taking up to its ``Cpus`` (a partitionable
  slot: its whole partition); the last slot in that order takes whatever remains, so
  it may exceed its cores. A partitionable slot keeps up to its free cores and passes
  the excess to its dynamic slots, each up to its own ``Cpus``.
* ``LoadAvg`` = owner share + ``CondorLoadAvg``, rounded to 0.01.
``KeyboardIdle``/``ConsoleIdle`` are the machine's for slots numbered up to
``SLOTS_CONNECTED_TO_KEYBOARD``/``…_CONSOLE``, otherwise the time since the startd
began plus ``DISCONNECTED_KEYBOARD_IDLE_BOOST``.

``publish_dynamic`` writes one slot's moving attributes (an attribute whose value did not
change is left as it is, so an unchanged ad costs comparisons, not new nodes); ``publish_all`` does every
slot and then the ``STARTD_SLOT_ATTRS`` cross-advertising (``slot1_State`` …).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd
from htcpool.classad.nodes import ListExpr, Literal, Node
from htcpool.classad.values import UNDEFINED
from htcpool.startd import retirement
from htcpool.startd.ads import requirements_node
from htcpool.startd.claim import published_request_attrs
from htcpool.startd.policy import eval_float, truth
from htcpool.startd.slot import CLAIM_ATTRS, LOAD_QUEUE_SIZE, Slot
from htcpool.startd.states import State

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

_ORDER = {State.OWNER: 0, State.UNCLAIMED: 1}
_JOB_ATTRS = ("JobId", "GlobalJobId", "JobStart", "TotalJobRunTime", "TotalJobSuspendTime",
              "RetirementTimeRemaining", "JobUniverse", "ImageSize")


def needs_fast_poll(startd: Startd) -> bool:
    return any((s.state in (State.CLAIMED, State.PREEMPTING) and not s.is_partitionable)
               or s.state is State.BACKFILL or s.condor_load > 0 for s in startd.slots)


def _sample(startd: Startd, slot: Slot) -> float:
    """The load sample a poll pushes for ``slot``: its job's share of the load, or 0."""
    readings = startd.readings
    return readings.condor_load.get(slot.name, readings.condor_load.get(slot.id_str, 0.0)) if slot.has_job() else 0.0


def loads_steady(startd: Startd) -> bool:
    """Whether ``compute_machine`` would leave every load as it is: each slot's queue of samples
    holds only the sample it would push next."""
    for slot in startd.slots:
        queue = slot.load_samples
        if queue.count(_sample(startd, slot)) != LOAD_QUEUE_SIZE:
            return False
    return True


def compute_machine(startd: Startd, now: float) -> None:
    readings = startd.readings
    total = max(0.0, readings.load_avg)
    last = startd.last_load_time
    elapsed = 1 if last is None else int(now - last)
    pushes = max(1, min(elapsed, int(startd.settings.polling_interval)))
    startd.last_load_time = now
    ncpus = max(1, startd.settings.detected_cpus)
    scale = max(float(ncpus), total) / ncpus
    condor_total = 0.0
    for slot in startd.slots:
        sample = _sample(startd, slot)
        slot.load_samples.extend([sample] * pushes)
        mean = sum(slot.load_samples) / LOAD_QUEUE_SIZE
        slot.condor_load = min(mean * scale, total)
        condor_total += slot.condor_load
    _assign_owner_load(startd, max(0.0, total - condor_total))
    startd.totals["TotalLoadAvg"] = round(total, 2)
    startd.totals["TotalCondorLoadAvg"] = round(condor_total, 2)


def _assign_owner_load(startd: Startd, owner: float) -> None:
    for slot in startd.slots:
        slot.owner_load = 0.0
    ordered = sorted((s for s in startd.slots if s.parent is None), key=lambda s: _ORDER.get(s.state, 2))
    for i, slot in enumerate(ordered):
        if owner <= 0:
            break
        share = owner if i == len(ordered) - 1 else min(owner, slot.provisioned.cpus)
        slot.owner_load = share
        owner -= share
        excess = share - slot.resources.cpus
        for child in slot.children:
            if excess <= 0:
                break
            child.owner_load = min(excess, child.resources.cpus)
            slot.owner_load -= child.owner_load
            excess -= child.owner_load


def _idle(startd: Startd, slot: Slot, last: float | None, connected: int, now: float) -> float | None:
    if slot.slot_id <= connected:
        return None if last is None else max(0.0, now - last)
    return (now - startd.start_time) + startd.settings.disconnected_keyboard_idle_boost


def _put(ad: ClassAd, name: str, value: object) -> None:
    """``ad[name] = value``, skipped when the attribute already holds that very literal, or a list
    of those very literals (a partitionable slot's ``ChildName``, ``ChildState`` …): most moving
    attributes of a slot do not move between two polls, and comparing is far cheaper than building
    nodes (the ad's content is the same either way)."""
    node = ad._exprs.get(name.lower())
    kind = type(node)
    if kind is Literal:
        if type(node.value) is type(value) and node.value == value:  # type: ignore[union-attr]
            return
    elif kind is ListExpr and type(value) is list and _same_literals(node.items, value):  # type: ignore[union-attr]
        return
    ad[name] = value


def _same_literals(items: tuple[Node, ...], values: list[object]) -> bool:
    """Whether ``items`` are literals of ``values``, one for one, each of the same type."""
    if len(items) != len(values):
        return False
    for item, value in zip(items, values, strict=True):
        if type(item) is not Literal or type(item.value) is not type(value) or item.value != value:
            return False
    return True


def _latches(startd: Startd, slot: Slot, now: float) -> None:
    ad = slot.ad
    for name in startd.settings.latch_exprs:
        v = ad.evaluate(name, startd.ctx) if name in ad else (
            len(slot.children) if name == "NumDynamicSlots" else UNDEFINED)
        value = eval_float(v)
        prev = slot.latches.get(name)
        if prev is None or prev[0] != value:
            slot.latches[name] = (value, now)
        value, since = slot.latches[name]
        if value is None:
            ad.pop(f"{name}Value", None)
        else:
            _put(ad, f"{name}Value", int(value) if value == int(value) else value)
        _put(ad, f"{name}Time", int(since))


def publish_dynamic(startd: Startd, slot: Slot, now: float) -> None:
    ad = slot.ad
    ctx = startd.ctx
    settings = startd.settings
    _put(ad, "State", slot.state.value)
    _put(ad, "Activity", slot.activity.value)
    _put(ad, "EnteredCurrentState", int(slot.entered_state))
    _put(ad, "EnteredCurrentActivity", int(slot.entered_activity))
    _put(ad, "MyCurrentTime", int(now))
    for k in ("TotalLoadAvg", "TotalCondorLoadAvg"):
        _put(ad, k, startd.totals.get(k, 0.0))
    _put(ad, "CondorLoadAvg", round(slot.condor_load, 2))
    _put(ad, "LoadAvg", round(slot.condor_load + slot.owner_load, 2))
    kbd = _idle(startd, slot, startd.keyboard_activity, settings.slots_connected_to_keyboard, now)
    con = _idle(startd, slot, startd.console_activity, settings.slots_connected_to_console, now)
    _put(ad, "KeyboardIdle", int(kbd if kbd is not None else (now - startd.start_time)
                                 + settings.disconnected_keyboard_idle_boost))
    if con is not None:
        _put(ad, "ConsoleIdle", int(con))
    local = now + startd.local_zone
    _put(ad, "ClockMin", int(local % 86400 // 60))
    _put(ad, "ClockDay", (int(local // 86400) + 4) % 7)
    _put(ad, "LastBenchmark", int(startd.last_benchmark))
    if startd.mips > 0:
        _put(ad, "Mips", startd.mips)
    if startd.kflops > 0:
        _put(ad, "KFlops", startd.kflops)
    busy = truth(ad.evaluate("CpuBusy", ctx)) is True if "CpuBusy" in ad else False
    if busy and slot.cpu_busy_since is None:
        slot.cpu_busy_since = now
    elif not busy:
        slot.cpu_busy_since = None
    _put(ad, "CpuIsBusy", busy)
    _latches(startd, slot, now)
    if "CpuBusy" not in settings.latch_exprs:
        _put(ad, "CpuBusyTime", int(now - slot.cpu_busy_since) if slot.cpu_busy_since is not None else 0)
    if slot.is_partitionable or slot.children:
        _put(ad, "NumDynamicSlots", len(slot.children))
        _put(ad, "ChildName", [c.name for c in slot.children])
        _put(ad, "ChildState", [c.state.value for c in slot.children])
        _put(ad, "ChildActivity", [c.activity.value for c in slot.children])
        _put(ad, "ChildCpus", [int(c.resources.cpus) for c in slot.children])
        _put(ad, "ChildMemory", [c.resources.memory for c in slot.children])
    if slot.consumption_policy:
        _put(ad, "NumClaims", len(slot.spare_claims))
    _claim_attrs(startd, slot, now)
    _drain_attrs(startd, slot, now)
    for key, total in slot.history.items():
        _put(ad, key, int(total))
    current = f"TotalTime{slot.state.value}{slot.activity.value}"
    ad[current] = int(slot.history.get(current, 0.0) + now - slot.entered_activity)
    if startd.draining is not None and startd.draining.start_expr is not None:
        ad.insert_node("START", startd.draining.start_expr)
    elif "START" in slot.policy.nodes:
        ad.insert_node("START", slot.policy.nodes["START"])
    d = startd.draining
    node = requirements_node(slot, d is not None, d is not None and d.start_expr is not None,
                             startd.shutdown is not None)
    if node is not slot.requirements_node:
        ad.insert_node("Requirements", node)
        slot.requirements_node = node


def _claim_attrs(startd: Startd, slot: Slot, now: float) -> None:
    ad = slot.ad
    claim = slot.claim
    if slot.state not in (State.CLAIMED, State.PREEMPTING):
        return
    _put(ad, "CurrentRank", claim.rank)
    user = claim.user()
    if user is not None:
        _put(ad, "RemoteUser", user)
        _put(ad, "RemoteOwner", user)
    _put(ad, "RemoteScheddName", claim.schedd)
    parts = claim.id.split("#")
    _put(ad, "PublicClaimId", parts[0] + "#" + parts[-1])
    if claim.begin is not None:
        _put(ad, "TotalClaimRunTime", int(now - claim.begin))
    for attr, value in published_request_attrs(claim, ad, startd.ctx).items():
        _put(ad, attr, value)
    src = claim.job or claim.request
    if src is not None:
        v = src.get("AccountingGroup")
        if v is not None and not hasattr(v, "evaluate"):
            _put(ad, "AccountingGroup", v)
    if claim.job is not None and claim.job_start is not None:
        job = claim.job
        cluster, proc = job.get("ClusterId"), job.get("ProcId")
        if isinstance(cluster, int) and isinstance(proc, int):
            _put(ad, "JobId", f"{cluster}.{proc}")
        gid = job.get("GlobalJobId")
        if isinstance(gid, str):
            _put(ad, "GlobalJobId", gid)
        _put(ad, "JobStart", int(claim.job_start))
        _put(ad, "TotalJobRunTime", int(claim.job_run_time(now)))
        suspended = claim.suspended_total + (now - claim.suspended_since if claim.suspended_since else 0.0)
        _put(ad, "TotalJobSuspendTime", int(suspended))
        _put(ad, "RetirementTimeRemaining", int(retirement.retirement_left(startd, slot, now)))
    if slot.preempting is not None:
        _put(ad, "PreemptingRank", slot.preempting.rank)
        pu = slot.preempting.user()
        if pu is not None:
            _put(ad, "PreemptingUser", pu)
            _put(ad, "PreemptingOwner", pu)
    else:
        for attr in ("PreemptingRank", "PreemptingUser", "PreemptingOwner"):
            ad.pop(attr, None)


def _drain_attrs(startd: Startd, slot: Slot, now: float) -> None:
    ad = slot.ad
    d = startd.draining
    totals = startd.drain_totals
    if d is not None:
        _put(ad, "Draining", True)
        _put(ad, "DrainReason", d.reason)
        _put(ad, "DrainingRequestId", d.request_id)
    else:
        ad.pop("Draining", None)
    if totals.last_start is not None:
        _put(ad, "LastDrainStartTime", int(totals.last_start))
    if totals.last_stop is not None:
        _put(ad, "LastDrainStopTime", int(totals.last_stop))
    _put(ad, "TotalMachineDrainingBadput", int(totals.badput))
    _put(ad, "TotalMachineDrainingUnclaimedTime", int(totals.unclaimed_time))
    for name, value in retirement.expected_draining(startd, now).items():
        _put(ad, name, value)


def clear_claim_attrs(slot: Slot) -> None:
    for attr in CLAIM_ATTRS:
        slot.ad.pop(attr, None)


def clear_job_attrs(slot: Slot) -> None:
    for attr in _JOB_ATTRS:
        slot.ad.pop(attr, None)


def account_unclaimed(startd: Startd, slot: Slot, now: float) -> None:
    """Charge the time since the slot was last accounted to the drain's unclaimed time
    when it was Unclaimed or Drained during a drain (its free cores × seconds)."""
    if startd.draining is not None and slot.state in (State.UNCLAIMED, State.DRAINED):
        startd.drain_totals.unclaimed_time += slot.resources.cpus * max(0.0, now - slot.accounted_at)
    slot.accounted_at = now


def publish_all(startd: Startd, now: float, skip: Collection[Slot] = ()) -> None:
    """Publish every slot but those in ``skip`` (settled slots: ``settle``), then cross-advertise."""
    startd.drain_totals.expected_at = None  # the draining estimates are recomputed once per publication
    for slot in startd.slots:
        account_unclaimed(startd, slot, now)
    for slot in startd.slots:
        if slot not in skip:
            publish_dynamic(startd, slot, now)
    _cross_advertise(startd)


def _cross_advertise(startd: Startd) -> None:
    """STARTD_SLOT_ATTRS: every slot gets ``<slot id>_<attr>`` of every slot (itself
    included), the expression copied, not evaluated; names of slots that are gone or
    attributes no longer present are removed."""
    names = startd.settings.startd_slot_attrs
    if not names and not startd.cross_attrs:
        return
    inserted: set[str] = set()
    for source in startd.slots:
        for attr in names:
            if attr not in source.ad:
                continue
            node = source.ad.lookup(attr).node
            name = f"{source.id_str}_{attr}"
            inserted.add(name)
            for dest in startd.slots:
                dest.ad.insert_node(name, node)
    for stale in startd.cross_attrs - inserted:
        for dest in startd.slots:
            dest.ad.pop(stale, None)
    startd.cross_attrs = inserted
