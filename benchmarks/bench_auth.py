"""What authentication and encryption cost a 10,000-job submit and a negotiation cycle's requests.

``main()`` serves a daemon's real HTTP application (``runtime.http.make_app``: the security gate,
decoding, the reply) with uvicorn on a loopback TCP port and sends it, through the daemons' own
client (``DaemonClient``), the requests a 10,000-job submit and a negotiation cycle make:

* submit: one ``Submit`` of a 10,000-proc cluster (ads made by the submit language), answered
  at once (the schedd's own work, the same in every setting, is left out: the figures are the
  transport's and the gate's only, so their ratios are upper bounds for the whole submit);
* cycle: the negotiator's private ``Machine`` query (1,000 slot ads) and ``Submitter`` query, its
  ``FetchRequests`` to the schedd (10,000 idle job ads back), then one ``MatchNotification`` to the
  startd and one ``MatchInfo`` to the schedd per match (500 matches, in order, as the outbox sends).

Each in four settings: **none** (a gate that lets every request through: no authentication at
all), **shared secret** (one bearer token compared, as htcpool did before tokens), **token** (the
pool's signed token, verified by the gate, over plain HTTP as on loopback), **token + TLS**
(HTTPS with the pool's certificate, as between hosts). Client and server share one process: the
CPU time (``time.process_time``) is both sides', the steadier figure on a loaded machine. The
settings take turns, REPEATS rounds after one to warm up; each figure is the best round. Run:
``.venv/bin/python -m benchmarks auth``; docs/performance.md, "Authentication and encryption",
has the figures.
"""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPEATS = 5
JOBS = 10_000
SLOTS = 1_000
MATCHES = 500


def _job_ads() -> tuple[Any, ...]:
    from htcpool.cli.submit import DiskFileSystem
    from htcpool.submit import SubmitHost, submit_description

    host = SubmitHost(user="alice", cwd="/tmp", now=int(time.time()), environ={}, file_system_domain="bench")
    text = "executable = /bin/sleep\narguments = 60\nrequest_cpus = 1\nrequest_memory = 64\nqueue 10000\n"
    return tuple(submit_description(text, file="bench.sub", host=host, fs=DiskFileSystem()).jobs)


def _slot_ads() -> tuple[Any, ...]:
    from htcpool.classad import ClassAd

    return tuple(ClassAd({"MyType": "Machine", "Name": f"slot{i % 32 + 1}@host{i // 32}", "Machine": f"host{i // 32}",
                          "Cpus": 1, "Memory": 2048, "Disk": 100000, "State": "Unclaimed", "Activity": "Idle",
                          "OpSys": "LINUX", "Arch": "X86_64", "Requirements": True, "Rank": 0,
                          "MyAddress": f"http://127.0.0.1:{9000 + i // 32}", "ClaimId": f"<claim-{i}>"})
                 for i in range(SLOTS))


class _Replies:
    """What the collector, schedd and startd answer, made once."""

    def __init__(self) -> None:
        from htcpool.classad import ClassAd
        from htcpool.protocol import AdList, IdleJobs

        self.jobs = _job_ads()
        self.slots = AdList(_slot_ads())
        self.submitters = AdList((ClassAd({"MyType": "Submitter", "Name": "alice@bench", "IdleJobs": JOBS,
                                           "MyAddress": "http://127.0.0.1:1"}),))
        self.idle = IdleJobs(("alice@bench",) * JOBS, self.jobs)

    async def handle(self, message: Any) -> Any:
        from htcpool.protocol import FetchRequests, Ok, QueryAds

        if isinstance(message, QueryAds):
            return self.slots if message.my_type == "Machine" else self.submitters
        if isinstance(message, FetchRequests):
            return self.idle
        return Ok()


class _Open:
    """A gate that lets every request through: the setting without any authentication."""

    realm = None

    def identify(self, authorization: str, client: Any) -> Any:
        return None

    def authorize(self, peer: Any, message: object, daemon: str = "daemon") -> None:
        return None

    def stamp(self, message: Any, peer: Any) -> Any:
        return message


