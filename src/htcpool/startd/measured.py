"""Disk and swap re-measured at every poll, as HTCondor's startd re-reads them for each update.

The startd learns the free space of its execute partition and the machine's free swap with
every ``SensorReadings`` (``runtime/sensors.py``), not only when it starts. ``on_measured``
brings the slot ads up to date:

* ``TotalDisk`` and ``DetectedDisk`` (every slot) are the free KiB now, unless ``DISK`` fixes
  them in the configuration; a static or partitionable slot's ``Disk`` is what it was given,
  but never more than is free now (a job cannot use space that is gone), while a dynamic slot
  keeps what its job asked for;
* ``TotalVirtualMemory`` and each slot's ``VirtualMemory`` are the free swap (with free
  memory, as the sensor gives it) unless ``SWAP`` fixes them.

A reading is taken up only when it moved by more than 1 % (and at least 1 MiB) since the
value published: free space moves by a few KiB between any two polls, and a slot whose ad
changes is sent to the collector again. The HTCondor manual's "Machine ClassAd Attributes"
describe the attributes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.protocol.startd import SensorReadings

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd

_SMALLEST_MOVE_KIB = 1024


def _moved(published: object, now: int) -> bool:
    if not isinstance(published, int | float):
        return True
    return abs(now - published) > max(_SMALLEST_MOVE_KIB, 0.01 * abs(published))


def on_measured(startd: Startd, msg: SensorReadings) -> None:
    """Take up the poll's disk and swap readings (see the module docstring)."""
    settings = startd.settings
    if msg.disk is not None and settings.disk is None and _moved(startd.totals.get("TotalDisk"), msg.disk):
        free = int(msg.disk)
        startd.totals["TotalDisk"] = startd.totals["DetectedDisk"] = free
        for slot in startd.slots:
            slot.ad["TotalDisk"] = slot.ad["DetectedDisk"] = free
            if not slot.is_dynamic:
                slot.ad["Disk"] = min(int(slot.resources.disk), free)
            startd.mark_changed(slot)
    if msg.swap is not None and not settings.swap and _moved(startd.totals.get("TotalVirtualMemory"), msg.swap):
        swap = int(msg.swap)
        startd.totals["TotalVirtualMemory"] = swap
        for slot in startd.slots:
            slot.ad["TotalVirtualMemory"] = slot.ad["VirtualMemory"] = swap
            startd.mark_changed(slot)


__all__ = ["on_measured"]
