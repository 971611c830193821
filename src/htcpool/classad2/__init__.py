"""HTCondor's ``classad2`` Python API, over htcpool's ClassAd language.

``htcpool.classad`` is already shaped like ``classad2`` (docs/classad.md); this
package gives it HTCondor's module name and the few names that differ:
``ClassAdException`` (htcpool's ``ClassAdError``: parse and evaluation errors),
``ParserType`` with the bindings' numbers (``Auto``, ``Old``, ``XML``, ``JSON``,
``New``, ``FileAuto``), the parse functions taking a string or an open file
(and, as classad2's, giving no ad for an empty one), ``quote``/``unquote``
refusing NUL characters, ``lastError`` and ``version``. ``ClassAd``, ``ExprTree`` and ``Value`` are
htcpool's own classes, so the ads the ``htcondor2`` bindings return are
``classad2.ClassAd`` instances. HTCondor manual, "Python bindings, version 2
API reference", module classad2.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from typing import IO

from htcpool.classad import ClassAd, ExprTree, Value
from htcpool.classad import ParserType as _HtcpoolParser
from htcpool.classad import parseAds as _parse_ads
from htcpool.classad.errors import ClassAdError

ClassAdException = ClassAdError
_last_error = ""


class ParserType(enum.IntEnum):
    Auto = -1
    Old = 0
    XML = 1
    JSON = 2
    New = 3
    FileAuto = 4


def _text(source: str | IO[str] | Iterable[str]) -> str:
    if isinstance(source, str):
        return source
    if hasattr(source, "read"):
        return str(source.read())
    return "".join(source)


def _ads(text: str, parser: ParserType) -> Iterator[ClassAd]:
    global _last_error
    parser = ParserType(int(parser))
    try:
        if parser is ParserType.JSON or (parser in (ParserType.Auto, ParserType.FileAuto)
                                         and text.lstrip().startswith("[{")):
            from htcpool.classad.json_form import parse_json

            yield from parse_json(text)
            return
        if parser is ParserType.XML:
            raise ClassAdError("the XML form of ClassAds is not supported")
        kind = {ParserType.Old: _HtcpoolParser.Old, ParserType.New: _HtcpoolParser.New}
        for ad in _parse_ads(text, kind.get(parser, _HtcpoolParser.Auto)):
            if len(ad):  # as classad2, an empty ad is no ad
                yield ad
    except ClassAdError as e:
        _last_error = str(e)
        raise


def parseAds(source: str | IO[str], parser: ParserType = ParserType.Auto) -> Iterator[ClassAd]:  # noqa: N802
    """Each ad in ``source`` (a string or an open file), in order."""
    return _ads(_text(source), parser)


def parseNext(source: str | IO[str], parser: ParserType = ParserType.Auto) -> ClassAd | None:  # noqa: N802
    """The first ad in ``source``, or None when there is none."""
    return next(_ads(_text(source), parser), None)


def parseOne(source: str | IO[str] | Iterable[str], parser: ParserType = ParserType.Auto) -> ClassAd:  # noqa: N802
    """Every ad in ``source`` merged into one (later attributes win)."""
    result = ClassAd()
    for ad in _ads(_text(source), parser):
        result.update(ad)
    return result


def quote(source: str) -> str:
    """``source`` as a ClassAd string literal (quotes and escapes added)."""
    from htcpool.classad import quote as quote_text

    if "\0" in source:
        raise ValueError("embedded null character")
    return quote_text(source)


def unquote(source: str) -> str:
    """The string a ClassAd string literal stands for."""
    from htcpool.classad import unquote as unquote_text

    try:
        text = unquote_text(source)
    except ClassAdError as e:
        raise ValueError(f"Invalid string to unquote: {e}") from None
    if "\0" in text:
        raise ValueError("Invalid string to unquote")
    return text


def lastError() -> str:  # noqa: N802 - classad2's name
    """The message of the last parse error met by this module's parse functions."""
    return _last_error


def version() -> str:
    from htcpool.config.conditions import CONDOR_VERSION

    return ".".join(str(part) for part in CONDOR_VERSION)




__all__ = ["ClassAd", "ClassAdException", "ExprTree", "ParserType", "Value", "lastError", "parseAds",
           "parseNext", "parseOne", "quote", "unquote", "version"]
