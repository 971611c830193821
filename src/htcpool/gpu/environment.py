"""The environment a job gets from the devices its slot holds.

For every resource named in the slot ad's ``MachineResources`` (admin manual,
"ENVIRONMENT_FOR_Assigned<name>"), the job gets ``_CONDOR_Assigned<name>`` with the
slot's ``Assigned<name>`` and, when ``ENVIRONMENT_FOR_Assigned<name>`` is set, the
variables it names. Each item of that knob is either a bare variable name (which
gets the ids as they are; for ``CUDA_VISIBLE_DEVICES`` and ``GPU_DEVICE_ORDINAL``
only their digits and commas) or ``NAME=/pattern/replacement/``: the first match of
the pattern in each id is replaced (``$1``… name groups) and the ids are joined with
commas. A slot that has the resource but no ids assigned gives every such variable
``ENVIRONMENT_VALUE_FOR_UnAssigned<name>`` instead (``10000`` for GPUs: no device).

For GPUs, HTCondor 25 then sets ``NVIDIA_VISIBLE_DEVICES`` and ``CUDA_VISIBLE_DEVICES``
to the full NVIDIA uuids of the slot's ``AvailableGPUs`` (``GPU-<DeviceUuid>``, or the
``MIG-…`` uuid of a MIG instance), joined by commas, since CUDA takes a list only in
that form; without such devices ``NVIDIA_VISIBLE_DEVICES`` is ``none``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from htcpool.classad import ClassAd, ClassAdError, EvalContext, ExprTree

_DIGITS_ONLY = ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")
_FIRST_IS_MIG = ExprTree('substr(AvailableGPUs[0].Id, 0, 4) == "MIG-"')
_JOIN_MIG = ExprTree('join(",", evalInEachContext(DeviceUuid, AvailableGPUs))')
_JOIN_GPU = ExprTree('join(",", evalInEachContext(strcat("GPU-", DeviceUuid), AvailableGPUs))')


def _digits(ids: str) -> str:
    return "".join(c for c in ids if c.isdigit() or c == ",")


def _substitute(resid: str, pattern: re.Pattern[str], replacement: str) -> str:
    m = pattern.search(resid)
    if m is None:
        return resid
    out = re.sub(r"\$(\d)", lambda g: (m.group(int(g.group(1))) or "") if int(g.group(1)) <= (
        pattern.groups) else "", replacement)
    return resid[:m.start()] + out + resid[m.end():]


def apply_environment_knob(knob: str, assigned: str) -> tuple[dict[str, str], list[str]]:
    """The variables one ``ENVIRONMENT_FOR_Assigned<name>`` value sets for ``assigned`` ids,
    and the problems met (an item without its closing mark, a pattern that does not compile)."""
    env: dict[str, str] = {}
    problems: list[str] = []
    rest = knob
    while rest.strip():
        rest = rest.lstrip()
        head = re.match(r"[^\s,=]+", rest)
        if head is None:
            rest = rest[1:]
            continue
        name = head.group(0)
        after = rest[head.end():].lstrip()
        if not after.startswith("="):
            env[name] = _digits(assigned) if name in _DIGITS_ONLY else assigned
            rest = after.lstrip(",")
            continue
        spec = after[1:].lstrip()
        mark = spec[:1]
        parts = spec[1:].split(mark, 2) if mark else []
        if len(parts) < 3:
            problems.append(f"{name}: the replacement has no closing {mark or '/'}")
            break
        pattern_text, replacement, rest = parts
        try:
            pattern = re.compile(pattern_text)
        except re.error as e:
            problems.append(f"{name}: the pattern {pattern_text!r} does not compile ({e})")
            break
        if name == "CUDA_VISIBLE_DEVICES" and not pattern_text:
            env[name] = _digits(assigned)
        else:
            ids = [w for w in re.split(r"[,\s]+", assigned) if w]
            env[name] = ",".join(_substitute(i, pattern, replacement) for i in ids)
        rest = rest[1:] if rest.startswith(",") else rest
    return env, problems


def _nvidia_devices(slot: ClassAd, context: EvalContext) -> str | None:
    try:
        mig = _FIRST_IS_MIG.evaluate(slot, None, context) is True
        value = (_JOIN_MIG if mig else _JOIN_GPU).evaluate(slot, None, context)
    except ClassAdError:
        return None
    return value if isinstance(value, str) and value else None


def assigned_environment(slot: ClassAd, knobs: Mapping[str, str], unassigned: Mapping[str, str],
                         set_nvidia: bool = True) -> tuple[dict[str, str], list[str]]:
    """The job's variables from its slot ad; ``knobs`` and ``unassigned`` map a resource name
    to its ``ENVIRONMENT_FOR_Assigned<name>`` and ``ENVIRONMENT_VALUE_FOR_UnAssigned<name>``."""
    env: dict[str, str] = {}
    problems: list[str] = []
    resources = slot.get("MachineResources")
    tags = resources.split() if isinstance(resources, str) else []
    for tag in tags:
        attr = f"Assigned{tag}"
        value = slot.get(attr)
        knob = knobs.get(tag, "")
        if not isinstance(value, str):
            if tag not in slot or not knob:
                continue
            value = unassigned.get(tag, "")
        if knob:
            set_by_knob, bad = apply_environment_knob(knob, value)
            env.update(set_by_knob)
            problems += [f"ENVIRONMENT_FOR_{attr}: {p}" for p in bad]
        env[f"_CONDOR_{attr}"] = value
    if set_nvidia and any(t.lower() == "gpus" for t in tags):
        uuids = _nvidia_devices(slot, EvalContext())
        if uuids:
            env["NVIDIA_VISIBLE_DEVICES"] = env["CUDA_VISIBLE_DEVICES"] = uuids
        else:
            env["NVIDIA_VISIBLE_DEVICES"] = "none"
    return env, problems


__all__ = ["apply_environment_knob", "assigned_environment"]
