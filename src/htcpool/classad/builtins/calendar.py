"""Calendar arithmetic and a C-locale ``strftime``, without the ``time`` module.

Days are counted from 1970-01-01 with Howard Hinnant's civil-date algorithms, so
any year C can hold works (``datetime`` stops at years 1 and 9999), and out-of-range
fields normalise the way ``mktime``/``timegm`` normalise them (month 13 is January
of the next year, day 0 is the last day of the month before).

``strftime`` implements glibc's conversions in the C locale, including the GNU
flags ``-`` (no padding), ``_`` (spaces), ``0`` (zeros) and ``^`` (upper case) and
a field width; an unknown conversion is copied as written, as glibc does.
"""

from __future__ import annotations

from dataclasses import dataclass

_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July",
    "August", "September", "October", "November", "December",
)  # fmt: skip


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of year ``y``, month ``m`` (1-12), day ``d`` (1-31)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    """(year, month 1-12, day 1-31) of ``z`` days since 1970-01-01."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def timegm(year: int, mon0: int, mday: int, hour: int, minute: int, sec: int) -> int:
    """Seconds since the epoch of a broken-down UTC time; ``mon0`` counts from 0 and may overflow."""
    year += mon0 // 12
    mon0 %= 12
    days = days_from_civil(year, mon0 + 1, 1) + mday - 1
    return days * 86400 + hour * 3600 + minute * 60 + sec


@dataclass(frozen=True, slots=True)
class BrokenDown:
    """C's ``struct tm``: ``mon`` counts from 0, ``yday`` from 0, ``wday`` from Sunday."""

    year: int
    mon: int
    mday: int
    hour: int
    min: int
    sec: int
    wday: int
    yday: int


def gmtime(secs: int) -> BrokenDown:
    days, rem = divmod(secs, 86400)
    y, m, d = civil_from_days(days)
    yday = days - days_from_civil(y, 1, 1)
    return BrokenDown(y, m - 1, d, rem // 3600, rem % 3600 // 60, rem % 60, (days + 4) % 7, yday)


def from_fields(year: int, mon0: int, mday: int, hour: int, minute: int, sec: int) -> BrokenDown:
    """A ``struct tm`` holding the fields as given, with weekday and year day computed."""
    days = days_from_civil(year + mon0 // 12, mon0 % 12 + 1, 1) + mday - 1
    y = year + mon0 // 12
    return BrokenDown(year, mon0, mday, hour, minute, sec, (days + 4) % 7, days - days_from_civil(y, 1, 1))


def _iso_week(tm: BrokenDown) -> tuple[int, int]:
    """ISO 8601 (year, week) as glibc computes them for %G and %V."""
    year = tm.year

    def week_start(y: int) -> int:
        jan4 = days_from_civil(y, 1, 4)
        return jan4 - (jan4 + 3) % 7  # the Monday of week 1

    day = days_from_civil(year, 1, 1) + tm.yday
    start = week_start(year)
    if day < start:
        year -= 1
        start = week_start(year)
    elif day >= week_start(year + 1):
        year += 1
        start = week_start(year)
    return year, (day - start) // 7 + 1


def strftime(fmt: str, tm: BrokenDown, gmtoff: int, zone: str, epoch: int) -> str:
    """Format ``tm`` like glibc's strftime in the C locale."""
    out: list[str] = []
    i, n = 0, len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        start = i
        i += 1
        flag = ""
        while i < n and fmt[i] in "-_0^#":
            flag = fmt[i] if fmt[i] != "#" else flag
            i += 1
        width = ""
        while i < n and fmt[i].isdigit():
            width += fmt[i]
            i += 1
        while i < n and fmt[i] in "EO":
            i += 1
        if i >= n:
            out.append(fmt[start:])
            break
        text = _conversion(fmt[i], tm, gmtoff, zone, epoch, flag, int(width) if width else 0)
        out.append(fmt[start : i + 1] if text is None else text)
        i += 1
    return "".join(out)


def _num(value: int, digits: int, pad: str, flag: str, width: int) -> str:
    if flag == "-":
        return str(value)
    if flag == "_":
        pad = " "
    elif flag == "0":
        pad = "0"
    w = max(width, digits)
    text = str(abs(value))
    body = text.rjust(w - (value < 0), pad)
    return ("-" + body) if value < 0 else body


def _conversion(c: str, tm: BrokenDown, gmtoff: int, zone: str, epoch: int, flag: str, width: int) -> str | None:
    text: str
    hour12 = tm.hour % 12 or 12
    if c == "%":
        return "%"
    if c == "n":
        return "\n"
    if c == "t":
        return "\t"
    numeric = {
        "d": (tm.mday, 2, "0"), "e": (tm.mday, 2, " "), "H": (tm.hour, 2, "0"),
        "k": (tm.hour, 2, " "), "I": (hour12, 2, "0"), "l": (hour12, 2, " "),
        "j": (tm.yday + 1, 3, "0"), "m": (tm.mon + 1, 2, "0"), "M": (tm.min, 2, "0"),
        "S": (tm.sec, 2, "0"), "w": (tm.wday, 1, "0"), "u": ((tm.wday + 6) % 7 + 1, 1, "0"),
        "y": ((tm.year % 100), 2, "0"), "Y": (tm.year, 1, "0"), "C": (tm.year // 100, 2, "0"),
        "U": ((tm.yday + 7 - tm.wday) // 7, 2, "0"),
        "W": ((tm.yday + 7 - (tm.wday + 6) % 7) // 7, 2, "0"),
        "s": (epoch, 1, "0"),
    }  # fmt: skip
    if c in numeric:
        value, digits, pad = numeric[c]
        return _num(value, digits, pad, flag, width)
    if c in "GgV":
        iso_year, week = _iso_week(tm)
        if c == "G":
            return _num(iso_year, 1, "0", flag, width)
        if c == "g":
            return _num(iso_year % 100, 2, "0", flag, width)
        return _num(week, 2, "0", flag, width)
    if c == "a":
        text = _DAYS[tm.wday % 7][:3]
    elif c == "A":
        text = _DAYS[tm.wday % 7]
    elif c in "bh":
        text = _MONTHS[tm.mon % 12][:3]
    elif c == "B":
        text = _MONTHS[tm.mon % 12]
    elif c == "p":
        text = "AM" if tm.hour < 12 else "PM"
    elif c == "P":
        text = "am" if tm.hour < 12 else "pm"
    elif c == "z":
        z = abs(gmtoff) // 60
        text = ("-" if gmtoff < 0 else "+") + "%02d%02d" % (z // 60, z % 60)
    elif c == "Z":
        text = zone
    else:
        composite = {
            "c": "%a %b %e %H:%M:%S %Y", "D": "%m/%d/%y", "x": "%m/%d/%y", "F": "%Y-%m-%d",
            "r": "%I:%M:%S %p", "R": "%H:%M", "T": "%H:%M:%S", "X": "%H:%M:%S",
        }  # fmt: skip
        if c not in composite:
            return None
        text = strftime(composite[c], tm, gmtoff, zone, epoch)
    if flag == "^":
        text = text.upper()
    return text.rjust(width, "0" if flag == "0" else " ")
