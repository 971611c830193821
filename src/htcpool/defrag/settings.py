"""The defrag daemon's knobs as one frozen record, read from the configuration.

``settings_from_config(config, host)`` reads every ``DEFRAG_*`` knob with HTCondor's
default from the parameter table (docs/defrag.md lists them; HTCondor's manual, "Defrag
Daemon Configuration Options"), parses the expressions once and returns the record
together with a list of ``Problem`` s. HTCondor stops the daemon on a bad value; htcpool
keeps it running and disables only what the bad knob governs:

* an expression that does not parse (DEFRAG_REQUIREMENTS, DEFRAG_RANK,
  DEFRAG_WHOLE_MACHINE_EXPR, DEFRAG_DRAINING_START_EXPR) stops new drains;
  a bad DEFRAG_CANCEL_REQUIREMENTS stops cancelling;
* a DEFRAG_DRAINING_SCHEDULE other than graceful, quick or fast stops new drains;
* a number that does not convert keeps HTCondor's default for that knob.

Each problem names the knob, and the driver writes it to DefragLog. ``DEFRAG_SCHEDULE``,
the name the manual uses, is read when ``DEFRAG_DRAINING_SCHEDULE`` (the name HTCondor's
code reads) is not set. The name is DEFRAG_NAME, else the daemon's LOCALNAME, made a
valid daemon name the way HTCondor does: a name without ``@`` gets ``@<host>``, no name
at all is the host.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from htcpool.classad import ClassAdError, ExprTree
from htcpool.protocol.startd import DrainSpeed


class Knob(StrEnum):
    """The defrag daemon's configuration knobs (HTCondor's names)."""

    INTERVAL = "DEFRAG_INTERVAL"
    MACHINES_PER_HOUR = "DEFRAG_DRAINING_MACHINES_PER_HOUR"
    MAX_CONCURRENT_DRAINING = "DEFRAG_MAX_CONCURRENT_DRAINING"
    MAX_WHOLE_MACHINES = "DEFRAG_MAX_WHOLE_MACHINES"
    SCHEDULE = "DEFRAG_DRAINING_SCHEDULE"
    START_EXPR = "DEFRAG_DRAINING_START_EXPR"
    REQUIREMENTS = "DEFRAG_REQUIREMENTS"
    WHOLE_MACHINE_EXPR = "DEFRAG_WHOLE_MACHINE_EXPR"
    CANCEL_REQUIREMENTS = "DEFRAG_CANCEL_REQUIREMENTS"
    RANK = "DEFRAG_RANK"
    NAME = "DEFRAG_NAME"
    UPDATE_INTERVAL = "DEFRAG_UPDATE_INTERVAL"
    STATE_FILE = "DEFRAG_STATE_FILE"


#: the knobs whose bad value stops new drains, and the one whose bad value stops cancels
DRAIN_KNOBS = frozenset({Knob.REQUIREMENTS, Knob.RANK, Knob.WHOLE_MACHINE_EXPR, Knob.START_EXPR, Knob.SCHEDULE})
CANCEL_KNOBS = frozenset({Knob.CANCEL_REQUIREMENTS})

DEFAULT_WHOLE_MACHINE_EXPR = "Cpus == TotalSlotCpus"
DEFAULT_RANK = "-ExpectedMachineGracefulDrainingBadput"


@dataclass(frozen=True, slots=True)
class Problem:
    """A knob whose value cannot be used, and why."""

    knob: Knob
    message: str

    def __str__(self) -> str:
        return f"{self.knob.value}: {self.message}"


@dataclass(frozen=True, slots=True)
class Expression:
    """A configured expression: its text and its parse (None when empty or unparsable)."""

    text: str
    tree: ExprTree | None


def parse_knob(knob: Knob, text: str | None, problems: list[Problem]) -> Expression:
    """Parse ``text`` as the expression of ``knob``; a parse error is recorded, not raised."""
    text = (text or "").strip()
    if not text:
        return Expression("", None)
    try:
        return Expression(text, ExprTree(text))
    except ClassAdError as e:
        problems.append(Problem(knob, f"cannot parse {text!r}: {e}"))
        return Expression(text, None)


@dataclass(frozen=True)
class DefragSettings:
    """Every knob of the defrag daemon; the defaults are HTCondor's (``param_info.in``)."""

    name: str = "localhost"
    interval: float = 600.0
    machines_per_hour: float = 0.0
    max_concurrent_draining: int = -1
    max_whole_machines: int = -1
    schedule: DrainSpeed = DrainSpeed.GRACEFUL
    start_expr: Expression = Expression("FALSE", ExprTree("FALSE"))
    requirements: Expression = Expression("", None)
    whole_machine_expr: Expression = Expression(DEFAULT_WHOLE_MACHINE_EXPR, ExprTree(DEFAULT_WHOLE_MACHINE_EXPR))
    cancel_requirements: Expression = Expression(DEFAULT_WHOLE_MACHINE_EXPR,
                                                 ExprTree(DEFAULT_WHOLE_MACHINE_EXPR))
    rank: Expression = Expression(DEFAULT_RANK, ExprTree(DEFAULT_RANK))
    update_interval: float = 300.0
    state_file: str = ""
    #: knobs whose values could not be used (see the module docstring)
    problems: tuple[Problem, ...] = field(default=())

    @property
    def drain_reason(self) -> str:
        """The DrainReason this daemon sends and recognises as its own."""
        return f"Defrag {self.name}"

    @property
    def drains_blocked_by(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.knob in DRAIN_KNOBS)

    @property
    def cancels_blocked_by(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.knob in CANCEL_KNOBS)


