"""Machine ads and a configured defrag core for the defrag tests."""

from __future__ import annotations

from typing import Any

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.defrag import Defrag, DefragSettings, settings_from_config
from htcpool.defrag.actions import Action, SendCancel, SendDrain

#: 2026-01-01 00:00:00 UTC: the start of an hour and of a day
T0 = 1_767_225_600.0


def pslot(machine: str, cpus: int = 2, total: int = 8, **attrs: Any) -> ClassAd:
    """The partitionable slot of ``machine``, ``cpus`` of its ``total`` cores free."""
    ad = ClassAd({"MyType": "Machine", "Name": f"slot1@{machine}", "Machine": machine.split("@")[-1],
                  "PartitionableSlot": True, "SlotID": 1, "Cpus": cpus, "TotalSlotCpus": total,
                  "TotalCpus": total, "MyAddress": f"http://{machine}.test"})
    ad.update(attrs)
    return ad


def settings(text: str = "", host: str = "cm.test") -> DefragSettings:
    return settings_from_config(Config.from_text(text, subsystem="DEFRAG"), host)


def core(text: str = "", now: float = T0, last_poll: float | None = None, seed: int = 1) -> Defrag:
    return Defrag(settings(text), now, last_poll=last_poll, seed=seed)


def drains(actions: list[Action]) -> list[str]:
    """The machines the actions drain, in order."""
    return [a.machine for a in actions if isinstance(a, SendDrain)]


def cancels(actions: list[Action]) -> list[str]:
    return [a.machine for a in actions if isinstance(a, SendCancel)]
