"""Which account a job runs as under a root startd (runtime/runas.py): owner, slot user, nobody."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd
from htcpool.runtime.launch import LaunchSpec
from htcpool.runtime.runas import (
    Account,
    RunAsError,
    RunAsSettings,
    decide_account,
    run_as_settings,
)

ACCOUNTS = {
    "alice": Account("alice", 1001, 1001, (1001, 50), "/home/alice"),
    "root": Account("root", 0, 0, (0,), "/root"),
    "nobody": Account("nobody", 65534, 65534, (65534,), "/nonexistent"),
    "cndrusr1": Account("cndrusr1", 2001, 2001, (2001,), "/"),
}


def job(**attrs: object) -> ClassAd:
    ad = ClassAd()
    ad["Owner"] = "alice"
    for name, value in attrs.items():
        ad[name] = value
    return ad


def decide(ad: ClassAd, settings: RunAsSettings | None = None, slot: int | None = 1) -> str:
    return decide_account(ad, slot, settings or RunAsSettings(), ACCOUNTS.get).name


def test_owner_by_default() -> None:
    assert decide(job()) == "alice"


def test_owner_unknown_here_runs_as_nobody() -> None:
    assert decide(job(Owner="zed")) == "nobody"


def test_allow_runas_owner_false_uses_slot_user_then_nobody() -> None:
    settings = RunAsSettings(allow_owner="False", slot_users={1: "cndrusr1"})
    assert decide(job(), settings, slot=1) == "cndrusr1"
    assert decide(job(), settings, slot=2) == "nobody"


def test_allow_runas_owner_is_an_expression_of_the_job() -> None:
    settings = RunAsSettings(allow_owner='Owner != "alice"')
    assert decide(job(), settings) == "nobody"
    assert decide(job(), RunAsSettings(allow_owner="RequestCpus == 1"), slot=None) == "nobody"


def test_run_as_owner_false_in_the_job() -> None:
    assert decide(job(RunAsOwner=False)) == "nobody"


def test_uid_domain_must_match_unless_trusted() -> None:
    settings = RunAsSettings(uid_domain="example.org")
    assert decide(job(UidDomain="EXAMPLE.org"), settings) == "alice"
    assert decide(job(UidDomain="other.org"), settings) == "nobody"
    assert decide(job(UidDomain="other.org"), RunAsSettings(uid_domain="example.org", trust_uid_domain=True)) == "alice"


def test_nobody_slot_user() -> None:
    assert decide(job(RunAsOwner=False), RunAsSettings(nobody_slot_user="cndrusr1")) == "cndrusr1"


def test_never_root() -> None:
    # root's own job runs as root (only root can be authenticated as root); nobody else's does
    assert decide(job(Owner="root")) == "root"
    with pytest.raises(RunAsError, match="SLOT1_USER names the superuser"):
        decide(job(RunAsOwner=False), RunAsSettings(slot_users={1: "root"}))


def test_missing_slot_user_is_named() -> None:
    with pytest.raises(RunAsError, match="SLOT1_USER names the account 'ghost'"):
        decide(job(RunAsOwner=False), RunAsSettings(slot_users={1: "ghost"}))


def test_settings_from_configuration() -> None:
    knobs = {"SLOT1_USER": "cndrusr1", "SLOT3_USER": " ", "STARTER_ALLOW_RUNAS_OWNER": "False",
             "UID_DOMAIN": "example.org", "TRUST_UID_DOMAIN": "True", "NOBODY_SLOT_USER": "spare"}
    settings = run_as_settings(knobs.get, [1, 2, 3])
    assert settings == RunAsSettings("example.org", True, "False", {1: "cndrusr1"}, "spare")


def test_account_travels_in_the_launch_description() -> None:
    spec = LaunchSpec("/bin/true", (), {}, "/tmp", "/tmp/s", "/tmp", "slot1", "", run_as=ACCOUNTS["alice"])
    assert LaunchSpec.from_json(spec.to_json()).run_as == ACCOUNTS["alice"]
    assert LaunchSpec.from_json(LaunchSpec("/bin/true", (), {}, "/", "/s", "/", "slot1", "").to_json()).run_as is None
