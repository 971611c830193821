"""Clock and calendar functions: ``time``, ``currentTime``, ``timeZoneOffset``, ``dayTime``,
``getYear`` … ``getSeconds``, ``splitTime``, ``formatTime``, ``interval``.

The clock is the context's (``state.ctx.clock``; without one, reading the time
fails the evaluation, see ``htcpool.classad.context``) and "local time" is the
context's ``local_zone``, where HTCondor uses the process's time zone. Broken-down
times come from ``calendar``; ``formatTime`` formats the fields of ``splitTime``'s
ad (so it accepts such an ad too), with weekday and year day recomputed from them.
Reals pass through C's 32-bit ``int`` where HTCondor's code does; integers are
64-bit times, but years beyond what C's ``gmtime`` can represent are not emulated.
"""

from __future__ import annotations

from typing import Any

from htcpool.classad.builtins import builtin
from htcpool.classad.builtins.calendar import from_fields, gmtime, strftime, timegm
from htcpool.classad.builtins.timeconv import double_to_int32, double_to_time
from htcpool.classad.builtins.types import c_int32, is_classad, to_int
from htcpool.classad.nodes import EvalState, eval_in
from htcpool.classad.values import ERROR, UNDEFINED, AbsTime, RelTime


@builtin("time", 0)
def _time(s: EvalState) -> Any:
    return s.ctx.time_int()


@builtin("currentTime", 0)
def _current_time(s: EvalState) -> Any:
    return AbsTime(s.ctx.time_int("currentTime()"), s.ctx.local_zone)


@builtin("timeZoneOffset", 0)
def _time_zone_offset(s: EvalState) -> Any:
    return RelTime(float(s.ctx.local_zone))


@builtin("dayTime", 0)
def _day_time(s: EvalState) -> Any:
    return RelTime(float((s.ctx.time_int("dayTime()") + s.ctx.local_zone) % 86400))


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b


_ABS_FIELDS = {
    "getYear": lambda tm: tm.year,
    "getMonth": lambda tm: tm.mon + 1,
    "getDayOfYear": lambda tm: tm.yday,
    "getDayOfMonth": lambda tm: tm.mday,
    "getDayOfWeek": lambda tm: tm.wday,
    "getHours": lambda tm: tm.hour,
    "getMinutes": lambda tm: tm.min,
    "getSeconds": lambda tm: tm.sec,
}
_REL_FIELDS = {
    "getDays": lambda r: _c_div(r, 86400),
    "getHours": lambda r: _c_div(_c_mod(r, 86400), 3600),
    "getMinutes": lambda r: _c_div(_c_mod(r, 3600), 60),
    "getSeconds": lambda r: _c_mod(r, 60),
}


def _register_field(name: str) -> None:
    of_abs = _ABS_FIELDS.get(name)
    of_rel = _REL_FIELDS.get(name)

    def field(s: EvalState, v: Any) -> Any:
        if type(v) is AbsTime:
            return of_abs(gmtime(v.secs + s.ctx.local_zone)) if of_abs else ERROR
        if type(v) is RelTime:
            return of_rel(double_to_time(v.secs)) if of_rel else ERROR
        return ERROR

    builtin(name, 1)(field)


for _name in ("getYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDayOfWeek", "getDays",
              "getHours", "getMinutes", "getSeconds"):  # fmt: skip
    _register_field(_name)


def _abs_fields(secs: int, offset: int) -> dict[str, Any]:
    tm = gmtime(secs + offset)
    return {
        "Type": "AbsoluteTime", "Year": tm.year, "Month": tm.mon + 1, "Day": tm.mday,
        "Hours": tm.hour, "Minutes": tm.min, "Seconds": tm.sec, "Offset": offset,
    }  # fmt: skip


def _rel_fields(rsecs: float) -> dict[str, Any]:
    negative = rsecs < 0
    if negative:
        rsecs = -rsecs
    whole = double_to_int32(rsecs)
    days, hrs, mins = whole, _c_mod(whole, 86400), 0
    mins = _c_mod(hrs, 3600)
    secs = _c_mod(mins, 60) + (rsecs - float(int(rsecs // 1)))
    days, hrs, mins = _c_div(days, 86400), _c_div(hrs, 3600), _c_div(mins, 60)
    if negative:
        if days > 0:
            days = -days
        elif hrs > 0:
            hrs = -hrs
        elif mins > 0:
            mins = -mins
        else:
            secs = -secs
    return {"Type": "RelativeTime", "Days": days, "Hours": hrs, "Minutes": mins, "Seconds": secs}


def _split(s: EvalState, v: Any) -> dict[str, Any] | None:
    t = type(v)
    if t is int:
        return _abs_fields(v, s.ctx.local_zone)
    if t is float:
        return _abs_fields(double_to_int32(v), s.ctx.local_zone)
    if t is AbsTime:
        return _abs_fields(v.secs, v.offset)
    if t is RelTime:
        return _rel_fields(v.secs)
    return None


@builtin("splitTime", 1)
def _split_time(s: EvalState, v: Any) -> Any:
    from htcpool.classad.classad import ClassAd

    if v is UNDEFINED:
        return UNDEFINED
    fields = _split(s, v)
    return ERROR if fields is None else ClassAd(fields)


def _ad_int(s: EvalState, ad: Any, name: str) -> int | None:
    node = ad._exprs.get(name.lower())
    if node is None:
        return None
    v = eval_in(s, node, ad)
    return c_int32(v) if type(v) is int else None


@builtin("formatTime", 0, 2)
def _format_time(s: EvalState, when: Any = None, fmt: Any = "%c") -> Any:
    zone = s.ctx.local_zone
    if when is None:
        when = s.ctx.time_int("formatTime()")
    if type(when) is RelTime:
        return ERROR
    if is_classad(when):
        got = {k: _ad_int(s, when, k) for k in ("Year", "Month", "Day", "Hours", "Minutes", "Seconds")}
    else:
        fields = _split(s, when)
        if fields is None:
            return ERROR
        got = {k: fields[k] for k in ("Year", "Month", "Day", "Hours", "Minutes", "Seconds")}
    if type(fmt) is not str:
        return ERROR
    year = got["Year"] if got["Year"] is not None else 1900
    mon0 = got["Month"] - 1 if got["Month"] is not None else 0
    tm = from_fields(year, mon0, got["Day"] or 0, got["Hours"] or 0, got["Minutes"] or 0, got["Seconds"] or 0)
    epoch = timegm(tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec) - zone
    text = strftime(fmt, tm, 0, s.ctx.local_zone_name, epoch)
    return text if len(text.encode("utf-8", "surrogateescape")) < 1023 else ""


@builtin("interval", 1)
def _interval(s: EvalState, v: Any) -> Any:
    n = to_int(v)
    if type(n) is not int:
        return ERROR
    total = c_int32(n)
    days = _c_div(total, 86400)
    total = _c_mod(total, 86400)
    hours = _c_div(total, 3600)
    total = _c_mod(total, 3600)
    mins = _c_div(total, 60)
    secs = _c_mod(total, 60)
    if days:
        return "%d+%02d:%02d:%02d" % (days, abs(hours), abs(mins), abs(secs))
    if hours:
        return "%d:%02d:%02d" % (hours, abs(mins), abs(secs))
    if mins:
        return "%d:%02d" % (mins, abs(secs))
    return "%d" % secs


