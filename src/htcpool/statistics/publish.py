"""``STATISTICS_TO_PUBLISH``: which statistics a daemon puts in its ads, and how many.

The knob (the admin manual, configuration: ``STATISTICS_TO_PUBLISH``) is a list, separated by
commas or spaces, of ``COLLECTION:OPTIONS`` items. A collection is ``DC`` (or ``DAEMONCORE``),
``SCHEDD`` (or ``SCHEDULER``), ``COLLECTOR``, ``NEGOTIATOR``, ``STARTD``, ``MASTER`` or
``TRANSFER``; ``ALL`` and ``DEFAULT`` name every collection. The options, read left to right so
that the last one wins, are a verbosity level (``0`` none, ``1`` the default set, ``2`` verbose,
``3`` everything), ``R``/``!R`` (the ``Recent…`` windowed values; on by default), ``D``/``!D``
(debugging attributes; off), ``Z``/``!Z`` (attributes whose value is 0; ``!Z`` leaves them out)
and ``L``/``!L`` (the lifetime values, those without ``Recent``; on). An item without options
gives the collection its default. Rules, as HTCondor applies them:

* The knob unset, or ``DEFAULT``: each collection's own default. Blank or ``NONE``: nothing.
* Otherwise a collection the list does not name (directly, or through ``ALL``/``DEFAULT``)
  publishes nothing; each item that names it starts again from the collection's default and
  applies its options.
* ``condor_status -statistics WHICH`` uses the same syntax for one query.

``parse_publish`` never fails: an option it does not know is reported in ``problems`` (the
daemon logs them, naming the knob) and skipped, as HTCondor does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum


class Collection(Enum):
    """A statistics collection, by the name the knob gives it."""

    DC = "DC"
    SCHEDD = "SCHEDD"
    COLLECTOR = "COLLECTOR"
    NEGOTIATOR = "NEGOTIATOR"
    STARTD = "STARTD"
    MASTER = "MASTER"
    TRANSFER = "TRANSFER"


_ALIASES = {"DAEMONCORE": Collection.DC, "SCHEDULER": Collection.SCHEDD}
_EVERY = ("ALL", "DEFAULT")


@dataclass(frozen=True, slots=True)
class Publish:
    """How much of one collection to publish."""

    level: int = 1
    recent: bool = True
    debug: bool = False
    zeros: bool = True
    lifetime: bool = True

    @property
    def on(self) -> bool:
        return self.level > 0


NOTHING = Publish(level=0, recent=False)
#: each collection's default: DaemonCore's publishes only its duty cycle (level 0), the others level 1
DEFAULTS = {collection: Publish(level=0) if collection is Collection.DC else Publish() for collection in Collection}


def _collection(name: str) -> Collection | None:
    upper = name.upper()
    return _ALIASES.get(upper) or next((c for c in Collection if c.value == upper), None)


def _apply(options: str, start: Publish, item: str, problems: list[str]) -> Publish:
    if options.upper() == "NONE":
        return NOTHING
    flags, bang = start, False
    for ch in options:
        upper = ch.upper()
        if ch in "0123":
            flags = replace(flags, level=int(ch))
        elif ch == "!":
            bang = True
            continue
        elif upper == "R":
            flags = replace(flags, recent=not bang)
        elif upper == "D":
            flags = replace(flags, debug=not bang)
        elif upper == "Z":
            flags = replace(flags, zeros=not bang)
        elif upper == "L":
            flags = replace(flags, lifetime=not bang)
        else:
            problems.append(f"option {ch!r} in {item!r} is not one of 0-3, R, D, Z, L (each may follow '!')")
        bang = False
    return flags


def parse_publish(text: str | None, collection: Collection,
                  problems: list[str] | None = None) -> Publish:
    """How much of ``collection`` the knob's ``text`` asks for (None: the knob is unset)."""
    seen = problems if problems is not None else []
    default = DEFAULTS[collection]
    if text is None or text.strip().upper() == "DEFAULT":
        return default
    if not text.strip() or text.strip().upper() == "NONE":
        return NOTHING
    flags = NOTHING
    for item in re.split(r"[\s,]+", text.strip()):
        name, colon, options = item.partition(":")
        if name.upper() not in _EVERY and _collection(name) is None:
            seen.append(f"{name!r} in {item!r} is not a statistics collection (DC, SCHEDD, COLLECTOR, "
                        "NEGOTIATOR, STARTD, MASTER, TRANSFER, ALL or DEFAULT)")
            continue
        if name.upper() in _EVERY or _collection(name) is collection:
            flags = _apply(options, default, item, seen) if colon else default
    return flags


__all__ = ["DEFAULTS", "NOTHING", "Collection", "Publish", "parse_publish"]