class ConfigSource(Protocol):
    """What the settings builder needs of a configuration (``htcpool.config.Config`` has it)."""

    def get_str(self, name: str, subsystem: str | None = None, slot: int | None = None,
                local_name: str | None = None, *, default: str | None = None) -> str | None: ...

    def get_float(self, name: str, subsystem: str | None = None, slot: int | None = None,
                  local_name: str | None = None, *, default: float | None = None) -> float | None: ...

    def expand(self, text: str, subsystem: str | None = None, local_name: str | None = None) -> str: ...

    def lookup(self, name: str) -> Any: ...


def _schedule_text(config: ConfigSource) -> str:
    """DEFRAG_DRAINING_SCHEDULE when set in a file, else the manual's DEFRAG_SCHEDULE, else the default."""
    found = config.lookup(Knob.SCHEDULE.value)
    own = config.get_str(Knob.SCHEDULE.value)
    if found is not None and getattr(found, "definition", None) is not None and own:
        return own
    return config.get_str("DEFRAG_SCHEDULE") or own or "graceful"


def valid_daemon_name(name: str, host: str) -> str:
    """HTCondor's ``build_valid_daemon_name``: the host when empty, ``name@host`` without an ``@``."""
    name = name.strip()
    if not name:
        return host
    return name if "@" in name else f"{name}@{host}"


def _number(config: ConfigSource, knob: Knob, default: float, problems: list[Problem]) -> float:
    try:
        value = config.get_float(knob.value)
    except Exception as e:  # a value that does not convert: the configuration's own error names where
        problems.append(Problem(knob, f"{e}; using {default:g}"))
        return default
    return default if value is None else value


def settings_from_config(config: ConfigSource, host: str = "localhost") -> DefragSettings:
    """Read every DEFRAG_* knob (HTCondor's manual, "Defrag Daemon Configuration Options")."""
    problems: list[Problem] = []
    interval = _number(config, Knob.INTERVAL, 600.0, problems)
    per_hour = _number(config, Knob.MACHINES_PER_HOUR, 0.0, problems)
    max_draining = int(_number(config, Knob.MAX_CONCURRENT_DRAINING, -1, problems))
    max_whole = int(_number(config, Knob.MAX_WHOLE_MACHINES, -1, problems))
    update = _number(config, Knob.UPDATE_INTERVAL, 300.0, problems)
    schedule_text = _schedule_text(config)
    try:
        schedule = DrainSpeed(schedule_text.strip().lower())
    except ValueError:
        problems.append(Problem(Knob.SCHEDULE, f"{schedule_text!r} is not graceful, quick or fast"))
        schedule = DrainSpeed.GRACEFUL
    whole_text = config.get_str(Knob.WHOLE_MACHINE_EXPR.value)
    if not whole_text:
        problems.append(Problem(Knob.WHOLE_MACHINE_EXPR, "must be set"))
    name = config.get_str(Knob.NAME.value) or config.get_str("LOCALNAME") or ""
    state_file = config.get_str(Knob.STATE_FILE.value) or config.expand("$(LOCK)/$(LOCALNAME:defrag)_state")
    return DefragSettings(
        name=valid_daemon_name(name, host),
        interval=interval,
        machines_per_hour=max(0.0, per_hour),
        max_concurrent_draining=max(-1, max_draining),
        max_whole_machines=max(-1, max_whole),
        schedule=schedule,
        start_expr=parse_knob(Knob.START_EXPR, config.get_str(Knob.START_EXPR.value), problems),
        requirements=parse_knob(Knob.REQUIREMENTS, config.get_str(Knob.REQUIREMENTS.value), problems),
        whole_machine_expr=parse_knob(Knob.WHOLE_MACHINE_EXPR, whole_text, problems),
        cancel_requirements=parse_knob(Knob.CANCEL_REQUIREMENTS,
                                       config.get_str(Knob.CANCEL_REQUIREMENTS.value), problems),
        rank=parse_knob(Knob.RANK, config.get_str(Knob.RANK.value), problems),
        update_interval=update if update > 0 else 300.0,
        state_file=state_file,
        problems=tuple(problems),
    )
