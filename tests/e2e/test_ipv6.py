"""A personal pool on the IPv6 loopback (``NETWORK_INTERFACE = ::1``; runtime/network.py).

Every daemon listens on ``[::1]``, writes a bracketed URL, advertises it in its ads, and a job
runs; the tools reach the daemons there too, over plain HTTP and over HTTPS. Skipped, saying so, where this machine has no ``::1``.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from htcpool.protocol import QueryAds
from htcpool.runtime.pool import PoolClient
from tests.e2e.pool import LivePool


def _ipv6_loopback() -> str | None:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError as e:
        return f"no IPv6 loopback here: {e}"
    return None


@pytest.mark.skipif(_ipv6_loopback() is not None, reason=str(_ipv6_loopback()))
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_pool_on_the_ipv6_loopback_runs_a_job(make_pool: Callable[[str], LivePool], scheme: str) -> None:
    """Over HTTPS too (encryption REQUIRED): the host certificate names ::1."""
    pool = make_pool("NETWORK_INTERFACE = ::1\n" + ("SEC_DEFAULT_ENCRYPTION = REQUIRED\n" if scheme == "https" else ""))
    prefix = f"{scheme}://[::1]:"
    for daemon in ("master", "collector", "negotiator", "schedd", "startd"):
        url = pool.layout.read_address(daemon)
        assert url is not None and url.startswith(prefix), (daemon, url)
    slots = pool.wait_for(pool.slots, 30, "the startd's slots in the collector")
    assert all(str(s["MyAddress"]).startswith(prefix) for s in slots), [s["MyAddress"] for s in slots]
    cluster = pool.submit("executable = /bin/true\nqueue\n")
    pool.wait_for(lambda: pool.status(cluster) == 4, 60, "the job completed")
    url = pool.layout.read_address("collector")
    assert url is not None
    tcp = PoolClient(pool.layout)  # over TCP on [::1], not the Unix socket

    def masters() -> list[str]:
        return [str(ad["MyAddress"]) for ad in tcp.client.send(url, QueryAds("DaemonMaster")).ads]
    try:
        seen = pool.wait_for(masters, 30, "the master's ad, asked over TCP on [::1]")
    finally:
        tcp.close()
    assert seen[0].startswith(prefix), seen
