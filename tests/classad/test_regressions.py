"""Every disagreement with HTCondor's ClassAd library found so far, as a plain table.

Each row is an input and the answer HTCondor's library (classad2) gave for it, so the
table runs without the reference installed. Expression rows hold (repr, str, value) or
just ("<parse error>",); see ``reference.expr_outcome``. Long inputs (nesting and
reference-chain limits) are built by ``_long_cases``.
"""

from __future__ import annotations

import pytest

from tests.classad.reference import HAVE_JSON, ad_outcome, expr_outcome, requires_reference

EXPRESSIONS = [
    # issue 13: separators of nested ads and lists
    ('trailing_semicolon_in_nested_ad', '[a = 1;]', ('[ a = 1 ]', '\n    [\n        a = 1\n    ]', '[ a = 1 ]')),
    ('trailing_semicolon_ad_selected', '([a = 1; b = 2;]).b', ('([ a = 1; b = 2 ]).b', '(\n    [\n        a = 1; \n        b = 2\n    ]).b', '2')),
    ('trailing_semicolon_ads_in_list', '{[a=1;], [b=2;]}', ('{ [ a = 1 ],[ b = 2 ] }', '\n   {\n      \n          [\n              a = 1\n          ],\n      \n          [\n              b = 2\n          ]\n   }', '{ [ a = 1 ],[ b = 2 ] }')),
    ('trailing_semicolons_after_attributes', '[a = 1; ;]', ('[ a = 1 ]', '\n    [\n        a = 1\n    ]', '[ a = 1 ]')),
    ('stray_then_trailing_semicolons', '[; a = 1 ;;]', ('[ a = 1 ]', '\n    [\n        a = 1\n    ]', '[ a = 1 ]')),
    ('trailing_semicolon_nested_twice', '[a = [b = 1;]; c = {[d = 2;], []};].a.b', ('[ a = [ b = 1 ]; c = { [ d = 2 ],[  ] } ].a.b', '\n    [\n        a = \n            [\n                b = 1\n            ]; \n        c = \n           {\n              \n                  [\n                      d = 2\n                  ],\n              \n                  [\n                  ]\n           }\n    ].a.b', '1')),
    ('comma_between_attributes_refused', '[a = 1, b = 2]', ('<parse error>',)),
    ('trailing_comma_in_ad_refused', '[a = 1,]', ('<parse error>',)),
    ('trailing_comma_in_list_refused', '{1, 2,}', ('<parse error>',)),
    ('semicolon_in_list_refused', '{1; 2}', ('<parse error>',)),
    # issue 13: an integer with a leading zero is a literal only right after '-'
    ('zero_led_negative_literal', '-010', ('-10', '-10', '-10')),
    ('zero_led_negative_hex_reads_as_zero', '-0x1f', ('0', '0', '0')),
    ('zero_led_negative_in_list', '{-05}', ('{ -5 }', '\n   {\n      -5\n   }', '{ -5 }')),
    ('zero_led_positive_refused', '05', ('<parse error>',)),
    ('zero_led_after_binary_minus_refused', '1 -05', ('<parse error>',)),
    ('zero_led_negative_with_8_refused', '-08', ('<parse error>',)),
    ('eval_of_negative_reltime_text', 'eval(string(relTime(-5)))', ('eval(string(relTime(-5)))', 'eval(string(relTime(-5)))', '-5')),
    # issue 13: which operands HTCondor evaluates (an absolute reference with no root ad fails)
    ('ternary_of_wrong_type_evaluates_both_branches', '{} ? 0 : .a', ('{  } ? 0 : .a', '\n   {\n   } ? 0 : .a', '<eval error>')),
    ('error_or_does_not_evaluate_right', 'error || .a', ('error || .a', 'error || .a', 'error')),
    ('error_and_does_not_evaluate_right', 'error && .a', ('error && .a', 'error && .a', 'error')),
    # issue 13: a list index is a 32-bit int; listToArgs/argsToList read their syntax first
    ('list_index_read_as_32_bit_int', '{0, 1}[4294967297]', ('{ 0,1 }[4294967297]', '\n   {\n      0,\n      1\n   }[4294967297]', '1')),
    ('list_index_int64_min_reads_as_zero', '{0}[-9223372036854775808]', ('{ 0 }[-9223372036854775808]', '\n   {\n      0\n   }[-9223372036854775808]', '0')),
    ('args_syntax_checked_before_the_list', 'listToArgs(.a, 0)', ('listToArgs(.a,0)', 'listToArgs(.a,0)', 'error')),
    ('args_syntax_checked_before_the_text', 'argsToList(.a, "1")', ('argsToList(.a,"1")', 'argsToList(.a,"1")', 'error')),
    ('strcat_stops_at_first_undefined', 'strcat(undefined, .a)', ('strcat(undefined,.a)', 'strcat(undefined,.a)', 'undefined')),
    ('strcat_stops_at_first_error', 'strcat("a", error, .a)', ('strcat("a",error,.a)', 'strcat("a",error,.a)', 'error')),
    ('subset_match_checks_separators_first', 'stringListSubsetMatch(undefined, undefined, 0)', ('stringListSubsetMatch(undefined,undefined,0)', 'stringListSubsetMatch(undefined,undefined,0)', 'error')),
    ('string_order_is_byte_order', '"00\\302\\200" < "00\\200"', ('"00\\302\\200" < "00\\200"', '"00\\302\\200" < "00\\200"', 'false')),
    ('string_order_is_byte_order_reversed', '"\\377" > "é"', ('"\\377" > "\\303\\251"', '"\\377" > "\\303\\251"', 'true')),
    ('octal_escapes_are_utf8_bytes', '"\\303\\251"', ('"\\303\\251"', '"\\303\\251"', '"\\303\\251"')),
    ('non_ascii_string_printed_as_octal_bytes', '"é"', ('"\\303\\251"', '"\\303\\251"', '"\\303\\251"')),
    ('non_ascii_quoted_name_printed_as_octal', "'é'", ("'\\303\\251'", "'\\303\\251'", 'undefined')),
    ('keyword_after_dot_refused', 'x.true', ('<parse error>',)),
    ('keyword_after_leading_dot_refused', '.true', ('<parse error>',)),
    ('keyword_as_attribute_name_refused', '[true = 1]', ('<parse error>',)),
    ('is_as_attribute_name_refused', '[is = 1]', ('<parse error>',)),
    ('quoted_keyword_name_stays_quoted', "'true'", ("'true'", "'true'", 'undefined')),
    ('quoted_isnt_name_stays_quoted', "'isnt'", ("'isnt'", "'isnt'", 'undefined')),
    ('parent_is_printed_quoted', '[x = 1; y = [z = parent.x]].y.z', ("[ x = 1; y = [ z = 'parent'.x ] ].y.z", "\n    [\n        x = 1; \n        y = \n            [\n                z = 'parent'.x\n            ]\n    ].y.z", '1')),
    ('parent_any_case_is_quoted', "'ParenT'", ("'ParenT'", "'ParenT'", 'undefined')),
    ('double_semicolon_in_ad', '[a = 1;; b = 2]', ('[ a = 1; b = 2 ]', '\n    [\n        a = 1; \n        b = 2\n    ]', '[ a = 1; b = 2 ]')),
    ('leading_semicolon_in_ad', '[;a = 1]', ('[ a = 1 ]', '\n    [\n        a = 1\n    ]', '[ a = 1 ]')),
    ('lone_semicolon_ad_refused', '[;]', ('<parse error>',)),
    ('negative_literal_subscripted', '-1[0]', ('-1[0]', '-1[0]', 'error')),
    ('negative_real_selected', '-1.5.a', ('-1.500000000000000E+00.a', '-1.500000000000000E+00.a', 'error')),
    ('real_followed_by_selection', '1.5.a', ('1.500000000000000E+00.a', '1.500000000000000E+00.a', 'error')),
    ('exponent_real_followed_by_selection', '1e5.a', ('1.000000000000000E+05.a', '1.000000000000000E+05.a', 'error')),
    ('integer_followed_by_dot_refused', '1.a', ('<parse error>',)),
    ('self_cycle_is_undefined', '[a = a + 1].a', ('[ a = a + 1 ].a', '\n    [\n        a = a + 1\n    ].a', 'undefined')),
    ('two_step_cycle_is_undefined', '[a = b + 1; b = a].a', ('[ a = b + 1; b = a ].a', '\n    [\n        a = b + 1; \n        b = a\n    ].a', 'undefined')),
    ('cycle_seen_as_undefined_inside', '[a = !isUndefined(a)].a', ('[ a =  !isUndefined(a) ].a', '\n    [\n        a =  !isUndefined(a)\n    ].a', 'false')),
    ('cycle_or_true', '[a = a || true].a', ('[ a = a || true ].a', '\n    [\n        a = a || true\n    ].a', 'true')),
    ('cycle_through_nested_ad', '[a = x.y; x = [y = a]].a', ('[ a = x.y; x = [ y = a ] ].a', '\n    [\n        a = x.y; \n        x = \n            [\n                y = a\n            ]\n    ].a', 'undefined')),
    ('cycle_through_list_element', '[a = {a}[0]].a', ('[ a = { a }[0] ].a', '\n    [\n        a = \n           {\n              a\n           }[0]\n    ].a', 'undefined')),
    ('cycle_with_elvis_fallback', '[a = b ?: 5; b = a].a', ('[ a = b ?: 5; b = a ].a', '\n    [\n        a = b ?: 5; \n        b = a\n    ].a', '5')),
    ('elvis_binds_tighter_than_plus', '1 ?: 2 + 3', ('1 ?: 2 + 3', '1 ?: 2 + 3', '4')),
    ('elvis_binds_tighter_than_times', '1 ?: 2 * 3', ('1 ?: 2 * 3', '1 ?: 2 * 3', '3')),
    ('elvis_under_unary_minus', '-x ?: 7', (' -x ?: 7', ' -x ?: 7', '-7')),
    ('elvis_under_not', '!x ?: 7', (' !x ?: 7', ' !x ?: 7', 'false')),
    ('elvis_right_of_binary', '2 * undefined ?: 4', ('2 * undefined ?: 4', '2 * undefined ?: 4', '8')),
    ('elvis_before_ternary', '0 ?: 1 ? 10 : 20', ('0 ?: 1 ? 10 : 20', '0 ?: 1 ? 10 : 20', '20')),
    ('elvis_right_of_shift', '1 >>> x ?: 7', ('1 >>> x ?: 7', '1 >>> x ?: 7', '0')),
    ('elvis_operand_cannot_be_unary', 'undefined ?: !true', ('<parse error>',)),
    ('elvis_operand_negative_literal', 'undefined ?: -3 + 1', ('undefined ?: -3 + 1', 'undefined ?: -3 + 1', '-2')),
    ('elvis_with_space', '1 ? : 2 + 3', ('1 ?: 2 + 3', '1 ?: 2 + 3', '4')),
    ('elvis_missing_operand', '1 ?:', ('<parse error>',)),
]



