"""Functions about expressions: every row and every generated call checked against HTCondor's ``classad2``."""

from __future__ import annotations

from tests.classad.builtin_family import reference_tests
from tests.classad.test_builtins_reference import calls, values

NAMES = ['ifThenElse', 'eval', 'debug', 'evalInEachContext', 'countMatches', 'isUndefined']

ROWS = [
    'ifThenElse(true, 1, 2)',
    'ifThenElse(false, 1, 2)',
    'ifThenElse(undefined, 1, 2)',
    'ifThenElse(error, 1, 2)',
    'ifThenElse(0.0, 1, 2)',
    'ifThenElse(2.5, 1, 2)',
    'ifThenElse("a", 1, 2)',
    'ifThenElse(1, 2)',
    'ifThenElse({}, 1, 2)',
    'ifThenElse(true, 1, error)',
    'eval("1+2")',
    'eval(strcat("1", "+", 2))',
    'eval("(")',
    'eval(undefined)',
    'eval(error)',
    'eval(5)',
    'eval("x")',
    'eval({1})',
    'debug(1+2)',
    'debug(undefined)',
    'debug()',
    'unparse(x)',
    'unparse(1)',
    '[a = 1 + b; b = 2; c = unparse(a)].c',
    '[a = 1 + b; b = 2; c = unparse(b)].c',
    '[a = {1, 2}; c = unparse(a)].c',
    '[a = [x=1]; c = unparse(a)].c',
    '[a = 1 + b; b = 2; c = unparse(A)].c',
    '[a = 1; d = [c = unparse(a)]].d.c',
    '[a = 1; d = [c = unparse(a)]; e = d.c].e',
    '[a = 1.5; c = unparse(a)].c',
    '[a = "x"; c = unparse(a)].c',
    '[a = [b=1]; c = unparse(a.b)].c',
    'unresolved(x)',
    '[r = OpSys == "LINUX" && TARGET.Arch == "ARM" && Cpus >= RequestCpus; RequestCpus = 1; u = unresolved(r)].u',
    '[r = OpSys == "LINUX" && Arch == "ARM"; u = unresolved(r, "^OpSys")].u',
    '[r = OpSys == "LINUX" && Arch == "ARM"; u = unresolved(r, "OpSys.+")].u',
    '[r = 1; u = unresolved(r)].u',
    '[r = 1; u = unresolved(r, "x")].u',
    '[r = x; u = unresolved(r, "(")].u',
    '[u = unresolved(1)].u',
    '[r = MY.x + y.z + TARGET.w; u = unresolved(r)].u',
    'evalInEachContext(Prio > 2, { [Prio=3], [Prio=1] })',
    'evalInEachContext(Prio, { [Prio=3], [Prio=1] })',
    'evalInEachContext(Prio > 2, { [Prio=3], UNDEFINED })',
    'evalInEachContext(Prio > 2, UNDEFINED)',
    'evalInEachContext(Prio > 2, {})',
    'evalInEachContext(Prio > 2, [Prio=3])',
    'countMatches(Prio > 2, { [Prio=3], [Prio=1] })',
    'countMatches(Prio > 2, { [Prio=3], UNDEFINED })',
    'countMatches(Prio > 2, UNDEFINED)',
    'countMatches(Prio > 2, error)',
    'countMatches(Prio, { [Prio=3], [Prio=1] })',
    'countMatches(Prio > 2, [Prio=3])',
    'countMatches(Prio > 2, { 1 })',
    'countMatches(undefined, { [Prio=3] })',
    '[l = { [Prio=3], [Prio=5] }; n = countMatches(Prio > 2, l)].n',
    '[a = [Prio = 3]; n = countMatches(Prio > 2, {a})].n',
    '[k = 1; n = evalInEachContext(k + Prio, {[Prio = 1]})].n',
    'eval(strcat("slot", 5 + 10, "_State"))',
    '[slot15_State = "Busy"; SlotID = 5; s = eval(strcat("slot", SlotID + 10, "_State"))].s',
    *(f"{n}(undefined)" for n in NAMES),
    *(f"{n}(error)" for n in NAMES),
    *(f"{n}(1, 2, 3, 4, 5)" for n in NAMES),
]

ARGS = values


test_row_matches_reference, test_generated_calls_match_reference = reference_tests(
    ROWS, calls(NAMES, ARGS, 3)
)
