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