def _chain(n: int, template: str) -> str:
    """An ad ``[a0 = <a1>; a1 = <a2>; ...; an = 7]`` with each value made from ``template``."""
    return "[" + "; ".join(f"a{i} = " + template.format(f"a{i + 1}") for i in range(n)) + f"; a{n} = 7]"


def _long_cases() -> list[tuple[str, str, str | None, str]]:
    """(name, text, scope ad, expected value or failure marker): HTCondor's limits."""
    return [
        ("chain_of_400_operators_evaluates", "+".join(["1"] * 401), None, "401"),
        ("chain_of_401_operators_fails", "+".join(["1"] * 402), None, "<eval error>"),
        ("unary_400_deep_evaluates", "-" * 400 + "x", None, "undefined"),
        ("unary_401_deep_fails", "-" * 401 + "x", None, "<eval error>"),
        ("unary_nesting_497_parses_but_is_too_deep", "-" * 497 + "x", None, "<eval error>"),
        ("unary_nesting_498_refused", "-" * 498 + "x", None, "<parse error>"),
        ("paren_nesting_165_parses", "(" * 165 + "1" + ")" * 165, None, "1"),
        ("paren_nesting_166_refused", "(" * 166 + "1" + ")" * 166, None, "<parse error>"),
        ("list_nesting_167_refused", "{" * 167 + "}" * 167, None, "<parse error>"),
        ("ad_nesting_166_refused", "[a=" * 166 + "1" + "]" * 166, None, "<parse error>"),
        ("ternary_nesting_498_refused", "a?" * 498 + "1" + ":2" * 498, None, "<parse error>"),
        ("reference_chain_399", "a0", _chain(399, "{}"), "7"),
        ("reference_chain_400_too_deep", "a0", _chain(400, "{}"), "<eval error>"),
        ("reference_chain_with_operators_199", "a0", _chain(199, "{} + 1"), "206"),
        ("reference_chain_with_operators_200_too_deep", "a0", _chain(200, "{} + 1"), "<eval error>"),
        ("selection_chain_199", "a0", _chain(199, "{}.x"), "error"),
        ("selection_chain_200_too_deep", "a0", _chain(200, "{}.x"), "<eval error>"),
        ("list_nesting_166_parses", "{" * 166 + "}" * 166, None, "{ " * 166 + " }" * 166),
    ]



