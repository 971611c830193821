"""Read new-syntax ads (``[ name = expr; ... ]``) quickly, falling back to the parser.

Most attributes of real ads are ``name = <plain literal>``; one regular expression
(``_SIMPLE_ATTR``) reads such an attribute whole, without tokenizing. Any other
value is cut out at the ``;`` or ``]`` that ends it and parsed through the
expression cache (``parse_expression``), so ads share the trees of identical
expressions. Input the scan does not handle (comments, quoted names, anything
malformed) goes to the token parser, which also reports errors precisely.
"""

from __future__ import annotations

import re
from typing import Any

from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.lexer import KEYWORDS, KIND, Kind
from htcpool.classad.nodes import AdExpr, Literal, Node
from htcpool.classad.parser import Parser, parse_expression
from htcpool.classad.values import ERROR, UNDEFINED

_STRUCTURE = re.compile(r"[;\[\]{}()\"'/]")
_QUOTED = {'"': re.compile(r'"(?:[^"\\]|\\.)*"', re.S), "'": re.compile(r"'(?:[^'\\]|\\.)*'", re.S)}
_AD_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")
_SPACE = re.compile(r"\s*")
_INT = re.compile(r"-?[1-9][0-9]{0,17}|-?0")
_REAL = re.compile(r"-?(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|-?[1-9]\d*[eE][+-]?\d+")
_PLAIN_STRING = re.compile(r'"[^"\\]*"')
_WORDS = {"true": True, "false": False, "undefined": UNDEFINED, "error": ERROR}
# ``name = <plain literal>`` followed by ``;`` or ``]``, the commonest attribute, in one match
_SIMPLE_ATTR = re.compile(
    r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:"
    r"(-?[1-9][0-9]{0,17}|-?0)"
    r"|(-?(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|-?[1-9]\d*[eE][+-]?\d+)"
    r'|"([^"\\]*)"'
    r"|(?i:(true|false|undefined|error))"
    r")\s*([;\]])"
)


def _simple_value(source: str) -> Node | None:
    """A literal written plainly (``12``, ``-1.5``, ``"text"``, ``true``), without tokenizing."""
    if _INT.fullmatch(source):
        return Literal(int(source))
    if _REAL.fullmatch(source):
        return Literal(float(source))
    if _PLAIN_STRING.fullmatch(source):
        return Literal(source[1:-1])
    word = _WORDS.get(source.lower(), _NO_WORD)
    if word is not _NO_WORD:
        return Literal(word)
    return None


_NO_WORD = object()


def _scan_ad(text: str, pos: int) -> tuple[AdExpr, int] | None:
    """Read ``[ name = expr; ... ]`` starting at the ``[`` at ``pos`` by scanning for its structure.

    Each value's text is cut out at the ``;`` or ``]`` that ends it and parsed through the
    expression cache, so an ad's expressions are shared with every ad that has the same
    text (every slot of a pool has the same START). Returns None for input this fast path
    does not handle (comments, quoted names, anything malformed); the token parser then
    reads it and reports errors precisely.
    """
    exprs: dict[str, Node] = {}
    names: dict[str, str] = {}
    n = len(text)
    i = pos + 1
    search = _STRUCTURE.search
    simple = _SIMPLE_ATTR.match
    keywords = KEYWORDS
    while True:
        m = simple(text, i)  # the commonest attribute first (its pattern skips leading space)
        if m is not None:
            name, integer, real, string, word, end = m.groups()
            key = name.lower()
            if key in keywords:
                return None
            if integer is not None:
                value: Any = int(integer)
            elif real is not None:
                value = float(real)
            elif string is not None:
                value = string
            else:
                value = _WORDS[word.lower()]
            if key not in names:
                names[key] = name
            exprs[key] = Literal(value)
            i = m.end()
            if end == "]":
                return AdExpr(exprs, names), i
            continue
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if i < n and text[i] == "]":
            return AdExpr(exprs, names), i + 1
        m = _AD_NAME.match(text, i)
        if m is None:
            return None
        name = m.group(1)
        if name.lower() in KEYWORDS:
            return None
        start = k = m.end()
        depth = 0
        while True:
            sm = search(text, k)
            if sm is None:
                return None
            k = sm.start()
            c = text[k]
            if c == '"' or c == "'":
                q = _QUOTED[c].match(text, k)
                if q is None:
                    return None
                k = q.end()
                continue
            if c == "/":
                if text.startswith("//", k) or text.startswith("/*", k):
                    return None
            elif c in "([{":
                depth += 1
            elif c in ")}":
                depth -= 1
                if depth < 0:
                    return None
            elif c == "]":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0:  # ;
                break
            k += 1
        source = text[start:k].strip()
        if not source:
            return None
        node = _simple_value(source)
        if node is None:
            try:
                node = parse_expression(source)
            except ClassAdParseError:
                return None
        key = name.lower()
        if key not in names:
            names[key] = name
        exprs[key] = node
        i = k + 1 if text[k] == ";" else k


def parse_new_ad(text: str) -> AdExpr:
    """Parse one ad in new syntax, ``[ name = expr; ... ]``, and nothing after it."""
    start = _SPACE.match(text).end()  # type: ignore[union-attr]
    if text.startswith("[", start):
        scanned = _scan_ad(text, start)
        if scanned is not None and not text[scanned[1] :].strip():
            return scanned[0]
    p = Parser(text)
    p.expect_op("[", "'[' opening an ad")
    ad = p.ad_body()
    p.finish()
    return ad


def parse_new_ads(text: str) -> list[AdExpr]:
    """Parse a stream of new-syntax ads, one after another."""
    out: list[AdExpr] = []
    pos = _SPACE.match(text).end()  # type: ignore[union-attr]
    while pos < len(text) and text[pos] == "[":
        scanned = _scan_ad(text, pos)
        if scanned is None:
            break
        out.append(scanned[0])
        pos = _SPACE.match(text, scanned[1]).end()  # type: ignore[union-attr]
    if pos >= len(text):
        return out
    p = Parser(text[pos:])
    while p.peek()[KIND] is not Kind.END:
        p.expect_op("[", "'[' opening an ad")
        out.append(p.ad_body())
    return out
