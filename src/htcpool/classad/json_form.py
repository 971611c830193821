"""HTCondor's JSON form of ClassAds, both ways.

Printing follows HTCondor's JSON unparser: ads become objects and lists
arrays (two-space indentation, HTCondor's attribute order), integers, reals
(``%.16G``, with ``.0`` added when that looks like an integer), strings and
booleans become their JSON kinds, ``undefined`` becomes ``null``, and every
other expression (including ``error``, times, infinities) becomes a string
``"\\/Expr(<canonical text>)\\/"``.

Reading accepts the same form: such strings are parsed back into
expressions, ``null`` is ``undefined``, and JSON numbers keep their integer
or real kind.
"""

from __future__ import annotations

import json
import math
from typing import Any

from htcpool.classad.classad import ClassAd
from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.nodes import AdExpr, ListExpr, Literal, Node
from htcpool.classad.parser import parse_expression
from htcpool.classad.unparse import ad_order, format_abstime, format_real, format_reltime, unparse
from htcpool.classad.values import ERROR, UNDEFINED, AbsTime, RelTime

_JSON_ESCAPES = {'"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def _escape(s: str) -> str:
    out = []
    for c in s:
        e = _JSON_ESCAPES.get(c)
        if e is not None:
            out.append(e)
        elif "\x00" < c < " ":
            out.append("\\u00%02X" % ord(c))
        else:
            out.append(c)
    return "".join(out)


def _quote_expr(text: str) -> str:
    return '"\\/Expr(' + _escape(text) + ')\\/"'


class _JsonPrinter:
    __slots__ = ("level", "out")

    def __init__(self) -> None:
        self.level = 0
        self.out: list[str] = []

    def value(self, v: Any) -> None:
        out = self.out
        t = type(v)
        if t is str:
            out.append('"' + _escape(v) + '"')
        elif t is bool:
            out.append("true" if v else "false")
        elif t is int:
            out.append(str(v))
        elif t is float:
            if math.isnan(v) or math.isinf(v):
                out.append(_quote_expr(format_real(v)))
            else:
                out.append(format_real(v, old=True))
        elif v is UNDEFINED:
            out.append("null")
        elif v is ERROR:
            out.append(_quote_expr("error"))
        elif t is AbsTime:
            out.append(_quote_expr('absTime("' + format_abstime(v) + '")'))
        elif t is RelTime:
            out.append(_quote_expr('relTime("' + format_reltime(v.secs) + '")'))
        else:  # pragma: no cover - literals hold only the kinds above
            out.append(_quote_expr(unparse(v)))

    def node(self, n: Node) -> None:
        t = type(n)
        if t is Literal:
            self.value(n.value)  # type: ignore[attr-defined]
        elif t is ListExpr:
            self.items(n.items)  # type: ignore[attr-defined]
        elif t is AdExpr:
            self.attrs(n.names, n.exprs)  # type: ignore[attr-defined]
        elif isinstance(n, ClassAd):
            self.attrs(n._names, n._exprs)
        else:
            self.out.append(_quote_expr(unparse(n)))

    def items(self, items: tuple[Node, ...]) -> None:
        out = self.out
        out.append("[")
        self.level += 2
        for i, item in enumerate(items):
            if i:
                out.append(",")
            out.append("\n" + " " * self.level)
            self.node(item)
        self.level -= 2
        out.append("\n" + " " * self.level + "]")

    def attrs(self, names: dict[str, str], exprs: dict[str, Node]) -> None:
        out = self.out
        out.append("{")
        self.level += 2
        for i, k in enumerate(ad_order(names)):
            if i:
                out.append(",")
            out.append("\n" + " " * self.level + '"' + _escape(names[k]) + '": ')
            self.node(exprs[k])
        self.level -= 2
        out.append("\n" + " " * self.level + "}")


def print_json(ad: ClassAd) -> str:
    """``ad`` in HTCondor's JSON form."""
    p = _JsonPrinter()
    p.attrs(ad._names, ad._exprs)
    return "".join(p.out)


def _from_json(v: Any, text: str) -> Node:
    if v is None:
        return Literal(UNDEFINED)
    if isinstance(v, bool) or isinstance(v, int) or isinstance(v, float):
        return Literal(v)
    if isinstance(v, str):
        if v.startswith("/Expr(") and v.endswith(")/"):
            return parse_expression(v[6:-2])
        return Literal(v)
    if isinstance(v, list):
        return ListExpr(tuple(_from_json(x, text) for x in v))
    if isinstance(v, dict):
        exprs: dict[str, Node] = {}
        names: dict[str, str] = {}
        for k, x in v.items():
            low = k.lower()
            names.setdefault(low, k)
            exprs[low] = _from_json(x, text)
        return AdExpr(exprs, names)
    raise ClassAdParseError(f"unexpected JSON value {v!r}", text, 0)


def parse_json(text: str) -> list[ClassAd]:
    """The ads in a JSON document: one object, or an array of objects."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ClassAdParseError(f"bad JSON: {e.msg}", text, e.pos) from None
    docs = doc if isinstance(doc, list) else [doc]
    ads = []
    for d in docs:
        if not isinstance(d, dict):
            raise ClassAdParseError("expected a JSON object for each ad", text, 0)
        node = _from_json(d, text)
        assert isinstance(node, AdExpr)
        ads.append(ClassAd._from_tables(node.exprs, node.names))
    return ads
