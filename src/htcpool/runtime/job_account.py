"""The starter's use of the account its job runs as (``runas.Account``), when it runs as root.

HTCondor's starter works with the job's files as the job's owner and starts the job with that
owner's identity; so does htcpool's:

* ``make_scratch`` makes the scratch directory as root, owned by the account, mode 0700: no other
  job and no other local user can read it. The directory above it gets the search bit for
  everyone (never the read bit), so the account can reach its own directory without listing the
  others';
* ``acting_as`` is a block run with the account's effective user, group and supplementary
  groups, then root's again: the job ad, the input files, the job's standard streams and the
  output files are read and written there, so the kernel checks the owner's permissions (a job
  cannot have root copy a file its owner may not read) and the files it writes (in the scratch
  directory, in ``Iwd``) belong to the owner;
* when the job runs as another account than its owner's (``SLOT<N>_USER``, nobody), the files
  of the submit side (``Iwd``: the input files, the standard streams, the outputs copied back)
  are read and written as the owner (``files_owner``), those of the scratch directory as the
  job's account; ``copy_between`` copies from one identity to the other;
* ``drop_to`` is the last thing the job's process does before it execs, after it entered its
  cgroup (which needs root): supplementary groups, group, then user, for good.

A root schedd writes each job's user log (the submit file's ``log``) in the same spirit:
``files_as`` opens files with the owner's file-system identity (``setfsuid``/``setfsgid``, which on
Linux change the calling thread only, so the daemon's other threads keep root's), so a log named
in a directory the owner may not write, or through a link to a file of root's, is refused rather
than written by root. Root's supplementary groups are kept there (changing them would change
every thread's).

Without an account, or where the process does not run as root, each is a no-op: a personal pool's
jobs run as the pool's user.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import stat
import sys
from collections.abc import Iterator

from htcpool.runtime.runas import Account


def switching(account: Account | None) -> bool:
    """Whether the starter must change identity for ``account`` (it runs as root, the account is not root)."""
    return account is not None and os.geteuid() == 0 and account.uid != 0


def make_scratch(path: str, account: Account | None) -> None:
    """Make the scratch directory (module docstring); OSError when it cannot be."""
    if not switching(account):
        os.makedirs(path, exist_ok=True)
        return
    assert account is not None
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    mode = os.stat(parent).st_mode
    if mode & 0o111 != 0o111:
        os.chmod(parent, stat.S_IMODE(mode) | 0o111)
    os.makedirs(path, mode=0o700, exist_ok=True)
    os.chown(path, account.uid, account.gid)
    os.chmod(path, 0o700)


@contextlib.contextmanager
def acting_as(account: Account | None) -> Iterator[None]:
    """Run the block with the account's effective identity (module docstring)."""
    if not switching(account):
        yield
        return
    assert account is not None
    groups, egid = os.getgroups(), os.getegid()
    try:
        os.setgroups(list(account.groups) or [account.gid])
        os.setegid(account.gid)
        os.seteuid(account.uid)
        yield
    finally:
        os.seteuid(0)
        os.setegid(egid)
        os.setgroups(groups)


def drop_to(account: Account | None) -> None:
    """Become the account for good: in the job's process, between fork and exec."""
    if not switching(account):
        return
    assert account is not None
    os.setgroups(list(account.groups) or [account.gid])
    os.setgid(account.gid)
    os.setuid(account.uid)


def copy_between(source: str, target: str, reader: Account | None, writer: Account | None) -> None:
    """Copy a file, or a directory with everything in it, reading ``source`` as ``reader`` and
    writing ``target`` as ``writer`` (the permission bits kept); OSError as ``shutil.copy`` gives."""
    with acting_as(reader):
        is_dir = os.path.isdir(source)
        entries = sorted(os.listdir(source)) if is_dir else []
        mode = stat.S_IMODE(os.stat(source).st_mode)
    if is_dir:
        with acting_as(writer):
            os.makedirs(target, exist_ok=True)
        for name in entries:
            copy_between(os.path.join(source, name), os.path.join(target, name), reader, writer)
        return
    with acting_as(reader):
        src = open(source, "rb")  # noqa: SIM115 - closed below, opened with another identity
    try:
        with acting_as(writer):
            dst = open(target, "wb")  # noqa: SIM115
        with dst:
            shutil.copyfileobj(src, dst)
            os.fchmod(dst.fileno(), mode)
    finally:
        src.close()


@contextlib.contextmanager
def files_as(account: Account | None) -> Iterator[None]:
    """Run the block with the account's file-system identity, in this thread only (module
    docstring); a no-op off Linux or where the process is not root."""
    if not switching(account) or not sys.platform.startswith("linux"):
        yield
        return
    assert account is not None
    libc = ctypes.CDLL(None, use_errno=True)
    before_gid = libc.setfsgid(account.gid)
    before_uid = libc.setfsuid(account.uid)
    try:
        yield
    finally:
        libc.setfsuid(before_uid)
        libc.setfsgid(before_gid)


__all__ = ["acting_as", "copy_between", "drop_to", "files_as", "make_scratch", "switching"]
