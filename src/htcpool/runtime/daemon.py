"""What every daemon shares: its HTTP endpoint, its timer loop, its outgoing messages.

A service is an object with ``start()``, ``handle(message)``,
``next_deadline()``, ``on_timer(now)`` and ``stop(how)``. ``Daemon.run`` binds an
HTTP server on the address ``runtime/network.py`` chooses (loopback for a pool on one host) and on
the Unix socket ``run/<name>.sock`` (local users, known by their uid), both
behind the daemon's security gate (docs/security.md), starts the service,
writes ``run/<name>.address`` and serves until SIGTERM or SIGINT (graceful) or
SIGQUIT (fast). Its timer loop sleeps until the service's next
deadline, which the service takes from its core's ``next_deadline``, or until
the service calls ``Daemon.poke()`` after a change, the way the asyncio driver
of a sans-I/O core arms ``call_at``; it decides nothing itself. ``Outbox``
delivers fire-and-forget messages to other daemons in order, per destination,
retrying while the peer is away. A daemon started by the master sends it
keep-alives from its event loop and stops fast when the master is gone
(``runtime/childalive.py``).

``htcpool.runtime.services`` names the service of each daemon and is the
command that runs one; this module imports no service, so every service can
import it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol, TypeVar

import uvicorn

from htcpool.classad.builtins import load_all
from htcpool.clock import wall_clock
from htcpool.config import Config, read_config
from htcpool.config.errors import ConfigError, ConfigValueError
from htcpool.protocol import (
    MESSAGE_TYPES,
    AdList,
    Command,
    DaemonCommand,
    How,
    InvalidateAd,
    Ok,
    QueryAds,
    UpdateAd,
)
from htcpool.runtime.childalive import MasterLink
from htcpool.runtime.debug_levels import apply_debug_levels
from htcpool.runtime.eval_limits import apply_evaluation_limits
from htcpool.runtime.http import DEFAULT_MAX_REQUEST_BYTES, DaemonClient, RequestRefused, make_app
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.liveness import not_responding_timeout
from htcpool.runtime.network import (
    advertised_host,
    bind_host,
    collector_urls,
    listen_socket,
    url_host,
)
from htcpool.runtime.security.credentials import (
    SecurityPaths,
    ensure_pool_credentials,
    pool_tls,
    token_chooser,
)
from htcpool.runtime.security.daemon_gate import daemon_gate
from htcpool.runtime.security.peercred import bind_unix, with_peer_credentials
from htcpool.runtime.security.tls import TlsFiles
from htcpool.runtime.selfstats import DaemonStatistics

log = logging.getLogger("htcpool.daemon")
COLLECTOR_KEY = "collector"  # the outbox's key of the ads to the collector (``collector <url>`` for each of several)
H = TypeVar("H")


class CollectorUnavailable(Exception):
    """The collector could not be asked, or gave no list of ads."""
Clock = Callable[[], float]


class Service(Protocol):
    async def start(self) -> None: ...

    async def handle(self, message: Any) -> Any: ...

    def next_deadline(self) -> float | None: ...

    async def on_timer(self, now: float) -> None: ...

    async def stop(self, how: How) -> None: ...


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: the daemon decides how to stop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


#: seconds a message posted ``after`` other keys waits for them at most (their peer may be away)
AFTER_PATIENCE = 5.0


class Outbox:
    """Ordered, retried delivery of messages to other daemons.

    ``post(key, message, resolve)``: the key is the destination's URL, or any
    name together with ``resolve``, a callable that finds the URL (so a
    restarted peer is found at its new address; give it with every post).
    Messages posted under one key go in order, one at a time; different keys
    are independent and go concurrently, so a caller picks its keys for the
    order it needs (the startd uses one per claim). A failed send (the peer away,
    or answering 5xx: stopping, or a fault of its own) is retried with back-off for
    up to ``give_up`` seconds, then dropped with a log line; a 4xx refusal is
    dropped at once.
    A key's queue and its sending task exist only while it has messages.
    Messages that a reply's handler (``on_reply``) posts under other keys are sent before the
    next message of the key that got the reply.
    ``post(..., after=keys)`` holds a message until what was posted so far under ``keys`` is
    delivered (or ``AFTER_PATIENCE`` has passed): an order across destinations, such as a
    schedd's new submitter ad before the cycle it asks the negotiator for.
    """

    def __init__(self, client: DaemonClient, clock: Clock, give_up: float = 900.0) -> None:
        self.client = client
        self.clock = clock
        self.give_up = give_up
        self._queues: dict[str, collections.deque[tuple[float, Any, Callable[[Any], Awaitable[None]] | None,
                                                         tuple[asyncio.Task[None], ...]]]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._resolvers: dict[str, Callable[[], Awaitable[str | None]]] = {}

    def post(self, key: str, message: Any, resolve: Callable[[], Awaitable[str | None]] | None = None,
             on_reply: Callable[[Any], Awaitable[None]] | None = None, after: Iterable[str] = ()) -> None:
        if resolve is not None:
            self._resolvers[key] = resolve
        first = tuple(task for other in after if other != key and (task := self._tasks.get(other)) is not None)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = collections.deque()
            self._tasks[key] = asyncio.create_task(self._drain(key, queue))
        queue.append((self.clock(), message, on_reply, first))

    def keys(self) -> list[str]:
        """The keys with messages on their way."""
        return list(self._tasks)

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
                       on_reply: Callable[[Any], Awaitable[None]] | None,
                       first: tuple[asyncio.Task[None], ...]) -> None:
        if first:
            await asyncio.wait(first, timeout=AFTER_PATIENCE)
        delay = 0.05
        while True:
            url = await self._url(key)
            try:
                if url is None:
                    raise ConnectionError(f"no address for {key}")
                reply = await self.client.send(url, message)
                if on_reply is not None:
                    await on_reply(reply)
                    # what the handler posted under other keys leaves before this key's next message
                    # (a partitionable slot's next claim before the activation of the one just
                    # granted): their tasks begin at the next turn of the loop, this one would not wait
                    await asyncio.sleep(0)
                return
            except RequestRefused as e:
                if e.status < 500:  # the peer will never take it: a 5xx is the peer's own trouble
                    log.warning("%s refused %s: %s", key, type(message).__name__, e.detail)
                    return
                if self.clock() - posted > self.give_up:
                    log.warning("gave up sending %s to %s: %s", type(message).__name__, key, e.detail)
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            except OSError as e:  # ConnectionError included: DaemonClient's "no answer"
                if self.clock() - posted > self.give_up:
                    log.warning("gave up sending %s to %s: %s", type(message).__name__, key, e)
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            except Exception:
                log.exception("sending %s to %s failed", type(message).__name__, key)
                return

    async def flush(self) -> None:
        """Wait until every message posted so far is delivered, refused or given up."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()


