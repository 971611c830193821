"""The submit hash: the macro table a submit description builds, with use counts.

Names are case-insensitive. Each entry remembers the line it came from and
whether anything looked at it, which is how condor_submit finds lines that
were never used ("Is it a typo?"). Per-job values (``Cluster``, ``Process``,
``Step``, ``Row``, ``Item`` and the loop variables) live in a separate layer
that ``set_job`` replaces for every job; the hash notes whether a lookup
touched that layer (``touched_job``), so a builder can tell whether a value
is the same for every job of a queue statement.
"""

from __future__ import annotations

from dataclasses import dataclass

from htcpool.config.macros import LazyRandom
from htcpool.submit.macros import Expander
from htcpool.submit.world import SubmitHost

PER_JOB = frozenset({"cluster", "clusterid", "process", "procid", "step", "row", "itemindex",
                     "item", "node", "jobid"})
CLUSTER_WIDE = frozenset({"cluster", "clusterid"})


@dataclass(slots=True)
class Entry:
    name: str
    value: str
    line: int
    used: bool = False


class SubmitHash:
    """Submit macros and commands, looked up case-insensitively."""

    def __init__(self, host: SubmitHost, submit_file: str = "") -> None:
        self.host = host
        self.entries: dict[str, Entry] = {}
        self.builtin: dict[str, str] = {}
        self.job: dict[str, str] = {}
        self.touched_job = False
        self.expander = Expander(self._lookup, host.environ, LazyRandom(host.seed), host.cwd)
        self._set_builtins(submit_file)

    def _set_builtins(self, submit_file: str) -> None:
        h = self.host
        days = h.now // 86400
        year, month, day = _civil_from_days(days)
        self.builtin = {
            "submit_file": submit_file,
            "submit_time": str(h.now),
            "year": str(year),
            "month": str(month),
            "day": str(day),
            "arch": h.arch,
            "opsys": h.opsys,
            "opsysandver": h.opsys,
            "islinux": "true" if h.opsys == "LINUX" else "false",
            "iswindows": "true" if h.opsys == "WINDOWS" else "false",
            "username": h.user,
            "owner": h.user,
            "filesystem_domain": h.file_system_domain,
        }

    # -- table
    def set(self, name: str, value: str, line: int = 0) -> None:
        self.entries[name.lower()] = Entry(name, value, line)

    def append(self, name: str, value: str, line: int = 0) -> None:
        old = self.entries.get(name.lower())
        self.set(name, f"{old.value} {value}" if old and old.value else value, line)

    def set_job(self, values: dict[str, str]) -> None:
        """Replace the per-job layer (keys lower case)."""
        self.job = values

    def lookup(self, name: str) -> str | None:
        """The raw value of ``name`` (job layer, file, built-ins), or None."""
        return self._lookup(name)

    def _lookup(self, name: str) -> str | None:
        low = name.lower()
        if low in self.job:
            if low not in CLUSTER_WIDE:
                self.touched_job = True
            return self.job[low]
        entry = self.entries.get(low)
        if entry is not None:
            entry.used = True
            return entry.value
        if low in PER_JOB:
            self.touched_job = True
        return self.builtin.get(low)

    # -- what the builder uses
    def raw(self, *names: str) -> str | None:
        """The unexpanded value of the first of ``names`` that is defined (marks it used)."""
        for name in names:
            entry = self.entries.get(name.lower())
            if entry is not None:
                entry.used = True
                return entry.value
        return None

    def get_entry(self, name: str) -> tuple[str, int] | None:
        """The unexpanded value of ``name`` and its line (marks it used), or None."""
        entry = self.entries.get(name.lower())
        if entry is None:
            return None
        entry.used = True
        return entry.value, entry.line

    def get(self, *names: str) -> str | None:
        """The expanded, stripped value of the first of ``names`` that is defined."""
        raw = self.raw(*names)
        return None if raw is None else self.expand(raw).strip()

    def expand(self, text: str) -> str:
        return self.expander.expand(text)

    def defined(self, name: str) -> bool:
        low = name.lower()
        return low in self.job or low in self.entries or low in self.builtin

    def unused(self) -> list[Entry]:
        """Entries from the file that nothing looked at, in line order."""
        return sorted((e for e in self.entries.values() if not e.used and e.line), key=lambda e: e.line)


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of the UTC date ``days`` after 1970-01-01."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day
