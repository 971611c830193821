"""What condor_submit learns from the machine it runs on, injected.

The submit core never looks at the clock, the file system, the environment or
the user database itself. A ``SubmitHost`` carries the facts (user, working
directory, submit time, environment, platform and version strings) and a
``FileSystemView`` answers the few questions about files that the submit
language asks: the size of the executable and of input files, the lines of a
``queue … from FILE`` and the names matched by ``queue … matching``.

``MemoryFileSystem`` is a view backed by a dictionary, for tests and
simulations; the CLI passes a view of the real disk.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

CONDOR_VERSION = "$CondorVersion: 25.14.0 2026-11-21 htcpool $"
CONDOR_PLATFORM = "$CondorPlatform: X86_64-htcpool $"


class FileSystemView(Protocol):
    """The questions condor_submit asks of the file system."""

    def size(self, path: str) -> int | None:
        """Size in bytes of the file at absolute ``path``, or None when it does not exist."""

    def read_text(self, path: str) -> str | None:
        """Contents of the file at absolute ``path``, or None when it cannot be read."""

    def list_dir(self, path: str) -> list[tuple[str, bool]] | None:
        """Entries of directory ``path`` as (name, is_directory), or None."""


@dataclass
class MemoryFileSystem:
    """A file system held in memory, for tests: absolute paths of files and directories."""

    files: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    sizes: dict[str, int] = field(default_factory=dict)

    def size(self, path: str) -> int | None:
        if path in self.sizes:
            return self.sizes[path]
        content = self.files.get(path)
        return None if content is None else len(content.encode())

    def read_text(self, path: str) -> str | None:
        return self.files.get(path)

    def list_dir(self, path: str) -> list[tuple[str, bool]] | None:
        prefix = path.rstrip("/") + "/"
        out = set()
        for name in [*self.files, *self.sizes, *self.dirs]:
            rest = name[len(prefix):]
            if name.startswith(prefix) and rest and "/" not in rest:
                out.add((rest, name in self.dirs))
        return sorted(out)


@dataclass(frozen=True)
class SubmitHost:
    """Facts about the submitting user and machine that end up in job ads."""

    user: str = "nobody"
    cwd: str = "/"
    now: int = 0
    environ: Mapping[str, str] = field(default_factory=dict)
    arch: str = "X86_64"
    opsys: str = "LINUX"
    file_system_domain: str = "localhost"
    condor_version: str = CONDOR_VERSION
    condor_platform: str = CONDOR_PLATFORM
    local_zone: int = 0
    seed: int = 0

    def absolute(self, path: str, base: str | None = None) -> str:
        """``path`` made absolute against ``base`` (default: the working directory)."""
        if path.startswith("/"):
            return posixpath.normpath(path)
        return posixpath.normpath(posixpath.join(base or self.cwd, path))


def glob_names(fs: FileSystemView, directory: str, pattern: str, want: str) -> list[str]:
    """Names in ``directory`` matching ``pattern`` (relative, one level): files, dirs or any."""
    head, tail = posixpath.split(pattern)
    where = posixpath.join(directory, head) if head else directory
    entries = fs.list_dir(where) or []
    out = []
    for name, is_dir in entries:
        if name.startswith(".") and not tail.startswith("."):
            continue
        if not fnmatch.fnmatchcase(name, tail):
            continue
        if (want == "files" and is_dir) or (want == "dirs" and not is_dir):
            continue
        out.append(posixpath.join(head, name) if head else name)
    return sorted(out)
