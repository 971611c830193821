"""Read new-syntax ads (``[ name = expr; ... ]``) quickly, falling back to the parser.

Most attributes of real ads are ``name = <plain literal>``; regular expressions
(``_SIMPLE_RUN``, ``_SIMPLE_ATTR``) read runs of them whole, without tokenizing. Any other
value is cut out at the ``;`` or ``]`` that ends it and parsed through the
expression cache (``parse_expression``), so ads share the trees of identical
expressions. Input the scan does not handle (comments, quoted names, anything
malformed) goes to the token parser, which also reports errors precisely.
"""

from __future__ import annotations

import re

from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.lexer import KEYWORDS, KIND, Kind
from htcpool.classad.nodes import AdExpr, Literal, Node
from htcpool.classad.parser import Parser, parse_expression
from htcpool.classad.values import ERROR, UNDEFINED

_STRUCTURE = re.compile(r"[;\[\]{}()\"'/]")
_QUOTED = {'"': re.compile(r'"(?:[^"\\]|\\.)*"', re.S), "'": re.compile(r"'(?:[^'\\]|\\.)*'", re.S)}
_SPACE = re.compile(r"\s*")
_INT = re.compile(r"-?[1-9][0-9]{0,17}|-?0")
_REAL = re.compile(r"-?(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|-?[1-9]\d*[eE][+-]?\d+")
_PLAIN_STRING = re.compile(r'"[^"\\]*"')
_WORDS = {"true": True, "false": False, "undefined": UNDEFINED, "error": ERROR}
_LITERAL = (
    r"-?(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|-?[1-9]\d*[eE][+-]?\d+"
    r"|-?[1-9][0-9]{0,17}|-?0"
    r'|"[^"\\]*"'
    r"|(?i:true|false|undefined|error)"
)
# a run of ``name = <plain literal>;`` attributes, the commonest kind, found in one match;
# ``_SIMPLE_ATTR.findall`` over the run then gives each one's name and literal text
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_SIMPLE_ATTR = re.compile(rf"\s*({_NAME})\s*=\s*({_LITERAL})\s*;")
_SIMPLE_RUN = re.compile(rf"(?:\s*{_NAME}\s*=\s*(?:{_LITERAL})\s*;)*+")
# ``name =`` of any other attribute, or the ``]`` that closes the ad
_NAME_OR_CLOSE = re.compile(rf"\s*(?:({_NAME})\s*=|(\]))")
# a value made only of plain text, double-quoted strings and unnested parentheses, ended at
# depth 0 by ``;`` or ``]``: what the structure scan below would cut, found in one match
_PLAIN_VALUE = re.compile(
    r"""((?:[^;\[\]{}()"'/]++|"(?:[^"\\]++|\\.)*+"|\((?:[^;\[\]{}()"'/]++|"(?:[^"\\]++|\\.)*+")*+\))*+)[;\]]""",
    re.S,
)
_LITERAL_START = frozenset('-.0123456789"tTfFuUeE')
_CACHE_LIMIT = 8192
# literal text -> its node, and attribute name -> its lower-cased key ("" for a keyword);
# ads repeat both, and nodes are shared and never mutated (as the expression cache's are)
_literals: dict[str, Node] = {}
_keys: dict[str, str] = {}


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


def _plain_literal(lit: str) -> Node:
    """The node of ``lit``, text that ``_LITERAL`` matched (so its first character tells its kind)."""
    c = lit[0]
    node: Node
    if c == '"':
        node = Literal(lit[1:-1])
    elif c.isalpha():
        node = Literal(_WORDS[lit.lower()])
    elif "." in lit or "e" in lit or "E" in lit:
        node = Literal(float(lit))
    else:
        node = Literal(int(lit))
    if len(_literals) >= _CACHE_LIMIT:
        _literals.clear()
    _literals[lit] = node
    return node


def literal_node(source: str) -> Node | None:
    """The node of a plainly written literal, shared by every use of the same text; else None."""
    node = _literals.get(source)
    if node is None:
        if not source or source[0] not in _LITERAL_START:
            return None
        node = _simple_value(source)
        if node is None:
            return None
        if len(_literals) >= _CACHE_LIMIT:
            _literals.clear()
        _literals[source] = node
    return node


def _key(name: str) -> str:
    """``name`` lower-cased, or "" for a reserved word (which the fast path leaves to the parser)."""
    key = _keys.get(name)
    if key is None:
        key = name.lower()
        if key in KEYWORDS:
            key = ""
        if len(_keys) >= _CACHE_LIMIT:
            _keys.clear()
        _keys[name] = key
    return key


def _cut_value(text: str, k: int) -> int:
    """The index of the ``;`` or ``]`` that ends the value starting at ``k``, or -1."""
    search = _STRUCTURE.search
    depth = 0
    while True:
        sm = search(text, k)
        if sm is None:
            return -1
        k = sm.start()
        c = text[k]
        if c == '"' or c == "'":
            q = _QUOTED[c].match(text, k)
            if q is None:
                return -1
            k = q.end()
            continue
        if c == "/":
            if text.startswith("//", k) or text.startswith("/*", k):
                return -1
        elif c in "([{":
            depth += 1
        elif c in ")}":
            depth -= 1
            if depth < 0:
                return -1
        elif c == "]":
            if depth == 0:
                return k
            depth -= 1
        elif depth == 0:  # ;
            return k
        k += 1


def _scan_ad(text: str, pos: int) -> tuple[AdExpr, int] | None:
    """Read ``[ name = expr; ... ]`` starting at the ``[`` at ``pos`` by scanning for its structure.

    Each run of ``name = <plain literal>;`` attributes is found by one match and split into
    names and literal texts by one ``findall``; literal nodes and lower-cased names come from
    small caches.
    Any other value's text is cut out at the ``;`` or ``]`` that ends it and parsed through
    the expression cache, so an ad's expressions are shared with every ad that has the same
    text (every slot of a pool has the same START). Returns None for input this fast path
    does not handle (comments, quoted names, anything malformed); the token parser then
    reads it and reports errors precisely.
    """
    exprs: dict[str, Node] = {}
    names: dict[str, str] = {}
    i = pos + 1
    run = _SIMPLE_RUN.match
    findall = _SIMPLE_ATTR.findall
    name_or_close = _NAME_OR_CLOSE.match
    plain_value = _PLAIN_VALUE.match
    literals = _literals
    keys = _keys
    while True:
        j = run(text, i).end()  # type: ignore[union-attr]
        if j != i:
            for name, lit in findall(text, i, j):
                key = keys.get(name)
                if key is None:
                    key = _key(name)
                if not key:
                    return None
                node = literals.get(lit)
                if node is None:
                    node = _plain_literal(lit)
                if key not in names:
                    names[key] = name
                exprs[key] = node
            i = j
        m = name_or_close(text, i)
        if m is None:
            return None
        name = m.group(1)
        if name is None:  # the closing ]
            return AdExpr(exprs, names), m.end()
        key = keys.get(name)
        if key is None:
            key = _key(name)
        if not key:
            return None
        start = m.end()
        v = plain_value(text, start)
        if v is not None:
            k = v.end() - 1
            source = v.group(1).strip()
        else:
            k = _cut_value(text, start)
            if k < 0:
                return None
            source = text[start:k].strip()
        if not source:
            return None
        node = literals.get(source)
        if node is None and source[0] in _LITERAL_START:
            node = literal_node(source)
        if node is None:
            try:
                node = parse_expression(source)
            except ClassAdParseError:
                return None
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
