"""Numbers and booleans in the configuration, read the way HTCondor's daemons read them.

HTCondor's ``param_integer``/``param_double``/``param_boolean`` (the manual's "Introduction
to Configuration": a value may be a ClassAd expression where a number is expected) try
the text as a literal, then evaluate it as a ClassAd expression: ``5*60`` is 300, a real
is truncated for an integer knob, ``true`` is 1. A value that is neither, or that lies
outside the range the parameter table gives the knob, stops a daemon with a message
naming the knob; htcpool raises ``ConfigValueError`` with the knob, the file and line,
and the reason.

Where HTCondor's Python binding can answer, the values are compared with it
(``htcondor2.param`` converts a knob to the type the table gives it). The binding
differs from the daemons on bad values: it falls back to the table default for a value
that is not of the type, and clamps one outside the range, where a daemon refuses both;
htcpool follows the daemons, so those cases are checked against the manual's wording
instead.
"""

from __future__ import annotations

import pytest

from htcpool.config import (
    Config,
    ConfigExpansionError,
    ConfigValueError,
    boolean_value,
    integer_value,
    real_value,
)
from htcpool.config.typed import INT_HIGHEST, NotConvertible, to_bool, to_float, to_int
from htcpool.negotiator import policy_from_config
from htcpool.schedd import settings_from_config as schedd_settings
from tests.config.reference_reader import ReferenceReader

# ---------------------------------------------------------------- conversions


@pytest.mark.parametrize(("text", "value"), [
    ("300", 300), ("  -7 ", -7), ("+12", 12), ("5*60", 300), ("(2+3)", 5), ("10.7", 10),
    ("-10.7", -10), ("true", 1), ("false", 0), ("1e3", 1000), ("7 / 2", 3), ("7.0 / 2", 3),
    ("ifThenElse(1 > 0, 4, 5)", 4), ("int(\"42\")", 42), (str(INT_HIGHEST), INT_HIGHEST),
])
def test_integers(text: str, value: int) -> None:
    assert to_int(text) == value


@pytest.mark.parametrize(("text", "why"), [
    ('"abc"', 'it evaluates to "abc"'),
    ("undefined", "it evaluates to undefined"),
    ("x + 1", "it evaluates to undefined"),
    ("1/0", "it evaluates to error"),
    ("5 *", "not a valid ClassAd expression"),
    ("{1, 2}", "it evaluates to { 1,2 }"),
    ("relTime(60)", "it evaluates to relTime"),
    ("1e30", "out of range for an integer"),
    (str(INT_HIGHEST + 1), "out of range for an integer"),
    ('real("INF")', "out of range for an integer"),
    ("time()", "no clock"),
])
def test_not_integers(text: str, why: str) -> None:
    with pytest.raises(NotConvertible, match=why.replace("(", r"\(").replace("{", r"\{")):
        to_int(text)


@pytest.mark.parametrize(("text", "value"), [
    ("2.5", 2.5), ("1e3", 1000.0), ("24*3600", 86400.0), ("7 / 2", 3.0), ("7.0 / 2", 3.5),
    ("true", 1.0), (" inf ", float("inf")), ("-0.5", -0.5),
])
def test_reals(text: str, value: float) -> None:
    assert to_float(text) == value


@pytest.mark.parametrize(("text", "value"), [
    ("true", True), ("TRUE", True), ("false", False), ("1", True), ("0", False), ("10", True),
    ("2 > 1", True), ("0.0", False), ("0.5", True), ("True && false", False), ("true  ", True),
])
def test_booleans(text: str, value: bool) -> None:
    assert to_bool(text) is value


@pytest.mark.parametrize("text", ['"yes"', "yes", "undefined", "error"])
def test_not_booleans(text: str) -> None:
    with pytest.raises(NotConvertible):
        to_bool(text)


def test_the_time_comes_from_the_clock_given() -> None:
    assert to_int("time() - 100", lambda: 1000.0) == 900
    assert to_float("time() / 2.0", lambda: 5.0) == 2.5


# ---------------------------------------------------------------- knobs


def _config(text: str, **kw: object) -> Config:
    return Config.from_text(text, source="condor_config.local", **kw)  # type: ignore[arg-type]


