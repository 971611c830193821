"""Generated configuration files, read by htcpool and by HTCondor: every value must agree.

The generator mixes assignments (plain, self-referencing, with ``$(X:default)``),
``\\`` continuations, ``@=`` blocks, comments, ``if``/``elif``/``else`` blocks on
``defined``, booleans, numbers and ``version``, prefixed names (``TOOL.X`` applies to the
reference, a tool), and ``use`` metaknobs with arguments. References only point at
names earlier in a fixed order (or at the name itself), so no file loops forever.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from htcpool.config import (
    Config,
    ConfigInputError,
    ConfigRecursionError,
    ConfigValueError,
    param_info,
    probe_machine,
)
from tests.config.reference_reader import ReferenceReader

NAMES = ["MINUTE", "Alpha", "beta", "GAMMA", "START", "PREEMPT", "delta", "NUM_CPUS",
         "MAX_JOBS_RUNNING", "StartIdleTime"]
PREFIXED = ["TOOL.Alpha", "STARTD.beta", "TOOL.GAMMA", "NEGOTIATOR.delta", "TOOL.START"]
METAKNOB_NAMES = ["WANT_SUSPEND", "SUSPEND", "CONTINUE", "KILL", "NUM_SLOTS_TYPE_1",
                  "SLOT_TYPE_1", "SLOT_TYPE_1_PARTITIONABLE", "NUM_SLOTS_TYPE_2", "SLOT_TYPE_2",
                  "DAEMON_LIST", "MAX_JOB_RUNTIME", "MaxJobRetirementTime", "CLAIM_WORKLIFE",
                  "STARTD_LATCH_EXPRS", "IS_OWNER", "CpuBusy", "WANT_HOLD", "WANT_HOLD_REASON",
                  "PolicyExprFragments", "HighLoad", "ContinueIdleTime"]
METAKNOBS = [
    "POLICY : Desktop", "POLICY : Always_Run_Jobs", "FEATURE : PartitionableSlot",
    "FEATURE : PartitionableSlot(2, 50%)", "FEATURE : StaticSlots(2, 3)",
    "POLICY : Limit_Job_Runtimes(3600)", "ROLE : Execute, Submit", "ROLE : CentralManager",
    "POLICY : Preempt_If_Runtime_Exceeds", "POLICY : UWCS_Desktop",
    "POLICY : Hold_If_Memory_Exceeded", "POLICY : Want_Hold_If(Alpha, 7, too long)",
    "FEATURE : GPUs", "POLICY : Desktop_Idle(8, 17)",
]
WORDS = ["x", "1", "0", "true", "False", "60", "a b", "(x > 1)", "\"s\"", "$$(Memory)",
         "$(DOLLAR)", "15 * $(MINUTE)", "ifThenElse(x, 1, 2)"]


@st.composite
def values(draw: Any, index: int) -> str:
    """A value for the name at ``index`` of NAMES: literals and references to earlier names."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        choice = draw(st.integers(0, 4))
        if choice <= 1 or index == 0:
            parts.append(draw(st.sampled_from(WORDS)))
        elif choice == 2:
            parts.append(f"$({draw(st.sampled_from(NAMES[: index + 1]))})")
        elif choice == 3:
            target = draw(st.sampled_from(NAMES[: index + 1]))
            parts.append(f"$({target}:{draw(st.sampled_from(['d', '7', 'a b']))})")
        else:
            parts.append(f"$({NAMES[index].lower()})")  # self reference
    return " ".join(parts)


@st.composite
def assignment(draw: Any) -> list[str]:
    index = draw(st.integers(0, len(NAMES) - 1))
    name = NAMES[index]
    if draw(st.integers(0, 5)) == 0:
        prefixed = [p for p in PREFIXED if p.split(".")[1] == name]
        if prefixed:
            name = prefixed[0]
    value = draw(values(index))
    form = draw(st.integers(0, 5))
    if form == 0:
        head, _, tail = value.partition(" ")
        return [f"{name} = {head} \\", f"   {tail}"]
    if form == 1:
        return [f"{name} @=end", *value.split(" "), "@end"]
    if form == 2:
        return [f"  {name}={value}  "]
    return [f"{name} = {value}"]


@st.composite
def statement(draw: Any, depth: int = 0) -> list[str]:
    kind = draw(st.integers(0, 9))
    if kind <= 5:
        return draw(assignment())
    if kind == 6:
        return [f"use {draw(st.sampled_from(METAKNOBS))}"]
    if kind == 7:
        return [f"# comment {draw(st.sampled_from(WORDS))}"]
    if depth >= 2:
        return draw(assignment())
    condition = draw(st.sampled_from(
        ["defined Alpha", "! defined beta", "true", "0", "version >= 8.1", "version < 9.0",
         "defined $(Alpha)", "$(GAMMA:1)", "defined use POLICY:Desktop", "yes"]))
    lines = [f"if {condition}"]
    for _ in range(draw(st.integers(0, 2))):
        lines += draw(statement(depth + 1))
    if draw(st.booleans()):
        lines.append("elif defined delta")
        lines += draw(statement(depth + 1))
    if draw(st.booleans()):
        lines.append("else")
        lines += draw(statement(depth + 1))
    lines.append("endif")
    return lines


@st.composite
def config_texts(draw: Any) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 12))):
        lines += draw(statement())
    return "\n".join(lines) + "\n"


SKIP = object()
QUERIED = NAMES + PREFIXED + METAKNOB_NAMES


def _mine(config: Config, name: str) -> Any:
    if param_info(name) is None and config.macros.get(name) is None:
        # The Python binding answers KeyError for a name outside the parameter table
        # unless that exact name is defined, even when TOOL.<name> is (the prefix is
        # honoured only inside $(...) and for table knobs).
        return None
    info = param_info(name)
    if info is not None and info.type != "string" and config.get_str(name) is None and config.raw(name):
        # A typed knob whose raw value expands to nothing: daemons use the table
        # default (htcpool does too); the binding answers 0/False instead.
        return SKIP
    try:
        return config.get_typed(name)
    except ConfigValueError:
        return ConfigValueError


def check_against_reference(reference: ReferenceReader, text: str) -> None:
    answers = reference.values(text, QUERIED)
    if "__hang__" in answers:
        # HTCondor loops forever on a macro that refers back to itself; htcpool must
        # report the loop instead.
        config = Config.from_text(text, facts=probe_machine(), environ=dict(os.environ))
        raised = 0
        for name in QUERIED:
            try:
                config.get_str(name)
            except ConfigRecursionError:
                raised += 1
        assert raised, f"HTCondor loops on this file but htcpool found no cycle:\n{text}"
        return
    if "__error__" in answers:
        with pytest.raises(ConfigInputError):
            Config.from_text(text, facts=probe_machine(), environ=dict(os.environ))
        return
    config = Config.from_text(text, facts=probe_machine(), environ=dict(os.environ))
    for name in QUERIED:
        kind, theirs = answers[name]
        if kind == "missing":
            theirs = None
        mine = _mine(config, name)
        if mine is SKIP:
            continue
        if mine is ConfigValueError:
            # htcpool refuses a value that is not of the knob's type (as HTCondor's
            # daemons do); the Python binding quietly falls back to the default.
            continue
        assert mine == theirs, f"{name}: htcpool {mine!r} != HTCondor {theirs!r}\n---\n{text}"


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(config_texts())
def test_generated_configurations_agree(reference: ReferenceReader, text: str) -> None:
    check_against_reference(reference, text)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(config_texts())
def test_generated_configurations_agree_long(reference: ReferenceReader, text: str) -> None:
    check_against_reference(reference, text)
