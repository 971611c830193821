"""Text forms of expressions, values and ads, character for character as HTCondor prints them.

Three printers share one walker:

* ``unparse``: the canonical new-syntax form (HTCondor's ``ClassAdUnParser``;
  what ``repr()`` of an expression shows): binary operators spaced, unary
  operators written `` -x``, lists ``{ a,b }``, ads ``[ a = 1; b = 2 ]``,
  ``=?=``/``=!=`` written ``is``/``isnt``, reals as ``%1.15E``, characters
  beyond ASCII as the octal escapes of their UTF-8 bytes, and the names
  ``true false undefined error is isnt parent`` (any case) quoted.
* ``pretty``: HTCondor's ``PrettyPrint`` (what ``str()`` shows): like
  ``unparse`` but lists and ads are broken over indented lines.
* ``unparse_old``: the old-ClassAd form used for ``Attr = expr`` lines:
  ``=?=``/``=!=`` kept, reals as ``%.16G``, strings with only ``"`` escaped.

Attributes of an ad are printed in HTCondor's order: by name length, then by
name ignoring case.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from htcpool.classad.nodes import (
    AdExpr,
    AttrRef,
    BinaryOp,
    FnCall,
    ListExpr,
    Literal,
    Node,
    Paren,
    Subscript,
    Ternary,
    UnaryOp,
)
from htcpool.classad.parser import is_identifier
from htcpool.classad.values import ERROR, UNDEFINED, AbsTime, ListValue, RelTime

if TYPE_CHECKING:
    from htcpool.classad.classad import ClassAd

_NEW_OPS = {"=?=": " is ", "=!=": " isnt "}
_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
    "\v": "\\v", "\\": "\\\\",
}  # fmt: skip


_ORDERS: dict[tuple[str, ...], list[str]] = {}
_ORDERS_MAX = 1024


def ad_order(names: dict[str, str]) -> list[str]:
    """Keys of an ad in the order HTCondor prints them (remembered per set of keys in one order:
    the ads of a pool come in few shapes, and a tuple of the keys hashes faster than a sort)."""
    keys = tuple(names)
    order = _ORDERS.get(keys)
    if order is None:
        if len(_ORDERS) >= _ORDERS_MAX:
            _ORDERS.clear()
        order = _ORDERS[keys] = sorted(keys, key=lambda k: (len(k), k))
    return list(order)


def format_real(x: float, old: bool = False) -> str:
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if math.isnan(x):
        return 'real("NaN")'
    if math.isinf(x):
        return 'real("INF")' if x > 0 else 'real("-INF")'
    if old:
        text = "%.16G" % x
        if not any(c in text for c in ".Ee"):
            text += ".0"
        return text
    return "%1.15E" % x


def quote_string(s: str, delim: str = '"', raw_utf8: bool = False) -> str:
    """A string literal in new syntax (``delim`` is ``'`` for quoted names).

    Characters beyond ASCII are written as the octal escapes of their UTF-8 bytes,
    unless ``raw_utf8`` (the old form keeps them as they are in quoted names).
    """
    if _PLAIN[delim](s) is None:  # printable ASCII without the delimiter or a backslash
        return delim + s + delim
    out = [delim]
    for c in s:
        if c == delim:
            out.append("\\" + c)
        elif c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c < " " or c == "\x7f":
            out.append("\\%03o" % ord(c))
        elif c >= "\x80" and not raw_utf8:  # HTCondor prints each byte of the UTF-8 form in octal
            out.extend("\\%03o" % b for b in c.encode("utf-8", "surrogateescape"))
        else:
            out.append(c)
    out.append(delim)
    return "".join(out)


_PLAIN = {d: re.compile(r"[^ -~]|[\\%s]" % d).search for d in ('"', "'")}


def quote_old_string(s: str) -> str:
    return '"' + s.replace('"', '\\"') + '"'


# Names HTCondor quotes even though they are identifiers (compared ignoring case).
_RESERVED_NAMES = frozenset({"true", "false", "undefined", "error", "is", "isnt", "parent"})


_NAMES: dict[tuple[str, bool], str] = {}
_NAMES_MAX = 8192


def format_name(name: str, old: bool = False) -> str:
    """An attribute name as written: as it is, or quoted (remembered: names repeat in every ad)."""
    key = (name, old)
    text = _NAMES.get(key)
    if text is None:
        if len(_NAMES) >= _NAMES_MAX:
            _NAMES.clear()
        if is_identifier(name) and name.lower() not in _RESERVED_NAMES:
            text = name
        else:
            text = quote_string(name, "'", old)
        _NAMES[key] = text
    return text


def format_abstime(t: AbsTime) -> str:
    """``Y-mm-ddTHH:MM:SS+hh:mm`` in the time's own offset; the year is not padded, and
    years outside 1..9999 (an absTime string may name year 0) are printed all the same."""
    local = t.secs + t.offset
    try:
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=local)
        text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    except OverflowError:  # beyond Python's calendar: the proleptic Gregorian arithmetic
        from htcpool.classad.builtins.calendar import civil_from_days

        days, sec = divmod(local, 86400)
        y, m, d = civil_from_days(days)
        text = "%d-%02d-%02dT%02d:%02d:%02d" % (y, m, d, sec // 3600, sec // 60 % 60, sec % 60)
    sign = "+" if t.offset > 0 else "-"
    z = abs(t.offset)
    return text + "%c%02d:%02d" % (sign, z // 3600, (z // 60) % 60)


def _c_int(x: float) -> int:
    """C's ``(int)`` of a double on x86: truncation, and INT_MIN when out of range or NaN."""
    if math.isnan(x) or not -2147483649.0 < x < 2147483648.0:
        return -2147483648
    return int(x)


def _c_div(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q


def _c_rem(a: int, b: int) -> int:
    r = abs(a) % b
    return r if a >= 0 else -r


def format_reltime(secs: float) -> str:
    """``[-][days+]hh:mm:ss`` with leading zero fields left out.

    Computed as HTCondor's printer does in C: the seconds are first truncated to a 32-bit
    int (fractions are not printed; NaN and out-of-range values become INT_MIN, whose
    negation stays INT_MIN), then split with C's truncating division.
    """
    whole = _c_int(secs)
    out = ""
    if whole < 0:
        out = "-"
        whole = -whole if whole != -2147483648 else whole
    hrs = _c_rem(whole, 86400)
    mins = _c_rem(hrs, 3600)
    sec = _c_rem(mins, 60)
    days = _c_div(whole, 86400)
    hrs = _c_div(hrs, 3600)
    mins = _c_div(mins, 60)
    if days:
        return out + "%d+%02d:%02d:%02d" % (days, hrs, mins, sec)
    if hrs:
        return out + "%02d:%02d:%02d" % (hrs, mins, sec)
    if mins:
        return out + "%02d:%02d" % (mins, sec)
    return out + "%02d" % sec


# The text of compound expressions, by printer and node: attribute values are shared between ads
# (the expression cache, copied job ads), so an ad's text is mostly a few look-ups. Nodes do not
# change; an entry holds its node, so the id cannot be reused while the entry is there.
_REMEMBERED = frozenset({BinaryOp, FnCall, UnaryOp, Paren, Ternary, Subscript, ListExpr})
_TEXTS: dict[tuple[type, bool], dict[int, tuple[Node, str]]] = {}
_TEXTS_MAX = 4096


class _Printer:
    """Walks a tree once; ``old`` selects the old-ClassAd spellings, ``indent`` the pretty layout."""

    __slots__ = ("old", "pretty", "level", "out")

    def __init__(self, old: bool = False, pretty: bool = False) -> None:
        self.old = old
        self.pretty = pretty
        self.level = 0
        self.out: list[str] = []

    def value(self, v: Any) -> None:
        out = self.out
        t = type(v)
        if t is bool:
            out.append("true" if v else "false")
        elif t is int:
            out.append(str(v))
        elif t is float:
            out.append(format_real(v, self.old))
        elif t is str:
            out.append(quote_old_string(v) if self.old else quote_string(v))
        elif v is UNDEFINED:
            out.append("undefined")
        elif v is ERROR:
            out.append("error")
        elif t is AbsTime:
            out.append('absTime("' + format_abstime(v) + '")')
        elif t is RelTime:
            out.append('relTime("' + format_reltime(v.secs) + '")')
        elif t is ListValue:
            self.items(v.items)
        else:
            self.attrs(v._names, v._exprs)

    def node(self, n: Node) -> None:
        # Iterative for the long left spines that chains like a && b && c && ... produce.
        out = self.out
        t = type(n)
        if t is Literal:
            self.value(n.value)  # type: ignore[attr-defined]
        elif t is BinaryOp:
            assert isinstance(n, BinaryOp)
            pending: list[BinaryOp] = []
            cur: Node = n
            while type(cur) is BinaryOp:
                assert isinstance(cur, BinaryOp)
                pending.append(cur)
                cur = cur.left
            self.node(cur)
            for b in reversed(pending):
                op = b.op
                if self.old:
                    out.append(" " + op + " ")
                else:
                    out.append(_NEW_OPS.get(op) or " " + op + " ")
                self.node(b.right)
        elif t is AttrRef:
            assert isinstance(n, AttrRef)
            if n.base is not None:
                self.node(n.base)
                out.append("." + n.name)
            else:
                if n.absolute:
                    out.append(".")
                out.append(format_name(n.name, self.old))
        elif t is UnaryOp:
            assert isinstance(n, UnaryOp)
            out.append(" " + n.op)
            self.node(n.operand)
        elif t is Paren:
            assert isinstance(n, Paren)
            out.append("(")
            self.node(n.expr)
            out.append(")")
        elif t is Ternary:
            assert isinstance(n, Ternary)
            self.node(n.cond)
            if n.then is not None:
                out.append(" ? ")
                self.node(n.then)
                out.append(" : ")
            else:
                out.append(" ?: ")
            self.node(n.orelse)
        elif t is Subscript:
            assert isinstance(n, Subscript)
            self.node(n.base)
            out.append("[")
            self.node(n.index)
            out.append("]")
        elif t is FnCall:
            assert isinstance(n, FnCall)
            out.append(n.name + "(")
            for i, a in enumerate(n.args):
                if i:
                    out.append(",")
                self.node(a)
            out.append(")")
        elif t is ListExpr:
            assert isinstance(n, ListExpr)
            self.items(n.items)
        elif t is AdExpr:
            assert isinstance(n, AdExpr)
            self.attrs(n.names, n.exprs)
        else:  # an ad used as an expression
            self.attrs(n._names, n._exprs)  # type: ignore[attr-defined]

    def items(self, items: tuple[Node, ...]) -> None:
        out = self.out
        if not self.pretty:
            out.append("{ ")
            for i, item in enumerate(items):
                if i:
                    out.append(",")
                self.node(item)
            out.append(" }")
            return
        self.level += 3
        out.append("\n" + " " * self.level + "{")
        self.level += 3
        for i, item in enumerate(items):
            out.append("\n" + " " * self.level)
            self.node(item)
            if i + 1 < len(items):
                out.append(",")
        self.level -= 3
        out.append("\n" + " " * self.level + "}")
        self.level -= 3

    def attrs(self, names: dict[str, str], exprs: dict[str, Node]) -> None:
        out = self.out
        keys = ad_order(names)
        if not self.pretty:
            out.append("[ ")
            memo = _TEXTS.setdefault((type(self), self.old), {})
            for i, k in enumerate(keys):
                if i:
                    out.append("; ")
                out.append(format_name(names[k], self.old) + " = ")
                node = exprs[k]
                if type(node) not in _REMEMBERED:
                    self.node(node)
                    continue
                hit = memo.get(id(node))
                if hit is not None and hit[0] is node:
                    out.append(hit[1])
                    continue
                start = len(out)
                self.node(node)
                text = "".join(out[start:])
                del out[start:]
                out.append(text)
                if len(memo) >= _TEXTS_MAX:
                    memo.clear()
                memo[id(node)] = (node, text)
            out.append(" ]")
            return
        self.level += 4
        out.append("\n" + " " * self.level + "[")
        self.level += 4
        for i, k in enumerate(keys):
            out.append("\n" + " " * self.level + format_name(names[k]) + " = ")
            self.node(exprs[k])
            if i + 1 < len(keys):
                out.append("; ")
        self.level -= 4
        out.append("\n" + " " * self.level + "]")
        self.level -= 4


def unparse(x: Node | Any) -> str:
    """The canonical new-syntax text of an expression or a value."""
    p = _Printer()
    if isinstance(x, Node):
        p.node(x)
    else:
        p.value(x)
    return "".join(p.out)


def pretty(x: Node | Any) -> str:
    """HTCondor's pretty-printed text of an expression or value (``str()`` of an ExprTree)."""
    p = _Printer(pretty=True)
    if isinstance(x, Node):
        p.node(x)
    else:
        p.value(x)
    return "".join(p.out)


def unparse_old(x: Node | Any) -> str:
    """The old-ClassAd text of an expression (the right-hand side of ``Attr = expr``)."""
    p = _Printer(old=True)
    if isinstance(x, Node):
        p.node(x)
    else:
        p.value(x)
    return "".join(p.out)


def print_old(ad: ClassAd) -> str:
    """An ad in the old form: one ``Name = expr`` line per attribute (an empty ad is one newline)."""
    if not ad._exprs:
        return "\n"
    return "".join(
        f"{ad._names[k]} = {unparse_old(ad._exprs[k])}\n" for k in ad_order(ad._names)
    )