def test_integer_knobs_may_be_expressions() -> None:
    config = _config("MINUTE = 60\nSCHEDD_INTERVAL = 5*60\nNEGOTIATOR_INTERVAL = 2*$(MINUTE)\n"
                     "MAX_JOBS_RUNNING = (2+3)\nALIVE_INTERVAL = 10.7\nKILLING_TIMEOUT = true\n")
    assert config.get_int("SCHEDD_INTERVAL") == 300
    assert config.get_int("NEGOTIATOR_INTERVAL") == 120
    assert config.get_int("MAX_JOBS_RUNNING") == 5
    assert config.get_int("ALIVE_INTERVAL") == 10
    assert config.get_int("KILLING_TIMEOUT") == 1
    assert config.get_float("SCHEDD_INTERVAL") == 300.0


def test_a_value_that_is_not_a_number_names_the_knob_and_where_it_is() -> None:
    config = _config("A = 1\nSCHEDD_INTERVAL = \"five minutes\"\nNEGOTIATOR_INTERVAL = 5 *\n")
    with pytest.raises(ConfigValueError) as caught:
        config.get_int("SCHEDD_INTERVAL")
    assert str(caught.value) == ('"condor_config.local", line 2: SCHEDD_INTERVAL = "five minutes" '
                                 'is not a valid integer: it evaluates to "five minutes"')
    assert (caught.value.source, caught.value.line) == ("condor_config.local", 2)
    with pytest.raises(ConfigValueError, match=r'line 3: NEGOTIATOR_INTERVAL = 5 \* is not a valid integer'):
        config.get_int("NEGOTIATOR_INTERVAL")


@pytest.mark.parametrize(("text", "message"), [
    ("NEGOTIATION_CYCLE_STATS_LENGTH = 500", "NEGOTIATION_CYCLE_STATS_LENGTH = 500 is too high: it must be from 0 to 100"),
    ("COLLECTOR_PORT = -3", "COLLECTOR_PORT = -3 is too low: it must be from 0 to 65535"),
    ("KILLING_TIMEOUT = 0 - 5", "KILLING_TIMEOUT = 0 - 5 is too low: it must be at least 0"),
    ("PRIORITY_HALFLIFE = 0", "PRIORITY_HALFLIFE = 0 is too low: it must be at least 1e-05"),
    ("GROUP_QUOTA_ROUND_ROBIN_RATE = 0.5", "GROUP_QUOTA_ROUND_ROBIN_RATE = 0.5 is too low"),
])
def test_the_tables_range_is_enforced(text: str, message: str) -> None:
    config = _config(text + "\n")
    name = text.split(" ")[0]
    with pytest.raises(ConfigValueError, match=message.replace("(", r"\(")) as caught:
        config.get_typed(name)
    assert caught.value.line == 1


def test_values_inside_the_range_and_knobs_without_one_pass() -> None:
    config = _config("NEGOTIATION_CYCLE_STATS_LENGTH = 100\nCOLLECTOR_PORT = 0\nMAX_JOBS_RUNNING = -5\n")
    assert config.get_int("NEGOTIATION_CYCLE_STATS_LENGTH") == 100
    assert config.get_int("COLLECTOR_PORT") == 0
    assert config.get_int("MAX_JOBS_RUNNING") == -5


def test_the_table_default_is_used_when_the_knob_is_unset_or_empty() -> None:
    config = _config("NEGOTIATOR_INTERVAL =\n")
    assert config.get_int("NEGOTIATOR_INTERVAL") == 60
    assert config.get_int("COLLECTOR_TCP_SOCKET_BUFSIZE") == 128 * 1024  # the default is an expression


def test_knob_text_held_elsewhere_converts_the_same_way() -> None:
    assert integer_value("SCHEDD_INTERVAL", "5*60") == 300
    assert real_value("PRIORITY_HALFLIFE", "24*3600") == 86400.0
    assert boolean_value("START_LOCAL_UNIVERSE", "1 < 2") is True
    with pytest.raises(ConfigValueError, match='"schedd.conf", line 4: SCHEDD_INTERVAL = soon'):
        integer_value("SCHEDD_INTERVAL", "soon", source="schedd.conf", line=4)
    with pytest.raises(ConfigValueError, match="too high"):
        integer_value("COLLECTOR_PORT", "65536")


