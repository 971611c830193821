"""``JobEventLog`` and ``JobEvent``: following a user log, as HTCondor's bindings do.

``JobEventLog(filename)`` reads events from the start of the file; an event is
given out only once its closing ``...`` line is there, so a log that a schedd is
still writing is never read half-way. ``events(stop_after)`` sets how long
iteration waits for a new event: ``None`` for ever, ``0`` not at all, ``N`` up
to N seconds (then ``StopIteration``, after which iterating again goes on where
it stopped). Each ``JobEvent`` is a read-only mapping of the event's attributes
(``_events.parse_event``) with ``type``, ``cluster``, ``proc`` and ``timestamp``;
``str()`` is the event's text. HTCondor manual, "Python bindings, version 2 API
reference", classes JobEventLog and JobEvent.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from htcpool.htcondor2._enums import JobEventType
from htcpool.htcondor2._errors import HTCondorException

POLL_INTERVAL = 0.1
_END = "...\n"


class JobEvent(Mapping[str, Any]):
    """One event of a user log."""

    def __init__(self, data: Any, event_text: str) -> None:
        self._data = data
        self._event_text = event_text

    @property
    def type(self) -> JobEventType:
        return JobEventType(self._data["EventTypeNumber"])

    @property
    def cluster(self) -> int:
        return int(self._data.get("Cluster", -1))

    @property
    def proc(self) -> int:
        return int(self._data.get("Proc", -1))

    @property
    def timestamp(self) -> int:
        """Seconds since the epoch of the event's time (local time, as the log is written)."""
        text = str(self._data["EventTime"])
        utc = text.endswith("Z")
        when = datetime.fromisoformat(text.removesuffix("Z"))
        if utc:
            from datetime import UTC

            when = when.replace(tzinfo=UTC)
        return int(when.timestamp())

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return (f"JobEvent(type={self.type}, cluster={self.cluster}, proc={self.proc}, "
                f"timestamp={self.timestamp})")

    def __str__(self) -> str:
        return self._event_text


class JobEventLog:
    """An iterator over the events of a user log, blocking or polling for new ones."""

    def __init__(self, filename: str) -> None:
        if not isinstance(filename, str):
            raise TypeError("filename must be a string")
        if not filename:
            raise ValueError("filename must not be empty")
        self._filename = filename
        self._deadline: float | None = None
        self._offset = 0
        self._closed = False
        try:
            open(filename, "rb").close()
        except OSError as e:
            raise HTCondorException(f"cannot open the job event log {filename}: {e.strerror}") from None

    def events(self, stop_after: int | None = None) -> JobEventLog:
        if stop_after is None:
            self._deadline = None
        elif isinstance(stop_after, int | float) and not isinstance(stop_after, bool):
            self._deadline = time.monotonic() + stop_after
        else:
            raise TypeError("deadline must be an integer")
        return self

    def close(self) -> None:
        self._closed = True

    def __iter__(self) -> JobEventLog:
        return self

    def __next__(self) -> JobEvent:
        from htcpool.htcondor2._events import EventFormatError, parse_event

        while not self._closed:
            text = self._next_text()
            if text is not None:
                try:
                    return JobEvent(parse_event(text), text)
                except EventFormatError as e:
                    raise HTCondorException(f"{self._filename}: {e}") from None
            if self._deadline is not None and time.monotonic() >= self._deadline:
                break
            time.sleep(POLL_INTERVAL)
        raise StopIteration

    def _next_text(self) -> str | None:
        """The next complete event's text (the ``...`` line left out), or None for now."""
        with open(self._filename, "rb") as f:
            f.seek(self._offset)
            chunk: list[str] = []
            used = 0
            for raw in f:
                if not raw.endswith(b"\n"):
                    return None
                used += len(raw)
                line = raw.decode("utf-8", "replace")
                if line == _END:
                    if chunk:
                        self._offset += used
                        return "".join(chunk)
                    self._offset += used
                    used = 0
                    continue
                chunk.append(line)
        return None

    def __enter__(self) -> JobEventLog:
        self._deadline = None
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
