"""The startd's side of job confinement: what its configuration asks, and each job's cgroup.

``enforcement_from_config`` reads the knobs once, when the startd starts, and finds out
whether the machine can enforce them (``cgroups.detect``: cgroup v2 or the v1 memory
hierarchy, a writable ``BASE_CGROUP``, root). When it cannot, ``Enforcement.version`` is None
and ``reason`` says why: jobs then run with process-tree sampling only, the usage policy
templates still work, and the startd logs the reason once.

* ``BASE_CGROUP`` (default ``htcondor``; empty turns cgroups off) - the parent of every job's
  cgroup;
* ``CGROUP_MEMORY_LIMIT_POLICY`` - ``hard`` (default), ``soft``, ``custom`` or ``none``
  (``cgroups.memory_limits``); ``custom`` takes ``CGROUP_HARD_MEMORY_LIMIT_EXPR`` and
  ``CGROUP_LOW_MEMORY_LIMIT_EXPR``, expressions in MB evaluated with the slot ad as MY and the
  job as TARGET;
* ``DISABLE_SWAP_FOR_JOB`` (default true), ``CGROUP_IGNORE_CACHE_MEMORY`` (default true);
* ``CGROUP_POLLING_INTERVAL`` (5 s) - how often the starter reads the job;
  ``STARTER_INITIAL_UPDATE_INTERVAL`` (8 s) and ``STARTER_UPDATE_INTERVAL`` (300 s, the
  HTCondor manual's default: the parameter table here does not list it) - when the readings
  go to the schedd and to the startd's policy.

``cgroup_spec`` gives one job's ``CgroupSpec``: its cgroup is named after the path of its
scratch directory and its slot (unique per activation, and between startds), its memory limits come from the slot's
``Memory`` (the machine's ``TotalMemory`` for the soft policy's hard limit) and its CPU
weight is ``Cpus`` × 100, as HTCondor's ``cpu.shares``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree, as_number, fixed_clock
from htcpool.runtime.cgroups import (
    DEFAULT_ROOT,
    CgroupSpec,
    CgroupVersion,
    Detected,
    MemoryPolicy,
    detect,
    memory_limits,
)

#: the HTCondor manual's STARTER_UPDATE_INTERVAL default (seconds)
STARTER_UPDATE_INTERVAL = 300.0


class ConfigReader(Protocol):
    """What is read of the configuration (``htcpool.config.Config`` has it)."""

    def get_str(self, name: str, subsystem: str | None = None, slot: int | None = None,
                local_name: str | None = None, *, default: str | None = None) -> str | None: ...

    def get_int(self, name: str, subsystem: str | None = None, slot: int | None = None,
                local_name: str | None = None, *, default: int | None = None) -> int | None: ...

    def get_bool(self, name: str, subsystem: str | None = None, slot: int | None = None,
                 local_name: str | None = None, *, default: bool | None = None) -> bool | None: ...


@dataclass(frozen=True, slots=True)
class Enforcement:
    """The startd's confinement settings and what the machine allows."""

    version: CgroupVersion | None = None
    reason: str = "cgroups are not used"
    root: str = DEFAULT_ROOT
    base: str = "htcondor"
    policy: MemoryPolicy = MemoryPolicy.HARD
    hard_expr: str = ""
    low_expr: str = ""
    disable_swap: bool = True
    ignore_cache: bool = True
    polling_interval: float = 5.0
    update_interval: float = STARTER_UPDATE_INTERVAL
    initial_update_interval: float = 8.0
    problems: tuple[str, ...] = field(default=())  # bad knobs, each naming the knob

    def describe(self) -> str:
        """One line for StartdLog."""
        if self.version is None:
            return (f"no kernel enforcement of job limits: {self.reason}; jobs are measured by "
                    "sampling their process trees, and the policy templates still apply")
        return (f"jobs run in their own cgroups (cgroup {self.version.value}) under "
                f"{self.base}, CGROUP_MEMORY_LIMIT_POLICY = {self.policy.value}")


