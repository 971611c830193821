"""The TRANSFORM statement: iterating like ``queue`` for condor_transform_ads, once in the schedd."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, EvalContext
from htcpool.schedd import JobQueue, Transform, settings_from_config
from htcpool.submit import MemoryFileSystem
from tests.schedd.test_seeds import NOW, jobs

BODY = """REQUIREMENTS JobUniverse == 5
SET Color = "$(Color:none)"
SET Copy = $(Step:99)
EVALSET Iter = $(Iterating)
TRANSFORM {args}
SET Ignored = true
"""


def run(args: str, ad: ClassAd | None = None, fs: MemoryFileSystem | None = None) -> list[tuple[object, ...]]:
    t = Transform.parse("Paint", BODY.format(args=args))
    out = t.iterate(ad or ClassAd({"JobUniverse": 5}), EvalContext(), fs=fs, cwd="/jobs")
    return [(a.get("Color"), a.get("Copy"), a.get("Iter"), "Ignored" in a) for a, _ in out]


def test_count_and_items() -> None:
    assert run("2 Color in (red, green)") == [("red", 0, True, False), ("red", 1, True, False),
                                             ("green", 0, True, False), ("green", 1, True, False)]


def test_items_from_a_file_and_a_block() -> None:
    fs = MemoryFileSystem(files={"/jobs/colors.txt": "cyan\nmagenta\n"})
    assert [c for c, *_ in run("Color from colors.txt", fs=fs)] == ["cyan", "magenta"]
    assert [c for c, *_ in run("Color, Shade from (\n  blue dark\n  pink light\n)")] == ["blue", "pink"]
    assert [c for c, *_ in run("Color in [1:] (a, b, c)")] == ["b", "c"]


def test_no_arguments_zero_and_not_applicable() -> None:
    assert run("") == [("none", 99, False, False)]  # no arguments: not iterating
    assert run("0") == []
    assert run("Color in ()") == []
    untouched = run("3", ClassAd({"JobUniverse": 7}))
    assert untouched == [(None, None, None, False)]


def test_unclosed_block_is_an_error() -> None:
    with pytest.raises(ValueError, match="no closing"):
        Transform.parse("Paint", "SET A = 1\nTRANSFORM Color from (\n red\n")


def test_schedd_applies_a_transform_once() -> None:
    config = {"JOB_TRANSFORM_NAMES": "Paint", "JOB_TRANSFORM_Paint": BODY.format(args="3 Color in (a, b)")}
    q = JobQueue(settings_from_config(config.get))
    q.submit("alice", jobs("queue 2\n"), NOW)
    assert len(q.jobs) == 2
    ad = q.jobs[(1, 1)]
    assert (ad["Color"], ad["Copy"], ad["Iter"], "Ignored" in ad) == ("none", 99, False, False)
