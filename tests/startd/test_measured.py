"""Disk and swap re-measured at every poll (``startd.measured``): the slot ads follow the
machine's free space and swap, dynamic slots keep what their jobs asked for, and small moves
between two polls are not sent again."""

from __future__ import annotations

from htcpool.config import Config
from htcpool.protocol.startd import SensorReadings
from htcpool.startd import Startd, settings_from_config
from htcpool.startd.measured import on_measured
from tests.startd.helpers import make_startd

PSLOT = "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = true\n"


def _startd(extra: str = "") -> Startd:
    return make_startd(PSLOT + extra, cpus=2, memory=2048, disk=1_000_000)


def _settings(text: str):  # type: ignore[no-untyped-def]
    return settings_from_config(Config.from_text(text, subsystem="STARTD"))


def test_free_disk_and_swap_are_taken_up_at_the_next_poll() -> None:
    s = _startd()
    slot = s.slots[0]
    assert slot.ad["TotalDisk"] == 1_000_000
    s.changed.clear()
    on_measured(s, SensorReadings(disk=400_000, swap=2_000_000))
    assert (slot.ad["TotalDisk"], slot.ad["DetectedDisk"], slot.ad["Disk"]) == (400_000, 400_000, 400_000)
    assert (slot.ad["TotalVirtualMemory"], slot.ad["VirtualMemory"]) == (2_000_000, 2_000_000)
    assert slot.name in s.changed
    on_measured(s, SensorReadings(disk=5_000_000))  # more free space: never more than the slot was given
    assert slot.ad["TotalDisk"] == 5_000_000 and slot.ad["Disk"] == int(slot.resources.disk)


def test_small_moves_are_not_sent_and_configured_values_stay() -> None:
    s = _startd()
    s.changed.clear()
    on_measured(s, SensorReadings(disk=1_000_000 - 500))
    assert not s.changed and s.slots[0].ad["TotalDisk"] == 1_000_000
    fixed = _startd("DISK = 2000\nSWAP = 4096\n")
    before = (fixed.slots[0].ad["TotalDisk"], fixed.slots[0].ad.get("TotalVirtualMemory"))
    on_measured(fixed, SensorReadings(disk=10, swap=10))
    assert (fixed.slots[0].ad["TotalDisk"], fixed.slots[0].ad.get("TotalVirtualMemory")) == before


def test_settings_read_startd_exprs_as_startd_attrs() -> None:
    settings = _settings("STARTD_EXPRS = WholeMachine, Other\nSTARTD_ATTRS = Other\nSLOT1_STARTD_EXPRS = Mine\n")
    assert settings.startd_attrs[:2] == ("Other", "WholeMachine")
    assert settings.slot_startd_attrs[1] == ("Mine",)
    assert settings.obsolete_knobs == ("STARTD_EXPRS", "SLOT1_STARTD_EXPRS")
    assert _settings("STARTD_ATTRS = X\n").obsolete_knobs == ()
