"""When two job ads of one cluster must give the same answer, so it is worked out once.

The procs of a cluster are usually copies of one ad that differ only in
``ProcId`` (and in the attributes that used per-job macros). A transform, a
submit requirement or the priority key reads only a few attributes, so its
answer for proc *k* is the answer for proc 0 whenever those attributes are
the same. This module makes "the same" exact:

* ``reads_of(node)`` is every attribute name an expression can reach (every
  reference at any depth and scope, a superset of what evaluation looks up),
  and whether it is *opaque*: it calls a function whose result is not fixed by
  those names (``eval`` builds references at run time, ``random`` differs
  call by call, …). An opaque answer is never shared.
* ``Footprint`` closes a set of names under the ads' own expressions: when a
  name read is an attribute with an expression, the names that expression
  reads are read too. ``Footprint.same(base, other)`` holds when each name of
  the footprint is the very same expression object, spelled the same, in
  both ads (or absent from both).

Why that suffices: evaluation reaches an attribute only through a reference
to its name, and the expression found there is the same object in both ads,
so by induction over the references followed both evaluations see the same
expressions, the same context and the same constants, and return the same
value. Statements that look at attribute *names* (the ``/regex/`` forms of a
transform) also require the two ads to have the same set of names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from operator import is_

from htcpool.classad import ClassAd
from htcpool.classad.nodes import AttrRef, FnCall, Node

# functions whose value depends on more than the attributes they name
OPAQUE_FUNCTIONS = frozenset({"eval", "random", "evalineachcontext", "countmatches", "unresolved"})

Table = Mapping[str, Node]


def reads_of(node: Node) -> tuple[set[str], bool]:
    """(lower-cased names ``node`` may read, whether it is opaque)."""
    names: set[str] = set()
    opaque = False
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is AttrRef:
            assert isinstance(n, AttrRef)
            names.add(n.key)
        elif kind is FnCall:
            assert isinstance(n, FnCall)
            opaque = opaque or n.name.lower() in OPAQUE_FUNCTIONS
        if isinstance(n, ClassAd):
            stack.extend(n._exprs.values())
        else:
            stack.extend(n.children())
    return names, opaque


@dataclass(frozen=True)
class Footprint:
    """The attributes an answer depends on; ``opaque`` answers are never shared."""

    names: tuple[str, ...]
    opaque: bool = False
    same_names: bool = False

    @classmethod
    def close(cls, names: Iterable[str], tables: Iterable[Table], opaque: bool = False,
              same_names: bool = False) -> Footprint:
        """``names`` closed under the expressions they have in ``tables``."""
        tables = list(tables)
        todo = [n.lower() for n in names]
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for table in tables:
                node = table.get(name)
                if node is not None:
                    more, dynamic = reads_of(node)
                    opaque = opaque or dynamic
                    todo.extend(more - seen)
        return cls(tuple(sorted(seen)), opaque, same_names)

    def same(self, base: ClassAd, other: ClassAd) -> bool:
        """Whether anything within this footprint evaluates alike in ``base`` and ``other``."""
        return self.against(base)(other)

    def against(self, base: ClassAd) -> Callable[[ClassAd], bool]:
        """``same`` with ``base`` fixed, for checking many ads against one."""
        if self.opaque:
            return lambda other: False
        names = self.names
        nodes = tuple(map(base._exprs.get, names))
        spelled = tuple(map(base._names.get, names))
        all_names = dict(base._names) if self.same_names else None

        def check(other: ClassAd) -> bool:
            if all_names is not None and other._names != all_names:
                return False
            return (all(map(is_, map(other._exprs.get, names), nodes))
                    and tuple(map(other._names.get, names)) == spelled)

        return check
