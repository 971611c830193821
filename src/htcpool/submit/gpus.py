"""GPU submit commands: what a job asks of the GPUs it gets.

``request_gpus`` sets ``RequestGPUs`` (``JOB_DEFAULT_REQUESTGPUS`` when the file
has no such command); the rest only count when the job requests GPUs, as the
HTCondor manual's "Jobs That Require GPUs" (in "Submitting a Job") and
condor_submit's man page describe:

* ``require_gpus`` → ``RequireGPUs``, an expression each assigned GPU's
  properties must satisfy (``Capability``, ``GlobalMemoryMb``, ``DriverVersion``,
  ``MaxSupportedVersion`` of the machine's GPU property ads);
* ``gpus_minimum_capability`` / ``gpus_maximum_capability`` → ``GPUsMinCapability`` /
  ``GPUsMaxCapability``;
* ``gpus_minimum_memory`` → ``GPUsMinMemory`` in MiB (a number with an optional
  unit; a bare number is MiB and ``SUBMIT_REQUEST_MISSING_UNITS`` may warn or refuse);
* ``gpus_minimum_runtime`` → ``GPUsMinRuntime``, a CUDA version ``x`` or ``x.y``
  stored as ``x*1000 + y*10`` (``12.1`` → 12010; a number above 1000 is kept).

``complete_require_gpus`` then folds the limits into ``RequireGPUs``
(``Capability >= GPUsMinCapability``, ``Capability <= GPUsMaxCapability``,
``GlobalMemoryMb >= GPUsMinMemory``, ``MaxSupportedVersion >= GPUsMinRuntime``),
leaving out a limit on a property the user's ``require_gpus`` already tests, so
the generated Requirements' ``countMatches(MY.RequireGPUs, TARGET.AvailableGPUs) >=
RequestGPUs`` clause (``resources.requirements_clauses``) counts only GPUs that fit.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd, ExprTree
from htcpool.classad.nodes import BinaryOp, Node, Ternary
from htcpool.classad.unparse import unparse_old
from htcpool.submit.resources import scaled_request

if TYPE_CHECKING:
    from htcpool.submit.jobad import JobBuilder

#: the GPU property attributes a ``require_gpus`` expression may test, with sample values
GPU_PROPERTIES = {"Capability": 7.5, "GlobalMemoryMb": 11012, "DriverVersion": 12.1,
                  "MaxSupportedVersion": 12010}
#: (attribute, property it limits, comparison) in the order condor_submit adds them
LIMITS = (("GPUsMinCapability", "Capability", ">="), ("GPUsMaxCapability", "Capability", "<="),
          ("GPUsMinMemory", "GlobalMemoryMb", ">="), ("GPUsMinRuntime", "MaxSupportedVersion", ">="))
_VERSION = re.compile(r"^\s*(-?\d+)(?:\.(-?\d+))?\s*$")
#: operators that bind more loosely than && and so need parentheses before "&& …" is appended
_LOOSER_THAN_AND = frozenset({"||"})


def missing_units(b: JobBuilder, key: str, text: str, unit_name: str, units: str) -> None:
    """SUBMIT_REQUEST_MISSING_UNITS: warn about (or, set to ``error``, refuse) a bare number."""
    policy = b.settings.submit_request_missing_units.strip()
    if not policy or not re.fullmatch(r"\s*[\d.]+\s*", text):
        return
    if policy.lower() == "error":
        raise b.fail(f"{key}={text} defaults to {unit_name}, but must contain a units suffix "
                     f"(i.e {units})", key)
    b.warn(f"{key}={text} defaults to {unit_name}, but should contain a units suffix (i.e {units})")


def runtime_version(text: str) -> int | None:
    """``gpus_minimum_runtime`` as condor_submit stores it, or None when it is an expression."""
    match = _VERSION.match(text)
    if not match:
        return None
    major = int(match.group(1))
    minor = int(match.group(2)) if match.group(2) is not None else -1
    if not -1 <= minor < 100:
        return None
    if minor == -1 and major > 1000:
        return major
    return major * 1000 + (minor * 10 if minor > 0 else 0)


def gpu_commands(b: JobBuilder) -> None:
    """The GPU commands other than ``request_gpus``; they count only when the job requests GPUs."""
    if b.hash.raw("request_gpu") is not None:
        b.warn("request_gpu is not a valid submit keyword, did you mean request_gpus?")
    mistaken_memory = b.hash.raw("request_gpu_memory", "request_gpus_memory")
    if "RequestGPUs" not in b.ad:
        return
    require = b.get("require_gpus", "RequireGPUs")
    if require:
        b.set_expr("RequireGPUs", require, "require_gpus")
    for key, attr in (("gpus_minimum_capability", "GPUsMinCapability"),
                      ("gpus_maximum_capability", "GPUsMaxCapability")):
        value = b.get(key, attr)
        if value:
            b.set_expr(attr, value, key)
    memory = b.get("gpus_minimum_memory", "GPUsMinMemory")
    if memory:
        try:
            scaled = scaled_request(memory, "M")
        except ValueError as e:
            raise b.fail(f"gpus_minimum_memory: {e}", "gpus_minimum_memory", "GPUsMinMemory") from None
        if scaled is None:
            b.set_expr("GPUsMinMemory", memory, "gpus_minimum_memory")
        else:
            missing_units(b, "gpus_minimum_memory", memory, "megabytes", "K, M, or B")
            b.ad["GPUsMinMemory"] = scaled
    elif mistaken_memory is not None:
        b.warn("request_gpu_memory is not a submit command, did you mean gpus_minimum_memory?")
    runtime = b.get("gpus_minimum_runtime", "GPUsMinRuntime")
    if runtime:
        version = runtime_version(runtime)
        if version is None:
            b.set_expr("GPUsMinRuntime", runtime, "gpus_minimum_runtime")
        else:
            b.ad["GPUsMinRuntime"] = version


def _property_refs(node: Node) -> set[str]:
    """GPU properties (lower-cased) the expression reads from the GPU's own ad."""
    props = ClassAd(dict(GPU_PROPERTIES))
    return {r.lower() for r in props.internalRefs(ExprTree._wrap(node))}


def complete_require_gpus(b: JobBuilder) -> None:
    """Fold the GPU limits into ``RequireGPUs`` (after forced attributes, before Requirements)."""
    ad = b.ad
    if "RequestGPUs" not in ad:
        return
    require = ad._exprs.get("requiregpus")
    tested = _property_refs(require) if require is not None else set()
    clauses = [f"{prop} {op} {attr}" for attr, prop, op in LIMITS
               if attr.lower() in ad._exprs and prop.lower() not in tested]
    if not clauses:
        return
    text = " && ".join(clauses)
    if require is not None:
        user = unparse_old(require)
        if isinstance(require, Ternary) or (isinstance(require, BinaryOp) and require.op in _LOOSER_THAN_AND):
            user = f"({user})"
        text = f"{user} && {text}"
    b.set_expr("RequireGPUs", text, "require_gpus")

