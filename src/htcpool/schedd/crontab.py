"""CronTab schedules: the next ``DeferralTime`` of a job from its ``Cron*`` attributes.

Fields: minute 0–59, hour 0–23, day of month 1–31, month 1–12, day of week
0–7 (0 and 7 are Sunday). Each accepts ``*``, a value, a range ``a-b``, a
list ``a,b,c`` of those, and a step ``*/n`` or ``a-b/n``; a missing field is
``*``. When both day of month and day of week are restricted a day matching
either qualifies; otherwise the restricted one decides. ``next_run`` starts at
the next whole minute after ``now`` (the current minute is never chosen) and
searches in the job's local time, given as seconds east of UTC.

``refresh(queue, now)`` recomputes the next run of every Idle crontab job: the schedd calls
it when it starts (after a restart the clock has moved on) and after a reconfiguration (the
time zone, or the job's own Cron fields by condor_qedit, may have changed). A job whose
``DeferralTime`` has come and whose ``DeferralWindow`` is still open keeps it (it is due to
run now); one whose window has passed gets the next run after ``now``; a schedule that cannot be read holds the job (code 25), as at submit.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from htcpool.schedd.errors import ScheddError

if TYPE_CHECKING:
    from htcpool.schedd.queue import JobQueue
    from htcpool.schedd.store import JobId

FIELDS = (("CronMinute", 0, 59), ("CronHour", 0, 23), ("CronDayOfMonth", 1, 31),
          ("CronMonth", 1, 12), ("CronDayOfWeek", 0, 7))


#: HoldReasonCode of a job whose cron schedule cannot be read
HOLD_INVALID_CRON = 25


class CronError(ScheddError):
    """Cron fields that cannot be read."""


def parse_field(text: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            raise CronError(f"empty item in '{text}'")
        body, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if body == "*":
                start, stop = low, high
            elif "-" in body:
                a, b = body.split("-", 1)
                start, stop = int(a), int(b)
            else:
                start = stop = int(body)
        except ValueError:
            raise CronError(f"'{part}' is not a number, range or step") from None
        if step <= 0 or start > stop:
            raise CronError(f"'{part}' is not a valid range")
        values.update(v for v in range(start, stop + 1, step) if low <= v <= high)
    if not values:
        raise CronError(f"'{text}' selects no value in {low}-{high}")
    return frozenset(values)


@dataclass(frozen=True)
class CronSchedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    days_restricted: bool
    weekdays_restricted: bool

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> CronSchedule:
        parsed = []
        for name, low, high in FIELDS:
            parsed.append(parse_field(fields.get(name, "*") or "*", low, high))
        weekdays = frozenset(0 if d == 7 else d for d in parsed[4])
        return cls(parsed[0], parsed[1], parsed[2], parsed[3], weekdays,
                   (fields.get("CronDayOfMonth") or "*").strip() != "*",
                   (fields.get("CronDayOfWeek") or "*").strip() != "*")

    def day_matches(self, year: int, month: int, day: int) -> bool:
        weekday = (calendar.weekday(year, month, day) + 1) % 7  # Sunday = 0
        in_month, in_week = day in self.days, weekday in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return in_month or in_week
        if self.weekdays_restricted:
            return in_week
        return in_month

    def next_run(self, now: float, zone: int = 0) -> int:
        """The first matching minute strictly after ``now``'s minute, as epoch seconds."""
        local = (int(now) + zone) // 60 * 60 + 60
        days, rest = divmod(local, 86400)
        for offset in range(0, 366 * 8 + 1):
            year, month, day = _civil(days + offset)
            if month not in self.months or not self.day_matches(year, month, day):
                continue
            start = rest if offset == 0 else 0
            for hour in sorted(self.hours):
                for minute in sorted(self.minutes):
                    t = hour * 3600 + minute * 60
                    if t >= start:
                        return (days + offset) * 86400 + t - zone
        raise CronError("the cron schedule never matches")


def refresh(queue: JobQueue, now: float) -> list[JobId]:
    """Recompute the Idle crontab jobs' next ``DeferralTime``; the ids of the jobs changed."""
    from htcpool.schedd.states import JobStatus

    context = queue.context(now)
    changed = []
    for job_id, ad in list(queue.jobs.items()):
        fields = {name: str(ad.evaluate(name, context)) for name, _, _ in FIELDS if name in ad}
        if not fields or ad.evaluate("JobStatus", context) != JobStatus.IDLE:
            continue
        current = ad.evaluate("DeferralTime", context)
        window = ad.evaluate("DeferralWindow", context)
        if type(current) is int and current <= now <= current + (window if type(window) is int else 0):
            continue  # due now: it runs within its window
        try:
            following = CronSchedule.from_fields(fields).next_run(now, queue.settings.local_zone)
        except CronError as e:
            queue.hold(job_id, None, now, f"Invalid cron schedule parameters: {e}", HOLD_INVALID_CRON)
            continue
        if following != current:
            ad["DeferralTime"] = following
            queue.save(job_id, now)
            changed.append(job_id)
    return changed


def _civil(days: int) -> tuple[int, int, int]:
    from htcpool.submit.hash import _civil_from_days

    return _civil_from_days(days)
