"""Which slots a periodic poll may leave alone: those whose policy cannot decide anything new.

A poll (``Startd._poll``, every ``POLLING_INTERVAL`` while a job runs) republishes every slot's
moving attributes and evaluates its policy. For most slots of a busy pool that work gives the
same answer every time: the slot is Claimed/Busy, its ``PREEMPT``, ``WANT_SUSPEND`` … read nothing
that moves, and nothing has happened to it. Such a slot is *settled* and the poll skips it, which
changes no decision:

* Only a poll's own evaluation is skipped. Every timer other than the poll (a lease, a vacate
  deadline …) and every message unsettles every slot of the machine, and so does a transition
  in a poll, so a slot is evaluated again at the first poll after anything happened to the
  machine. Two kinds of message do less. The schedd's keep-alive (``Alive``,
  ``handlers.KEEPS_SETTLED``) unsettles nothing: it moves a claim's lease, which no policy and no
  ad reads, and comes every ``ALIVE_INTERVAL`` for every claim (on a busy machine, most of its
  messages). A message about one claim (a match, a claim request, an activation, a deactivation,
  a release, a starter's exit or final update: ``handlers.UNSETTLES_ITS_SLOTS``) unsettles the
  slots it marked changed and their p-slot: nothing else of the machine that a settled slot
  reads moves with it (``tests/startd/test_unsettle.py`` compares with every slot unsettled).
* A slot settles only after an evaluation that asked for nothing, in a state whose decisions
  depend on the policy knobs alone (``POLICY_READS``: Claimed/Busy, Unclaimed/Idle, Owner/Idle),
  outside a drain or a shutdown and with no preempting claim pending; Retiring, Suspended,
  Claimed/Idle (retirement, ``CLAIM_WORKLIFE`` and the drain's activation delay are times that
  come) and every other state are evaluated at every poll, as before.
* The knobs those states read, with ``CpuBusy`` and the ``STARTD_LATCH_EXPRS`` (whose values are
  tracked at every poll), are followed through the slot ad's own attributes (``classad.refs``):
  if any of them reads an attribute that moves without an event (``MOVING_ATTRS``: the clock,
  idle times, load, the ``Total…Time`` counters …; and any ``TotalTime…``, ``…Value`` or
  ``…Time`` of a latch), calls a function that reads the clock or draws a random number
  (``time()``, ``CurrentTime`` …: ``MOVING_FUNCTIONS``), or an attribute the slot ad does not
  define (it may be the job's, but also the clock's ``CurrentTime``), the slot never settles.
  The default policy (``START = true``, ``PREEMPT = false`` …) reads nothing that moves; a
  desktop policy reading ``KeyboardIdle`` keeps every slot polled.
* ``STARTD_SLOT_ATTRS`` cross-advertising keeps every slot polled (one slot's ad then carries
  the others' moving values).

A settled slot's ad is not republished by the poll; it is republished whenever it is sent to
the collector (``Startd._flush``), so the collector sees the same ads as before
(docs/performance.md, "Simulator", has the measurements; HTCondor's manual, "Policy
Configuration for Execution Points", the knobs).
The analysis of one policy in one state is remembered per slot-ad shape (the names of the ad
and its expression objects), so it runs once per slot type and state, not once per poll.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.classad.nodes import FnCall, Literal, Node
from htcpool.classad.refs import Scope, references
from htcpool.startd.states import Activity, State

if TYPE_CHECKING:
    from htcpool.startd.machine import Startd
    from htcpool.startd.slot import Slot

A, S = Activity, State

#: the knobs ``evaluation.suggest`` (and ``Startd.eval_slot``) can evaluate for a slot in each
#: state that may settle; states not listed are evaluated at every poll
POLICY_READS: dict[tuple[State, Activity], tuple[str, ...]] = {
    (S.CLAIMED, A.BUSY): ("WANT_SUSPEND", "PREEMPT", "SUSPEND", "WANT_VACATE",
                          "WANT_SUSPEND_VANILLA", "PREEMPT_VANILLA", "SUSPEND_VANILLA", "WANT_VACATE_VANILLA"),
    (S.UNCLAIMED, A.IDLE): ("IsOwner", "START_BACKFILL", "RunBenchmarks"),
    (S.OWNER, A.IDLE): ("IsOwner",),
}

#: slot attributes whose values move between polls without any event (lower case)
MOVING_ATTRS = frozenset(name.lower() for name in (
    "MyCurrentTime", "CurrentTime", "KeyboardIdle", "ConsoleIdle", "ClockMin", "ClockDay",
    "LoadAvg", "CondorLoadAvg", "TotalLoadAvg", "TotalCondorLoadAvg", "CpuIsBusy", "CpuBusyTime",
    "TotalClaimRunTime", "TotalJobRunTime", "TotalJobSuspendTime", "RetirementTimeRemaining",
    "ExpectedMachineGracefulDrainingCompletion", "ExpectedMachineQuickDrainingCompletion",
    "ExpectedMachineGracefulDrainingBadput", "ExpectedMachineQuickDrainingBadput",
    "TotalMachineDrainingBadput", "TotalMachineDrainingUnclaimedTime",
))
#: ClassAd functions whose value changes with the clock or from call to call (lower case)
MOVING_FUNCTIONS = frozenset({"time", "currenttime", "daytime", "formattime", "timezoneoffset", "random"})

_cache: dict[tuple[object, ...], tuple[object, bool]] = {}
_CACHE_SIZE = 4096


def settles(startd: Startd, slot: Slot) -> bool:
    """Whether ``slot``, just evaluated with nothing to do, may be skipped by the next polls
    until something happens to the machine (see the module docstring)."""
    knobs = POLICY_READS.get((slot.state, slot.activity))
    if knobs is None or startd.draining is not None or startd.shutdown is not None \
            or slot.preempting is not None or startd.settings.startd_slot_attrs:
        return False
    exprs = slot.ad._exprs
    shape = (tuple(exprs), tuple([None if type(n) is Literal else id(n) for n in exprs.values()]))
    key = (slot.state, slot.activity, startd.settings.latch_exprs, shape)
    hit = _cache.get(key)
    if hit is not None:
        return hit[1]
    names = (*knobs, "CpuBusy", *(n for n in startd.settings.latch_exprs if n != "NumDynamicSlots"))
    roots = [exprs[n.lower()] for n in names if n.lower() in exprs]
    latches = {f"{n.lower()}{suffix}" for n in startd.settings.latch_exprs for suffix in ("value", "time")}
    answer = _still(exprs, roots, latches)
    if len(_cache) >= _CACHE_SIZE:
        _cache.clear()
    # the entry keeps the ad's expression nodes alive, so the ids in its key are not reused
    _cache[key] = (tuple(n for n in exprs.values() if type(n) is not Literal), answer)
    return answer


def _still(exprs: dict[str, Node], roots: list[Node], latches: set[str]) -> bool:
    """Whether the expressions ``roots`` of an ad with the table ``exprs`` read nothing that
    moves, following the ad's own attributes."""
    stack = list(roots)
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if _calls_moving(node):
            return False
        for ref in references(node):
            key = ref.key
            if ref.scope is Scope.SELECTED or key in MOVING_ATTRS or key in latches \
                    or key.startswith("totaltime"):
                return False
            if ref.scope is Scope.TARGET:
                continue  # the job's attributes change only through messages
            target = exprs.get(key)
            if target is None:
                if ref.scope is Scope.UNSCOPED and key in ("my", "target"):
                    continue
                return False  # not the slot's: the job's, or something only the clock knows
            if type(target) is not Literal:
                stack.append(target)
    return True


def _calls_moving(node: Node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is FnCall and n.name.lower() in MOVING_FUNCTIONS:
            return True
        if isinstance(n, Node):  # a ClassAd placed in a tree as a value has no children to walk
            stack.extend(n.children())
    return False
