"""NETWORK_INTERFACE as a device name or a wildcard pattern (runtime/interfaces.py), as the HTCondor
manual's NETWORK_INTERFACE entry describes: an address or a device name, ``*`` allowed in either;
among several matches a public address first, then a private one, then loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.config import Config
from htcpool.config.errors import ConfigError
from htcpool.runtime import network
from htcpool.runtime.hostplan import HostSetupError, prepare_host
from htcpool.runtime.interfaces import host_addresses, matching_address, names_an_address
from htcpool.runtime.layout import PoolLayout

HOST = [("lo", "127.0.0.1"), ("lo", "::1"), ("eth0", "10.1.2.3"), ("eth0", "fd00::3"),
        ("eth1", "192.0.2.50"), ("wlan0", "8.8.4.4"), ("docker0", "172.17.0.1")]


def config(text: str) -> Config:
    return Config.from_text(text, subsystem="MASTER", environ={})


@pytest.mark.parametrize(("pattern", "versions", "expected"), [
    ("eth0", (4,), "10.1.2.3"),
    ("eth0", (6,), "fd00::3"),
    ("eth0", (4, 6), "10.1.2.3"),       # both private: the system's order decides
    ("lo", (4,), "127.0.0.1"),
    ("eth*", (4,), "10.1.2.3"),         # two private addresses: the system's order decides
    ("*", (4,), "8.8.4.4"),             # a public address before private and loopback ones
    ("w*", (4,), "8.8.4.4"),
    ("10.1.*", (4,), "10.1.2.3"),       # a wildcard over addresses
    ("172.17.0.*", (4,), "172.17.0.1"),
    ("[fd00::3]", (6,), "fd00::3"),
    ("eth0", (), None),
    ("eth9", (4, 6), None),
    ("wlan0", (6,), None),
])
def test_a_pattern_chooses_public_then_private_then_loopback_in_the_systems_order(
        pattern: str, versions: tuple[int, ...], expected: str | None) -> None:
    assert matching_address(pattern, HOST, versions) == expected


def test_only_a_literal_address_names_an_address() -> None:
    assert names_an_address("192.0.2.1") and names_an_address("::1") and names_an_address("[fd00::1]")
    assert not names_an_address("eth0") and not names_an_address("192.0.2.*") and not names_an_address("*")


def test_this_hosts_listing_has_loopback_and_no_link_local_address() -> None:
    found = host_addresses()
    assert ("lo", "127.0.0.1") in found, found
    assert not any(address.startswith("fe80:") for _, address in found), found


def test_a_device_name_decides_the_bound_and_advertised_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "host_addresses", lambda: HOST)
    across = "CONDOR_HOST = 192.0.2.1\n"
    bound = config(across + "NETWORK_INTERFACE = eth1\nBIND_ALL_INTERFACES = false\n")
    assert network.bind_host(bound) == "192.0.2.50"
    everywhere = config(across + "NETWORK_INTERFACE = eth1\n")
    assert network.bind_host(everywhere) == "0.0.0.0"
    assert network.advertised_host(everywhere, "0.0.0.0") == "192.0.2.50"
    assert network.bind_host(config("NETWORK_INTERFACE = eth*\n")) == "10.1.2.3"  # a personal pool
    six = config("NETWORK_INTERFACE = eth0\nENABLE_IPV4 = false\nENABLE_IPV6 = true\n")
    assert network.bind_host(six) == "fd00::3"
    assert network.bind_host(config("NETWORK_INTERFACE = *\n")) == "127.0.0.1"  # the default: all


def test_a_pattern_matching_nothing_is_an_error_naming_the_knob(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "host_addresses", lambda: HOST)
    with pytest.raises(ConfigError, match=r"NETWORK_INTERFACE = 'ib0' matches no IPv4 address.*eth0"):
        network.bind_host(config("NETWORK_INTERFACE = ib0\n"))
    with pytest.raises(ConfigError, match="NETWORK_INTERFACE"):
        network.bind_host(config("NETWORK_INTERFACE = wlan0\nENABLE_IPV4 = false\nENABLE_IPV6 = true\n"))


def test_up_reports_a_pattern_matching_nothing_with_the_file(tmp_path: Path) -> None:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    layout.config.write_text(f"LOCAL_DIR = {layout.root}\nNETWORK_INTERFACE = nosuchdevice9\n")
    with pytest.raises(HostSetupError, match=r"condor_config: NETWORK_INTERFACE = 'nosuchdevice9' matches no"):
        prepare_host(layout)
