"""The level table: every message is mapped, the hierarchy is HTCondor's, refinements by content."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.protocol import Command, DaemonCommand, InvalidateAd, Ping, QueryAds, Submit, UpdateAd
from htcpool.protocol.startd import MatchNotification, RequestClaim
from htcpool.runtime.security.levels import IMPLIED, IMPLIED_BY, Level, level_of, unmapped_types


def test_every_message_type_has_a_level() -> None:
    assert unmapped_types() == []


def test_the_hierarchy_is_the_manuals() -> None:
    assert IMPLIED[Level.ADMINISTRATOR] >= {Level.WRITE, Level.READ}
    assert IMPLIED[Level.DAEMON] >= {Level.WRITE, Level.READ}
    assert Level.WRITE not in IMPLIED[Level.NEGOTIATOR] and Level.READ in IMPLIED[Level.NEGOTIATOR]
    assert Level.WRITE not in IMPLIED[Level.CONFIG]
    assert IMPLIED_BY[Level.WRITE] == {Level.WRITE, Level.ADMINISTRATOR, Level.DAEMON}
    assert Level.ADVERTISE_STARTD in IMPLIED_BY[Level.READ]


def test_levels_of_messages() -> None:
    assert level_of(Submit("alice", ())) is Level.WRITE
    assert level_of(QueryAds("Machine")) is Level.READ
    assert level_of(QueryAds("Machine", private=True)) is Level.NEGOTIATOR
    assert level_of(UpdateAd(ClassAd({"MyType": "Machine"}))) is Level.ADVERTISE_STARTD
    assert level_of(UpdateAd(ClassAd({"MyType": "Submitter"}))) is Level.ADVERTISE_SCHEDD
    assert level_of(UpdateAd(ClassAd({"MyType": "Negotiator"}))) is Level.DAEMON
    assert level_of(InvalidateAd("Master")) is Level.ADVERTISE_MASTER
    assert level_of(DaemonCommand(Command.OFF)) is Level.ADMINISTRATOR
    assert level_of(DaemonCommand(Command.RESCHEDULE)) is Level.WRITE
    assert level_of(DaemonCommand(Command.STATUS)) is Level.READ
    assert level_of(RequestClaim("c", ClassAd(), "schedd@h")) is Level.DAEMON
    assert level_of(MatchNotification("c")) is Level.NEGOTIATOR
    assert level_of(Ping()) is Level.ALLOW
