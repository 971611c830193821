"""Which master condor_off -name / -addr / -pool reaches, and what the tools print (cli/remote_master.py)."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd
from htcpool.cli.pool import reports
from htcpool.cli.remote_master import RemoteMasterError, addr_url, pick_master, pool_url, target_of
from htcpool.protocol import Command, How

ADS = [ClassAd({"Name": "cm.example.org", "Machine": "cm.example.org", "MyAddress": "https://192.0.2.1:40001"}),
       ClassAd({"Name": "exec1.example.org", "Machine": "exec1.example.org",
                "MyAddress": "https://192.0.2.7:40123"}),
       ClassAd({"Name": "v6.example.org", "MyAddress": "https://[2001:db8::7]:40200"})]


@pytest.mark.parametrize(("name", "address"), [
    ("exec1.example.org", "https://192.0.2.7:40123"),
    ("EXEC1", "https://192.0.2.7:40123"),
    ("192.0.2.7", "https://192.0.2.7:40123"),
    ("2001:db8::7", "https://[2001:db8::7]:40200"),
    ("cm", "https://192.0.2.1:40001"),
])
def test_a_master_is_found_by_its_name_its_first_label_or_its_address(name: str, address: str) -> None:
    found = pick_master(ADS, name)
    assert found is not None and found["MyAddress"] == address


def test_an_unknown_host_names_the_masters_the_collector_knows() -> None:
    with pytest.raises(RemoteMasterError, match=r"Can't find address for master exec9 \(the collector knows: "
                                                 r"cm.example.org, exec1.example.org, v6.example.org\)"):
        target_of("exec9", None, ADS)
    assert target_of(None, None, ADS).url is None  # this host's master, on its socket


def test_addresses_and_pools_are_read_as_htcondor_writes_them() -> None:
    assert addr_url("<192.0.2.7:40123?addrs=192.0.2.7-40123>") == "https://192.0.2.7:40123"
    assert addr_url("https://192.0.2.7:40123") == "https://192.0.2.7:40123"
    assert pool_url("cm.example.org") == "https://cm.example.org:9618"
    assert pool_url("[2001:db8::1]:9700") == "https://[2001:db8::1]:9700"
    assert pool_url("127.0.0.1:9618") == "http://127.0.0.1:9618"
    with pytest.raises(RemoteMasterError, match="-pool 'cm:http'"):
        pool_url("cm:http")
    assert target_of("ignored", "<192.0.2.7:40123?addrs=192.0.2.7-40123>", []).label == "master at <192.0.2.7:40123>"
    assert reports(Command.RECONFIG, How.GRACEFUL, ("startd",), "master at <192.0.2.7:40123>") == [
        'Sent "Reconfig" command to startd at <192.0.2.7:40123>']


def test_the_reports_name_the_remote_master() -> None:
    remote = "master exec1.example.org"
    assert reports(Command.OFF, How.GRACEFUL, ("startd",), remote) == [
        'Sent "Kill-Daemon" command for "startd" to master exec1.example.org']
    assert reports(Command.OFF, How.GRACEFUL, (), remote) == ['Sent "Kill-All-Daemons" command to master exec1.example.org']
    assert reports(Command.RESTART, How.GRACEFUL, ("schedd",), remote) == [
        'Sent "Restart" command to schedd exec1.example.org']
    assert reports(Command.RESTART, How.GRACEFUL, ("schedd",)) == ['Sent "Restart" command to local schedd']
