"""How one ClassAd differs from another it was copied from: the form jobs of a cluster travel
and are stored in.

The jobs of a cluster are copies of one ad that differ in an attribute or two (``ProcId``
at least), as condor_submit's proc ads chain to their cluster ad (HTCondor manual, "The
HTCondor Job Queue"). ``changed_nodes(ad, prev)`` finds what ``ad`` changes: an attribute
counts as unchanged when it is the very expression object of ``prev`` (a copy shares its
expressions) or an equal plain literal (a string, an integer, a boolean, or a real equal
in value and sign, so ``0.0`` and ``-0.0`` differ). When ``ad`` lacks one of ``prev``'s
attributes, or spells one differently, it has no such form and must be kept whole (None).
For ads with the same attributes in the same order, the common case, the comparison is one
pass in C over the two tables; otherwise one pass in Python.

The protocol codec sends runs of ads this way (``codec``); the schedd's SQLite store keeps a
cluster as its first job's ad and every job as its changes from it (``job_changes`` and
``job_from_changes``, where a ``ProcId`` equal to the job's own number is left to the key);
``ClusterShape`` tells first, in one pass in C, the jobs that change nothing but that number.
"""

from __future__ import annotations

import math
from itertools import compress
from operator import is_, is_not
from typing import Any

from htcpool.classad import ClassAd
from htcpool.classad.nodes import Literal, Node

_PLAIN_LITERALS = (int, str, bool, float)


def same_node(a: Any, b: Any) -> bool:
    """Whether two expressions are surely the same: one object, or equal plain literals."""
    if a is b:
        return True
    if type(a) is not Literal or type(b) is not Literal:
        return False
    va, vb = a.value, b.value
    t = type(va)
    if t is not type(vb) or t not in _PLAIN_LITERALS or va != vb:
        return False
    return t is not float or va != 0.0 or math.copysign(1.0, va) == math.copysign(1.0, vb)  # 0.0, -0.0


def changed_nodes(ad: ClassAd, prev: ClassAd) -> dict[str, Node] | None:
    """The expressions of ``ad`` that differ from ``prev``'s, by lower-cased name; None when
    ``ad`` lacks one of ``prev``'s attributes or spells one differently (it goes whole)."""
    exprs, names = ad._exprs, ad._names
    prev_exprs, prev_names = prev._exprs, prev._names
    if names is prev_names or names == prev_names:  # the same attributes: compare the nodes only
        keys = list(exprs)
        if keys == list(prev_exprs):  # in the same order too (copies): the comparison runs in C
            differ = compress(keys, map(is_not, exprs.values(), prev_exprs.values()))
            changed = {key: exprs[key] for key in differ}
        else:
            changed = {key: node for key, node in exprs.items() if prev_exprs[key] is not node}
        for key in [key for key, node in changed.items() if same_node(prev_exprs[key], node)]:
            del changed[key]
        return changed
    changed = {}
    shared = 0
    for key, node in exprs.items():
        old = prev_exprs.get(key)
        if old is not None:
            if names[key] != prev_names[key]:
                return None
            shared += 1
            if same_node(old, node):
                continue
        changed[key] = node
    if shared != len(prev_exprs):
        return None
    return changed


def as_ad(changed: dict[str, Node], ad: ClassAd) -> ClassAd:
    """The changes ``changed_nodes`` found in ``ad`` as an ad of their own (``ad``'s spelling)."""
    names = ad._names
    return ClassAd._from_tables(changed, {key: names[key] for key in changed})


def job_changes(ad: ClassAd, cluster_ad: ClassAd, proc: int) -> ClassAd | None:
    """What job ``proc``'s ``ad`` changes of its ``cluster_ad`` (None: keep it whole). When the
    cluster ad has a ``ProcId``, the job's own is left out when it is the literal ``proc``
    and kept otherwise, so that ``job_from_changes`` puts back exactly ``ad``."""
    changed = changed_nodes(ad, cluster_ad)
    if changed is None:
        return None
    if "procid" in cluster_ad._exprs:
        node = ad._exprs["procid"]
        if type(node) is Literal and type(node.value) is int and node.value == proc:
            changed.pop("procid", None)
        else:
            changed["procid"] = node
    return as_ad(changed, ad)


class ClusterShape:
    """A cluster ad's attributes in order, for telling at C speed that a job's ad is that ad but
    for its ``ProcId`` (every job of a fresh cluster is): ``unchanged``."""

    __slots__ = ("_base", "_keys", "_names", "_nodes", "_proc_at")

    def __init__(self, cluster_ad: ClassAd) -> None:
        self._base = cluster_ad
        self._keys = list(cluster_ad._exprs)
        self._nodes: list[Node] = list(cluster_ad._exprs.values())
        self._names = cluster_ad._names
        self._proc_at = self._keys.index("procid") if "procid" in cluster_ad._exprs else -1

    def of(self, cluster_ad: ClassAd) -> bool:
        """Whether this is the shape of ``cluster_ad`` (which is never changed once in use)."""
        return cluster_ad is self._base

    def unchanged(self, ad: ClassAd, proc: int) -> bool:
        """Whether every expression of ``ad`` is the cluster ad's very object, named alike and in
        the same order, but for a ``ProcId`` that is the literal ``proc``, so that ``job_changes``
        would find nothing. False means: compare in full, never that the ad differs."""
        exprs, names = ad._exprs, ad._names
        nodes = list(exprs.values())
        if len(nodes) != len(self._nodes):
            return False
        at = self._proc_at
        if at >= 0:
            node = nodes[at]
            if type(node) is not Literal or type(node.value) is not int or node.value != proc:
                return False
            nodes[at] = self._nodes[at]
        return (all(map(is_, nodes, self._nodes)) and list(exprs) == self._keys
                and (names is self._names or names == self._names))


def job_from_changes(cluster_ad: ClassAd, changes: ClassAd, proc: int) -> ClassAd:
    """Job ``proc``'s ad from its cluster ad and ``job_changes``' answer; it shares the
    cluster ad's unchanged expressions."""
    ad = cluster_ad.copy()
    names = changes._names
    for key, node in changes._exprs.items():
        ad.insert_node(names[key], node)
    if "procid" in cluster_ad._exprs and "procid" not in changes._exprs:
        ad._exprs["procid"] = Literal(proc)
    return ad


__all__ = ["ClusterShape", "as_ad", "changed_nodes", "job_changes", "job_from_changes", "same_node"]
