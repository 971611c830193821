"""Reading ads from text: the new form ``[a = 1; b = 2]``, the old form
``a = 1`` one per line (as ``condor_status -l`` prints), and streams of either.

In the old form ads are separated by blank lines, and string literals follow
old-ClassAd escaping, where a backslash is an ordinary character except
before a double quote. Lines that are empty or start with ``#`` are skipped, and
``;`` after a line's expression is ignored (``a = 1;``), as HTCondor does.

HTCondor reads an old-form line more loosely than htcpool: it ignores any text after
a complete expression (``a = 1 2`` is ``a = 1``) and ends the ad silently at a line it
cannot read, dropping the rest. htcpool refuses both with an error naming the line, so
no attribute is lost without a word (see docs/classad.md).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator

from htcpool.classad.adscan import literal_node, parse_new_ads
from htcpool.classad.classad import ClassAd
from htcpool.classad.errors import ClassAdParseError
from htcpool.classad.lexer import read_quoted
from htcpool.classad.parser import parse_expression
from htcpool.classad.unparse import quote_string


class ParserType(enum.IntEnum):
    """Which syntax ``parseAds`` expects (the values of classad2's ``ParserType``)."""

    Auto = 0
    Old = 1
    New = 2


_OLD_LINE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=(.*)$", re.S)


def old_to_new_escapes(text: str) -> str:
    """Rewrite old-ClassAd string escaping as new: a backslash is an ordinary character
    except before a quote, and even there when that quote is the last character of the
    line (HTCondor's reading, so ``Dir = "C:\\temp\\"`` ends where it seems to)."""
    if "\\" not in text:  # nothing to rewrite (the usual case)
        return text
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if not in_string:
            if c == '"':
                in_string = True
            out.append(c)
        elif c == "\\":
            if i + 2 < n and text[i + 1] == '"':
                out.append('\\"')
                i += 2
                continue
            out.append("\\\\")
        elif c == '"':
            in_string = False
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _is_new(text: str) -> bool:
    for c in text:
        if c in "[/":
            return True
        if not c.isspace():
            return False
    return False


def parse_old_ad(lines: list[tuple[int, str]], text: str, source: str = "", escapes: bool = True) -> ClassAd:
    """One old-form ad from its ``(offset, line)`` pairs; ``escapes`` False says the text
    holds no backslash at all (the caller checked once), so no line needs rewriting."""
    ad = ClassAd()
    for offset, line in lines:
        m = _OLD_LINE.match(line)
        if not m:
            raise ClassAdParseError("expected 'Name = expression'", text, offset, source)
        name, value = m.group(1), m.group(2)
        if escapes:
            value = old_to_new_escapes(value)
        expr_text = value.strip()
        if expr_text[-1:] == ";":  # HTCondor ignores the ';' an ad written by hand may end with
            expr_text = expr_text.rstrip(";").rstrip()
        node = literal_node(expr_text)  # a plain literal, without tokenizing
        if node is not None:
            ad.insert_node(name, node)
            continue
        try:
            node = parse_expression(expr_text)
        except ClassAdParseError as e:
            start = offset + m.start(2) + len(value) - len(value.lstrip())
            raise ClassAdParseError(f"in the value of {name}: {e.reason}", text, start + e.pos, source) from None
        ad.insert_node(name, node)
    return ad


def _old_blocks(text: str) -> Iterator[list[tuple[int, str]]]:
    block: list[tuple[int, str]] = []
    offset = 0
    # lines end at '\n' only (str.splitlines would also break at U+0085 and the like,
    # which a string value may hold)
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped:
            if block:
                yield block
                block = []
        elif not stripped.startswith("#"):
            block.append((offset, line.rstrip("\r")))
        offset += len(line) + 1
    if block:
        yield block


def parse_ads(
    text: str, parser: ParserType = ParserType.Auto, source: str = ""
) -> Iterator[ClassAd]:
    """Each ad in ``text``, in order."""
    new = _is_new(text) if parser is ParserType.Auto else parser is ParserType.New
    if new:
        for node in parse_new_ads(text):  # fresh tables, owned by nothing else
            yield ClassAd._from_tables(node.exprs, node.names)
        return
    escapes = "\\" in text
    for block in _old_blocks(text):
        yield parse_old_ad(block, text, source, escapes)


def parse_one(text: str, parser: ParserType = ParserType.Auto) -> ClassAd:
    """All ads in ``text`` merged into one (later attributes win)."""
    result = ClassAd()
    for ad in parse_ads(text, parser):
        for k in ad._exprs:
            result.insert_node(ad._names[k], ad._exprs[k])
    return result


def parse_one_ad(text: str) -> ClassAd:
    """Exactly one ad, in either form (what ``ClassAd(text)`` accepts)."""
    ads = list(parse_ads(text))
    if len(ads) != 1:
        raise ClassAdParseError(f"expected one ad, found {len(ads)}", text, 0)
    return ads[0]


def quote(s: str) -> str:
    """``s`` as a ClassAd string literal."""
    return quote_string(s)


def unquote(s: str) -> str:
    """The string a ClassAd string literal stands for."""
    t = s.strip()
    if not t.startswith('"'):
        raise ClassAdParseError("expected a string literal", s, 0)
    value, end = read_quoted(t, 0, '"')
    if t[end:].strip():
        raise ClassAdParseError("unexpected text after the string literal", s, end)
    return value
