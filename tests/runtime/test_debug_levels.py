"""<SUBSYS>_DEBUG and ALL_DEBUG: HTCondor's categories become logger levels; an unknown word is
one warning naming the knob, and the rest of the list still applies."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from htcpool.config import Config
from htcpool.runtime.debug_levels import LOGGERS, apply_debug_levels, parse_debug


@pytest.fixture(autouse=True)
def restore_levels() -> Iterator[None]:
    names = ["htcpool", *LOGGERS.values()]
    saved = {n: logging.getLogger(n).level for n in names}
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def test_categories_verbosities_and_removals_are_read() -> None:
    assert parse_debug("D_FULLDEBUG, D_COMMAND:2 D_JOB -D_JOB d_pid") == ({"D_FULLDEBUG", "D_COMMAND", "D_PID"}, [])
    assert parse_debug("D_COMMAND D_BOGUS 42") == ({"D_COMMAND"}, ["D_BOGUS", "42"])


def test_fulldebug_turns_every_logger_on_and_a_category_only_its_own(caplog: pytest.LogCaptureFixture) -> None:
    on = apply_debug_levels(Config.from_text("STARTD_DEBUG = D_COMMAND D_NOPE\n"), "startd")
    assert on == {"D_COMMAND"}
    assert logging.getLogger(LOGGERS["D_COMMAND"]).isEnabledFor(logging.DEBUG)
    assert not logging.getLogger(LOGGERS["D_JOB"]).isEnabledFor(logging.DEBUG)
    assert not logging.getLogger("htcpool.startd").isEnabledFor(logging.DEBUG)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("STARTD_DEBUG: D_NOPE is not a debug level")
    apply_debug_levels(Config.from_text("ALL_DEBUG = D_FULLDEBUG\n"), "schedd")
    assert logging.getLogger("htcpool.startd").isEnabledFor(logging.DEBUG)
    assert logging.getLogger(LOGGERS["D_JOB"]).isEnabledFor(logging.DEBUG)
