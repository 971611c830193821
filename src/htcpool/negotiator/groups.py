"""The hierarchical group quota tree: construction, quota assignment, fair share and surplus.

Rules (the HTCondor manual's "Accounting Groups with Hierarchical Group Quotas"; HTCondor 25
``GroupEntry.cpp``):

* ``GROUP_NAMES`` builds a tree under the implicit root ``<none>``. Names compare case-insensitively
  and are placed in case-insensitive sorted order, so parents come first. A name whose parent is
  not configured, a duplicate, ``<none>`` itself and a name with an empty part (``a..b``, ``.a``)
  are left out, each with a sentence in ``problems`` naming ``GROUP_NAMES``; the other groups are
  built as usual. ``problems`` also carries those of the policy (``groupknobs``).
* A group's quota is static (``GROUP_QUOTA_<g>``, a number of weighted slots) when set, else dynamic
  (``GROUP_QUOTA_DYNAMIC_<g>``, a fraction of the parent's quota), else dynamic 0.
* ``assign_quotas(total)``: top-down. Static children share ``Sa`` = Σ static (or ``min(Σ static, Q)``
  when NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION is false, which scales them down proportionally);
  dynamic children share what is left, scaled down only when their fractions sum past 1. A node's
  own quota is ``Q − Σ children`` (never below 0) whatever the knob: oversubscription only stops
  the scaling of static children, as the knob's documentation says. HTCondor 25 instead gives a
  non-root node its whole ``Q`` when the knob is on, so a subtree's quota counts twice and a
  subgroup can be handed its sibling's quota as surplus; htcpool does not copy that.
* ``fair_share()``: bottom-up. Each node is allocated ``min(requested, quota)``; its unused quota is
  surplus handed to peers that accept surplus, then upwards, recursively; a node that does not
  accept surplus gets nothing from outside its own subtree.
* ``strict_limit(node, slots, usage_of)``: a non-accepting group is a hard cap on its subtree. Before
  each group negotiates, the subtree usage of every group is recounted from the accountant's live
  usage (``usage_of``), so matches made earlier in the round by a sibling count; the group's new
  slots are capped by the room left under each non-accepting group on its path (the configured
  static quota, or the subtree quota of a dynamic one, less the subtree's usage).
* ``assigned_group(name)`` maps a submitter to the deepest configured group named by its prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from htcpool.negotiator.settings import ROOT_GROUP, GroupPolicy, GroupSettings

_EPSILON = 1e-9


@dataclass(eq=False)
class GroupNode:
    """One group of the tree, with its configuration and this cycle's quota bookkeeping."""

    name: str
    parent: GroupNode | None = None
    children: list[GroupNode] = field(default_factory=list)
    static_quota: float | None = None
    dynamic_quota: float | None = None
    accept_surplus: bool = False
    autoregroup: bool = False
    # computed each cycle
    quota: float = 0.0
    subtree_quota: float = 0.0
    requested: float = 0.0
    subtree_requested: float = 0.0
    allocated: float = 0.0
    usage: float = 0.0
    subtree_usage: float = 0.0
    sort_key: float = 0.0
    demand: float = 0.0  # this cycle's weighted demand, kept for display

    @property
    def is_static(self) -> bool:
        return self.static_quota is not None

    @property
    def config_quota(self) -> float:
        if self.static_quota is not None:
            return self.static_quota
        return self.dynamic_quota or 0.0

    @property
    def surplus_policy(self) -> str:
        """What ``condor_userprio -quotas`` shows in "Use Surplus"."""
        if self.autoregroup:
            return "regroup"
        return "byquota" if self.accept_surplus else "no"

    def walk(self) -> list[GroupNode]:
        """This node and its descendants, depth first, parents before children."""
        out = [self]
        for c in self.children:
            out.extend(c.walk())
        return out


