"""Resource requests, Rank and the Requirements expression condor_submit generates.

``request_memory`` and ``request_disk`` accept a number with an optional unit
(K, M, G, T, optionally followed by B; case-insensitive; fractions allowed,
rounded up): memory is kept in MiB and disk in KiB, a bare number meaning
that unit. Anything that is not a number is a ClassAd expression.
``request_<name>`` for any other name becomes ``Request<name>`` unchanged.

``requirements_clauses`` builds the generated Requirements in condor_submit's
order: the user's expression in parentheses, the administrator's APPEND
clause, Arch and OpSys (each left out when the user mentions it; a container
or docker job has Arch and its runtime's attributes instead, from
``universe.requirement_clauses``), disk, memory, CPUs, then GPUs and the other
requests sorted by name without regard to case (a request with a
``Require<name>`` counts matching devices: ``countMatches(MY.RequireGPUs,
TARGET.AvailableGPUs) >= RequestGPUs``), the file-transfer clause and the
deferral clause.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from htcpool.classad import ClassAd, ExprTree
from htcpool.classad.nodes import Literal, Node

_NUMBER_UNIT = re.compile(r"(?i)^\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGTP]?)B?\s*$")
_SCALE = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}
KNOWN_REQUESTS = frozenset({"cpus", "memory", "disk", "gpus", "virtualmemory"})
#: request_<name> commands that never become a custom resource request (mistyped GPU commands)
RESERVED_REQUESTS = frozenset({"cpu", "gpu", "gpus_memory", "gpu_memory"})


def scaled_request(text: str, unit: str) -> int | None:
    """``text`` (a number with optional unit) in ``unit`` ('M' or 'K'), or None if not a number.

    A number too large for a 64-bit integer raises ``ValueError`` saying so."""
    match = _NUMBER_UNIT.match(text)
    if not match:
        return None
    number, suffix = float(match.group(1)), (match.group(2) or unit).upper()
    power = _SCALE[suffix] - _SCALE[unit]
    scaled = number * 1024**power if power >= 0 else number / 1024 ** (-power)
    if not scaled < 2**63:  # a 400-digit request: HTCondor's integers have 64 bits
        raise ValueError(f"'{text if len(text) <= 40 else text[:39] + '…'}' is too large a number")
    return math.ceil(scaled)


def literal_number(node: Node) -> float | None:
    if isinstance(node, Literal) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    return None


def machine_references(expr: Node) -> set[str]:
    """Lower-cased names an expression may take from the machine (TARGET or unscoped)."""
    refs = ClassAd().externalRefs(ExprTree._wrap(expr))
    out = set()
    for ref in refs:
        low = ref.lower()
        if low.startswith("target."):
            out.add(low[7:])
        elif "." not in low:
            out.add(low)
    return out


@dataclass
class RequirementInputs:
    """What the generated Requirements depend on."""

    universe: int
    user_expr: Node | None
    append: str
    arch: str
    opsys: str
    request_disk: Node | None
    request_memory: Node | None
    request_cpus: Node | None
    #: container and docker jobs: the clauses replacing Arch and OpSys; None for other jobs
    topping_clauses: list[str] | None = None
    custom_requests: dict[str, Node] = field(default_factory=dict)
    requires: set[str] = field(default_factory=set)
    should_transfer: str = "IF_NEEDED"
    deferral: bool = False


def requirements_clauses(r: RequirementInputs) -> tuple[list[str], list[str]]:
    """(clauses, warnings) of the Requirements condor_submit generates."""
    from htcpool.classad.unparse import unparse_old

    clauses: list[str] = []
    warnings: list[str] = []
    refs: set[str] = set()
    if r.user_expr is not None:
        clauses.append(f"({unparse_old(r.user_expr)})")
        refs = machine_references(r.user_expr)
        for attr, knob in (("memory", "request_memory"), ("disk", "request_disk")):
            if attr in refs:
                warnings.append(
                    f"your Requirements expression refers to TARGET.{attr.capitalize()}. This is "
                    f"obsolete. Set {knob} and condor_submit will modify the Requirements "
                    "expression as needed.")
    if r.append:
        clauses.append(f"({r.append})")
    vanilla = r.universe == 5
    if r.topping_clauses is not None:
        clauses.extend(r.topping_clauses)
    else:
        if "arch" not in refs:
            clauses.append(f'(TARGET.Arch == "{r.arch}")')
        if not any(x.startswith("opsys") for x in refs):
            clauses.append(f'(TARGET.OpSys == "{r.opsys}")')
    if r.request_disk is not None and not _at_most(r.request_disk, 0):
        if vanilla:
            clauses.append('(versionGE(split(TARGET.CondorVersion)[1],"25.12.0") || '
                           "(TARGET.Disk >= RequestDisk))")
        else:
            clauses.append("(TARGET.Disk >= RequestDisk)")
    elif r.request_disk is None:
        clauses.append("(TARGET.Disk >= DiskUsage)")
    if r.request_memory is not None and not _at_most(r.request_memory, 1):
        clauses.append("(TARGET.Memory >= RequestMemory)")
    if r.request_cpus is not None and not _at_most(r.request_cpus, 1) and "cpus" not in refs:
        clauses.append("(TARGET.Cpus >= RequestCpus)")
    for tag in sorted(r.custom_requests, key=str.lower):
        node = r.custom_requests[tag]
        if tag.lower() in refs:
            continue
        if isinstance(node, Literal) and isinstance(node.value, str):
            clauses.append(f"regexp(Request{tag},TARGET.{tag})")
        elif not _at_most(node, 0):
            if tag.lower() in r.requires:
                clauses.append(f"(countMatches(MY.Require{tag},TARGET.Available{tag}) >= Request{tag})")
            else:
                clauses.append(f"(TARGET.{tag} >= Request{tag})")
    if vanilla:
        if r.should_transfer == "NO":
            clauses.append("(TARGET.FileSystemDomain == MY.FileSystemDomain)")
        elif r.should_transfer == "YES":
            clauses.append("(TARGET.HasFileTransfer)")
        else:
            clauses.append("((TARGET.FileSystemDomain == MY.FileSystemDomain) || "
                           "(TARGET.HasFileTransfer))")
    if r.deferral:
        if r.universe != 12:
            clauses.append("TARGET.HasJobDeferral")
        clauses.append("(((time() + ScheddInterval) >= (DeferralTime - DeferralPrepTime)) && "
                       "(time() < (DeferralTime + DeferralWindow)))")
    return clauses, warnings


def _at_most(node: Node, bound: float) -> bool:
    value = literal_number(node)
    return value is not None and value <= bound
