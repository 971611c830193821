"""ALLOW/DENY lists: HTCondor's entry forms, precedence, hierarchy, fallbacks and defaults."""

from __future__ import annotations

import pytest

from htcpool.runtime.security.authz import PeerHost, Policy, PolicyError, parse_entry
from htcpool.runtime.security.levels import Level

LOCAL = PeerHost("127.0.0.1", frozenset({"localhost", "submit.example.org"}), local=True)
REMOTE = PeerHost("192.0.2.77", frozenset({"exec7.cs.example.edu"}))
OTHER = PeerHost("198.51.100.3")


@pytest.mark.parametrize("entry, identity, peer, expected", [
    ("*", "alice@pool", OTHER, True),
    ("*@pool", "alice@pool", OTHER, True),
    ("*@pool", "alice@other", OTHER, False),
    ("condor@*", "condor@anything.example", OTHER, True),
    ("condor@*", "condorx@pool", OTHER, False),
    ("alice/*", "alice@pool", OTHER, True),  # a user without a domain: any domain
    ("alice@pool/*", "ALICE@pool", OTHER, True),  # names compare ignoring case
    ("exec7", "alice@pool", OTHER, False),  # a bare word is a host name, as in host-based security
    ("alice@pool/192.0.2.77", "alice@pool", REMOTE, True),
    ("alice@pool/192.0.2.77", "alice@pool", OTHER, False),
    ("*@pool/192.0.2.*", "bob@pool", REMOTE, True),
    ("*@pool/192.0.2.0/24", "bob@pool", REMOTE, True),
    ("*@pool/192.0.2.0/255.255.255.0", "bob@pool", REMOTE, True),
    ("*@pool/192.0.3.0/24", "bob@pool", REMOTE, False),
    ("192.0.2.0/24", "anyone@anywhere", REMOTE, True),
    ("192.0.2.77", "anyone@anywhere", REMOTE, True),
    ("*.cs.example.edu", "bob@pool", REMOTE, True),
    ("*.cs.example.edu", "bob@pool", OTHER, False),
    ("exec7.cs.example.edu", "bob@pool", REMOTE, True),
    ("*/{:local_ips:}", "bob@pool", LOCAL, True),
    ("*/{:local_ips:}", "bob@pool", REMOTE, False),
    ("submit.example.org", "bob@pool", LOCAL, True),
])
def test_entry_forms(entry: str, identity: str, peer: PeerHost, expected: bool) -> None:
    assert parse_entry(entry).matches(identity, peer) is expected


@pytest.mark.parametrize("entry", ["+netgroup", "a*b*c*d@x", "*@pool/exec*.example", "192.*.0.1", "*@pool/300.1.1.1/8"])
def test_entries_htcondor_does_not_accept_are_refused(entry: str) -> None:
    with pytest.raises(PolicyError):
        parse_entry(entry)


def _policy(knobs: dict[str, str], subsystem: str = "SCHEDD", pool_user: str = "root") -> Policy:
    return Policy.from_lookup(lambda k: knobs.get(k), subsystem, pool_user)


def test_deny_wins_and_higher_levels_imply_lower_ones() -> None:
    p = _policy({"ALLOW_WRITE": "*@pool", "DENY_WRITE": "mallory@pool", "ALLOW_ADMINISTRATOR": "admin@pool"})
    assert p.check(Level.WRITE, "alice@pool", OTHER) is None
    assert p.check(Level.READ, "alice@pool", OTHER) is None  # READ is '*' by default anyway
    assert "DENY_WRITE matches it" in (p.check(Level.WRITE, "mallory@pool", OTHER) or "")
    assert p.check(Level.WRITE, "admin@other", OTHER) is not None
    assert p.check(Level.WRITE, "admin@pool", OTHER) is None  # via ADMINISTRATOR
    assert "ALLOW_ADMINISTRATOR" in (p.check(Level.ADMINISTRATOR, "alice@pool", OTHER) or "")


def test_an_unset_list_denies_except_where_htcpool_has_a_default() -> None:
    p = _policy({})
    assert p.check(Level.WRITE, "alice@pool", OTHER) is None  # a root pool: anyone writes
    assert p.check(Level.DAEMON, "condor@pool", OTHER) is None
    assert p.check(Level.DAEMON, "alice@pool", OTHER) == "no entry of the default ALLOW_DAEMON matches it"
    assert p.check(Level.ADMINISTRATOR, "root@host", OTHER) is None
    assert p.check(Level.CONFIG, "root@host", OTHER) is not None
    assert p.check(Level.ADVERTISE_STARTD, "condor@pool", OTHER) is None  # DAEMON's default
    assert p.check(Level.DAEMON, "root@host", OTHER) is None  # the pool's own user (root here)


def test_a_personal_pool_lets_only_its_user_write() -> None:
    p = _policy({}, pool_user="bob")
    assert p.check(Level.WRITE, "bob@host", LOCAL) is None
    assert p.check(Level.ADMINISTRATOR, "bob@host", LOCAL) is None
    assert p.check(Level.WRITE, "alice@host", LOCAL) is not None
    assert p.check(Level.READ, "alice@host", LOCAL) is None


def test_advertise_levels_fall_back_to_daemon_and_subsystem_knobs_win() -> None:
    p = _policy({"ALLOW_DAEMON": "worker@pool", "ALLOW_READ": "nobody@x", "ALLOW_READ_SCHEDD": "*@pool"})
    assert p.check(Level.ADVERTISE_STARTD, "worker@pool", OTHER) is None
    assert p.check(Level.READ, "alice@pool", OTHER) is None
    narrow = _policy({"ALLOW_READ_SCHEDD": "x@y", "ALLOW_WRITE": "x@y"})
    assert narrow.check(Level.READ, "a@b", OTHER) == "no entry of ALLOW_READ_SCHEDD matches it"


def test_bad_entries_match_nobody_and_are_reported_with_the_knob() -> None:
    p = _policy({"ALLOW_WRITE": "+staff, alice@pool"})
    assert p.problems == ["ALLOW_WRITE: '+staff': netgroups are not supported; the entry matches nobody"]
    assert p.check(Level.WRITE, "alice@pool", OTHER) is None
    assert p.check(Level.WRITE, "bob@pool", OTHER) is not None