def enforcement_from_config(config: ConfigReader, root: str = DEFAULT_ROOT,
                            detector: Any = detect) -> Enforcement:
    """The knobs of the module docstring, read once; ``detector`` finds the cgroup layout."""
    problems: list[str] = []
    text = (config.get_str("CGROUP_MEMORY_LIMIT_POLICY") or "hard").strip().lower()
    try:
        policy = MemoryPolicy(text)
    except ValueError:
        problems.append(f"CGROUP_MEMORY_LIMIT_POLICY = {text} is not hard, soft, custom or none; "
                        "using hard")
        policy = MemoryPolicy.HARD
    base = (config.get_str("BASE_CGROUP") or "").strip().strip("/")
    found: Detected = detector(root, base) if base else Detected(None, "BASE_CGROUP is empty")
    polling = config.get_int("CGROUP_POLLING_INTERVAL", default=5) or 5
    initial_s, update_s = update_intervals(config)
    return Enforcement(
        version=found.version, reason=found.reason, root=root, base=base or "htcondor", policy=policy,
        hard_expr=config.get_str("CGROUP_HARD_MEMORY_LIMIT_EXPR") or "",
        low_expr=config.get_str("CGROUP_LOW_MEMORY_LIMIT_EXPR") or "",
        disable_swap=config.get_bool("DISABLE_SWAP_FOR_JOB", default=True) is not False,
        ignore_cache=config.get_bool("CGROUP_IGNORE_CACHE_MEMORY", default=True) is not False,
        polling_interval=float(max(polling, 1)), update_interval=update_s, initial_update_interval=initial_s,
        problems=tuple(problems))


def update_intervals(config: ConfigReader) -> tuple[float, float]:
    """(first, every): seconds from a job's start to its starter's first report to the schedd
    (STARTER_INITIAL_UPDATE_INTERVAL, at most the second figure), and between the later ones
    (STARTER_UPDATE_INTERVAL); HTCondor's defaults 8 and 300 where unset or not positive."""
    update = config.get_int("STARTER_UPDATE_INTERVAL", default=int(STARTER_UPDATE_INTERVAL))
    initial = config.get_int("STARTER_INITIAL_UPDATE_INTERVAL", default=8)
    update_s = float(update) if update and update > 0 else STARTER_UPDATE_INTERVAL
    return (float(min(initial, update_s)) if initial and initial > 0 else update_s), update_s


def cgroup_spec(enforcement: Enforcement, job: ClassAd, slot_ad: ClassAd | None, scratch_dir: str,
                slot_name: str, now: float) -> tuple[CgroupSpec | None, list[str]]:
    """The cgroup for one job, or None without enforcement; and problems (each naming its knob)."""
    if enforcement.version is None or slot_ad is None:
        return None, []
    problems: list[str] = []
    ctx = EvalContext(clock=fixed_clock(now))
    slot_mb = _number(slot_ad, "Memory", ctx) or 0
    machine_mb = _number(slot_ad, "TotalMemory", ctx) or slot_mb
    cpus = _number(slot_ad, "Cpus", ctx) or 1
    hard = low = None
    if enforcement.policy is MemoryPolicy.CUSTOM:
        hard = _knob(enforcement.hard_expr, "CGROUP_HARD_MEMORY_LIMIT_EXPR", slot_ad, job, ctx, problems)
        low = _knob(enforcement.low_expr, "CGROUP_LOW_MEMORY_LIMIT_EXPR", slot_ad, job, ctx, problems)
    limits = memory_limits(enforcement.policy, int(slot_mb), int(machine_mb), hard, low)
    # HTCondor names the cgroup after the execute directory and the slot; the whole scratch path
    # keeps two startds (or two pools) on one machine apart
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{scratch_dir.strip('/')}_{slot_name}")[-200:].lstrip("._-")
    return CgroupSpec(enforcement.root, enforcement.version, enforcement.base, name, limits,
                      cpu_weight=max(1, int(round(cpus * 100))), disable_swap=enforcement.disable_swap,
                      ignore_cache=enforcement.ignore_cache), problems


def _number(ad: ClassAd, attr: str, ctx: EvalContext) -> float | None:
    try:
        value = as_number(ad.evaluate(attr, ctx))
    except ClassAdError:
        return None
    return None if value is None or isinstance(value, bool) else float(value)


def _knob(text: str, knob: str, slot_ad: ClassAd, job: ClassAd, ctx: EvalContext,
          problems: list[str]) -> int | None:
    """An expression knob's value in MB; None (no limit) when unset, with a problem when bad."""
    if not text.strip():
        return None
    try:
        value = as_number(ExprTree(text).evaluate(slot_ad, job, ctx))
    except ClassAdError as e:
        problems.append(f"{knob} = {text} cannot be evaluated ({e}); no such limit is set")
        return None
    if value is None or isinstance(value, bool) or value <= 0:
        problems.append(f"{knob} = {text} is not a positive number of MB; no such limit is set")
        return None
    return int(value)


__all__ = ["STARTER_UPDATE_INTERVAL", "Enforcement", "cgroup_spec", "enforcement_from_config", "update_intervals"]