ADS = [
    ('empty_ad_print_old', '[]', ('[  ]', '\n    [\n    ]', '\n', '{\n}')),
    ('utf8_name_old_form_raw', "[x = 'é']", ("[ x = '\\303\\251' ]", "\n    [\n        x = '\\303\\251'\n    ]", "x = 'é'\n", '{\n  "x": "\\/Expr(\'\\\\303\\\\251\')\\/"\n}')),
    ('utf8_string_ad', '[a = "\\303\\251"]', ('[ a = "\\303\\251" ]', '\n    [\n        a = "\\303\\251"\n    ]', 'a = "é"\n', '{\n  "a": "é"\n}')),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in EXPRESSIONS], ids=[c[0] for c in EXPRESSIONS])
def test_expression(text: str, expected: tuple[str, ...]) -> None:
    assert expr_outcome("ours", text) == expected


@pytest.mark.parametrize(("text", "scope", "expected"), [c[1:] for c in _long_cases()], ids=[c[0] for c in _long_cases()])
def test_limits(text: str, scope: str | None, expected: str) -> None:
    got = expr_outcome("ours", text, scope)
    assert (got[0] if len(got) == 1 else got[2]) == expected


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in ADS], ids=[c[0] for c in ADS])
def test_ad(text: str, expected: tuple[str, ...]) -> None:
    assert ad_outcome("ours", text) == (expected if HAVE_JSON else expected[:3])


@requires_reference
@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in EXPRESSIONS], ids=[c[0] for c in EXPRESSIONS])
def test_table_still_matches_the_reference(text: str, expected: tuple[str, ...]) -> None:
    assert expr_outcome("ref", text) == expected
