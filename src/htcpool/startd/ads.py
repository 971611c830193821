"""Building slot ClassAds: static resource attributes, policy, STARTD_ATTRS, dynamic values.

Static (``publish_static``): ``Name``, ``SlotID``, ``SlotTypeID``, ``SlotType``,
``PartitionableSlot``/``DynamicSlot``, resources (``Cpus``, ``Memory``, ``Disk``,
``VirtualMemory``, each custom resource with ``TotalSlot<Res>`` and, for resources
with ids, HTCondor 25's device attributes: ``Assigned<Res>`` (the slot's ids joined by
commas; absent when it holds none), a property ad per device in the nested form
``GPUs_GPU_6a96bd13 = [ Id = "GPU-6a96bd13"; Capability = 8.0; … ]``, the properties
common to all its devices as ``GPUs_Capability`` …, and ``Available<Res>``, the list of
its device ads that ``countMatches(RequireGPUs, AvailableGPUs)`` tests), machine totals (``Total…``,
``Detected…``), the policy expressions, ``WithinResourceLimits`` and the attributes
named in ``STARTD_ATTRS`` / ``SLOT<N>_STARTD_ATTRS`` (``SLOT<N>_X`` wins over ``X``;
an empty value deletes the attribute).

Dynamic (``publish_dynamic``): ``State``, ``Activity``, ``Entered…``, load and idle
times, clock, benchmarks, claim attributes, retirement, latches, history totals and
the advertised ``Requirements`` (normal: ``START && WithinResourceLimits``; unavailable:
``False`` or, while draining with a start expression, that expression
``&& WithinResourceLimits``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from htcpool.classad import ClassAd, ClassAdError
from htcpool.classad.nodes import Node
from htcpool.startd.layout import Inventory, Resources
from htcpool.startd.policy import parse
from htcpool.startd.settings import StartdSettings
from htcpool.startd.slot import DYNAMIC, PARTITIONABLE, Slot
from htcpool.startd.states import State

NORMAL_REQUIREMENTS = parse("START && WithinResourceLimits")
UNAVAILABLE = parse("false")


def machine_totals(settings: StartdSettings, inventory: Inventory, disk_total: int,
                   slot_count: int) -> dict[str, object]:
    """The machine-wide ``Total…`` and ``Detected…`` attributes every slot ad carries."""
    custom = inventory.names()
    totals: dict[str, object] = {
        "TotalCpus": settings.num_cpus, "TotalMemory": settings.memory, "TotalDisk": disk_total,
        "TotalVirtualMemory": settings.swap, "DetectedCpus": settings.detected_cpus,
        "DetectedMemory": settings.detected_memory, "DetectedDisk": disk_total,
        "TotalSlots": slot_count,
        "MachineResources": " ".join(["Cpus", "Memory", "Disk", "Swap", *custom]),
    }
    for name in custom:
        totals[f"Total{name}"] = inventory.total(name)
        totals[f"Detected{name}"] = inventory.total(name)
        if name in inventory.ids:
            totals[f"Detected{name}"] = ", ".join(inventory.ids[name])
    return totals


def within_resource_limits(custom: list[str], consumption: bool, catalog_space: str | None = None) -> str:
    """HTCondor's generated WithinResourceLimits expression.

    Without a consumption policy the disk request is lowered by ``CATALOG_SPACE``
    (the size of shared input catalogs the job need not copy; 0 for ordinary jobs),
    as ``MachAttributes::withinLimitsExpression`` does."""
    disk = "TARGET.RequestDisk" if not catalog_space else f"(TARGET.RequestDisk - ({catalog_space.strip()}))"
    if consumption:
        parts = ["MY.Cpus > 0 && MY.ConsumptionCpus <= MY.Cpus", "MY.Memory > 0 && MY.ConsumptionMemory <= MY.Memory",
                 "MY.Disk > 0 && MY.ConsumptionDisk <= MY.Disk"]
        parts += [f"(MY.Consumption{r} is UNDEFINED || MY.{r} >= MY.Consumption{r})" for r in custom]
    else:
        parts = ["MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus",
                 "MY.Memory > 0 && TARGET.RequestMemory <= MY.Memory",
                 f"MY.Disk > 0 && {disk} <= MY.Disk"]
        parts += [f"(TARGET.Request{r} is UNDEFINED || MY.{r} >= TARGET.Request{r})" for r in custom]
    return " && ".join(parts)


def requirements_node(slot: Slot, draining: bool, draining_start: bool, shutting_down: bool) -> Node:
    """The advertised Requirements: normal, or unavailable while matched, preempting,
    drained, draining, shutting down or holding a preempting claim (``Reqexp.cpp``).
    Unavailable with a draining start expression is ``START && WithinResourceLimits``
    too, because the published START is then the drain's."""
    unavailable = (slot.state in (State.MATCHED, State.PREEMPTING, State.DRAINED) or draining
                   or shutting_down or slot.preempting is not None)
    if not unavailable or draining_start:
        return NORMAL_REQUIREMENTS
    return UNAVAILABLE


