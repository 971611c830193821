"""The collector's ad store: ads by type and name, their lifetimes, and queries over them.

Rules of this module (HTCondor's ``CollectorEngine`` and ``CollectorStats``):

* Ads are filed in one table per type, the type being ``MyType`` compared without case. Within
  a table the key is ``Name``; ``Submitter`` ads are keyed by ``Name`` and ``ScheddName``, since
  one user submits through several schedds. ``AdKey`` is ``(type, name, schedd name)``, the
  type lower-cased and the schedd name empty outside Submitter ads. An ad lacking ``MyType`` or
  ``Name`` is refused (``CollectorUpdateError``), as HTCondor ignores an ad it cannot key.
* ``update(ad, now, private)`` stores a copy of the ad, replacing the ad under the same key, and
  stamps ``LastHeardFrom = int(now)`` (always: the collector's clock, not the sender's, decides
  an ad's age). ``UpdateSequenceNumber`` is the sending daemon's own counter and is left alone.
  With daemon statistics on (HTCondor's ``COLLECTOR_DAEMON_STATS``, default on), an ad carrying
  ``UpdateSequenceNumber`` and ``DaemonStartTime`` also gets ``UpdatesTotal`` (updates received
  for this key), ``UpdatesSequenced`` (updates whose fate is known: the received ones after the
  first, plus the ones found missing) and ``UpdatesLost`` (gaps in the sequence while
  ``DaemonStartTime`` stays the same). HTCondor counts a detected loss as an extra update
  received and keeps a daemon's counts after its ad has gone; here the counts are exactly the
  documented ones and live as long as the ad.
* A private ad (the startd's claim ids) is kept beside the public one under the same key, with
  ``MyType``, ``Name`` and ``MyAddress`` copied from the public ad; an update without one keeps
  the private ad already there. It leaves the store with its public ad, and only a query with
  ``include_private`` sees it.
* An ad expires when ``int(now) − LastHeardFrom > lifetime``, the lifetime being the ad's own
  ``ClassAdLifetime`` when that is a number, else the store's default (``CLASSAD_LIFETIME``,
  900 s). ``next_deadline()`` is the first whole second at which ``expire(now)`` drops
  something, so a driver that sleeps until then never wakes for nothing.
* Absent ads (HTCondor's ``ABSENT_REQUIREMENTS``, the admin manual's "Absent ClassAds"): given an
  ``AbsentPolicy``, a Machine ad that expires and meets its requirements is kept instead of
  dropped, marked ``Absent = true`` with ``LastHeardFrom`` and ``MyCurrentTime`` set to the
  time it went absent and ``ClassAdLifetime`` set to the policy's lifetime
  (``ABSENT_EXPIRE_ADS_AFTER``, 30 days; 0 keeps it for ever); its private ad goes. When that
  lifetime is over it is dropped; an update under its key replaces it. While a policy is set, a
  query whose constraint does not mention ``Absent`` does not see absent ads (so the negotiator
  never matches a machine that has gone), as HTCondor's collector filters them. Ads invalidated
  by their daemon are removed, never kept absent (``EXPIRE_INVALIDATED_ADS`` is not offered).
  ``absent_version`` grows whenever the set of absent ads changes (one goes absent, is
  replaced, invalidated or forgotten), so the driver knows when to rewrite its persistent ad
  log (``COLLECTOR_PERSISTENT_AD_LOG``, ``absentlog``); ``absent_ads()`` lists them and
  ``restore_absent(ad, now)`` puts one read back from that log in place, keeping its
  ``LastHeardFrom`` and ``ClassAdLifetime``.
* ``invalidate`` removes ads of one type (or ``Any``) by name, by constraint, or both.
* ``query`` returns copies in a stable order: by type, then ``Name``, then ``ScheddName``; with
  ``shared``, one read-only snapshot per version of each ad instead (the simulator's negotiator
  knows an unchanged ad by it). The
  constraint, projection and private merge are described in ``query``.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, EvalContext, as_number, fixed_clock
from htcpool.classad.context import request_pool
from htcpool.classad.nodes import Literal
from htcpool.collector.errors import CollectorUpdateError, CollectorUsageError
from htcpool.collector.query import (
    Constraint,
    compile_constraint,
    project,
    projection_keys,
    with_private,
)

#: HTCondor's default ``CLASSAD_LIFETIME``, in seconds
DEFAULT_CLASSAD_LIFETIME = 900
#: the pseudo-type of queries over every table
ANY_TYPE = "any"

AdKey = tuple[str, str, str]  # (lower-cased MyType, Name, ScheddName or "")
#: HTCondor's default ``ABSENT_EXPIRE_ADS_AFTER``: 30 days
DEFAULT_ABSENT_LIFETIME = 60 * 60 * 24 * 30
_FOREVER = 2**31 - 1


@dataclass(frozen=True, slots=True)
class AbsentPolicy:
    """Which expiring Machine ads are kept as absent, and for how long (0: for ever)."""

    requirements: Constraint
    lifetime: int = DEFAULT_ABSENT_LIFETIME


@dataclass(slots=True)
class _Entry:
    ad: ClassAd
    private: ClassAd | None
    deadline: int  # the first whole second at which the ad counts as expired
    serial: int  # which heap entry is current
    updates_total: int = 0
    updates_sequenced: int = 0
    updates_lost: int = 0
    #: the read-only snapshot ``query(shared=True)`` hands out while the ad is unchanged
    snapshot: tuple[bool, ClassAd] | None = None  # (with the private ad laid over it, the ad)


@dataclass(slots=True)
class _Listing:
    """One type's answer to a query for every snapshot, kept in the order of its sorted keys and
    mended as ads change: a negotiator asks for the whole pool every cycle, and only a few of its
    ads change in between."""

    private: bool  # the private ads laid over the public ones
    ads: list[ClassAd | None]  # parallel to the type's sorted keys (``AdStore._order``)
    dirty: set[AdKey]  # keys whose snapshot is to be taken again (None in ``ads`` until then)


def _value(ad: ClassAd, attr: str, now: float) -> Any:
    """An attribute's value, an expression evaluated with the clock at ``now``; None when it
    cannot be evaluated. A literal (the usual case) is read without making a context."""
    node = ad._exprs.get(attr.lower())
    if node is None:
        return None
    if type(node) is Literal:
        return node.value
    try:
        return ad._evaluate_node(node, None, EvalContext(clock=fixed_clock(now)))
    except ClassAdError:
        return None


def _text(ad: ClassAd, attr: str, now: float) -> str | None:
    value = _value(ad, attr, now)
    return value if type(value) is str else None


def _integer(ad: ClassAd, attr: str, now: float) -> int | None:
    """An attribute's value as a whole number (a real truncated); None when it is none."""
    value = as_number(_value(ad, attr, now))
    return int(value) if value is not None and math.isfinite(value) else None


