"""Writing job events to each job's user log (the ``log`` of its submit file).

The schedd core produces ``LogEvent`` records (the image-size event too); this
writer appends their text (``htcpool.schedd.format_event``) to the file named by
the job's ``UserLog``; ``write_all`` writes a batch of events (a cluster's submit events) with
each log opened once.
Jobs that have just left the queue are remembered (a bounded map) so their last
events still find the file. A log that cannot be written is reported once in
the schedd's log; it never stops the schedd.

A writer made ``as_owner`` (a schedd running as root, whose users' jobs run as themselves) opens
each log with the job's ``Owner``'s file-system identity (``job_account.files_as``): the log is
the owner's file, created with the owner's rights, and a path the owner could not write is not
written by root either. An owner with no account on this machine gets no log (reported once).

``MaterializeLog`` is the schedd's own log of late materialization (``SCHEDD_MATERIALIZE_LOG``):
every factory's cluster events (035 to 038) and the submit event of each job a factory made, in
the user-log format, whether or not the jobs name a user log. HTCondor's own tests set the knob
to keep such a record; htcpool's factories survive a restart through the queue store, so this
file is a record to read (``htcondor2.JobEventLog``, condor_wait), never read back by the
schedd.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import replace
from typing import TextIO

from htcpool.classad import ClassAd
from htcpool.runtime.job_account import files_as
from htcpool.runtime.runas import os_account
from htcpool.schedd.eventlog import SUBMIT, LogEvent, format_event

log = logging.getLogger("htcpool.schedd")
REMEMBERED = 4096


def _job_id(ad: ClassAd) -> tuple[int, int] | None:
    cluster, proc = ad.get("ClusterId"), ad.get("ProcId")
    if isinstance(cluster, int) and isinstance(proc, int):
        return cluster, proc
    return None


class UserLogWriter:
    def __init__(self, zone: int, as_owner: bool = False) -> None:
        self.zone = zone
        self.as_owner = as_owner
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
                if ad is None:  # a factory's event for its cluster carries an ad of the cluster
                    ad = event.job
                if ad is None:
                    continue
                path = ad.get("UserLog")
                if not isinstance(path, str) or not path:
                    continue
                if path not in files:
                    files[path] = self._open(path, ad)
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

    def _open(self, path: str, ad: ClassAd) -> TextIO | None:
        try:
            if not self.as_owner:
                return open(path, "a")
            owner = ad.get("Owner")
            account = os_account(owner) if isinstance(owner, str) and owner else None
            if account is None:
                raise OSError(f"the job's owner {owner!r} has no account on this machine")
            with files_as(account):
                return open(path, "a")
        except OSError as e:
            self._cannot(path, e)
            return None

    def _cannot(self, path: str, e: OSError) -> None:
        if path not in self.failed:
            self.failed.add(path)
            log.warning("cannot write the user log %s: %s", path, e)


def from_factory(event: LogEvent, ad: ClassAd | None) -> bool:
    """A factory's own event, or the submit event of a job a factory made."""
    if event.proc < 0:
        return True
    return event.code == SUBMIT and ad is not None and "JobMaterializeNextProcId" in ad


class MaterializeLog:
    """Appends the factories' events to one file (see the module docstring); a file that cannot
    be written is reported once in the schedd's log."""

    def __init__(self, path: str, zone: int) -> None:
        self.path = path
        self.zone = zone
        self.failed = False

    def write(self, events: Iterable[tuple[LogEvent, ClassAd | None]]) -> None:
        text = "".join(format_event(event if ad is None else _with_details(event, ad), self.zone)
                       for event, ad in events if from_factory(event, ad))
        if not text:
            return
        try:
            with open(self.path, "a") as f:
                f.write(text)
        except OSError as e:
            if not self.failed:
                self.failed = True
                log.warning("cannot write SCHEDD_MATERIALIZE_LOG %s: %s", self.path, e.strerror or e)


def _with_details(event: LogEvent, ad: ClassAd) -> LogEvent:
    """Fill what the job ad knows into an event the queue made without it."""
    return replace(event, job=ad)
