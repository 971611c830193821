"""The ephemeral attributes the negotiator puts into slot ads, and keeping them live.

Rules (HTCondor 25 ``addRemoteUserPrios``), applied only when preemption is considered:

* A claimed slot's remote user is the first of ``PreemptingAccountingGroup``, ``PreemptingUser``,
  ``AccountingGroup``, ``RemoteUser``. Its copy gets ``RemoteUserPrio`` (the user's EUP),
  ``RemoteUserResourcesInUse`` (the user's weighted usage), ``RemoteUserFloor`` and, with groups,
  ``RemoteGroup``, ``RemoteGroupResourcesInUse``, ``RemoteGroupQuota``; ``CurrentRank`` becomes
  ``PreemptingRank`` when a preemption is already pending.
* With NEGOTIATOR_CROSS_SLOT_PRIOS, every slot ad with ``TotalSlots`` = N also gets, for
  i = 1 … N and P = STARTD_RESOURCE_PREFIX (``slot``), ``P<i>_RemoteUserPrio``,
  ``P<i>_RemoteUserResourcesInUse`` and the three group attributes of the user that the ad's
  own ``P<i>_PreemptingAccountingGroup``, ``P<i>_PreemptingUser``, ``P<i>_AccountingGroup`` or
  ``P<i>_RemoteUser`` names (the startd publishes those with STARTD_SLOT_ATTRS): a slot can see
  who runs on its siblings.
* The ``…ResourcesInUse`` attributes are live (HTCondor makes them function calls): they follow
  the matches charged during the cycle. ``refresh(ad)`` sets them to the current usage; the
  cycle calls it before a class's expressions are evaluated.
* A decorated ad's live attributes are of particular users, so two slots whose live attributes
  belong to different users must not share a class: ``identity(ad)`` tells them apart.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from htcpool.classad import ClassAd, EvalContext
from htcpool.classad.nodes import Literal
from htcpool.negotiator.exprinfo import literal, number, with_values
from htcpool.negotiator.slotclasses import remote_user_for_preemption

if TYPE_CHECKING:
    from htcpool.negotiator.accountant import Accountant
    from htcpool.negotiator.groups import GroupTree

__all__ = ["DECORATION_NAMES", "LIVE_REQUEST_ATTRS", "LIVE_SLOT_ATTRS", "SlotDecorator"]

#: the ephemeral attributes whose values change during a cycle, as matches are charged
LIVE_SLOT_ATTRS = frozenset({"remoteuserresourcesinuse", "remotegroupresourcesinuse"})
LIVE_REQUEST_ATTRS = frozenset({"submitteruserresourcesinuse", "submittergroupresourcesinuse"})
#: what ``decorate`` sets in a claimed slot's copy (``CurrentRank`` too, when a preemption is pending)
DECORATION_NAMES = frozenset({"remoteuserprio", "remoteuserresourcesinuse", "remoteuserfloor", "remotegroup",
                              "remotegroupresourcesinuse", "remotegroupquota"})
USER_ATTRS = ("PreemptingAccountingGroup", "PreemptingUser", "AccountingGroup", "RemoteUser")


class SlotDecorator:
    """Decorates the slot ads of one cycle and remembers which of their attributes are live."""

    def __init__(self, accountant: Accountant, groups: GroupTree | None, quotas: dict[str, float],
                 context: EvalContext, cross_slot_prios: bool = False, prefix: str = "slot") -> None:
        self.accountant = accountant
        self.context = context  # the cycle's
        self.groups = groups if groups is not None and groups.has_groups else None
        self.quotas = quotas
        self.cross_slot_prios = cross_slot_prios
        self.prefix = prefix or "slot"
        #: id of a decorated ad → (the ad, its live attributes as (name, customer whose usage))
        self._live: dict[int, tuple[ClassAd, list[tuple[str, str]]]] = {}
        #: id of an ad with cross-slot attributes → the users they describe
        self._identity: dict[int, tuple[str, ...]] = {}
        #: id of a decorated ad → the lower-cased names of the attributes set in it
        self._added: dict[int, tuple[str, ...]] = {}
        #: lower-cased names of every live attribute set this cycle
        self.live_names: set[str] = set(LIVE_SLOT_ATTRS)

    def _user_values(self, prefix: str, user: str, values: list[tuple[str, object]],
                     live: list[tuple[str, str]]) -> None:
        acct = self.accountant
        values.append((f"{prefix}RemoteUserPrio", acct.effective_priority(user)))
        values.append((f"{prefix}RemoteUserResourcesInUse", acct.weighted_usage(user)))
        live.append((f"{prefix}RemoteUserResourcesInUse", user))
        if self.groups is not None:
            group = self.groups.assigned_group(user)
            values += [
                (f"{prefix}RemoteGroup", group),
                (f"{prefix}RemoteGroupResourcesInUse", acct.weighted_usage(group)),
                (f"{prefix}RemoteGroupQuota", self.quotas.get(group, 0.0)),
            ]
            live.append((f"{prefix}RemoteGroupResourcesInUse", group))

    def decorate(self, slot: ClassAd, claimed: bool) -> ClassAd:
        """The slot, or a copy of it with the ephemeral attributes that apply."""
        values: list[tuple[str, object]] = []
        live: list[tuple[str, str]] = []
        ctx = self.context
        user = remote_user_for_preemption(slot, ctx) if claimed else None
        if user is not None:
            self._user_values("", user, values, live)
            values.append(("RemoteUserFloor", self.accountant.record(user).floor))
            pending = literal(slot, "PreemptingRank", ctx)
            if pending is not None:
                values.append(("CurrentRank", pending))
        others: list[str] = []
        if self.cross_slot_prios:
            total = number(literal(slot, "TotalSlots", ctx))
            for i in range(1, int(total) + 1 if total is not None else 1):
                prefix = f"{self.prefix}{i}_"
                other = next((v for a in USER_ATTRS if type(v := literal(slot, prefix + a, ctx)) is str and v), None)
                if other is not None:
                    self._user_values(prefix, other, values, live)
                    others.append(other)
        if not values:
            return slot
        ad = with_values(slot, values)
        self._live[id(ad)] = (ad, live)
        self._added[id(ad)] = tuple([name.lower() for name, _ in values])
        self.live_names.update(name.lower() for name, _ in live)
        if others:
            self._identity[id(ad)] = tuple(others)
        return ad

    def refresh(self, ad: ClassAd) -> None:
        """Set a decorated ad's live attributes to the usage of now."""
        entry = self._live.get(id(ad))
        if entry is None or entry[0] is not ad:
            return
        usage = self.accountant.weighted_usage
        for name, customer in entry[1]:
            ad.insert_node(name, Literal(usage(customer)))

    def added(self, ad: ClassAd) -> tuple[str, ...]:
        """The lower-cased names of the attributes ``decorate`` set in ``ad`` (a copy it made)."""
        return self._added[id(ad)]

    def identity(self, ad: ClassAd) -> Hashable:
        """Whose usage a decorated ad's cross-slot live attributes follow (None: no such attributes)."""
        return self._identity.get(id(ad))
