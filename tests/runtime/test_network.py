"""Roles, COLLECTOR_HOST, binding and advertised addresses (runtime/network.py, runtime/hostplan.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.config import Config
from htcpool.config.errors import ConfigError
from htcpool.runtime.hostplan import HostSetupError, prepare_host, read_plan
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.local_names import daemon_entries
from htcpool.runtime.network import (
    advertised_host,
    bind_host,
    collector_host,
    collector_url,
    listen_port,
    parse_collector_host,
)
from htcpool.runtime.pool import PERSONAL_CONFIG


def config(text: str) -> Config:
    return Config.from_text(text, subsystem="MASTER", environ={})


@pytest.mark.parametrize(("text", "expected"), [
    ("cm.example.org", ("cm.example.org", 9618)),
    ("cm.example.org:9620", ("cm.example.org", 9620)),
    ("192.0.2.7", ("192.0.2.7", 9618)),
    ("<192.0.2.7:9619?sock=collector>", ("192.0.2.7", 9619)),
    ("[2001:db8::1]:9700", ("2001:db8::1", 9700)),
    ("127.0.0.1:0", ("127.0.0.1", 0)),
])
def test_collector_host_forms(text: str, expected: tuple[str, int]) -> None:
    assert parse_collector_host(text) == expected


@pytest.mark.parametrize("text", ["cm:port", "cm:70000", ":9618"])
def test_a_collector_host_that_cannot_be_read_names_the_knob(text: str) -> None:
    with pytest.raises(ConfigError, match="COLLECTOR_HOST"):
        parse_collector_host(text)


def test_the_personal_pool_stays_on_loopback() -> None:
    personal = config(PERSONAL_CONFIG.format(local_dir="/pool"))
    assert collector_host(personal) is None and collector_url(personal) is None
    assert bind_host(personal) == "127.0.0.1" and listen_port(personal, "collector") == 0
    assert bind_host(config("NETWORK_INTERFACE = 127.0.0.2\n")) == "127.0.0.2"
    assert bind_host(config("CONDOR_HOST = localhost\n")) == "127.0.0.1"
    assert bind_host(config("NETWORK_INTERFACE = ::1\n")) == "::1"  # IPv6: runtime/network.py
    assert bind_host(config("NETWORK_INTERFACE = ::1\nENABLE_IPV6 = false\n")) == "127.0.0.1"
    assert bind_host(config("NETWORK_INTERFACE = lo\n")) == "127.0.0.1"  # a device: tests/runtime/test_interfaces.py


def test_roles_choose_the_daemons_as_htcondor_templates_do() -> None:
    def kinds(role: str) -> list[str]:
        return [e.kind for e in daemon_entries(config(f"use ROLE : {role}\nCONDOR_HOST = 192.0.2.1\n"))]

    assert kinds("CentralManager") == ["collector", "negotiator"]
    assert kinds("Submit") == ["schedd"]
    assert kinds("Execute") == ["startd"]
    assert kinds("CentralManager, Submit") == ["collector", "negotiator", "schedd"]
    assert kinds("Personal") == ["collector", "negotiator", "schedd", "startd"]


def test_a_pool_across_hosts_binds_all_interfaces_and_reaches_its_collector_over_https() -> None:
    execute = config("use ROLE : Execute\nCONDOR_HOST = 192.0.2.1\n")
    assert collector_url(execute) == "https://192.0.2.1:9618"
    assert bind_host(execute) == "0.0.0.0"
    assert listen_port(execute, "collector") == 9618 and listen_port(execute, "startd") == 0
    plain = config("COLLECTOR_HOST = cm.example.org:9620\nSEC_DEFAULT_ENCRYPTION = OPTIONAL\n")
    assert collector_url(plain) == "http://cm.example.org:9620"
    chosen = config("CONDOR_HOST = 192.0.2.1\nNETWORK_INTERFACE = 192.0.2.9\nBIND_ALL_INTERFACES = false\n")
    assert bind_host(chosen) == "192.0.2.9" and advertised_host(chosen, "192.0.2.9") == "192.0.2.9"
    assert advertised_host(config("CONDOR_HOST = 192.0.2.1\nNETWORK_INTERFACE = 192.0.2.9\n"), "0.0.0.0") \
        == "192.0.2.9"


def test_without_a_route_to_a_collector_the_address_is_ip_address() -> None:
    alone = config("NETWORK_INTERFACE = 0.0.0.0\nIP_ADDRESS = 192.0.2.44\n")
    assert bind_host(alone) == "0.0.0.0" and advertised_host(alone, "0.0.0.0") == "192.0.2.44"


def _layout(tmp_path: Path, text: str) -> PoolLayout:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    layout.config.write_text(f"LOCAL_DIR = {layout.root}\n{text}")
    return layout


def test_a_host_without_the_central_managers_keys_may_not_join(tmp_path: Path) -> None:
    layout = _layout(tmp_path, "use ROLE : Execute\nCONDOR_HOST = 192.0.2.1\n")
    with pytest.raises(HostSetupError, match=r"passwords.d/POOL.*passwords.d/ca.key.*copy them"):
        prepare_host(layout)
    keys = layout.root / "passwords.d"
    keys.mkdir()
    for name in ("POOL", "ca.key", "ca.pem"):
        (keys / name).write_text("x")
    plan = prepare_host(layout)
    assert plan.runs("startd") and not plan.runs("collector")
    assert layout.read_address("collector") == "https://192.0.2.1:9618"


def test_the_central_manager_makes_its_own_keys(tmp_path: Path) -> None:
    layout = _layout(tmp_path, "use ROLE : CentralManager\nCONDOR_HOST = 192.0.2.1\n")
    plan = prepare_host(layout)
    assert plan.remote_collector == "https://192.0.2.1:9618" and plan.runs("collector")
    assert layout.read_address("collector") is None  # its collector writes its own


def test_a_wrong_collector_host_is_reported_with_the_file(tmp_path: Path) -> None:
    layout = _layout(tmp_path, "COLLECTOR_HOST = cm:http\n")
    with pytest.raises(HostSetupError, match=r"condor_config: COLLECTOR_HOST = 'cm:http'"):
        read_plan(layout)