def device_attr(resource: str, dev: str) -> str:
    """Nested property-ad attribute name for a device, e.g. ``GPUs_GPU_6a96bd13``."""
    return f"{resource}_{re.sub(r'[^A-Za-z0-9_]', '_', dev)}"


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


def common_properties(ids: list[str], inventory: Inventory) -> dict[str, object]:
    """Properties with one value on every device in ``ids`` that has a property ad (HTCondor
    publishes them as ``<Res>_<Property>`` beside the per-device ads)."""
    ads = [inventory.properties[d] for d in ids if d in inventory.properties]
    if not ads:
        return {}
    first = ads[0]
    return {k: first.get(k) for k in first
            if k.lower() != "id" and all(k in other and _same(other.get(k), first.get(k)) for other in ads[1:])}


def _publish_devices(ad: ClassAd, name: str, ids: list[str], inventory: Inventory) -> None:
    """``Assigned<Res>``, the per-device property ads, the common properties and ``Available<Res>``."""
    every = inventory.ids[name]
    if ids:
        ad[f"Assigned{name}"] = ",".join(ids)
    else:
        ad.pop(f"Assigned{name}", None)
    for dev in every:  # devices handed to a dynamic slot leave this ad
        if dev not in ids:
            ad.pop(device_attr(name, dev), None)
    keys = {k for dev in every if dev in inventory.properties for k in inventory.properties[dev]}
    common = common_properties(ids, inventory)
    for key in keys:
        if key not in common:
            ad.pop(f"{name}_{key}", None)
    for key, value in common.items():
        ad[f"{name}_{key}"] = value
    for dev in ids:
        if dev in inventory.properties:
            props = inventory.properties[dev].copy()
            if "Id" not in props:
                props["Id"] = dev
            ad[device_attr(name, dev)] = props
    ad.insert_node(f"Available{name}", parse("{" + ", ".join(device_attr(name, d) for d in ids) + "}"))


def publish_resources(ad: ClassAd, res: Resources, provisioned: Resources, inventory: Inventory) -> None:
    cpus = res.cpus
    ad["Cpus"] = int(cpus + 0.1) if abs(cpus - round(cpus)) < 0.1 else cpus
    ad["Memory"] = res.memory
    ad["Disk"] = res.disk
    ad["VirtualMemory"] = res.swap
    ad["TotalSlotCpus"] = int(provisioned.cpus + 0.1)
    ad["TotalSlotMemory"] = provisioned.memory
    ad["TotalSlotDisk"] = provisioned.disk
    for name, count in provisioned.custom.items():
        ad[name] = res.custom.get(name, 0)
        ad[f"TotalSlot{name}"] = count
        if name in inventory.ids:
            _publish_devices(ad, name, res.ids.get(name, []), inventory)


def publish_static(slot: Slot, settings: StartdSettings, inventory: Inventory, totals: Mapping[str, object],
                   wrl: Node, consumption: Mapping[str, Node]) -> list[tuple[str, str]]:
    """Write the static part of ``slot.ad``; returns (attribute, problem) for bad STARTD_ATTRS."""
    ad = slot.ad
    problems: list[tuple[str, str]] = []
    ad["MyType"] = "Machine"
    ad["Name"] = slot.name
    ad["Machine"] = settings.hostname
    ad["SlotTypeID"] = slot.slot_type
    ad["SlotType"] = slot.kind.value
    if slot.kind is PARTITIONABLE:
        ad["PartitionableSlot"] = True
    if slot.kind is DYNAMIC:
        ad["DynamicSlot"] = True
        ad["ParentSlotId"] = slot.slot_id
        ad["DSlotId"] = slot.sub_id
        ad["PslotRollupInformation"] = True
    for k, v in totals.items():
        ad[k] = v
    for k, v in settings.machine_attrs.items():
        ad[k] = v
    publish_resources(ad, slot.resources, slot.provisioned, inventory)
    for attr, node in slot.policy.nodes.items():
        ad.insert_node(attr, node)
    ad.insert_node("WithinResourceLimits", wrl)
    if slot.consumption_policy:
        for attr, node in consumption.items():
            ad.insert_node(attr, node)
    names = list(settings.startd_attrs) + list(settings.slot_startd_attrs.get(slot.slot_id, ()))
    names += list(settings.latch_exprs)
    per_slot = settings.slot_attr_values.get(slot.slot_id, {})
    for name in dict.fromkeys(names):
        text = per_slot.get(name, settings.attr_values.get(name))
        if name not in per_slot and name not in settings.attr_values:
            continue
        if text is None or not text.strip():
            if name in ad:
                del ad[name]
            continue
        try:
            ad.insert_node(name, parse(text))
        except ClassAdError as e:
            problems.append((name, f"{name} = {text} does not parse ({e}); forgot to quote a string?"))
    ad["SlotID"] = slot.slot_id
    return problems
