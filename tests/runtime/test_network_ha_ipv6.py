"""Several collectors (high availability) and IPv6 (runtime/network.py, runtime/hostplan.py,
runtime/layout.py, the gate's view of a peer's address)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.config.errors import ConfigError
from htcpool.protocol import AdList, Ok, QueryAds, UpdateAd
from htcpool.runtime.daemon import CollectorUnavailable, Daemon, daemon_config
from htcpool.runtime.hostplan import HostSetupError, prepare_host
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.network import (
    advertised_host,
    bind_host,
    collector_hosts,
    collector_urls,
    families,
    is_this_host,
    listen_port,
    listen_socket,
    own_collector,
    url_host,
)
from htcpool.runtime.security.gate import plain_address


def config(text: str) -> Config:
    return Config.from_text(text, subsystem="MASTER", environ={})


def test_every_collector_of_the_list_is_kept_in_its_order() -> None:
    two = config("COLLECTOR_HOST = 192.0.2.1, 192.0.2.2:9700 [2001:db8::5]:9618\n")
    assert [(c.host, c.port) for c in collector_hosts(two)] == [
        ("192.0.2.1", 9618), ("192.0.2.2", 9700), ("2001:db8::5", 9618)]
    assert collector_urls(two) == ["https://192.0.2.1:9618", "https://192.0.2.2:9700", "https://[2001:db8::5]:9618"]
    assert collector_urls(config("COLLECTOR_HOST = $(CONDOR_HOST):0\nCONDOR_HOST = 192.0.2.1\n")) == []
    with pytest.raises(ConfigError, match="COLLECTOR_HOST"):
        collector_hosts(config("COLLECTOR_HOST = 192.0.2.1, cm:http\n"))


def test_the_entry_naming_this_host_gives_its_collectors_port() -> None:
    assert is_this_host("127.0.0.1") and not is_this_host("192.0.2.200")
    listed = config("COLLECTOR_HOST = 192.0.2.200:9618, 127.0.0.1:9700\n")
    assert collector_hosts(listed)[1].port == 9700 and own_collector(listed) == (1, collector_hosts(listed)[1])
    assert listen_port(listed, "collector") == 9700 and listen_port(listed, "schedd") == 0
    assert listen_port(config("COLLECTOR_HOST = 192.0.2.200:9619\n"), "collector") == 9619


def test_ipv6_is_used_where_named_or_enabled() -> None:
    assert families(config("")) == (True, False)
    assert families(config("NETWORK_INTERFACE = ::1\n")) == (True, True)
    assert families(config("COLLECTOR_HOST = [2001:db8::1]:9618\n")) == (True, True)
    assert families(config("ENABLE_IPV4 = false\n")) == (False, True)
    assert families(config("ENABLE_IPV6 = true\n")) == (True, True)
    assert bind_host(config("ENABLE_IPV4 = false\n")) == "::1"
    assert bind_host(config("CONDOR_HOST = 192.0.2.1\nENABLE_IPV6 = true\n")) == "::"
    assert bind_host(config("CONDOR_HOST = 192.0.2.1\n")) == "0.0.0.0"
    chosen = config("CONDOR_HOST = 2001:db8::1\nNETWORK_INTERFACE = 2001:db8::9\n")
    assert advertised_host(chosen, "::") == "2001:db8::9"
    with pytest.raises(ConfigError, match="ENABLE_IPV6 = 'maybe'"):
        families(config("ENABLE_IPV6 = maybe\n"))
    with pytest.raises(ConfigError, match="both false"):
        families(config("ENABLE_IPV4 = false\nENABLE_IPV6 = false\n"))
    assert url_host("::1") == "[::1]" and url_host("192.0.2.1") == "192.0.2.1"


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
def test_a_socket_on_both_families_takes_ipv4_and_the_gate_sees_ipv4() -> None:
    sock = listen_socket(config("ENABLE_IPV6 = true\n"), "::", 0)
    try:
        assert sock.family == socket.AF_INET6
        assert sock.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY) == 0
        sock.listen(1)
        with socket.create_connection(("127.0.0.1", sock.getsockname()[1]), timeout=5):
            peer, address = sock.accept()
            peer.close()
        assert address[0] == "::ffff:127.0.0.1" and plain_address(address[0]) == "127.0.0.1"
    finally:
        sock.close()
    only6 = listen_socket(config("ENABLE_IPV4 = false\n"), "::1", 0)
    try:
        assert only6.getsockname()[0] == "::1"
    finally:
        only6.close()
    assert plain_address("::1") == "::1" and plain_address("198.18.0.1") == "198.18.0.1"


def _layout(tmp_path: Path, text: str) -> PoolLayout:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    layout.config.write_text(f"LOCAL_DIR = {layout.root}\n{text}")
    return layout


def test_a_second_central_manager_needs_the_first_ones_keys(tmp_path: Path) -> None:
    layout = _layout(tmp_path, "use ROLE : CentralManager\nCOLLECTOR_HOST = 192.0.2.200, 127.0.0.1:9700\n")
    with pytest.raises(HostSetupError, match=r"passwords.d/POOL"):
        prepare_host(layout)
    assert layout.read_collectors() == ["https://192.0.2.200:9618", "http://127.0.0.1:9700"]  # loopback: plain
    first = _layout(tmp_path / "first", "use ROLE : CentralManager\nCOLLECTOR_HOST = 127.0.0.1:9700, 192.0.2.200\n")
    plan = prepare_host(first)  # the first collector of the list makes the pool's keys
    assert plan.runs("collector") and first.read_address("collector") is None


def test_an_execute_host_keeps_every_collector_for_its_tools(tmp_path: Path) -> None:
    layout = _layout(tmp_path, "use ROLE : Execute\nCOLLECTOR_HOST = 192.0.2.1 192.0.2.2\n")
    keys = layout.root / "passwords.d"
    keys.mkdir()
    for name in ("POOL", "ca.key", "ca.pem"):
        (keys / name).write_text("x")
    prepare_host(layout)
    assert layout.read_address("collector") == "https://192.0.2.1:9618"
    assert layout.read_collectors() == ["https://192.0.2.1:9618", "https://192.0.2.2:9618"]
    single = _layout(tmp_path / "one", "use ROLE : Execute\nCOLLECTOR_HOST = 192.0.2.1\n")
    (single.root / "passwords.d").mkdir()
    for name in ("POOL", "ca.key", "ca.pem"):
        (single.root / "passwords.d" / name).write_text("x")
    prepare_host(single)
    assert single.read_collectors() == []


class _Collectors:
    """A client that reaches only the collectors of ``up``, answering each query with its URL."""

    def __init__(self, up: set[str]) -> None:
        self.up = up
        self.sent: list[tuple[str, object]] = []

    async def send(self, url: str, message: object, timeout: float | None = None) -> object:
        self.sent.append((url, message))
        if url not in self.up:
            raise ConnectionError(f"connection refused by {url}")
        return AdList((ClassAd({"Answered": url}),)) if isinstance(message, QueryAds) else Ok()

    async def close(self) -> None:
        return None


def _daemon(tmp_path: Path, up: set[str]) -> tuple[Daemon, _Collectors]:
    layout = _layout(tmp_path, "use ROLE : Execute\nCOLLECTOR_HOST = 192.0.2.1, 192.0.2.2\n"
                               "SEC_DEFAULT_ENCRYPTION = OPTIONAL\n")
    client = _Collectors(up)
    return Daemon("startd", layout, daemon_config(layout, "STARTD"), client=client), client  # type: ignore[arg-type]


def test_a_daemon_sends_its_ads_to_every_collector_and_asks_the_next_when_one_is_down(tmp_path: Path) -> None:
    first, second = "http://192.0.2.1:9618", "http://192.0.2.2:9618"

    async def go() -> None:
        daemon, client = _daemon(tmp_path, {first, second})
        ad = UpdateAd(ClassAd({"MyType": "Machine", "Name": "slot1@x"}))
        daemon.to_collector(ad)
        await daemon.outbox.flush()
        assert sorted(url for url, _ in client.sent) == [first, second]
        answer = await daemon.ask_collector(QueryAds("Machine"))
        assert answer.ads[0]["Answered"] == first  # in COLLECTOR_HOST's order

        daemon, client = _daemon(tmp_path / "down", {second})
        answer = await daemon.ask_collector(QueryAds("Machine"))
        assert answer.ads[0]["Answered"] == second and [u for u, _ in client.sent] == [first, second]
        daemon, client = _daemon(tmp_path / "none", set())
        with pytest.raises(CollectorUnavailable, match="192.0.2.1.*192.0.2.2"):
            await daemon.ask_collector(QueryAds("Machine"))
    asyncio.run(go())


def test_a_wrong_address_family_knob_is_reported_with_the_file(tmp_path: Path) -> None:
    layout = _layout(tmp_path, "ENABLE_IPV6 = sometimes\n")
    with pytest.raises(HostSetupError, match=r"condor_config: ENABLE_IPV6 = 'sometimes' is not true, false or auto"):
        prepare_host(layout)
