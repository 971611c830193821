"""Functions about the users of the host: ``userHome`` and ``userMap``.

Neither reads system files: ``userHome`` asks the context's ``user_home``
callable (None: every user is unknown) and ``userMap`` the context's
``user_maps`` provider (None: no map set is defined).

* ``userHome(name [, default])``: the home directory; when the user is unknown,
  ``name`` is not a string, or ``name`` is UNDEFINED, a non-empty string
  ``default`` is returned instead; otherwise UNDEFINED for an unknown or
  UNDEFINED user and ERROR for a name that is not a string. Called with another
  number of arguments it fails the evaluation, as in HTCondor.
* ``userMap(set, input)``: ERROR if ``set`` or ``input`` is ERROR, else the groups the input maps to, joined with commas, or
  UNDEFINED; with ``preferred`` the preferred group when the input maps to it
  (ignoring case), else the first group; with ``default`` that group when the
  input maps to none.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.nodes import EvalFailure, EvalState
from htcpool.classad.values import ERROR, UNDEFINED


@builtin("userHome", 0, None)
def _user_home(s: EvalState, *args: Any) -> Any:
    if not 1 <= len(args) <= 2:
        # HTCondor fails the whole evaluation here instead of returning ERROR.
        raise EvalFailure("userHome() takes one or two arguments")
    name = args[0]
    default = args[1] if len(args) == 2 else ""
    fallback = default if type(default) is str else ""
    if name is UNDEFINED:
        return fallback or UNDEFINED
    if type(name) is not str:
        return fallback or ERROR
    lookup = s.ctx.user_home
    home = lookup(name) if lookup is not None else None
    if home is None:
        return fallback or UNDEFINED
    return home


@builtin("userMap", 2, 4)
def _user_map(s: EvalState, map_set: Any, user: Any, preferred: Any = None, default: Any = None) -> Any:
    if map_set is ERROR or user is ERROR:
        return ERROR
    provider = s.ctx.user_maps
    groups: list[str] | None = None
    if provider is not None and type(map_set) is str and type(user) is str:
        groups = provider.map_groups(map_set, user)
    if preferred is None:
        return ",".join(groups) if groups is not None else UNDEFINED
    if groups:
        if type(preferred) is str:
            for g in groups:
                if g.lower() == preferred.lower():
                    return g
        return groups[0]
    return UNDEFINED if default is None else default
