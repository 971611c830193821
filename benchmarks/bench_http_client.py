"""The daemons' HTTP client: CPU per request of ``http.DaemonClient`` (aiohttp, ``aio_sender``)
against httpx's asynchronous client, on the same loopback server.

A daemon's application (``http.make_app``, Starlette under uvicorn with httptools, as the daemons
run it) is served in a subprocess; the client sends ``REQUESTS`` ``Reschedule`` messages one after
the other (after ``WARMUP``) and the figure is the client process's CPU time per request
(``time.process_time``), with the wall time beside it. httpx's figure is the reason the daemons
left it (docs/performance.md, "issue 15, sixth pass"). Run: ``.venv/bin/python -m benchmarks
http_client``.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import httpx

from htcpool import protocol
from htcpool.runtime.http import PATH, DaemonClient

REQUESTS = 2000
WARMUP = 100
TOKEN = "bench-token"

SERVER = f"""
import sys, uvicorn
from htcpool.protocol import Ok
from htcpool.runtime.http import make_app
async def handler(message):
    return Ok()
uvicorn.run(make_app(handler, {TOKEN!r}), host="127.0.0.1", port=int(sys.argv[1]), log_level="error",
            http="httptools", lifespan="off")
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int) -> None:
    for _ in range(500):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.01)
    raise RuntimeError("the benchmark's server did not start")


async def _per_request(send: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """(CPU ms, wall ms) per request."""
    for _ in range(WARMUP):
        await send()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(REQUESTS):
        await send()
    return ((time.process_time() - cpu) * 1000 / REQUESTS, (time.perf_counter() - wall) * 1000 / REQUESTS)


async def _measure(url: str) -> dict[str, tuple[float, float]]:
    message = protocol.Reschedule("benchmark")
    daemon = DaemonClient(TOKEN)
    plain = httpx.AsyncClient(trust_env=False, headers={"Authorization": f"Bearer {TOKEN}"})
    body = protocol.encode(message)

    async def with_httpx() -> object:
        response = await plain.post(url + PATH, json=body)
        return protocol.decode(response.json())

    try:
        return {"httpx AsyncClient": await _per_request(with_httpx),
                "DaemonClient (aiohttp)": await _per_request(lambda: daemon.send(url, message))}
    finally:
        await daemon.close()
        await plain.aclose()


def main() -> None:
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    try:
        _wait_listening(port)
        figures = asyncio.run(_measure(f"http://127.0.0.1:{port}"))
    finally:
        server.terminate()
        server.wait(10)
    base = figures["httpx AsyncClient"][0]
    for name, (cpu, wall) in figures.items():
        print(f"  {name:24s} CPU {cpu:.3f} ms/request  wall {wall:.3f} ms/request  ({cpu / base:.2f} of httpx's CPU)")


if __name__ == "__main__":
    main()
