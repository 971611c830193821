"""The HTTP endpoint in-process (no sockets): token, validation, refusals, errors never escape."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from htcpool.protocol import Ok, QueryAds, encode
from htcpool.runtime.http import PATH, RequestRefused, make_app


async def _handler(message: Any) -> Any:
    if isinstance(message, QueryAds) and message.my_type == "Boom":
        raise RuntimeError("the handler broke")
    if isinstance(message, QueryAds) and message.my_type == "Refuse":
        raise RequestRefused(409, "not now")
    return Ok(type(message).__name__)


def _client() -> TestClient:
    return TestClient(make_app(_handler, "s3cret", "test"))


AUTH = {"Authorization": "Bearer s3cret"}


def test_a_request_without_the_token_is_refused() -> None:
    c = _client()
    assert c.post(PATH, json=encode(Ok())).status_code == 401
    assert c.post(PATH, json=encode(Ok()), headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert c.post(PATH, json=encode(Ok()), headers=AUTH).json() == {"type": "Ok", "detail": "Ok"}


def test_bad_bodies_are_answered_400_naming_the_problem() -> None:
    c = _client()
    r = c.post(PATH, content=b"{not json", headers=AUTH)
    assert r.status_code == 400 and "not JSON" in r.json()["detail"]
    r = c.post(PATH, json={"type": "QueryAds"}, headers=AUTH)
    assert r.status_code == 400 and "'my_type' is missing" in r.json()["detail"]


def test_refusals_and_failures_become_answers_and_the_app_goes_on() -> None:
    c = _client()
    r = c.post(PATH, json=encode(QueryAds("Refuse")), headers=AUTH)
    assert r.status_code == 409 and r.json() == {"type": "Failure", "status": 409, "detail": "not now"}
    r = c.post(PATH, json=encode(QueryAds("Boom")), headers=AUTH)
    assert r.status_code == 500 and "the handler broke" in r.json()["detail"]
    assert c.post(PATH, json=encode(QueryAds("Machine")), headers=AUTH).status_code == 200


def test_a_body_over_the_limit_is_refused_with_413_before_it_is_read() -> None:
    c = TestClient(make_app(_handler, "s3cret", "test", max_body=2048))
    small = c.post(PATH, json=encode(QueryAds("Machine")), headers=AUTH)
    assert small.status_code == 200
    big = c.post(PATH, content=b"{" + b" " * 4096 + b"}", headers=AUTH)
    assert big.status_code == 413
    assert "MAX_REQUEST_BYTES = 2048" in big.json()["detail"]

    def chunks() -> Any:  # no Content-Length: the limit holds on what is sent
        for _ in range(8):
            yield b" " * 1024

    streamed = c.post(PATH, content=chunks(), headers=AUTH)
    assert streamed.status_code == 413