def ad_key(ad: ClassAd, now: float) -> AdKey:
    """The key ``ad`` is filed under at ``now``; ``CollectorUpdateError`` when it lacks MyType or Name."""
    my_type, name = _text(ad, "MyType", now), _text(ad, "Name", now)
    if not my_type or name is None:
        missing = "MyType" if not my_type else "Name"
        raise CollectorUpdateError(f"cannot store an ad without a {missing} string")
    kind = my_type.lower()
    schedd = (_text(ad, "ScheddName", now) or "") if kind == "submitter" else ""
    return (kind, name, schedd)


class AdStore:
    """Every ad the collector holds. All times are passed in; nothing here reads a clock."""

    def __init__(
        self, default_lifetime: float = DEFAULT_CLASSAD_LIFETIME, *, daemon_stats: bool = True,
        absent: AbsentPolicy | None = None,
    ) -> None:
        self.default_lifetime = default_lifetime
        self.daemon_stats = daemon_stats
        self.absent = absent
        self._tables: dict[str, dict[AdKey, _Entry]] = {}
        #: sorted keys per table, made on the first read and kept sorted as keys come and go
        self._order: dict[str, list[AdKey]] = {}
        #: per type, the kept answer of a query for every snapshot (``_Listing``)
        self._listings: dict[str, _Listing] = {}
        self._heap: list[tuple[int, int, AdKey]] = []
        self._serial = 0
        self._count = 0
        self._now = 0.0  # the latest time given to any call, for invalidate's clock
        self.absent_version = 0
        self.lost_total = 0  # updates found missing, over every key (the collector's UpdatesLost)

    # ------------------------------------------------------------------ updates
    def update(self, ad: ClassAd, now: float, private: ClassAd | None = None) -> AdKey:
        """Store ``ad`` (and its private part) under its key; returns the key."""
        key = ad_key(ad, now)
        self._now = max(self._now, now)
        stored = ad.copy()
        heard = int(now)
        stored["LastHeardFrom"] = heard
        table = self._tables.setdefault(key[0], {})
        old = table.get(key)
        lifetime = _integer(stored, "ClassAdLifetime", now)
        if lifetime is None:
            lifetime = math.floor(self.default_lifetime)
        self._serial += 1
        entry = _Entry(stored, old.private if old else None, heard + lifetime + 1, self._serial)
        if private is not None:
            entry.private = private.copy()
            for attr in ("MyType", "Name", "MyAddress"):
                if attr in stored:
                    entry.private.insert_node(attr, stored._exprs[attr.lower()])
        if self.daemon_stats:
            self._count_update(entry, old, now)
        if old is None:
            self._count += 1
            self._ordered_add(key)
        else:
            self._changed(key)
            if old.ad.get("Absent") is True:
                self.absent_version += 1
        table[key] = entry
        heapq.heappush(self._heap, (entry.deadline, entry.serial, key))
        if len(self._heap) > 2 * self._count + 64:
            self._compact()
        return key

    def _count_update(self, entry: _Entry, old: _Entry | None, now: float) -> None:
        ad = entry.ad
        sequence, started = _integer(ad, "UpdateSequenceNumber", now), _integer(ad, "DaemonStartTime", now)
        if sequence is None or started is None:
            return
        if old is not None:
            entry.updates_total = old.updates_total
            entry.updates_sequenced = old.updates_sequenced
            entry.updates_lost = old.updates_lost
            old_sequence = _integer(old.ad, "UpdateSequenceNumber", now)
            old_started = _integer(old.ad, "DaemonStartTime", now)
            if old_sequence is not None and old_started is not None:
                lost = 0
                if started == old_started and sequence > old_sequence + 1:
                    lost = sequence - old_sequence - 1
                entry.updates_sequenced += 1 + lost
                entry.updates_lost += lost
                self.lost_total += lost
        entry.updates_total += 1
        ad["UpdatesTotal"] = entry.updates_total
        ad["UpdatesSequenced"] = entry.updates_sequenced
        ad["UpdatesLost"] = entry.updates_lost

    def _remove(self, key: AdKey) -> None:
        table = self._tables[key[0]]
        if table[key].ad.get("Absent") is True:
            self.absent_version += 1
        del table[key]
        if not table:
            del self._tables[key[0]]
        order = self._order.get(key[0])
        if order is not None:
            at = bisect.bisect_left(order, key)
            del order[at]
            listing = self._listings.get(key[0])
            if listing is not None:
                del listing.ads[at]
                listing.dirty.discard(key)
        self._count -= 1

    def _ordered_add(self, key: AdKey) -> None:
        order = self._order.get(key[0])
        if order is not None:
            at = bisect.bisect_left(order, key)
            order.insert(at, key)
            listing = self._listings.get(key[0])
            if listing is not None:
                listing.ads.insert(at, None)
                listing.dirty.add(key)

    def _changed(self, key: AdKey) -> None:
        """The ad under ``key`` is another, or was changed: its snapshot is taken again."""
        listing = self._listings.get(key[0])
        if listing is not None:
            listing.dirty.add(key)

    def _compact(self) -> None:
        self._heap = [
            (e.deadline, e.serial, k) for t in self._tables.values() for k, e in t.items()
        ]
        heapq.heapify(self._heap)

    # ------------------------------------------------------------------ removal
    def invalidate(
        self,
        my_type: str,
        name: str | None = None,
        constraint: str | None = None,
        *,
        now: float | None = None,
    ) -> int:
        """Remove the ads of ``my_type`` (or ``Any``) with this ``Name`` and/or satisfying
        ``constraint``; returns how many went. Naming neither is a ``CollectorUsageError``.
        The constraint's clock reads ``now``, or else the latest time the store was given."""
        expr = compile_constraint(constraint)
        if name is None and expr is None:
            raise CollectorUsageError("invalidate needs a name or a constraint")
        context = EvalContext(clock=fixed_clock(self._now if now is None else now), pool=request_pool())
        kind = my_type.lower() if isinstance(my_type, str) else ""
        if name is not None and kind and kind not in (ANY_TYPE, "submitter"):
            # one ad at most: its key is (type, name, "") (only Submitter keys hold a schedd's name)
            key = (kind, name, "")
            entry = self._tables.get(kind, {}).get(key)
            doomed = [key] if entry is not None and (expr is None or expr(entry.ad, context)) else []
        else:
            doomed = [
                key
                for key, entry in self._entries(my_type)
                if (name is None or key[1] == name) and (expr is None or expr(entry.ad, context))
            ]
        for key in doomed:
            self._remove(key)
        return len(doomed)

    def expire(self, now: float) -> list[AdKey]:
        """Drop every ad older than its lifetime; returns their keys, earliest deadline first."""
        self._now = max(self._now, now)
        gone: list[AdKey] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, serial, key = heapq.heappop(heap)
            entry = self._tables.get(key[0], {}).get(key)
            if entry is not None and entry.serial == serial and not self._kept_absent(key, entry, now):
                self._remove(key)
                gone.append(key)
        return gone

    def _kept_absent(self, key: AdKey, entry: _Entry, now: float) -> bool:
        """Mark an expiring Machine ad absent when the policy keeps it (see the module rules)."""
        policy = self.absent
        if policy is None or key[0] != "machine" or entry.ad.get("Absent") is True:
            return False
        if not policy.requirements(entry.ad, EvalContext(clock=fixed_clock(now))):
            return False
        lifetime = policy.lifetime if policy.lifetime > 0 else _FOREVER
        heard = int(now)
        entry.snapshot = None
        self._changed(key)
        entry.ad["Absent"] = True
        entry.ad["ClassAdLifetime"] = lifetime
        entry.ad["LastHeardFrom"] = heard
        entry.ad["MyCurrentTime"] = heard
        entry.private = None
        self._serial += 1
        entry.serial = self._serial
        entry.deadline = min(heard + lifetime + 1, _FOREVER)
        heapq.heappush(self._heap, (entry.deadline, entry.serial, key))
        self.absent_version += 1
        return True

    def absent_ads(self) -> list[ClassAd]:
        """Copies of the absent ads, in the store's order."""
        return [entry.ad.copy() for _, entry in self._entries("Machine") if entry.ad.get("Absent") is True]

    def restore_absent(self, ad: ClassAd, now: float) -> AdKey | None:
        """Put back an absent ad read from the persistent log, keeping its ``LastHeardFrom`` and
        ``ClassAdLifetime``; an ad already due to be forgotten, or one whose key holds a live ad,
        is left out (None)."""
        key = ad_key(ad, now)
        heard, lifetime = _integer(ad, "LastHeardFrom", now), _integer(ad, "ClassAdLifetime", now)
        if heard is None or lifetime is None or key in self._tables.get(key[0], {}):
            return None
        deadline = min(heard + (lifetime if lifetime > 0 else _FOREVER) + 1, _FOREVER)
        if deadline <= now:
            return None
        stored = ad.copy()
        stored["Absent"] = True
        self._serial += 1
        self._tables.setdefault(key[0], {})[key] = _Entry(stored, None, deadline, self._serial)
        self._count += 1
        self._ordered_add(key)
        heapq.heappush(self._heap, (deadline, self._serial, key))
        self.absent_version += 1
        return key

    def next_deadline(self) -> float | None:
        """When ``expire`` will next drop an ad, or None when the store is empty."""
        heap = self._heap
        while heap:
            deadline, serial, key = heap[0]
            entry = self._tables.get(key[0], {}).get(key)
            if entry is not None and entry.serial == serial:
                return float(deadline)
            heapq.heappop(heap)
        return None

    # ------------------------------------------------------------------ reading
    def _entries(self, my_type: str) -> Iterator[tuple[AdKey, _Entry]]:
        if not isinstance(my_type, str) or not my_type:
            raise CollectorUsageError(f"an ad type is a non-empty string, not {my_type!r}")
        kind = my_type.lower()
        kinds = sorted(self._tables) if kind == ANY_TYPE else [kind]
        for k in kinds:
            table = self._tables.get(k)
            if not table:
                continue
            order = self._order.get(k)
            if order is None:
                order = self._order[k] = sorted(table)
            for key in order:
                yield key, table[key]

    def query(
        self,
        my_type: str,
        constraint: str | None = None,
        projection: Iterable[str] | None = None,
        *,
        now: float,
        include_private: bool = False,
        limit: int | None = None,
        shared: bool = False,
    ) -> list[ClassAd]:
        """Copies of the ads of ``my_type`` (``Any``: every type) satisfying ``constraint``.

        ``projection`` keeps only the named attributes; ``include_private`` lays the private
        ad over the public one (for the negotiator); ``limit`` caps the count (None or a
        negative number: no cap). The constraint is evaluated with the clock at ``now``.
        ``shared`` (without a projection) returns, instead of a fresh copy, one snapshot per
        version of each ad: the same object until the ad is updated, so a caller that keeps what
        it worked out from an ad knows it unchanged by its identity. Snapshots must not be
        changed.
        """
        expr = compile_constraint(constraint)
        keys = projection_keys(projection)
        self._now = max(self._now, now)
        context = EvalContext(clock=fixed_clock(now), pool=request_pool())  # bounded work per query
        out: list[ClassAd] = []
        if limit is not None and limit == 0:
            return out
        hide_absent = self.absent is not None and not (expr is not None and expr.mentions_absent)
        if shared and keys is None and expr is None and not hide_absent and limit is None:
            # every ad's snapshot (a negotiator's fetch of the whole pool): no per-ad test to make
            kind = my_type.lower() if isinstance(my_type, str) else ""
            if kind and kind != ANY_TYPE:
                return self._every_snapshot(kind, include_private)
            snapshot = self._snapshot
            for _, entry in self._entries(my_type):
                kept = entry.snapshot
                out.append(kept[1] if kept is not None and kept[0] == include_private
                           else snapshot(entry, include_private))
            return out
        for _, entry in self._entries(my_type):
            if hide_absent and entry.ad.get("Absent") is True:
                continue
            if expr is not None and not expr(entry.ad, context):
                continue
            if shared and keys is None:
                out.append(self._snapshot(entry, include_private))
                continue
            ad = entry.ad
            if include_private and entry.private is not None:
                ad = with_private(ad, entry.private)
            out.append(project(ad, keys) if keys is not None else ad if ad is not entry.ad
                       else ad.copy())
            if limit is not None and 0 < limit <= len(out):
                break
        return out

    def _every_snapshot(self, kind: str, include_private: bool) -> list[ClassAd]:
        """Every snapshot of one type in key order: the kept listing, its changed keys taken again."""
        table = self._tables.get(kind)
        if not table:
            return []
        order = self._order.get(kind)
        if order is None:
            order = self._order[kind] = sorted(table)
        listing = self._listings.get(kind)
        snapshot = self._snapshot
        if listing is None or listing.private != include_private:
            ads: list[ClassAd | None] = [snapshot(table[key], include_private) for key in order]
            self._listings[kind] = _Listing(include_private, ads, set())
        else:
            ads = listing.ads
            for key in listing.dirty:
                ads[bisect.bisect_left(order, key)] = snapshot(table[key], include_private)
            listing.dirty.clear()
        return list(ads)  # type: ignore[arg-type]  # every place is filled

    @staticmethod
    def _snapshot(entry: _Entry, include_private: bool) -> ClassAd:
        snapshot = entry.snapshot
        if snapshot is None or snapshot[0] != include_private:
            private = entry.private if include_private else None
            ad = with_private(entry.ad, private) if private is not None else entry.ad.copy()
            snapshot = entry.snapshot = (include_private, ad)
        return snapshot[1]

    def lookup(self, my_type: str, name: str, schedd_name: str = "") -> ClassAd | None:
        """A copy of one ad by its key, or None."""
        kind = my_type.lower()
        entry = self._tables.get(kind, {}).get((kind, name, schedd_name))
        return None if entry is None else entry.ad.copy()

    def count(self, my_type: str = "Any") -> int:
        """How many ads of ``my_type`` (``Any``: of every type) are held."""
        if my_type.lower() == ANY_TYPE:
            return self._count
        return len(self._tables.get(my_type.lower(), {}))

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 3:
            return False
        return key in self._tables.get(str(key[0]).lower(), {})

    def types(self) -> list[str]:
        """The (lower-cased) types that have ads, sorted."""
        return sorted(self._tables)
