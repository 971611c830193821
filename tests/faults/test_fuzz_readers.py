"""Arbitrary text at the submit and configuration readers, arbitrary ClassAds at evaluation.

Each reader may refuse its input only with its documented error (``SubmitError`` for a submit
description, ``ConfigError`` for a configuration) and must finish within a few seconds; ClassAd
parsing may refuse only with ``ClassAdError``, and evaluating every attribute of a parsed ad
(attributes that refer to one another, cycles, every built-in with wrong arguments) must end
within its work budget (``CLASSAD_EVALUATION_BUDGET``) in bounded time.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from htcpool.classad import ClassAdError, EvalContext, parseOne
from htcpool.classad.context import DEFAULT_EVALUATION_BUDGET, set_evaluation_limits
from htcpool.config import Config, ConfigError
from htcpool.submit import MemoryFileSystem, SubmitError, SubmitHost, submit_description
from tests.classad.strategies import ads, all_functions

WITHIN = 5.0  # seconds any one input may take

SUBMIT_WORDS = ["executable = /bin/true", "arguments = \"a 'b' c\"", "queue", "queue 3",
                "queue x in (a, b)", "queue from seq 1 3 |", "queue matching *.txt", "request_memory = 1G",
                "request_cpus = $(Process) + 1", "universe = vanilla", "universe = nosuch",
                "+Custom = \"x\"", "My.Attr = [a = 1]", "environment = \"A=1 B=2\"",
                "max_materialize = 2", "if $(X)", "else", "endif", "include : other.sub",
                "$(", "$(Cluster", "requirements = ((", "on_exit_hold = x =", "x = $RANDOM_INTEGER(1,0)",
                "notification = sometimes", "transfer_input_files = a, , b", "\\", "[", "\x00"]
CONFIG_WORDS = ["A = 1", "B = $(A) $(B)", "use POLICY : Desktop", "use FEATURE : nosuch", "if defined A",
                "elif version > 8", "else", "endif", "include : /nonexistent", "include command : true",
                "@=end", "@end", "X @=end", "$(", "A = $INT(B)", "A = $EVAL(1/0)", "NUM_CPUS = -1",
                "SLOT_TYPE_1 = cpus=200%", "START = ((", "[section]", "\\", "\x00", "A.B.C = 1"]


def _text(words: list[str]) -> st.SearchStrategy[str]:
    line = st.one_of(st.sampled_from(words), st.text(max_size=40))
    return st.lists(line, max_size=12).map("\n".join)


def _timed(call: object, *args: object, **kw: object) -> float:
    started = time.monotonic()
    call(*args, **kw)  # type: ignore[operator]
    return time.monotonic() - started


def fuzz_submit(examples: int) -> None:
    host = SubmitHost(user="alice", cwd="/home/alice", now=1_800_000_000, environ={},
                      file_system_domain="fuzz.test")
    fs = MemoryFileSystem({"/home/alice/other.sub": "queue 2\n", "/home/alice/a.txt": ""})

    @settings(max_examples=examples, deadline=None, database=None, derandomize=examples < 1000,
              suppress_health_check=[HealthCheck.too_slow])
    @given(text=_text(SUBMIT_WORDS))
    def one(text: str) -> None:
        started = time.monotonic()
        try:
            submit_description(text, file="fuzz.sub", host=host, fs=fs)
        except SubmitError:
            pass  # the documented refusal
        took = time.monotonic() - started
        assert took < WITHIN, f"{took:.1f} s for {text!r}"

    one()


def fuzz_config(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None, derandomize=examples < 1000,
              suppress_health_check=[HealthCheck.too_slow])
    @given(text=_text(CONFIG_WORDS))
    def one(text: str) -> None:
        started = time.monotonic()
        try:
            config = Config.from_text(text, environ={})
            for definition in config.definitions()[:20]:  # every value expands, or is refused
                config.get_str(definition.name)
        except ConfigError:
            pass  # the documented refusal
        took = time.monotonic() - started
        assert took < WITHIN, f"{took:.1f} s for {text!r}"

    one()


def fuzz_classads(examples: int) -> None:
    set_evaluation_limits(budget=DEFAULT_EVALUATION_BUDGET)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=examples < 1000,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(text=ads(all_functions(), max_attrs=6) | st.text(max_size=60))
    def one(text: str) -> None:
        started = time.monotonic()
        try:
            ad = parseOne(text)
        except ClassAdError:
            return  # the documented refusal
        context = EvalContext()
        for name in list(ad):
            try:
                ad.evaluate(name, context)
            except ClassAdError:
                pass  # an evaluation may fail; it must end
        took = time.monotonic() - started
        assert took < WITHIN, f"{took:.1f} s for {text!r}"

    one()


def test_submit_descriptions_are_read_or_refused_with_a_submit_error() -> None:
    fuzz_submit(400)


def test_configurations_are_read_or_refused_with_a_config_error() -> None:
    fuzz_config(400)


def test_classad_evaluation_ends_within_its_budget() -> None:
    fuzz_classads(400)


@pytest.mark.slow
@pytest.mark.parametrize("reader", [fuzz_submit, fuzz_config, fuzz_classads],
                         ids=["submit", "config", "classads"])
def test_the_readers_take_many_more_inputs(reader: object) -> None:
    reader(3000)  # type: ignore[operator]


def test_a_self_referring_ad_is_stopped_by_the_budget() -> None:
    """The budget is what bounds the work: a chain of references longer than it gives ERROR."""
    chain = "; ".join(f"a{i} = a{i + 1} + a{i + 1}" for i in range(40))
    ad = parseOne(f"[ {chain}; a40 = 1 ]")
    assert _timed(ad.evaluate, "a0", EvalContext()) < WITHIN
