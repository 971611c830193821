"""``-xml``: ads in the ClassAd XML form HTCondor's tools print (condor_q, condor_status,
condor_history; HTCondor's manual, "ClassAds in XML").

The document is a header, the ads, and a footer:

    <?xml version="1.0"?>
    <!DOCTYPE classads SYSTEM "classads.dtd">
    <classads>
    <c>
        <a n="ClusterId"><i>12</i></a>
        <a n="Owner"><s>alice</s></a>
        <a n="Requirements"><e>TARGET.Memory &gt;= 512</e></a>
    </c>
    </classads>

Each attribute is an ``<a n="Name">`` element (attributes in the ``-long`` order) holding its
value: ``<i>`` integer, ``<r>`` real, ``<s>`` string, ``<b v="t"/>``/``<b v="f"/>`` boolean,
``<un/>`` undefined, ``<er/>`` error, ``<at>``/``<rt>`` absolute and relative times, ``<l>`` a
list of values, ``<c>`` a nested ad, and ``<e>`` any other expression in the old ClassAd
syntax. Text is escaped for XML (``&amp; &lt; &gt; &quot; &apos;``). No ads, no output.
"""

from __future__ import annotations

from collections.abc import Iterable

from htcpool.classad import ClassAd
from htcpool.classad.nodes import AdExpr, ListExpr, Literal, Node
from htcpool.classad.unparse import format_real, unparse, unparse_old
from htcpool.classad.values import ERROR, UNDEFINED, AbsTime, RelTime
from htcpool.cli.formats.adtext import sorted_names

HEADER = '<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n'
FOOTER = "</classads>\n"
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}


def escape(text: str) -> str:
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def _literal(value: object) -> str | None:
    if value is UNDEFINED:
        return "<un/>"
    if value is ERROR:
        return "<er/>"
    if type(value) is bool:
        return f'<b v="{"t" if value else "f"}"/>'
    if type(value) is int:
        return f"<i>{value}</i>"
    if type(value) is float:
        return f"<r>{format_real(value)}</r>"
    if type(value) is str:
        return f"<s>{escape(value)}</s>"
    if isinstance(value, AbsTime):
        return f"<at>{escape(unparse(value).strip(chr(39)))}</at>"
    if isinstance(value, RelTime):
        return f"<rt>{escape(unparse(value).strip(chr(39)))}</rt>"
    return None


def value_xml(node: Node) -> str:
    """One attribute's value element."""
    if isinstance(node, Literal):
        found = _literal(node.value)
        if found is not None:
            return found
    if isinstance(node, ListExpr):
        return "<l>" + "".join(value_xml(item) for item in node.items) + "</l>"
    if isinstance(node, AdExpr):
        inner = "".join(f'<a n="{escape(node.names.get(key, key))}">{value_xml(expr)}</a>'
                        for key, expr in node.exprs.items())
        return f"<c>{inner}</c>"
    return f"<e>{escape(unparse_old(node))}</e>"


def ad_xml(ad: ClassAd) -> str:
    lines = ["<c>\n"]
    for name in sorted_names(ad):
        lines.append(f'    <a n="{escape(name)}">{value_xml(ad.lookup(name).node)}</a>\n')
    lines.append("</c>\n")
    return "".join(lines)


def format_xml(ads: Iterable[ClassAd]) -> str:
    """The ads as one ClassAd XML document (empty text when there are none)."""
    body = [ad_xml(ad) for ad in ads]
    return HEADER + "".join(body) + FOOTER if body else ""
