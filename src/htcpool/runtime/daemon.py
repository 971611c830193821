"""Running one daemon: its HTTP endpoint, its timers, its outgoing messages.

``python -m htcpool.runtime.daemon NAME --local-dir DIR`` reads the pool's
configuration, binds an HTTP server on loopback (``NETWORK_INTERFACE`` when it
names an address), writes ``run/<name>.address``, and runs the service for
NAME (collector, negotiator, schedd or startd) until SIGTERM (graceful) or
SIGQUIT (fast).

A service is an object with ``start()``, ``handle(message)``,
``next_deadline()``, ``on_timer(now)`` and ``stop(how)``. The daemon's timer
loop sleeps until the service's next deadline or until the service calls
``Daemon.poke()`` after a change, the way the asyncio driver of a sans-I/O core
arms ``call_at``. ``Outbox`` delivers fire-and-forget messages to other
daemons in order, per destination, retrying while the peer is away.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import httpx
import uvicorn

from htcpool.config import Config, read_config
from htcpool.protocol import AdList, QueryAds
from htcpool.runtime.http import DaemonClient, RequestRefused, make_app
from htcpool.runtime.layout import PoolLayout

log = logging.getLogger("htcpool.daemon")
Clock = Callable[[], float]


class Service(Protocol):
    async def start(self) -> None: ...

    async def handle(self, message: Any) -> Any: ...

    def next_deadline(self) -> float | None: ...

    async def on_timer(self, now: float) -> None: ...

    async def stop(self, how: str) -> None: ...


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: the daemon decides how to stop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class Outbox:
    """Ordered, retried delivery of messages to other daemons.

    ``post(key, message, resolve)``: the key is the destination's URL, or any
    name together with ``resolve``, a callable that finds the URL (so a
    restarted peer is found at its new address; give it with every post).
    Messages posted under one key go in order, one at a time; different keys
    are independent and go concurrently, so a caller picks its keys for the
    order it needs (the startd uses one per claim). A failed send is retried
    with back-off for up to ``give_up`` seconds, then dropped with a log line.
    A key's queue and its sending task exist only while it has messages.
    """

    def __init__(self, client: DaemonClient, clock: Clock, give_up: float = 900.0) -> None:
        self.client = client
        self.clock = clock
        self.give_up = give_up
        self._queues: dict[str, collections.deque[tuple[float, Any, Callable[[Any], Awaitable[None]] | None]]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._resolvers: dict[str, Callable[[], Awaitable[str | None]]] = {}

    def post(self, key: str, message: Any, resolve: Callable[[], Awaitable[str | None]] | None = None,
             on_reply: Callable[[Any], Awaitable[None]] | None = None) -> None:
        if resolve is not None:
            self._resolvers[key] = resolve
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = collections.deque()
            self._tasks[key] = asyncio.create_task(self._drain(key, queue))
        queue.append((self.clock(), message, on_reply))

    async def _url(self, key: str) -> str | None:
        resolver = self._resolvers.get(key)
        if resolver is None:
            return key
        return await resolver()

    async def _drain(self, key: str, queue: collections.deque[Any]) -> None:
        try:
            while queue:
                await self._deliver(key, *queue.popleft())
        finally:  # no await from the last look at the queue to here: nothing posted is left behind
            if self._queues.get(key) is queue:
                del self._queues[key]
                self._tasks.pop(key, None)
                self._resolvers.pop(key, None)

    async def _deliver(self, key: str, posted: float, message: Any,
                       on_reply: Callable[[Any], Awaitable[None]] | None) -> None:
        delay = 0.05
        while True:
            url = await self._url(key)
            try:
                if url is None:
                    raise ConnectionError(f"no address for {key}")
                reply = await self.client.send(url, message)
                if on_reply is not None:
                    await on_reply(reply)
                return
            except RequestRefused as e:
                log.warning("%s refused %s: %s", key, type(message).__name__, e.detail)
                return
            except (httpx.HTTPError, ConnectionError, OSError) as e:
                if self.clock() - posted > self.give_up:
                    log.warning("gave up sending %s to %s: %s", type(message).__name__, key, e)
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            except Exception:
                log.exception("sending %s to %s failed", type(message).__name__, key)
                return

    async def close(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()


class Daemon:
    """What every service gets: configuration, layout, clock, clients and the outbox."""

    def __init__(self, name: str, layout: PoolLayout, config: Config, clock: Clock = time.time) -> None:
        self.name = name
        self.layout = layout
        self.config = config
        self.clock = clock
        self.token = layout.read_token()
        self.client = DaemonClient(self.token)
        self.outbox = Outbox(self.client, clock)
        self.url = ""
        self.service: Service | None = None
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self.stop_how = "graceful"

    @property
    def sinful(self) -> str:
        """This daemon's address in HTCondor's form: ``<ip:port?addrs=ip-port&alias=host>``."""
        hostport = self.url.removeprefix("http://")
        ip, _, port = hostport.rpartition(":")
        alias = self.config.get_str("FULL_HOSTNAME") or "localhost"
        return f"<{hostport}?addrs={ip}-{port}&alias={alias}>"

    def poke(self) -> None:
        self._wake.set()

    def request_stop(self, how: str = "graceful") -> None:
        self.stop_how = how
        self._stopping.set()

    def address_of(self, daemon: str) -> str | None:
        return self.layout.read_address(daemon)

    async def collector_query(self, query: QueryAds) -> list[Any]:
        url = self.address_of("collector")
        if url is None:
            return []
        try:
            reply = await self.client.send(url, query)
        except (httpx.HTTPError, OSError, RequestRefused) as e:
            log.warning("collector query failed: %s", e)
            return []
        return list(reply.ads) if isinstance(reply, AdList) else []

    def to_collector(self, message: Any) -> None:
        async def resolve() -> str | None:
            return self.address_of("collector")
        self.outbox.post("collector", message, resolve)

    async def _timers(self, service: Service) -> None:
        while True:
            deadline = service.next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - self.clock())
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await service.on_timer(self.clock())
            except Exception:
                log.exception("%s: timer handling failed", self.name)
                await asyncio.sleep(1.0)

    async def run(self, service: Service, host: str = "127.0.0.1") -> None:
        self.service = service
        # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets that
        # say they are TCP, and accepted connections inherit the protocol. With Nagle on, a reply
        # written as headers then body waits for the client's delayed ACK: 40 ms per message.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, 0))
        self.url = f"http://{host}:{sock.getsockname()[1]}"
        app = make_app(service.handle, self.token, self.name)
        server = _QuietServer(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self.request_stop, "graceful")
        loop.add_signal_handler(signal.SIGINT, self.request_stop, "graceful")
        loop.add_signal_handler(signal.SIGQUIT, self.request_stop, "fast")
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not serving.done():
            await asyncio.sleep(0.01)
        await service.start()
        self.layout.write_address(self.name, self.url)
        log.info("%s listening on %s", self.name, self.url)
        timers = asyncio.create_task(self._timers(service))
        await self._stopping.wait()
        log.info("%s stopping (%s)", self.name, self.stop_how)
        try:
            await service.stop(self.stop_how)
        except Exception:
            log.exception("%s: stopping failed", self.name)
        if self.layout.read_address(self.name) == self.url:
            self.layout.clear_address(self.name)
        timers.cancel()
        server.should_exit = True
        await serving
        await self.outbox.close()
        await self.client.close()


def daemon_config(layout: PoolLayout, subsystem: str) -> Config:
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = str(layout.config)
    return read_config(str(layout.config), environ=env, subsystem=subsystem)


def _service(name: str, daemon: Daemon) -> Service:
    if name == "collector":
        from htcpool.runtime.collector_service import CollectorService
        return CollectorService(daemon)
    if name == "negotiator":
        from htcpool.runtime.negotiator_service import NegotiatorService
        return NegotiatorService(daemon)
    if name == "schedd":
        from htcpool.runtime.schedd_service import ScheddService
        return ScheddService(daemon)
    if name == "startd":
        from htcpool.runtime.startd_service import StartdService
        return StartdService(daemon)
    raise SystemExit(f"unknown daemon {name!r}")


def bind_host(config: Config) -> str:
    """Loopback unless NETWORK_INTERFACE names an address."""
    wanted = (config.get_str("NETWORK_INTERFACE") or "").strip()
    if wanted and wanted != "*" and all(part.isdigit() for part in wanted.split(".")):
        return wanted
    return "127.0.0.1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="htcpool-daemon")
    parser.add_argument("name", choices=["collector", "negotiator", "schedd", "startd"])
    parser.add_argument("--local-dir", required=True)
    args = parser.parse_args(argv)
    layout = PoolLayout(Path(args.local_dir))
    logging.basicConfig(filename=layout.log_file(args.name), level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    config = daemon_config(layout, args.name.upper())
    daemon = Daemon(args.name, layout, config)

    async def go() -> None:
        await daemon.run(_service(args.name, daemon), bind_host(config))

    try:
        asyncio.run(go())
    except Exception:
        log.exception("%s failed", args.name)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
