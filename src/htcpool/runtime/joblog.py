"""Writing job events to each job's user log (the ``log`` of its submit file).

The schedd core produces ``LogEvent`` records (the image-size event too); this
writer appends their text (``htcpool.schedd.format_event``) to the file named by
the job's ``UserLog``; ``write_all`` writes a batch of events (a cluster's submit events) with
each log opened once.
Jobs that have just left the queue are remembered (a bounded map) so their last
events still find the file. A log that cannot be written is reported once in
the schedd's log; it never stops the schedd.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import replace
from typing import TextIO

from htcpool.classad import ClassAd
from htcpool.schedd.eventlog import LogEvent, format_event

log = logging.getLogger("htcpool.schedd")
REMEMBERED = 4096


def _job_id(ad: ClassAd) -> tuple[int, int] | None:
    cluster, proc = ad.get("ClusterId"), ad.get("ProcId")
    if isinstance(cluster, int) and isinstance(proc, int):
        return cluster, proc
    return None


class UserLogWriter:
    def __init__(self, zone: int) -> None:
        self.zone = zone
        self.left: OrderedDict[tuple[int, int], ClassAd] = OrderedDict()
        self.failed: set[str] = set()

    def remember(self, ad: ClassAd) -> None:
        job_id = _job_id(ad)
        if job_id is None:
            return
        self.left[job_id] = ad
        while len(self.left) > REMEMBERED:
            self.left.popitem(last=False)

    def write(self, event: LogEvent, ad: ClassAd | None) -> None:
        self.write_all([(event, ad)])

    def write_all(self, events: Iterable[tuple[LogEvent, ClassAd | None]]) -> None:
        """Write each event, in order, to its job's log; each log is opened once for all of them
        (a 10,000-job cluster's submit events are one open, not 10,000)."""
        files: dict[str, TextIO | None] = {}
        try:
            for event, ad in events:
                if ad is None:
                    ad = self.left.get((event.cluster, event.proc))
                if ad is None:
                    continue
                path = ad.get("UserLog")
                if not isinstance(path, str) or not path:
                    continue
                if path not in files:
                    files[path] = self._open(path)
                f = files[path]
                if f is None:
                    continue
                try:
                    f.write(format_event(_with_details(event, ad), self.zone))
                except OSError as e:
                    self._cannot(path, e)
                    files[path] = None
                    with contextlib.suppress(OSError):  # already reported
                        f.close()
        finally:
            for path, f in files.items():
                if f is not None:
                    try:
                        f.close()
                    except OSError as e:
                        self._cannot(path, e)

    def _open(self, path: str) -> TextIO | None:
        try:
            return open(path, "a")
        except OSError as e:
            self._cannot(path, e)
            return None

    def _cannot(self, path: str, e: OSError) -> None:
        if path not in self.failed:
            self.failed.add(path)
            log.warning("cannot write the user log %s: %s", path, e)


def _with_details(event: LogEvent, ad: ClassAd) -> LogEvent:
    """Fill what the job ad knows into an event the queue made without it."""
    return replace(event, job=ad)
