"""Whether a local directory can be trusted with a pool: checked by ``htcpool up`` before it
touches anything there.

A pool's daemons believe what its local directory holds: the configuration says what they run
(``USER_JOB_WRAPPER``, the daemons themselves), the signing key and ``pool.token`` say who is a
daemon, the databases say whose jobs run where. Whoever can write any of those, or replace the
directory itself, commands the pool, and where root runs it, commands root. So, as HTCondor
refuses a configuration or a ``SEC_PASSWORD_DIRECTORY`` it cannot trust, ``up`` refuses, naming
the path and why, when:

* the local directory, or one of its keys, tokens, token directories or databases, belongs to
  anyone but the user running the pool (the configuration may also belong to root);
* one of those files, or the configuration, can be written by its group or by everyone;
* a directory above the local directory belongs to anyone but root or that user, or can be
  written by others without the sticky bit (which lets them rename or replace what is inside);
  ``/tmp`` itself (sticky) is fine.

``problems(layout, uid)`` lists every reason at once; an empty list means the directory may be
used. It reads the configuration (for ``SEC_PASSWORD_DIRECTORY`` and the other key and token
paths) only once the configuration itself is found trustworthy.
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from htcpool.runtime.layout import PoolLayout

_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def _name(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _owner_problem(path: Path, st: os.stat_result, allowed: tuple[int, ...], what: str) -> str | None:
    if st.st_uid in allowed:
        return None
    return (f"{path} ({what}) belongs to {_name(st.st_uid)}, not to {_name(allowed[0])}, the user running "
            "the pool: another user could change it")


def _writable_problem(path: Path, st: os.stat_result, what: str) -> str | None:
    if not st.st_mode & _OTHERS_WRITE:
        return None
    return (f"{path} ({what}) is writable by {'everyone' if st.st_mode & stat.S_IWOTH else 'its group'} "
            f"(mode {stat.S_IMODE(st.st_mode):04o}); it must be writable by its owner only")


def parent_problems(root: Path, uid: int) -> list[str]:
    """What is wrong with the directories above ``root`` (module docstring)."""
    out: list[str] = []
    here = Path(os.path.realpath(root)).parent
    for directory in (here, *here.parents):
        try:
            st = os.stat(directory)
        except OSError:
            continue
        if st.st_uid not in (0, uid):
            out.append(f"{directory}, above the local directory, belongs to {_name(st.st_uid)}: that user "
                       "could replace the pool's files")
        elif st.st_mode & _OTHERS_WRITE and not st.st_mode & stat.S_ISVTX:
            out.append(f"{directory}, above the local directory, can be written by others without the "
                       f"sticky bit (mode {stat.S_IMODE(st.st_mode):04o}): they could replace the pool's files")
    return out


def _secrets(layout: PoolLayout) -> Iterator[tuple[Path, str]]:
    """The pool's secrets and state, where its configuration puts them."""
    from htcpool.config import ConfigError, read_config
    from htcpool.runtime.security.credentials import SecurityPaths

    yield layout.token_file, "the daemons' token"
    yield layout.spool, "the pool's databases"
    paths = None
    if layout.config.exists():
        try:
            env = dict(os.environ, CONDOR_CONFIG=str(layout.config))
            paths = SecurityPaths.of(read_config(str(layout.config), environ=env, subsystem="TOOL"), layout)
        except (ConfigError, OSError):
            paths = None  # the daemons will say what is wrong with it
    password_dir = paths.password_dir if paths else layout.root / "passwords.d"
    system_tokens = paths.system_tokens if paths else layout.root / "tokens.d"
    yield password_dir, "SEC_PASSWORD_DIRECTORY"
    if paths is not None:
        yield paths.pool_key, "SEC_TOKEN_POOL_SIGNING_KEY_FILE"
    yield system_tokens, "SEC_TOKEN_SYSTEM_DIRECTORY"
    for directory, what in ((password_dir, "a signing key"), (system_tokens, "a token"),
                            (layout.spool, "a database")):
        try:
            files = sorted(p for p in directory.iterdir() if not p.is_dir())
        except OSError:
            continue
        yield from ((p, what) for p in files)


def problems(layout: PoolLayout, uid: int | None = None) -> list[str]:
    """Every reason the local directory of ``layout`` cannot be trusted by user ``uid`` (default:
    the effective user); empty when it can."""
    uid = os.geteuid() if uid is None else uid
    out = parent_problems(layout.root, uid)
    try:
        st = os.lstat(layout.root)
    except FileNotFoundError:
        return out  # ``up`` makes it, owned by the user running the pool
    if stat.S_ISLNK(st.st_mode):
        st = os.stat(layout.root)
    found = _owner_problem(layout.root, st, (uid,), "the local directory")
    if found:
        return [*out, found]  # nothing inside can be trusted
    try:
        config = os.lstat(layout.config)
    except FileNotFoundError:
        config = None
    if config is not None:
        bad = [p for p in (_owner_problem(layout.config, config, (uid, 0), "the configuration"),
                           _writable_problem(layout.config, config, "the configuration")) if p]
        if bad:
            return [*out, *bad]  # the paths it names cannot be trusted either
    for path, what in _secrets(layout):
        try:
            st = os.lstat(path)
        except OSError:
            continue
        out.extend(p for p in (_owner_problem(path, st, (uid,), what), _writable_problem(path, st, what)) if p)
    return out


__all__ = ["parent_problems", "problems"]
