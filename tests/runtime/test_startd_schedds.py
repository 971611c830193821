"""Where the startd's messages for a claim's schedd go (runtime/startd_schedds.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.protocol import QueryAds
from htcpool.runtime import startd_schedds
from htcpool.runtime.local_names import local_schedd_name
from htcpool.runtime.startd_schedds import ScheddLink

LOCAL = "http://127.0.0.1:4000"
FLOCKER = "http://127.0.0.1:5000"


class FakeDaemon:
    """The collector knows the schedds of ``known``; this host's schedd listens at LOCAL."""

    def __init__(self, known: dict[str, str]) -> None:
        self.config = Config.from_text("SCHEDD_NAME = schedd@b.test\n", subsystem="STARTD", environ={})
        self.known = known

    async def collector_query(self, query: QueryAds) -> list[ClassAd]:
        return [ClassAd({"Name": n, "MyAddress": a}) for n, a in self.known.items() if f'"{n}"' in query.constraint]

    def address_of(self, daemon: str) -> str | None:
        return LOCAL if daemon == "schedd" else None


def _resolve(daemon: Any, schedd: str) -> str | None:
    link = ScheddLink(daemon, None, None)  # type: ignore[arg-type]
    return asyncio.run(link.resolve(schedd))


def test_a_schedd_flocking_here_is_reached_only_through_the_collector() -> None:
    """Before, a name the collector did not know (a flocked schedd whose ad had not come, or a
    collector that did not answer in time) fell back to this host's schedd, which released the
    claim it never asked for: the flocked jobs never ran (tests/e2e/test_flocking.py, under load)."""
    assert local_schedd_name(FakeDaemon({}).config) == "schedd@b.test"
    assert _resolve(FakeDaemon({"schedd@a.test": FLOCKER}), "schedd@a.test") == FLOCKER
    assert _resolve(FakeDaemon({}), "schedd@a.test") is None  # the message waits in the outbox
    assert _resolve(FakeDaemon({}), "schedd@b.test") == LOCAL  # this host's own, by its address file


def test_an_address_known_is_used_at_once_and_looked_up_again_meanwhile_when_old(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A message never waits for the collector when its schedd's address is known: past
    ADDRESS_TTL the known one goes and the collector is asked again for the next message."""
    daemon = FakeDaemon({"schedd@a.test": FLOCKER})
    asked: list[str] = []
    query = daemon.collector_query

    async def counted(q: QueryAds) -> list[ClassAd]:
        asked.append(q.constraint)
        return await query(q)

    daemon.collector_query = counted  # type: ignore[method-assign,assignment]
    clock = [1000.0]
    monkeypatch.setattr(startd_schedds.time, "monotonic", lambda: clock[0])

    async def test() -> None:
        link = ScheddLink(daemon, None, None)  # type: ignore[arg-type]
        assert await link.resolve("schedd@a.test") == FLOCKER and len(asked) == 1  # unknown: asked
        assert await link.resolve("schedd@a.test") == FLOCKER and len(asked) == 1  # fresh: not asked
        daemon.known["schedd@a.test"] = "http://127.0.0.1:6000"  # it moved
        clock[0] += startd_schedds.ADDRESS_TTL
        assert await link.resolve("schedd@a.test") == FLOCKER  # the known one, at once
        assert await link.resolve("schedd@a.test") == FLOCKER and len(asked) == 1  # one look-up at a time
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert len(asked) == 2
        assert await link.resolve("schedd@a.test") == "http://127.0.0.1:6000"

    asyncio.run(test())
