"""``htcpool.classad2`` against HTCondor's ``classad2``: the same calls give the same answers.

Random expressions and ads come from the ClassAd strategies of tests/classad; each goes
through both modules by their ``classad2`` names: parse (or refuse), ``eval``,
``simplify``, ``lookup``, the Python types of attribute values, ``printOld``,
``printJson``, ``parseAds``/``parseOne``/``parseNext`` and ``quote``/``unquote``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from htcpool import classad2
from tests.bindings.reference import plain, real_classad2, requires_reference
from tests.classad import strategies as S

pytestmark = requires_reference

FUNCTIONS = S.available_functions()
CI = settings(max_examples=80, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def outcome(lib: Any, call: Any) -> Any:
    try:
        return ("ok", plain(call(lib)))
    except RecursionError:
        return ("RecursionError",)
    except UnicodeDecodeError:
        return ("not UTF-8",)
    except Exception:  # noqa: BLE001 - both refusing is what is compared
        return ("refused",)


def same(call: Any) -> None:
    mine, theirs = outcome(classad2, call), outcome(real_classad2, call)
    if theirs == ("not UTF-8",):
        return
    assert mine == theirs


@CI
@given(S.expressions(FUNCTIONS))
def test_expressions_evaluate_alike(text: str) -> None:
    same(lambda lib: str(lib.ExprTree(text)))
    same(lambda lib: repr(lib.ExprTree(text).simplify()))
    same(lambda lib: lib.ExprTree(text).eval())


@CI
@given(S.ads(FUNCTIONS))
def test_ads_read_print_and_evaluate_alike(text: str) -> None:
    same(lambda lib: sorted(lib.ClassAd(text).keys(), key=str.lower))
    same(lambda lib: lib.ClassAd(text).printOld())
    same(lambda lib: lib.ClassAd(text).printJson())
    same(lambda lib: {k: type(v).__name__ for k, v in lib.ClassAd(text).items()})
    same(lambda lib: {k: lib.ClassAd(text).eval(k) for k in lib.ClassAd(text)})
    same(lambda lib: {k: str(lib.ClassAd(text).lookup(k)) for k in lib.ClassAd(text)})
    same(lambda lib: lib.parseOne(text).printOld())
    same(lambda lib: [ad.printOld() for ad in lib.parseAds(text + text)])
    same(lambda lib: lib.parseNext(text).printOld())


@CI
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12))
def test_quote_and_unquote_alike(text: str) -> None:
    same(lambda lib: lib.quote(text))
    same(lambda lib: lib.unquote(lib.quote(text)))


def test_python_values_convert_alike() -> None:
    source = '[a = 1; b = a + 1; s = "x"; l = {1, "two", undefined}; r = 2.5; u = undefined; ' \
             'e = error; n = [x = 1]; t = true]'
    same(lambda lib: dict(lib.ClassAd(source).items()))
    same(lambda lib: lib.ClassAd(source).eval("b"))
    same(lambda lib: lib.ClassAd({"a": 1, "b": [1, 2], "c": "s", "d": 1.5, "e": True}).printOld())
    same(lambda lib: lib.ExprTree("a + 1").simplify(lib.ClassAd("[a = 4]")))
    same(lambda lib: lib.ExprTree("a + b").simplify(lib.ClassAd("[a = 4]")))
    assert classad2.Value.Undefined is classad2.ClassAd(source)["u"]
    assert classad2.ParserType.Old == real_classad2.ParserType.Old
    assert [p.name for p in classad2.ParserType] == [p.name for p in real_classad2.ParserType]


def test_old_and_new_forms_parse_alike() -> None:
    old = 'A = 1\nB = "x"\n\nA = 2\nC = A * 2\n'
    new = "[a = 1; b = 2]\n[c = 3]"
    for text in (old, new):
        same(lambda lib, t=text: [ad.printOld() for ad in lib.parseAds(t)])
        same(lambda lib, t=text: lib.parseOne(t).printOld())
    same(lambda lib: [ad.printOld() for ad in lib.parseAds(old, lib.ParserType.Old)])
    same(lambda lib: [ad.printOld() for ad in lib.parseAds(new, lib.ParserType.New)])
    json = '[{"a": 1, "b": "x"}]'
    same(lambda lib: [ad.printOld() for ad in lib.parseAds(json, lib.ParserType.JSON)])


def test_malformed_text_is_refused_with_the_exception_named_classad_exception() -> None:
    for bad in ("1 +", "a b c", "[a = ]"):
        for lib in (classad2, real_classad2):
            try:
                lib.ExprTree(bad) if not bad.startswith("[") else lib.ClassAd(bad)
            except lib.ClassAdException:
                continue
            raise AssertionError(f"{lib.__name__} accepted {bad!r}")
