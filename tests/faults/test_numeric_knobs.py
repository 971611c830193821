"""No numeric knob value stops a daemon or sets it spinning.

The attacks: ``SCHEDD_INTERVAL = -5`` was taken (the parameter table gives it no range) and
the schedd advertised on every turn of its loop; a 400-digit ``NEGOTIATOR_INTERVAL`` raised at
start-up, so the negotiator died and was restarted for ever; ``nan`` and ``inf`` passed for
real knobs. Each is refused naming the knob (the message cut short), logged by the daemon,
and the knob's default is used.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from htcpool.config import Config, ConfigValueError, integer_value, real_value
from htcpool.runtime.schedd_service import ScheddService
from tests.faults.negotiator_pool import NegotiatorPool
from tests.runtime.inprocess import T0, Clock, Network, daemon, pool_layout, run

HUGE = "9" * 400


@pytest.mark.parametrize(("name", "text", "message"), [
    ("SCHEDD_INTERVAL", "-5", "SCHEDD_INTERVAL = -5 is too low: it must be from 1 to 2147483647"),
    ("SCHEDD_INTERVAL", "0", "SCHEDD_INTERVAL = 0 is too low"),
    ("UPDATE_INTERVAL", "-1", "UPDATE_INTERVAL = -1 is too low"),
    ("NEGOTIATOR_INTERVAL", "-60", "NEGOTIATOR_INTERVAL = -60 is too low: it must be from 0"),
    ("NEGOTIATOR_INTERVAL", HUGE, "NEGOTIATOR_INTERVAL = 9999999999999999999999999999999999999999... "
                                  "(400 characters) is not a valid integer: it is out of range"),
    ("NEGOTIATOR_INTERVAL", "4294967296", "NEGOTIATOR_INTERVAL = 4294967296 is too high"),
    ("SHADOW_TIMEOUT", "1e12", "SHADOW_TIMEOUT = 1e12 is too high: it must be at most 2147483647"),
])
def test_absurd_integers_are_refused_naming_the_knob(name: str, text: str, message: str) -> None:
    with pytest.raises(ConfigValueError) as caught:
        integer_value(name, text)
    assert message in str(caught.value)
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e400", "-1e999"])
def test_reals_that_are_not_finite_are_refused(text: str) -> None:
    with pytest.raises(ConfigValueError, match=f"DEFAULT_PRIO_FACTOR = {text} is not a valid number: it is not finite"):
        real_value("DEFAULT_PRIO_FACTOR", text)


def test_ordinary_values_and_the_tables_own_sentinels_still_pass() -> None:
    assert integer_value("SCHEDD_INTERVAL", "5*60") == 300
    assert integer_value("NEGOTIATOR_INTERVAL", "0") == 0  # 0: the negotiator's default
    assert integer_value("SEC_CREDENTIAL_REFRESH_INTERVAL", "-1") == -1  # the table's "never"
    assert integer_value("MAX_JOBS_RUNNING", "-5") == -5  # not a length of time
    assert real_value("DEFAULT_PRIO_FACTOR", "1e6") == 1e6


def test_a_daemons_configuration_logs_a_bad_value_and_uses_the_default() -> None:
    config = Config.from_text(f"NEGOTIATOR_INTERVAL = {HUGE}\nSCHEDD_INTERVAL = -5\nMY_WAIT_TIMEOUT = nan\n")
    with pytest.raises(ConfigValueError):  # tools and tests: strict
        config.get_int("NEGOTIATOR_INTERVAL")
    seen: list[str] = []
    config.on_bad_value = lambda e: seen.append(str(e))
    assert config.get_int("NEGOTIATOR_INTERVAL") == 60  # the table's default
    assert config.get_int("MY_WAIT_TIMEOUT", default=7) == 7  # no table default: the caller's
    assert config.get_float("MY_WAIT_TIMEOUT") is None
    assert [s.split(" = ")[0].split(": ")[-1] for s in seen] == [
        "NEGOTIATOR_INTERVAL", "MY_WAIT_TIMEOUT", "MY_WAIT_TIMEOUT"]


def test_a_schedd_with_a_negative_interval_logs_it_and_keeps_its_pace(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    layout = pool_layout(tmp_path, "SCHEDD_NAME = schedd@pool.test\nSCHEDD_INTERVAL = -5\n")
    clock = Clock()
    service = ScheddService(daemon("schedd", layout, clock, Network()))

    async def test() -> None:
        with caplog.at_level(logging.WARNING, logger="htcpool.schedd"):
            await service.start()
        logged = "\n".join(r.getMessage() for r in caplog.records)
        assert "SCHEDD_INTERVAL = -5 is too low" in logged and "using 300" in logged
        assert service.core.settings.schedd_interval == 300
        await service.on_timer(T0)
        assert service.core.next_advert == T0 + 60  # min(SCHEDD_INTERVAL, 60): not every turn of the loop
        assert service.next_deadline() == T0 + 5  # the personal pool's PERIODIC_EXPR_INTERVAL
        service.store.close()

    run(test)


def test_a_negotiator_with_a_400_digit_interval_logs_it_and_negotiates(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pool = NegotiatorPool(tmp_path, f"NEGOTIATOR_INTERVAL = {HUGE}\n")
    with caplog.at_level(logging.WARNING, logger="htcpool.daemon"):
        negotiator = pool.start_negotiator()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "NEGOTIATOR_INTERVAL = 9999" in logged and "(400 characters)" in logged
    assert "NEGOTIATOR uses the default instead" in logged
    assert negotiator.policy.interval == 60.0

    async def test() -> None:
        assert await pool.cycle() == [(7, 0)]
        await pool.close()

    run(test)
