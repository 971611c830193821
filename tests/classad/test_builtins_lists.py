"""List functions: every row and every generated call checked against HTCondor's ``classad2``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.classad.test_builtins_reference import calls, same, values

NAMES = ['member', 'identicalMember', 'anyCompare', 'allCompare', 'size', 'sum', 'avg', 'min', 'max', 'split', 'splitUserName', 'splitSlotName']

ROWS = [
    'member(1, {1.0})',
    'member("A", {"a"})',
    'member(undefined, {1})',
    'member(1, undefined)',
    'member({1}, {1})',
    'member(error, {1})',
    'identicalMember(undefined, {undefined})',
    'identicalMember(error, {error})',
    'identicalMember(1, {1.0, 1})',
    'member(1, {x, 1})',
    'member(1, {"a", 1})',
    'member(1, 2)',
    'member([a=1], {1})',
    'identicalMember({}, {1})',
    'anyCompare("<", {1,2}, 2)',
    'anyCompare("is", {undefined}, undefined)',
    'anyCompare("==", {undefined, 1}, 1)',
    'allCompare("==", {undefined, 1}, 1)',
    'anyCompare("==", {"a", 1}, 1)',
    'anyCompare("==", {1, "a"}, 1)',
    'allCompare("<", {}, 1)',
    'anyCompare("=", {1}, 1)',
    'anyCompare(undefined, {1}, 1)',
    'anyCompare("<", undefined, 1)',
    'anyCompare("<", {1}, undefined)',
    'allCompare("<", {1}, undefined)',
    'anyCompare("<", {1}, {1})',
    'anyCompare("!=", {1}, 2)',
    'anyCompare("IS", {1}, 1)',
    'anyCompare("isnt", {{1}}, 1)',
    'anyCompare("is", {{1}}, {1})',
    'sum({})',
    'sum({undefined})',
    'sum({1, undefined})',
    'sum({1, 2.5})',
    'sum({1, true})',
    'sum({true})',
    'sum({true, true})',
    'avg({true})',
    'avg({1, true})',
    'max({true, false})',
    'min({true, 2})',
    'sum({"a"})',
    'sum(undefined)',
    'sum(1)',
    'avg({})',
    'avg({undefined})',
    'avg({1, 2})',
    'avg({1, undefined, 2})',
    'min({})',
    'min({undefined})',
    'min({3, 1.5, 2})',
    'max({1, 1.0})',
    'min({1.0, 1})',
    'max({undefined, 2})',
    'min({"a"})',
    'sum({9223372036854775807, 1})',
    'sum({1e308, 1e308})',
    'avg({1e308, 1e308})',
    'sum({error})',
    'sum({x})',
    'split("a b,c")',
    'split("a,,b")',
    'split(" a , b ")',
    'split("a;b", ";")',
    'split("a;b", "")',
    'split(1)',
    'split(undefined)',
    'split("a\\tb\\nc")',
    'split("")',
    'split("a,  ,b")',
    'split("a, ,b")',
    'split(",a,")',
    'split(",,a")',
    'split("a ,, b")',
    'splitUserName("a@b@c")',
    'splitUserName(undefined)',
    'splitSlotName("x")',
    'splitUserName(1)',
    'size("äbc")',
    'size(undefined)',
    'size(1)',
    'size([a=1;b=2])',
    'size({1,2})',
    'size("")',
    'anyCompare("<", {1, 2, 3}, 2)',
    'allCompare(">=", {3, 4}, 3)',
    'anyCompare("isnt", {1, 1.0}, 1)',
    'split("a b c")',
    'size("äbc")',
    *(f"{n}(undefined)" for n in NAMES),
    *(f"{n}(error)" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]

ARGS = values


@pytest.mark.parametrize("text", ROWS)
def test_row_matches_reference(text: str) -> None:
    mine, theirs = same(text)
    assert mine == theirs


@settings(derandomize=True, max_examples=250, deadline=None)
@given(calls(NAMES, ARGS, 3))
def test_generated_calls_match_reference(text: str) -> None:
    mine, theirs = same(text)
    assert mine == theirs