class Daemon:
    """What every service gets: configuration, layout, clock, clients and the outbox."""

    def __init__(self, name: str, layout: PoolLayout, config: Config, clock: Clock = time.time,
                 client: DaemonClient | None = None, *, kind: str | None = None,
                 local_name: str | None = None) -> None:
        self.name = name  # its DAEMON_LIST name: run/<name>.address (runtime/local_names.py)
        self.kind = kind or name  # collector, negotiator, schedd, startd, defrag: its subsystem
        self.local_name = local_name  # -local-name: a second startd's configuration prefix
        self.layout = layout
        self.config = config
        #: (the configuration read, the collectors its COLLECTOR_HOST lists): ``collector_addresses``
        self._listed_collectors: tuple[object, list[str]] = (None, [])
        self.clock = clock
        paths = SecurityPaths.of(config, layout)
        self.token = ensure_pool_credentials(layout, paths)
        self.gate = daemon_gate(layout, lambda: self.config, self.kind, clock)
        bind = bind_host(config)  # loopback, NETWORK_INTERFACE, or all interfaces (runtime/network.py)
        self.tls = pool_tls(config, layout, paths, bind, advertised_host(config, bind))  # None: plain HTTP
        self.client = client if client is not None else DaemonClient(
            self.token, ca_file=layout.ca_file,
            chooser=token_chooser(paths, self.token))
        self.outbox = Outbox(self.client, clock)
        #: DaemonCore's statistics, added to every ad the daemon sends about itself (runtime/selfstats.py)
        self.statistics = DaemonStatistics(config, clock(), name)
        self.url = ""
        self.service: Service | None = None
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self.stop_how = How.GRACEFUL
        #: (MyType lowered, Name) of the ads the stopping service withdrew from the collector: the
        #: timer loop runs on through ``service.stop``, and no update of its may bring one back
        self._withdrawn: set[tuple[str, str]] = set()

    @property
    def host(self) -> str:
        """The machine's name as the daemon's ads give it (``FULL_HOSTNAME``)."""
        return self.config.get_str("FULL_HOSTNAME") or "localhost"

    @property
    def sinful(self) -> str:
        """This daemon's address in HTCondor's form: ``<ip:port?addrs=ip-port&alias=host>``."""
        hostport = self.url.partition("://")[2]
        ip, _, port = hostport.rpartition(":")
        return f"<{hostport}?addrs={ip}-{port}&alias={self.host}>"

    def poke(self) -> None:
        """The service's deadline changed: the timer loop asks for it again."""
        self._wake.set()

    def request_stop(self, how: How = How.GRACEFUL) -> None:
        self.stop_how = How(how)
        self._stopping.set()

    def command_handler(self, table: Mapping[Command, H], message: DaemonCommand) -> H:
        """The handler ``table`` gives ``message``'s command; a 400 naming this daemon and the command
        when it has none (condor_vacate sent to a negotiator, say)."""
        handler = table.get(message.command)
        if handler is None:
            raise RequestRefused(400, f"the {self.name} does not take the {message.command} command")
        return handler

    def stop_on_command(self, message: DaemonCommand) -> Ok:
        """condor_off: stop as the command says (peaceful, graceful or fast)."""
        self.request_stop(message.how)
        return Ok("shutting down")

    @property
    def stop_requested(self) -> bool:
        return self._stopping.is_set()

    def reread_config(self) -> Config:
        """Read the pool's configuration again (condor_reconfig); the daemon keeps the new one."""
        self.config = daemon_config(self.layout, self.kind.upper(), self.local_name)
        apply_evaluation_limits(self.config)  # CLASSAD_EVALUATION_BUDGET, CLASSAD_REGEX_TIMEOUT
        self.statistics.reconfigure(self.config)
        return self.config

    def _max_request_bytes(self) -> int:
        """MAX_REQUEST_BYTES (htcpool's own knob): the largest request body this daemon reads."""
        try:
            value = self.config.get_int("MAX_REQUEST_BYTES", default=DEFAULT_MAX_REQUEST_BYTES)
        except (ConfigError, ValueError, OverflowError) as e:
            log.warning("%s: MAX_REQUEST_BYTES: %s; using %d", self.name, e, DEFAULT_MAX_REQUEST_BYTES)
            return DEFAULT_MAX_REQUEST_BYTES
        if value is None or value < 1024:
            if value is not None:
                log.warning("%s: MAX_REQUEST_BYTES = %d is below 1024; using %d",
                            self.name, value, DEFAULT_MAX_REQUEST_BYTES)
            return DEFAULT_MAX_REQUEST_BYTES
        return value

    def address_of(self, daemon: str) -> str | None:
        """The URL of a daemon of this host (``run/<daemon>.address``); for the collector of a pool
        that spans hosts, the first ``COLLECTOR_HOST`` names (runtime/network.py)."""
        found = self.layout.read_address(daemon)
        if found is None and daemon == "collector":
            return next(iter(self.collector_addresses()), None)
        return found

    def collector_addresses(self) -> list[str]:
        """Every collector this daemon's ads go to and its queries try: those ``COLLECTOR_HOST``
        lists, in its order, for a pool across hosts (high availability); this host's otherwise."""
        config = self.config
        if self._listed_collectors[0] is not config:  # read again only when the configuration is
            try:
                listed = collector_urls(config)
            except ConfigError as e:
                log.warning("%s: %s", self.name, e)
                listed = []
            self._listed_collectors = (config, listed)
        listed = list(self._listed_collectors[1])
        if listed:
            return listed
        local = self.layout.read_address("collector")
        return [local] if local else []

    async def negotiator_address(self) -> str | None:
        """The negotiator's URL: this host's, else the one its ad in the collector gives."""
        local = self.address_of("negotiator")
        if local is not None:
            return local
        ads = await self.collector_query(QueryAds("Negotiator", "", ("MyAddress",)))
        return next((str(ad["MyAddress"]) for ad in ads if "MyAddress" in ad), None)

    def to_negotiator(self, message: Any, *, after_ads: bool = False) -> None:
        """``message`` to the pool's negotiator, wherever it runs, in order and retried (``Outbox``);
        ``after_ads``: once the ads posted to the collectors so far are delivered (a schedd's
        ``Reschedule``: the cycle it asks for reads the submitter ads it has just sent)."""
        after = [key for key in self.outbox.keys() if key.startswith(COLLECTOR_KEY)] if after_ads else []
        self.outbox.post("negotiator", message, self.negotiator_address, after=after)

    async def ask_collector(self, query: QueryAds) -> AdList:
        """The collector's answer to ``query``; ``CollectorUnavailable`` saying why when there is none."""
        urls = self.collector_addresses()
        if len(urls) <= 1:
            urls = [u for u in (self.address_of("collector"),) if u]
        if not urls:
            raise CollectorUnavailable("no collector address")
        failures = []
        for url in urls:  # in COLLECTOR_HOST's order, the next when one does not answer
            try:
                reply = await self.client.send(url, query)
            except (OSError, RequestRefused) as e:
                failures.append(f"{url}: {e or type(e).__name__}")
                continue
            if isinstance(reply, AdList):
                return reply
            failures.append(f"{url}: unexpected {type(reply).__name__}")
        raise CollectorUnavailable("; ".join(failures))

    async def collector_query(self, query: QueryAds) -> list[Any]:
        """The ads answering ``query``, or none (logged) when the collector does not answer."""
        try:
            return list((await self.ask_collector(query)).ads)
        except CollectorUnavailable as e:
            log.warning("collector query failed: %s", e)
            return []

    def to_collector(self, message: Any) -> None:
        """``message`` (an ad, its invalidation) to every collector of the pool (``collector_addresses``);
        nothing for an ad withdrawn as the daemon stops (``withdrawn``)."""
        if isinstance(message, InvalidateAd) and message.name and self.stop_requested:
            self._withdrawn.add((message.my_type.lower(), message.name))
        if isinstance(message, UpdateAd):  # the daemon's own ads carry its statistics (runtime/selfstats.py)
            if self._withdrawn and self.withdrawn(str(message.ad.get("MyType", "")), str(message.ad.get("Name", ""))):
                return
            message = UpdateAd(self.statistics.decorate(message.ad, self.clock()), message.private)
        urls = self.collector_addresses()
        if len(urls) <= 1:
            async def resolve() -> str | None:
                return self.address_of("collector")
            self.outbox.post(COLLECTOR_KEY, message, resolve)
            return
        for url in urls:
            self.outbox.post(f"{COLLECTOR_KEY} {url}", message, _fixed(url))

    def withdrawn(self, my_type: str, name: str) -> bool:
        """Whether the stopping service has withdrawn its ``my_type`` ad called ``name``."""
        return (my_type.lower(), name) in self._withdrawn

    async def _timers(self, service: Service) -> None:
        while True:
            deadline = service.next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - self.clock())
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass
            self._wake.clear()
            began = self.clock()
            try:
                await service.on_timer(began)
                self.statistics.stats.note_timer(self.clock() - began, began)
            except Exception:
                log.exception("%s: timer handling failed", self.name)
                await asyncio.sleep(1.0)

    def _master_link(self) -> MasterLink:
        """The tie to the master that started this daemon (``runtime/childalive.py``): a fast stop
        when it dies, asked for now; keep-alives once the service has started."""
        timeout, warning = not_responding_timeout(self.config, self.kind)
        if warning:
            log.warning("%s: %s", self.name, warning)
        link = MasterLink.from_environment(os.environ, timeout)
        link.die_with_master()
        return link

    def _counted(self, handle: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
        """``handle``, each request counted with its time in the daemon's statistics."""
        async def counted(message: Any) -> Any:
            began = self.clock()
            try:
                return await handle(message)
            finally:
                self.statistics.stats.note_request(self.clock() - began, began)
        return counted

    async def run(self, service: Service, host: str = "127.0.0.1", port: int = 0) -> None:
        self.service = service
        _load_lazy_modules()
        apply_debug_levels(self.config, self.kind)  # <SUBSYS>_DEBUG, ALL_DEBUG
        apply_evaluation_limits(self.config)  # CLASSAD_EVALUATION_BUDGET, CLASSAD_REGEX_TIMEOUT
        sock = listen_socket(self.config, host, port)  # IPv4 or IPv6 (runtime/network.py)
        scheme = "http" if self.tls is None else "https"
        self.url = f"{scheme}://{url_host(advertised_host(self.config, host))}:{sock.getsockname()[1]}"
        app = make_app(self._counted(service.handle), self.gate, self.name, self._max_request_bytes())
        local = bind_unix(str(self.layout.socket_file(self.name)))
        if local is None:
            log.warning("%s: no Unix socket (the path %s is too long); local users need a token",
                        self.name, self.layout.socket_file(self.name))
        servers = [(_server(app, self.tls), [sock])]
        if local is not None:
            servers.append((_server(app, None), [local]))  # the Unix socket never leaves the host
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self.request_stop, How.GRACEFUL)
        loop.add_signal_handler(signal.SIGINT, self.request_stop, How.GRACEFUL)
        loop.add_signal_handler(signal.SIGQUIT, self.request_stop, How.FAST)
        master_link = self._master_link()
        tasks = [asyncio.create_task(each.serve(sockets=socks)) for each, socks in servers]
        while not all(each.started for each, _ in servers) and not any(t.done() for t in tasks):
            await asyncio.sleep(0.01)
        await service.start()
        self.layout.write_address(self.name, self.url)
        log.info("%s listening on %s", self.name, self.url)
        master_watch = master_link.start(lambda: self.request_stop(How.FAST))  # keep-alives from now on
        timers = asyncio.create_task(self._timers(service))
        await self._stopping.wait()
        log.info("%s stopping (%s)", self.name, self.stop_how)
        try:
            await service.stop(self.stop_how)
        except Exception:
            log.exception("%s: stopping failed", self.name)
        if self.layout.read_address(self.name) == self.url:
            self.layout.clear_address(self.name)
            if local is not None:
                with contextlib.suppress(OSError):
                    self.layout.socket_file(self.name).unlink()
        timers.cancel()
        if master_watch is not None:
            master_watch.cancel()
        for each, _ in servers:
            each.should_exit = True
        await asyncio.gather(*tasks)
        await self.outbox.close()
        await self.client.close()


