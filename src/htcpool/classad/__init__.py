"""HTCondor's ClassAd language: parse, evaluate, print and match ads and expressions.

The public API is shaped like HTCondor's ``classad2`` module: ``ClassAd``,
``ExprTree``, ``Value``, ``parseAds``, ``parseOne``, ``parseNext``, ``quote``,
``unquote``. Evaluation takes an ``EvalContext`` (clock, strictness, map
files): nothing here reads the wall clock, and an evaluation that needs the
time is given a clock by its caller (``EvalContext(clock=fixed_clock(now))``).
"""

from htcpool.classad.classad import ClassAd
from htcpool.classad.context import EvalContext, fixed_clock
from htcpool.classad.errors import ClassAdError, ClassAdEvaluationError, ClassAdParseError
from htcpool.classad.expr import ExprTree
from htcpool.classad.forms import ParserType, quote, unquote
from htcpool.classad.forms import parse_ads as parseAds
from htcpool.classad.forms import parse_one as parseOne
from htcpool.classad.values import AbsTime, ListValue, RelTime, Value, as_float, as_int, as_number


def parseNext(text: str, parser: ParserType = ParserType.Auto) -> ClassAd | None:  # noqa: N802
    """The first ad in ``text``, or None when there is none."""
    for ad in parseAds(text, parser):
        return ad
    return None


__all__ = [
    "AbsTime",
    "ClassAd",
    "ClassAdError",
    "ClassAdEvaluationError",
    "ClassAdParseError",
    "EvalContext",
    "ExprTree",
    "ListValue",
    "ParserType",
    "RelTime",
    "Value",
    "as_float",
    "as_int",
    "as_number",
    "fixed_clock",
    "parseAds",
    "parseNext",
    "parseOne",
    "quote",
    "unquote",
]
