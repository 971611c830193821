"""The collector's persistent ad log on disk (``COLLECTOR_PERSISTENT_AD_LOG``).

``read_absent_file`` returns the ads a previous collector left there (none when the file does
not exist). A file that does not read back (``collector.absentlog``'s form) is not fatal: the
collector logs an error naming the knob, the file, the line and what was expected, moves the file
aside to ``<file>.bad`` for the administrator, and starts without those ads, so a damaged file
never keeps the pool's collector down. ``write_absent_file`` replaces the file whole and
atomically (a temporary file in the same directory, flushed to disk, then renamed over it), so a
crash mid-write leaves the previous snapshot.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

from htcpool.classad import ClassAd
from htcpool.collector.absentlog import AbsentLogError, format_absent_log, parse_absent_log

log = logging.getLogger("htcpool.collector")
KNOB = "COLLECTOR_PERSISTENT_AD_LOG"


def read_absent_file(path: Path) -> list[ClassAd]:
    """The ads in ``path``; none (and the file set aside, with an error logged) when it is bad."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as e:
        log.error("%s = %s cannot be read (%s); starting without its absent ads", KNOB, path, e)
        return []
    try:
        return parse_absent_log(text, str(path))
    except AbsentLogError as e:
        aside = path.with_name(path.name + ".bad")
        try:
            os.replace(path, aside)
        except OSError as moved:
            log.error("%s: %s; it could not be moved aside (%s)", KNOB, e, moved)
        else:
            log.error("%s: %s; the file is kept as %s and the collector starts without its absent ads",
                      KNOB, e, aside)
        return []


def write_absent_file(path: Path, ads: Iterable[ClassAd]) -> None:
    """Replace ``path`` with a snapshot of ``ads``; an error is logged, never raised."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("w", encoding="utf-8") as f:
            f.write(format_absent_log(ads))
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except OSError as e:
        log.error("%s = %s cannot be written: %s", KNOB, path, e)
        temporary.unlink(missing_ok=True)