def _load_lazy_modules() -> None:
    """Import what the libraries import on first use, which the command-line tools mostly never
    need: the ClassAd functions (the third-party ``regex`` among them) and every protocol message.
    A daemon pays for them as it starts, not in its first claim or negotiation cycle (10-20 ms
    there, on the way to a pool's first job)."""
    load_all()
    len(MESSAGE_TYPES)  # the registry imports the rest of the messages to count them


def _fixed(url: str) -> Callable[[], Awaitable[str | None]]:
    async def resolve() -> str | None:
        return url
    return resolve


def _server(app: Any, tls: TlsFiles | None) -> _QuietServer:
    """A uvicorn server for ``app``: HTTPS with ``tls``; the peer's uid on Unix sockets; the
    client address always the peer's (proxy headers off: no request header can name another)."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    # At shutdown asyncio waits up to 30 s for the peer of each TLS connection to answer the close,
    # and an idle keep-alive client (the master's, say) never reads it: wait 3 s at most.
    extra: dict[str, Any] = {} if tls is None else {
        "ssl_certfile": str(tls.cert), "ssl_keyfile": str(tls.key), "timeout_graceful_shutdown": 3}
    return _QuietServer(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                       proxy_headers=False, http=with_peer_credentials(AutoHTTPProtocol),
                                       **extra))


def daemon_config(layout: PoolLayout, subsystem: str, local_name: str | None = None) -> Config:
    """The daemon's configuration; a numeric knob it cannot use is logged once, naming the
    knob, and its default is used (``Config.on_bad_value``)."""
    env = dict(os.environ)
    env["CONDOR_CONFIG"] = str(layout.config)
    config = read_config(str(layout.config), environ=env, subsystem=subsystem, local_name=local_name,
                         clock=wall_clock)
    config.on_bad_value = _BadValueLog(subsystem)
    return config


class _BadValueLog:
    """Logs each unusable knob value once per configuration read (daemons read some often)."""

    def __init__(self, subsystem: str) -> None:
        self.subsystem = subsystem
        self.seen: set[str] = set()

    def __call__(self, error: ConfigValueError) -> None:
        text = str(error)
        if text not in self.seen:
            self.seen.add(text)
            log.warning("configuration: %s; %s uses the default instead", text, self.subsystem)
