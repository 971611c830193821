"""One look at the pool's machine ads: what is draining, what is whole, what to cancel, what to drain.

HTCondor's defrag daemon asks the collector four questions each poll (HTCondor's manual,
"Defrag Daemon Configuration Options"; its ``Defrag::poll``); ``survey`` answers all of
them in one pass over the startd ads. Only partitionable slots that are not offline
count (``PartitionableSlot && Offline =!= true``), and a *machine* is a startd: the part
of the slot's ``Name`` after its first ``@``. A drain is *this daemon's* when the slot's
``DrainReason`` is undefined or is ``"Defrag <DEFRAG_NAME>"``.

* draining: machines with a slot ``Draining`` by this daemon (``MachinesDraining``);
* whole: machines with a slot matching DEFRAG_WHOLE_MACHINE_EXPR whose drain, if any, is
  this daemon's (``WholeMachines``);
* to cancel: draining machines (this daemon's) with a slot matching
  DEFRAG_CANCEL_REQUIREMENTS, one entry per machine;
* candidates: slots not draining that match DEFRAG_REQUIREMENTS, each with its DEFRAG_RANK
  (UNDEFINED counts as 0, as HTCondor's sort does), highest first, equal ranks in an order
  drawn from the injected random generator (HTCondor shuffles, then sorts stably).

An expression that evaluates to ERROR on a slot is counted against its knob
(``Survey.errors``) and the slot is not acted on for that knob: no drain when
DEFRAG_REQUIREMENTS, DEFRAG_RANK or DEFRAG_WHOLE_MACHINE_EXPR fail, no cancel when
DEFRAG_CANCEL_REQUIREMENTS fails. Nothing here acts; ``core`` decides with the result.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from htcpool.classad import ClassAd, EvalContext
from htcpool.classad.values import as_number
from htcpool.defrag.evaluate import ERROR, Memo, Reader
from htcpool.defrag.settings import DefragSettings, Knob

#: what the survey reads of every ad (lower-case names)
SURVEYED = ("partitionableslot", "offline", "name", "drainreason", "draining")


def machine_of(slot_name: str) -> str:
    """The startd a slot belongs to: its name after the first ``@`` (the whole name without one)."""
    _, at, rest = slot_name.partition("@")
    return rest if at else slot_name


class Slot(NamedTuple):
    """A partitionable slot of the survey: its startd, its ad and (for candidates) its rank."""

    machine: str
    name: str
    ad: ClassAd
    rank: float = 0.0


@dataclass
class Survey:
    draining: set[str] = field(default_factory=set)
    whole: set[str] = field(default_factory=set)
    to_cancel: list[Slot] = field(default_factory=list)
    candidates: list[Slot] = field(default_factory=list)
    #: knob -> number of slots on which its expression evaluated to ERROR
    errors: Counter[Knob] = field(default_factory=Counter)
    #: machines with a slot on which a drain-deciding expression failed: never drained this poll
    failed: set[str] = field(default_factory=set)


def _truth(value: Any) -> bool | None:
    """True or False as a constraint reads a value; None when it is an ERROR."""
    if value is ERROR:
        return None
    return value is True or (type(value) in (int, float) and value != 0)


def _rank(memo: Memo | None, ad: ClassAd, known: tuple[Any, ...] | None) -> float | None:
    """DEFRAG_RANK of the slot (0 when there is none or it is UNDEFINED); None on ERROR."""
    if memo is None:
        return 0.0
    value = memo.given(ad, known)
    if value is ERROR:
        return None
    number = as_number(value)
    return 0.0 if number is None else float(number)


def survey(ads: Iterable[ClassAd], settings: DefragSettings, ctx: EvalContext, rng: random.Random) -> Survey:
    """Classify ``ads`` (see the module docstring)."""
    s = Survey()
    mine_reason = settings.drain_reason
    memos = [None if e.tree is None else Memo(e.tree, ctx)
             for e in (settings.whole_machine_expr, settings.cancel_requirements, settings.requirements, settings.rank)]
    whole_memo, cancel_memo, requirements, rank_memo = memos
    reader = Reader(SURVEYED, memos)
    fixed = len(SURVEYED)
    cancels: dict[str, Slot] = {}
    first = True
    for ad in ads:
        if first:
            reader.adopt_names(ad)
            first = False
        values, literal = reader.read(ad, ctx)
        partitionable, offline, name, reason, draining_value = values[:fixed]
        if partitionable is not True or offline is True or not isinstance(name, str):
            continue
        machine = machine_of(name)
        mine = reason is None or reason == mine_reason
        draining = draining_value is True
        if whole_memo is not None and mine:
            value = whole_memo.given(ad, reader.known(values, literal, 0))
            whole = value is True or (value is not False and _truth(value))
            if whole is None:
                s.errors[Knob.WHOLE_MACHINE_EXPR] += 1
                s.failed.add(machine)
            elif whole:
                s.whole.add(machine)
        if draining:
            if mine:
                s.draining.add(machine)
                if cancel_memo is not None and machine not in cancels:
                    cancel = _truth(cancel_memo.given(ad, reader.known(values, literal, 1)))
                    if cancel is None:
                        s.errors[Knob.CANCEL_REQUIREMENTS] += 1
                    elif cancel:
                        cancels[machine] = Slot(machine, name, ad)
            continue
        if machine in s.whole:
            continue  # never drained (HTCondor's walk skips it)
        if requirements is not None:
            value = requirements.given(ad, reader.known(values, literal, 2))
            wanted = value is True or (value is not False and _truth(value))
            if wanted is None:
                s.errors[Knob.REQUIREMENTS] += 1
                s.failed.add(machine)
                continue
            if not wanted:
                continue
        rank = _rank(rank_memo, ad, reader.known(values, literal, 3))
        if rank is None:
            s.errors[Knob.RANK] += 1
            s.failed.add(machine)
            continue
        s.candidates.append(Slot(machine, name, ad, rank))
    s.to_cancel = list(cancels.values())
    rng.shuffle(s.to_cancel)
    draw = rng.random
    s.candidates.sort(key=lambda slot: (slot.rank, draw()), reverse=True)  # equal ranks: a random order
    return s