def test_a_configuration_without_a_clock_refuses_values_that_read_the_time() -> None:
    text = "STAMP = time() + 10\nLATER = $EVAL(STAMP)\nSTAMP_TEXT = $INT(STAMP,%d s)\n"
    with pytest.raises(ConfigValueError, match="no clock"):
        _config(text).get_int("STAMP")
    with pytest.raises(ConfigExpansionError, match=r"\$EVAL\(\) error: time\(\) \+ 10: .*no clock"):
        _config(text).get_str("LATER")
    timed = _config(text, clock=lambda: 1_000_000.0)
    assert timed.get_int("STAMP") == 1_000_010
    assert timed.get_str("LATER") == "1000010"
    assert timed.get_str("STAMP_TEXT") == "1000010 s"


# ---------------------------------------------------------------- the daemons read through config


def test_the_schedd_reads_its_intervals_through_config() -> None:
    config = _config("SCHEDD_INTERVAL = 5*60\nALIVE_INTERVAL = 2 * 150\nMAX_CLAIM_ALIVES_MISSED = 3.9\n")

    def get(name: str) -> str | None:
        return config.get_str(name, subsystem="SCHEDD")

    settings = schedd_settings(get)
    assert (settings.schedd_interval, settings.alive_interval, settings.max_claim_alives_missed) == (300, 300, 3)
    bad = schedd_settings(lambda name: '"x"' if name == "SCHEDD_INTERVAL" else None)
    assert bad.schedd_interval == 300  # reported, and the schedd runs on with the default
    assert bad.problems[0].startswith('SCHEDD_INTERVAL: SCHEDD_INTERVAL = "x" is not a valid integer')


def test_the_negotiator_reads_real_knobs_through_config() -> None:
    config = Config.from_text("PRIORITY_HALFLIFE = 24*3600\nDEFAULT_PRIO_FACTOR = 10 * 100\n",
                              subsystem="NEGOTIATOR")
    accountant = policy_from_config(config).accountant
    assert (accountant.priority_halflife, accountant.default_prio_factor) == (86400.0, 1000.0)


# ---------------------------------------------------------------- against HTCondor's binding

INT_KNOBS = {
    "NEGOTIATOR_INTERVAL": "5*60", "MAX_JOBS_RUNNING": "(2+3)", "SCHEDD_MIN_INTERVAL": "10.7",
    "ALIVE_INTERVAL": "true", "MAX_CONCURRENT_UPLOADS": "10.9", "CLAIM_WORKLIFE": "-1.5",
    "JOB_START_COUNT": "1e3", "MASTER_UPDATE_INTERVAL": "ifThenElse(false, 1, 2) * 7",
    "NEGOTIATOR_MAX_TIME_PER_CYCLE": "false", "KILLING_TIMEOUT": " 45 ",
    "MAX_SHADOW_EXCEPTIONS": "int(\"12\") + 1", "PREEN_INTERVAL": "3600 / 7",
}
REAL_KNOBS = {
    "PRIORITY_HALFLIFE": "24*3600", "DEFAULT_PRIO_FACTOR": "10.5e2", "NICE_USER_PRIO_FACTOR": "true",
    "REMOTE_PRIO_FACTOR": "7 / 2", "GROUP_QUOTA_ROUND_ROBIN_RATE": "2.5 * 2",
}
BOOL_KNOBS = {
    "ENABLE_SSH_TO_JOB": "2*3", "SHADOW_LAZY_QUEUE_UPDATE": "0.0", "NEGOTIATOR_CONSIDER_PREEMPTION": "1 > 2",
    "STARTER_ALLOW_RUNAS_OWNER": "TRUE", "USE_PID_NAMESPACES": "false || true",
}


@pytest.mark.parametrize("knobs", [INT_KNOBS, REAL_KNOBS, BOOL_KNOBS], ids=["int", "double", "bool"])
def test_typed_values_agree_with_htcondor(reference: ReferenceReader, knobs: dict[str, str]) -> None:
    text = "".join(f"{name} = {value}\n" for name, value in knobs.items())
    answers = reference.values(text, list(knobs))
    config = Config.from_text(text)
    for name in knobs:
        kind, theirs = answers[name]
        mine = config.get_typed(name)
        assert (type(mine).__name__, mine) == (kind, theirs), f"{name} = {knobs[name]}"