def _pool(root: Path) -> tuple[Any, str, Any]:
    """A pool directory with its keys: (its gate, its token, its TLS files)."""
    from htcpool.config import read_config
    from htcpool.runtime.layout import PoolLayout
    from htcpool.runtime.security.credentials import (
        SecurityPaths,
        daemon_gate,
        ensure_pool_credentials,
    )
    from htcpool.runtime.security.tls import ensure_tls

    layout = PoolLayout(root)
    layout.make()
    layout.config.write_text(f"LOCAL_DIR = {root}\nTRUST_DOMAIN = bench.example\n")
    config = read_config(str(layout.config), environ={"CONDOR_CONFIG": str(layout.config)}, subsystem="SCHEDD")
    paths = SecurityPaths.of(config, layout)
    token = ensure_pool_credentials(layout, paths)
    tls = ensure_tls(paths.password_dir, layout.ca_file, ["localhost"], ["127.0.0.1"])
    return daemon_gate(layout, lambda: config, "schedd"), token, tls


async def _serve(app: Any, tls: Any | None) -> tuple[Any, asyncio.Task[None], int]:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    extra: dict[str, Any] = {} if tls is None else {"ssl_certfile": str(tls.cert), "ssl_keyfile": str(tls.key)}
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           timeout_graceful_shutdown=1, **extra))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    return server, task, sock.getsockname()[1]


async def _cycle(send: Callable[[Any], Awaitable[Any]], replies: _Replies) -> None:
    from htcpool.protocol import FetchRequests, MatchInfo, QueryAds
    from htcpool.protocol.startd import MatchNotification

    await send(QueryAds("Machine", private=True))
    await send(QueryAds("Submitter"))
    await send(FetchRequests(("alice@bench",)))
    for i in range(MATCHES):
        await send(MatchNotification(f"<claim-{i}>"))
        await send(MatchInfo(f"<claim-{i}>", replies.slots.ads[i], 1, i, "alice@bench"))


class _Setting:
    """One setting's server and client (module docstring)."""

    def __init__(self, name: str, root: Path, replies: _Replies) -> None:
        self.name = name
        self.root = root
        self.replies = replies
        self.url = ""
        self.best: dict[str, tuple[float, float]] = {}

    async def open(self) -> None:
        from htcpool.runtime.http import DaemonClient, make_app

        gate, token, tls = _pool(self.root)
        door: Any = {"none": _Open(), "shared secret": "a-shared-secret"}.get(self.name, gate)
        secured = self.name == "token + TLS"
        self.server, self.task, port = await _serve(make_app(self.replies.handle, door, "bench"),
                                                    tls if secured else None)
        self.client = DaemonClient("a-shared-secret" if self.name == "shared secret" else token, timeout=120,
                                   ca_file=tls.ca_cert if secured else None)
        self.url = f"{'https' if secured else 'http'}://127.0.0.1:{port}"

    async def send(self, message: Any) -> Any:
        return await self.client.send(self.url, message)

    async def round(self) -> None:
        """One submit and one cycle, each kept when it is this setting's fastest (CPU) so far."""
        from htcpool.protocol import Submit

        for name, work in (("submit", lambda: self.send(Submit("alice", self.replies.jobs))),
                           ("cycle", lambda: _cycle(self.send, self.replies))):
            wall, cpu = time.perf_counter(), time.process_time()
            await work()
            took = (time.perf_counter() - wall, time.process_time() - cpu)
            if name not in self.best or took[1] < self.best[name][1]:
                self.best[name] = took

    async def close(self) -> None:
        await self.client.close()
        self.server.should_exit = True
        await self.task


async def _measure(root: Path, replies: _Replies) -> dict[str, dict[str, tuple[float, float]]]:
    """Every setting, REPEATS rounds taken in turns (a change in the machine's load falls on all)."""
    settings = [_Setting(name, root / str(i), replies) for i, name in enumerate(SETTINGS)]
    try:
        for each in settings:
            await each.open()
            await each.round()  # warm: connections made, tokens verified once
        for each in settings:
            each.best.clear()
        for _ in range(REPEATS):
            for each in settings:
                await each.round()
    finally:
        for each in settings:
            await each.close()
    return {each.name: each.best for each in settings}


SETTINGS = ("none", "shared secret", "token", "token + TLS")


def main() -> None:
    replies = _Replies()
    print(f"load average {os.getloadavg()[0]:.2f}; {JOBS} job ads, {SLOTS} slots, {MATCHES} matches; "
          f"best of {REPEATS}, CPU s (wall s)")
    with tempfile.TemporaryDirectory() as tmp:
        results = asyncio.run(_measure(Path(tmp), replies))
    base = results["none"]
    for setting in SETTINGS:
        row = results[setting]
        cells = [f"{what} {row[what][1]:.3f} ({row[what][0]:.3f}) {row[what][1] / base[what][1] - 1:+.1%}"
                 for what in ("submit", "cycle")]
        print(f"{setting:>14}:  " + "   ".join(cells))


if __name__ == "__main__":
    main()
