"""The registry of built-in ClassAd functions.

Every function is registered once, under its lower-cased name, with its arity
and whether it is *lazy*:

* an eager function is called as ``impl(state, *values)`` with its arguments
  already evaluated;
* a lazy one is called as ``impl(state, *nodes)`` and evaluates what it needs
  itself (``ifThenElse``, ``unparse``, ``eval`` …).

A call with the wrong number of arguments, or of a name nobody registered,
evaluates to ERROR, as in HTCondor. Each family of functions lives in its own
module and registers itself on import; ``compile_call`` imports them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from htcpool.classad.values import ERROR

if TYPE_CHECKING:
    from htcpool.classad.nodes import EvalState, Fn, Node


@dataclass(frozen=True, slots=True)
class Builtin:
    name: str
    impl: Callable[..., Any]
    min_args: int
    max_args: int | None
    lazy: bool


REGISTRY: dict[str, Builtin] = {}


def builtin(
    name: str, min_args: int, max_args: int | None = -1, *, lazy: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function; ``max_args=-1`` means exactly ``min_args``, None means any number."""

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        top = min_args if max_args == -1 else max_args
        REGISTRY[name.lower()] = Builtin(name, impl, min_args, top, lazy)
        return impl

    return register


_loaded = False


def load_all() -> None:
    """Import every family of functions (``compile_call`` does on its first call). A long-running
    process calls it as it starts, so that its first evaluation of a call does not pay for it."""
    global _loaded
    if _loaded:
        return
    from htcpool.classad.builtins import (  # noqa: F401 - imported to register
        env,
        lists,
        mathfns,
        meta,
        regex,
        stringlists,
        strings,
        timeconv,
        timefns,
        types,
        users,
        versions,
    )

    _loaded = True


def lookup(name: str) -> Builtin | None:
    load_all()
    return REGISTRY.get(name.lower())


def _error(s: EvalState) -> Any:
    return ERROR


def compile_call(name: str, args: tuple[Node, ...]) -> Fn:
    b = lookup(name)
    n = len(args)
    if b is None or n < b.min_args or (b.max_args is not None and n > b.max_args):
        return _error
    impl = b.impl
    if b.lazy:
        return lambda s: impl(s, *args)
    fns = tuple(a.compiled() for a in args)
    if n == 0:
        return lambda s: impl(s)
    if n == 1:
        f0 = fns[0]
        return lambda s: impl(s, f0(s))
    if n == 2:
        f0, f1 = fns
        return lambda s: impl(s, f0(s), f1(s))
    return lambda s: impl(s, *[f(s) for f in fns])
