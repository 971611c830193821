"""A large request body is parsed with the cyclic collector held off, and the collector is back after."""

from __future__ import annotations

import gc
import json
import types
from typing import Any

import pytest
from starlette.testclient import TestClient

from htcpool.classad import ClassAd
from htcpool.protocol import Ok, Submit, encode
from htcpool.runtime import http
from htcpool.runtime.http import LARGE_BODY, PATH, make_app

AUTH = {"Authorization": "Bearer s3cret"}


def test_a_large_body_is_parsed_with_the_collector_off_and_it_comes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[tuple[int, bool]] = []

    def loads(body: bytes) -> Any:
        parsed.append((len(body), gc.isenabled()))
        return json.loads(body)

    monkeypatch.setattr(http, "json", types.SimpleNamespace(loads=loads, JSONDecodeError=json.JSONDecodeError))
    handled: list[tuple[int, bool]] = []

    async def handler(message: Any) -> Any:
        handled.append((len(message.ads), gc.isenabled()))
        return Ok()

    client = TestClient(make_app(handler, "s3cret", "test"))
    ads = tuple(ClassAd({"ProcId": proc, "Cmd": "/bin/true"}) for proc in range(1000))
    assert client.post(PATH, json=encode(Submit("alice", ads[:2], 1)), headers=AUTH).status_code == 200
    assert client.post(PATH, json=encode(Submit("alice", ads, 1)), headers=AUTH).status_code == 200
    (small, small_gc), (large, large_gc) = parsed
    assert small < LARGE_BODY <= large and small_gc and not large_gc
    assert handled == [(2, True), (1000, True)] and gc.isenabled()
    broken = b'{"type": "Submit", "ads": [' + b'{"$set": {}}, ' * (LARGE_BODY // 10) + b"]"
    reply = client.post(PATH, content=broken, headers=AUTH)
    assert reply.status_code == 400 and "not JSON" in reply.json()["detail"] and gc.isenabled()
