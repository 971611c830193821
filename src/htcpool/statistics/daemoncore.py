"""DaemonCore's statistics: what every daemon publishes about itself.

HTCondor's DaemonCore keeps, for each daemon, how busy its event loop is and counts of what it
handled, and its self-monitor samples the process's CPU and memory; both go into the daemon's
own ad (the ``DC`` collection of ``STATISTICS_TO_PUBLISH``; the attributes are listed in the
daemon ClassAd attributes of the manual). Here:

* ``DaemonCoreDutyCycle`` and ``RecentDaemonCoreDutyCycle`` (always, even at level 0): the
  fraction of the time the daemon's process spent working rather than waiting, over its life
  and over the recent window. HTCondor measures the time its loop did not spend in ``select``;
  a Python daemon's event loop cannot be asked that, so the driver reports the process's CPU
  time (``note_cpu``), and the duty cycle is CPU seconds over wall-clock seconds, at most 1.
* At level 1: ``DCStatsLifetime``, ``DCRecentStatsLifetime`` (with ``R``), and the windowed
  counts ``SockMessages`` (requests answered), ``SocketRuntime`` (seconds spent answering them),
  ``TimersFired`` and ``TimerRuntime`` (the timer loop's passes and their seconds), each with
  its ``Recent`` value. At level 2 also ``DCStatsLastUpdateTime``, ``DCRecentStatsTickTime`` and
  ``DCRecentWindowMax``.
* The self-monitor (``MonitorSelf…``), published whenever a reading is given, as HTCondor's
  daemons always publish it: ``MonitorSelfTime`` (when it was read), ``MonitorSelfAge`` (seconds
  since the daemon started), ``MonitorSelfCPUUsage`` (percent of one CPU since the previous
  reading), ``MonitorSelfImageSize`` and ``MonitorSelfResidentSetSize`` (KiB) and
  ``MonitorSelfRegisteredSocketCount`` (open sockets).

Nothing here reads a clock or the process: times and readings come from the driver.
"""

from __future__ import annotations

from dataclasses import dataclass

from htcpool.statistics.publish import Publish
from htcpool.statistics.window import RecentSum, Window, publish_recent


@dataclass(frozen=True, slots=True)
class SelfReading:
    """One look at the daemon's process."""

    cpu_seconds: float  # user and system CPU time used so far
    image_kib: int
    resident_kib: int
    sockets: int


class DaemonCoreStats:
    """One daemon's DaemonCore counters and self-monitor."""

    def __init__(self, started: float, window: Window | None = None) -> None:
        self.window = window or Window(started)
        self.started = started
        self.messages = RecentSum(self.window)
        self.message_time = RecentSum(self.window)
        self.timers = RecentSum(self.window)
        self.timer_time = RecentSum(self.window)
        self.cpu = RecentSum(self.window)
        self._cpu_seen: tuple[float, float] | None = None  # (when, cpu seconds) of the last reading
        self._usage = 0.0
        self.last_update = started

    def note_request(self, seconds: float, now: float) -> None:
        self.messages.add(1, now)
        self.message_time.add(max(0.0, seconds), now)

    def note_timer(self, seconds: float, now: float) -> None:
        self.timers.add(1, now)
        self.timer_time.add(max(0.0, seconds), now)

    def note_reading(self, reading: SelfReading, now: float) -> None:
        """A reading of the process: CPU used since the last one counts toward the duty cycle."""
        if self._cpu_seen is not None:
            when, cpu = self._cpu_seen
            used = max(0.0, reading.cpu_seconds - cpu)
            self.cpu.add(used, now)
            if now > when:
                self._usage = 100.0 * used / (now - when)
        self._cpu_seen = (now, reading.cpu_seconds)

    def duty_cycle(self, now: float) -> tuple[float, float]:
        """The lifetime and recent duty cycles (0 before there are two readings)."""
        life = self.window.lifetime(now) or 1
        recent = self.window.recent_lifetime(now) or 1
        return min(1.0, self.cpu.value / life), min(1.0, self.cpu.recent(now) / recent)

    def publish(self, flags: Publish, now: float, reading: SelfReading | None = None) -> dict[str, object]:
        """The attributes for the daemon's ad at ``now``, as ``flags`` asks (see the module rules)."""
        if reading is not None:
            self.note_reading(reading, now)
        attrs: dict[str, object] = {}
        window = self.window
        if flags.on:
            attrs["DCStatsLifetime"] = window.lifetime(now)
            if flags.level >= 2:
                attrs["DCStatsLastUpdateTime"] = int(self.last_update)
            if flags.recent:
                attrs["DCRecentStatsLifetime"] = window.recent_lifetime(now)
                if flags.level >= 2:
                    attrs["DCRecentStatsTickTime"] = int(now)
                    attrs["DCRecentWindowMax"] = window.seconds
            options = {"lifetime": flags.lifetime, "recent": flags.recent, "zeros": flags.zeros}
            publish_recent(attrs, "SockMessages", self.messages, now, **options)
            publish_recent(attrs, "SocketRuntime", self.message_time, now, integer=False, **options)
            publish_recent(attrs, "TimersFired", self.timers, now, **options)
            publish_recent(attrs, "TimerRuntime", self.timer_time, now, integer=False, **options)
        life, recent = self.duty_cycle(now)
        attrs["DaemonCoreDutyCycle"] = round(life, 6)
        attrs["RecentDaemonCoreDutyCycle"] = round(recent, 6)
        if reading is not None:
            attrs.update({"MonitorSelfTime": int(now), "MonitorSelfAge": max(0, int(now - self.started)),
                          "MonitorSelfCPUUsage": round(self._usage, 6),
                          "MonitorSelfImageSize": reading.image_kib,
                          "MonitorSelfResidentSetSize": reading.resident_kib,
                          "MonitorSelfRegisteredSocketCount": reading.sockets})
        self.last_update = now
        return attrs


__all__ = ["DaemonCoreStats", "SelfReading"]