class GroupTree:
    """The tree built from a ``GroupPolicy``; the root is ``<none>``."""

    def __init__(self, policy: GroupPolicy) -> None:
        self.policy = policy
        self.root = GroupNode(ROOT_GROUP, accept_surplus=True)
        self.by_name: dict[str, GroupNode] = {ROOT_GROUP.lower(): self.root}
        self.ignored: list[str] = []
        #: what could not be used, one sentence each naming the knob (the policy's, then the tree's)
        self.problems: list[str] = list(policy.problems)
        #: position in GROUP_NAMES: the tie-break of the group order (input order)
        self.config_order: dict[str, int] = {ROOT_GROUP.lower(): -1}
        for i, g in enumerate(policy.groups):
            self.config_order.setdefault(g.name.lower(), i)
        for g in sorted(policy.groups, key=lambda g: g.name.lower()):
            self._place(g)
        any_autoregroup = any(n.autoregroup for n in self.by_name.values())
        self.root.autoregroup = any_autoregroup
        self._cache: dict[str, str] = {}

    def _refuse(self, g: GroupSettings, why: str) -> None:
        self.ignored.append(g.name)
        self.problems.append(f"GROUP_NAMES: group {g.name!r} {why}; it is left out (its submitters "
                             f"negotiate in the deepest configured group their names lead to)")

    def _place(self, g: GroupSettings) -> None:
        key = g.name.lower()
        if key == ROOT_GROUP.lower():
            self._refuse(g, f"uses the name reserved for the root group {ROOT_GROUP}")
            return
        if not all(key.split(".")):
            self._refuse(g, "has an empty part (a leading, trailing or doubled '.')")
            return
        if key in self.by_name:
            self._refuse(g, f"duplicates {self.by_name[key].name!r} (names ignore case)")
            return
        parent_key = key.rsplit(".", 1)[0] if "." in key else ROOT_GROUP.lower()
        parent = self.by_name.get(parent_key)
        if parent is None:
            missing = g.name.rsplit(".", 1)[0]
            self._refuse(g, f"has no parent: {missing!r} is not in GROUP_NAMES (or was left out)")
            return
        node = GroupNode(
            g.name,
            parent=parent,
            static_quota=g.static_quota,
            dynamic_quota=None if g.static_quota is not None else (g.dynamic_quota or 0.0),
            accept_surplus=g.accept_surplus,
            autoregroup=g.autoregroup,
        )
        parent.children.append(node)
        self.by_name[key] = node

    @property
    def has_groups(self) -> bool:
        return bool(self.root.children)

    def nodes(self) -> list[GroupNode]:
        return self.root.walk()

    def get(self, name: str) -> GroupNode | None:
        return self.by_name.get(name.lower())

    # ------------------------------------------------------------ submitter → group
    def assigned_group(self, name: str) -> str:
        """The configured group a submitter (or group) name belongs to (``GetAssignedGroup``)."""
        hit = self._cache.get(name)
        if hit is not None:
            return hit
        if "@" not in name:
            node = self.get(name)
            result = node.name if node is not None else ROOT_GROUP
        else:
            base = name.rsplit("@", 1)[0]
            if "." not in base:
                result = ROOT_GROUP
            else:
                node = self.root
                for part in base.rsplit(".", 1)[0].split("."):
                    key = part.lower() if node is self.root else f"{node.name.lower()}.{part.lower()}"
                    child = self.by_name.get(key)
                    if child is None or child.parent is not node:
                        break
                    node = child
                result = node.name
        self._cache[name] = result
        return result

    # ------------------------------------------------------------ quotas
    def assign_quotas(self, total: float) -> None:
        """Set ``quota`` and ``subtree_quota`` of every node from the pool size ``total``."""
        for n in self.nodes():
            n.quota = n.subtree_quota = 0.0
        self._assign(self.root, total)

    def _assign(self, node: GroupNode, q: float) -> None:
        if q <= 0:
            return
        node.subtree_quota = q
        static = [c for c in node.children if c.is_static]
        dynamic = [c for c in node.children if not c.is_static]
        s = sum(c.config_quota for c in static)
        d = sum(c.config_quota for c in dynamic)
        sa = s if self.policy.allow_quota_oversubscription else min(s, q)
        da = max(0.0, q - sa)
        for c in static:
            c.quota = c.config_quota * sa / (s or 1.0)
        for c in dynamic:
            c.quota = c.config_quota * da / max(d, 1.0)
        # A node's own quota is what its children leave, with or without oversubscription: HTCondor
        # 25 gives a non-root node its whole subtree quota as its own when the knob is on, which
        # counts the children's quotas twice as surplus (docs/negotiator.md, "differs on purpose").
        node.quota = max(0.0, q - sum(c.quota for c in node.children))
        for c in node.children:
            self._assign(c, c.quota)

    # ------------------------------------------------------------ fair share and surplus
    def fair_share(self) -> float:
        """Allocate quotas (and surplus) to demand; return the surplus nobody could use."""
        for n in self.nodes():
            n.allocated = 0.0
            n.subtree_requested = 0.0
        return self._fairshare(self.root)

    def _fairshare(self, node: GroupNode) -> float:
        node.allocated = min(node.requested, node.quota)
        node.requested -= node.allocated
        node.subtree_requested = node.requested
        surplus = node.quota - node.allocated
        for c in node.children:
            surplus += self._fairshare(c)
            if c.accept_surplus:
                node.subtree_requested += c.subtree_requested
        if node.children:
            surplus = self._allocate_surplus(node, surplus)
        return surplus

    def _allocate_surplus(self, node: GroupNode, surplus: float) -> float:
        if surplus <= _EPSILON or node.subtree_requested <= _EPSILON:
            return surplus
        # participants: accepting children (their subtree's remaining request) and node itself
        parts: list[tuple[GroupNode, float, float]] = []  # (group, quota weight, remaining)
        for c in node.children:
            if c.accept_surplus and c.subtree_requested > _EPSILON:
                parts.append((c, c.subtree_quota, c.subtree_requested))
        if node.requested > _EPSILON:
            parts.append((node, node.quota, node.requested))
        if not parts:
            return surplus
        remaining = {id(p[0]): p[2] for p in parts}
        grant = {id(p[0]): 0.0 for p in parts}
        total_request = sum(remaining.values())
        if surplus >= total_request:
            for g, _, r in parts:
                grant[id(g)] = r
            surplus -= total_request
        else:
            for by_quota in (True, False):
                while surplus > _EPSILON:
                    out = [p for p in parts if remaining[id(p[0])] > _EPSILON and (p[1] > 0 or not by_quota)]
                    if not out:
                        break
                    weight_sum = sum(p[1] if by_quota else 1.0 for p in out)
                    given = 0.0
                    for g, w, _ in out:
                        share = surplus * (w if by_quota else 1.0) / weight_sum
                        take = min(share, remaining[id(g)])
                        remaining[id(g)] -= take
                        grant[id(g)] += take
                        given += take
                    surplus -= given
                    if given <= _EPSILON:
                        break
        for g, _, _ in parts:
            amount = grant[id(g)]
            if amount <= 0:
                continue
            if g is node:
                node.allocated += amount
                node.requested -= amount
            else:
                g.subtree_requested -= amount
                node.subtree_requested -= amount
                leftover = self._push_down(g, amount)
                surplus += leftover
        return surplus

    def _push_down(self, node: GroupNode, amount: float) -> float:
        """Give ``amount`` of surplus to ``node``'s subtree (itself and accepting descendants)."""
        if not node.children:
            take = min(amount, node.requested)
            node.allocated += take
            node.requested -= take
            return amount - take
        saved = node.subtree_requested
        node.subtree_requested = node.requested + sum(
            c.subtree_requested for c in node.children if c.accept_surplus
        )
        left = self._allocate_surplus(node, amount)
        node.subtree_requested = max(0.0, saved - (amount - left))
        return left

    # ------------------------------------------------------------ strict quota enforcement
    def strict_limit(self, node: GroupNode, slots: float, usage_of: Callable[[str], float]) -> float:
        """Cap a group's slot limit by the room left in non-accepting groups on its path
        (``strict_enforce_quota``); ``usage_of`` is the accountant's live weighted usage."""
        for n in reversed(self.nodes()):  # children before parents
            n.subtree_usage = usage_of(n.name) + sum(c.subtree_usage for c in n.children)
        new = slots - node.usage
        cur: GroupNode | None = node
        while cur is not None:
            if not cur.accept_surplus:
                room = (cur.config_quota if cur.is_static else cur.subtree_quota) - cur.subtree_usage
                new = min(new, max(0.0, room))
            cur = cur.parent
        return new + node.usage
