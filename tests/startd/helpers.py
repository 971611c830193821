"""Shared helpers for startd tests: build a startd from config text, drive it with a clock."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.config import Config, fake_machine
from htcpool.protocol.startd import Action
from htcpool.startd import (
    ActivateClaim,
    MatchNotification,
    RequestClaim,
    SensorReadings,
    Startd,
    StarterExited,
    settings_from_config,
)

HOST = "test.example.org"


def make_startd(text: str = "", now: float = 0.0, cpus: int = 1, memory: int = 1024, **kw: object) -> Startd:
    config = Config.from_text(text, subsystem="STARTD", facts=fake_machine(logical_cpus=cpus, physical_cpus=cpus,
                                                                          memory_mib=memory))
    return Startd(settings_from_config(config), now, **kw)  # type: ignore[arg-type]


def job(**attrs: object) -> ClassAd:
    base: dict[str, object] = {"Owner": "alice", "User": "alice@example.org", "RequestCpus": 1,
                               "RequestMemory": 128, "RequestDisk": 1024, "JobUniverse": 5,
                               "ClusterId": 1, "ProcId": 0, "ImageSize": 1000}
    base.update(attrs)
    return ClassAd(base)


def numbers(startd: Startd, slot: str | None = None) -> list[int]:
    return [n for name, n, _, _ in startd.history if slot is None or name.startswith(slot + "@")]


def pair(startd: Startd, slot: str = "slot1") -> tuple[str, str]:
    s = startd.slot(slot)
    return (s.state.value, s.activity.value)


def claim(startd: Startd, slot: str, request: ClassAd, now: float, match: bool = False) -> list[Action]:
    s = startd.slot(slot)
    cid = s.claim.id
    out: list[Action] = []
    if match:
        out += startd.handle(MatchNotification(cid), now)
    out += startd.handle(RequestClaim(cid, request), now)
    return out


def run_job(startd: Startd, slot: str, request: ClassAd, now: float) -> str:
    claim(startd, slot, request, now)
    s = startd.slot(slot)
    startd.handle(ActivateClaim(s.claim.id, request), now)
    return s.claim.id


def finish(startd: Startd, slot: str, now: float) -> list[Action]:
    return startd.handle(StarterExited(startd.slot(slot).name), now)


def tick(startd: Startd, now: float, **readings: object) -> list[Action]:
    out: list[Action] = []
    if readings:
        out += startd.handle(SensorReadings(**readings), now)  # type: ignore[arg-type]
    out += startd.evaluate(now)
    return out
