"""Throw-away OS accounts for the live tests that act as several users (root only)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def made_users(*prefixes: str) -> Iterator[tuple[str, ...]]:
    """One new account per prefix (the prefix and this process's pid), removed afterwards."""
    names = tuple(f"{prefix}{os.getpid() % 100000}" for prefix in prefixes)
    made = []
    try:
        for name in names:
            subprocess.run(["useradd", "-M", "-N", "-s", "/bin/sh", name], check=True, capture_output=True)
            made.append(name)
        yield names
    finally:
        for name in made:
            subprocess.run(["userdel", name], capture_output=True)


def others_cannot_run_python() -> str | None:
    """Why an unprivileged account cannot run this checkout's interpreter (a checkout under a
    directory only root may enter, such as one ``mktemp -d`` made), or None when it can. The tests
    that act as other users need it; where it fails they are skipped with this reason."""
    import shutil
    import sys

    if os.geteuid() != 0 or shutil.which("runuser") is None:
        return "needs root and runuser"
    done = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c", "pass"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return f"other users cannot run {sys.executable}: {done.stderr.strip()[-200:]}"
    return None


#: computed once per test process
NOT_FOR_OTHERS = others_cannot_run_python()
