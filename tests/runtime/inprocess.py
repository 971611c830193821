"""Daemons in one process, without sockets: a settable clock, a pool directory, and HTTP between
services carried by httpx's ASGI transport to each service's Starlette application."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from htcpool.runtime.daemon import Daemon, daemon_config
from htcpool.runtime.http import DaemonClient, make_app
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import write_personal_config

T0 = 1_800_000_000.0


class Clock:
    """The daemons' clock: it moves only when a test moves it."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def pool_layout(root: Path, extra_config: str = "") -> PoolLayout:
    """A pool's local directory with the personal configuration (plus ``extra_config``) and a token."""
    layout = PoolLayout(root)
    layout.make()
    write_personal_config(layout)
    if extra_config:
        with layout.config.open("a") as f:
            f.write(extra_config)
    layout.ensure_token()
    return layout


class Network(httpx.AsyncBaseTransport):
    """Requests to ``http://NAME.test`` go to the application registered under NAME."""

    def __init__(self) -> None:
        self.apps: dict[str, httpx.ASGITransport] = {}

    def add(self, name: str, app: Starlette) -> str:
        self.apps[f"{name}.test"] = httpx.ASGITransport(app=app)
        return f"http://{name}.test"

    def serve(self, name: str, handler: Callable[[Any], Awaitable[Any]], layout: PoolLayout) -> str:
        """Put ``handler`` behind the pool's HTTP endpoint as daemon NAME; returns its URL."""
        return self.add(name, make_app(handler, layout.read_token(), name))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        transport = self.apps.get(request.url.host)
        if transport is None:
            raise httpx.ConnectError(f"nothing listens at {request.url.host}", request=request)
        return await transport.handle_async_request(request)


def daemon(name: str, layout: PoolLayout, clock: Clock, network: Network) -> Daemon:
    """A Daemon for service NAME whose messages travel over ``network``."""
    client = DaemonClient(layout.read_token(), transport=network)
    d = Daemon(name, layout, daemon_config(layout, name.upper()), clock, client=client)
    d.url = f"http://{name}.test"
    return d


class Recorder:
    """A fake daemon: records every message it is sent and answers with ``answer(message)``."""

    def __init__(self, answer: Callable[[Any], Any] | None = None) -> None:
        self.got: list[Any] = []
        self.answer = answer

    async def handle(self, message: Any) -> Any:
        self.got.append(message)
        return self.answer(message) if self.answer is not None else None

    def of(self, kind: type) -> list[Any]:
        return [m for m in self.got if isinstance(m, kind)]


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 10.0))
