"""No condor_userprio command and no stored accountant value can stop negotiation.

The attacks: ``-setprio alice@pool.test nan`` passed the "at least 0.5" test (NaN compares
false) and was stored, as were ``inf`` and ``1e400`` for a factor or a usage; the tool itself
died on ``-setbegin … inf``. Each is refused with a message naming the option, at the tool and
at the negotiator (HTTP 400); a record already holding such a value is put back to a usable one
when the negotiator reads its database, logged, and the next cycle matches as usual.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from htcpool.cli.common import ToolError
from htcpool.cli.userprio import change_command, parse
from htcpool.negotiator.accountant import Accountant
from htcpool.negotiator.errors import NegotiatorUsageError
from htcpool.negotiator.records import CustomerRecord
from htcpool.negotiator.userprio import MAX_USERPRIO_VALUE, apply_userprio
from htcpool.protocol import UserprioCommand, UserprioOp
from htcpool.runtime.accountant_store import SqliteAccountantStore
from htcpool.runtime.http import RequestRefused
from tests.faults.negotiator_pool import ALICE, NegotiatorPool
from tests.runtime.inprocess import run

NAN, INF = math.nan, math.inf
HOSTILE = [NAN, INF, -INF, 1e300, MAX_USERPRIO_VALUE * 10]
NUMERIC = [UserprioOp.SETFACTOR, UserprioOp.SETPRIO, UserprioOp.SETCEILING, UserprioOp.SETFLOOR,
           UserprioOp.SETACCUM, UserprioOp.SETBEGIN, UserprioOp.SETLAST]


@pytest.mark.parametrize("op", NUMERIC)
@pytest.mark.parametrize("value", HOSTILE)
def test_every_numeric_change_refuses_a_number_that_is_not_finite_or_is_absurd(op: UserprioOp, value: float) -> None:
    accountant = Accountant()
    with pytest.raises(NegotiatorUsageError, match=f"-{op}: .* is not a finite number of at most 1e\\+15"):
        apply_userprio(accountant, UserprioCommand(op, ALICE, value), 1000.0)
    assert accountant.records == {}


@pytest.mark.parametrize("duration", [NAN, INF, 1e300, -5.0])
def test_a_lease_needs_a_finite_duration(duration: float) -> None:
    accountant = Accountant()
    with pytest.raises(NegotiatorUsageError, match="-duration: "):
        apply_userprio(accountant, UserprioCommand(UserprioOp.SETFACTOR, ALICE, 2.0, duration), 1000.0)
    assert accountant.records == {}


def test_a_time_before_the_epoch_is_refused_and_sane_values_pass() -> None:
    accountant = Accountant()
    with pytest.raises(NegotiatorUsageError, match="-setbegin: -5.0 is before 1970"):
        apply_userprio(accountant, UserprioCommand(UserprioOp.SETBEGIN, ALICE, -5.0), 1000.0)
    apply_userprio(accountant, UserprioCommand(UserprioOp.SETFACTOR, ALICE, 1e6), 1000.0)
    apply_userprio(accountant, UserprioCommand(UserprioOp.SETACCUM, ALICE, 3600.0), 1000.0)
    assert (accountant.priority_factor(ALICE), accountant.records[ALICE].weighted_accumulated_usage) == (1e6, 3600.0)


@pytest.mark.parametrize("argv", [
    ["-setprio", ALICE, "nan"], ["-setfactor", ALICE, "inf"], ["-setaccum", ALICE, "1e400"],
    ["-setbegin", ALICE, "inf"], ["-setceiling", ALICE, "-inf"], ["-setlast", ALICE, "1e30"],
    ["-setfactor", ALICE, "2", "-duration", "9" * 400],
])
def test_the_tool_refuses_them_with_a_message_not_a_traceback(argv: list[str]) -> None:
    with pytest.raises(ToolError, match="finite number|-duration requires"):
        args, _ = parse(argv)
        change_command(args)


def _poisoned_store(path: Path) -> None:
    """An accountant database holding what an old negotiator or a hand edit could leave."""
    store = SqliteAccountantStore(path)
    store.commit(1000.0, [
        CustomerRecord(ALICE, priority=NAN, priority_factor=INF, weighted_accumulated_usage=-INF,
                       weighted_resources_used=NAN, ceiling=NAN, floor=-3.0, last_usage_time=INF),
        CustomerRecord("bob@pool.test", priority=1e300, priority_factor=-2.0),
    ], [])
    store.close()


def test_stored_values_that_are_not_usable_are_put_back_and_reported(tmp_path: Path) -> None:
    _poisoned_store(tmp_path / "a.db")
    store = SqliteAccountantStore(tmp_path / "a.db")
    records = {r.name: r for r in store.load().records}
    alice, bob = records[ALICE], records["bob@pool.test"]
    fresh = CustomerRecord(ALICE)
    assert (alice.priority, alice.priority_factor, alice.ceiling, alice.floor) == (
        fresh.priority, fresh.priority_factor, fresh.ceiling, fresh.floor)
    assert (alice.weighted_accumulated_usage, alice.weighted_resources_used, alice.last_usage_time) == (0.0, 0.0, 0.0)
    assert (bob.priority, bob.priority_factor) == (fresh.priority, fresh.priority_factor)
    assert any("record 'alice@pool.test': Priority = nan is not usable" in p for p in store.problems)
    assert any("record 'bob@pool.test': PriorityFactor = -2.0 is not usable" in p for p in store.problems)
    store.close()


def test_a_negotiator_over_a_poisoned_database_logs_it_and_keeps_matching(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pool = NegotiatorPool(tmp_path, "NEGOTIATOR_INTERVAL = 30\n")
    _poisoned_store(pool.layout.spool / "accountant.db")
    with caplog.at_level(logging.WARNING, logger="htcpool.negotiator"):
        negotiator = pool.start_negotiator()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "accountant: " in logged and "Priority = nan is not usable" in logged

    async def test() -> None:
        with pytest.raises(RequestRefused, match="-setprio: 1e\\+300 is not a finite number") as refused:
            await pool.daemon.client.send(pool.url, UserprioCommand(UserprioOp.SETPRIO, ALICE, 1e300))
        assert refused.value.status == 400
        with pytest.raises(RequestRefused, match="-setfactor: nan is not a finite number") as refused:
            await negotiator.handle(UserprioCommand(UserprioOp.SETFACTOR, ALICE, NAN))  # as JSON's NaN decodes
        assert refused.value.status == 400
        assert await pool.cycle() == [(7, 0)]
        await pool.close()

    run(test)
