"""countMatches/evalInEachContext as HTCondor defines them: a reference to an existing attribute is
that attribute's expression (``countMatches(MY.RequireGPUs, TARGET.AvailableGPUs)``), checked
against HTCondor's own library (classad2) where it is installed."""

from __future__ import annotations

import pytest

from htcpool.classad import EvalContext, ExprTree, parseOne

SLOT = '''AvailableGPUs = { GPUs_GPU_a, GPUs_GPU_b, GPUs_GPU_c }
GPUs_GPU_a = [ Id = "GPU-a"; Capability = 2.0 ]
GPUs_GPU_b = [ Id = "GPU-b"; Capability = 8.0 ]
GPUs_GPU_c = [ Id = "GPU-c"; Capability = 8.6 ]
'''
JOB = 'RequireGPUs = Capability >= 8.0\nRequestGPUs = 2\n'
EXPRESSIONS = [
    "countMatches(MY.RequireGPUs, TARGET.AvailableGPUs)",
    "countMatches(MY.RequireGPUs, TARGET.AvailableGPUs) >= RequestGPUs",
    "countMatches(MY.NoSuchThing, TARGET.AvailableGPUs)",
    "size(evalInEachContext(MY.RequireGPUs, TARGET.AvailableGPUs))",
    "countMatches(Capability >= 8.6, TARGET.AvailableGPUs)",
]
EXPECTED = [2, True, 0, 3, 1]


@pytest.mark.parametrize(("text", "expected"), list(zip(EXPRESSIONS, EXPECTED, strict=True)))
def test_htcpool(text: str, expected: object) -> None:
    assert ExprTree(text).evaluate(parseOne(JOB), parseOne(SLOT), EvalContext()) == expected


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_same_as_htcondor(text: str) -> None:
    classad2 = pytest.importorskip("classad2", reason="HTCondor's classad2 is not installed")
    pytest.importorskip("htcondor2", reason="HTCondor's htcondor2 registers countMatches")
    # HTCondor's library adds its own functions (countMatches among them) on first use: warm it up
    classad2.ExprTree("countMatches(x, {})").eval(classad2.ClassAd())
    theirs = classad2.ExprTree(text).eval(classad2.parseOne(JOB), classad2.parseOne(SLOT))
    ours = ExprTree(text).evaluate(parseOne(JOB), parseOne(SLOT), EvalContext())
    assert ours == theirs
