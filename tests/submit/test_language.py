"""The submit language beyond the goldens: macros, queue forms, syntaxes, errors."""

from __future__ import annotations

import pytest

from htcpool.classad.builtins.env import quote_v2
from htcpool.submit import MemoryFileSystem, SubmitFileError, SubmitHost, submit_description
from htcpool.submit.argsenv import arguments_attribute, parse_environment
from htcpool.submit.hash import SubmitHash
from htcpool.submit.macros import MacroError
from htcpool.submit.resources import scaled_request


def run(text: str, host: SubmitHost, fs: MemoryFileSystem, **kw: object):  # type: ignore[no-untyped-def]
    return submit_description(text, file="t.sub", host=host, fs=fs, **kw)  # type: ignore[arg-type]


def expand(text: str, **macros: str) -> str:
    h = SubmitHash(SubmitHost(environ={"HOME": "/h"}, cwd="/w"))
    for k, v in macros.items():
        h.set(k, v)
    return h.expand(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("$(A)", "1"), ("$(a)", "1"), ("$(B:dflt)", "dflt"), ("$(E:dflt)", "dflt"), ("$(NOPE)", ""),
    ("$$(Memory)", "$$(Memory)"), ("$$([Memory * 2])", "$$([Memory * 2])"), ("$(DOLLAR)x", "$x"),
    ("$ENV(HOME)", "/h"), ("$ENV(NOPE)", "UNDEFINED"), ("$ENV(NOPE:x)", "x"),
    ("$INT(C)", "6"), ("$INT(C,%03d)", "006"), ("$REAL(C)", "6"), ("$REAL(C,%.2f)", "6.00"),
    ("$CHOICE(1,a,b,c)", "b"), ("$CHOICE(A,L)", "y"), ("$SUBSTR(S,2)", "cdef"),
    ("$SUBSTR(S,1,2)", "bc"), ("$SUBSTR(S,-2)", "ef"), ("$SUBSTR(S,1,-1)", "bcde"),
    ("$Fn(P)", "file"), ("$Fx(P)", ".tar.gz"[-3:]), ("$Fp(P)", "/d/e/"), ("$Fnx(P)", "file.gz"),
    ("$BASENAME(P)", "file.gz"), ("$DIRNAME(P)", "/d/e/"), ("$($(N))", "1"), ("$(R)", "1-1"),
    ("cost $5", "cost $5"),
])
def test_macro_expansion(text: str, expected: str) -> None:
    assert expand(text, A="1", B="", E="", C="2*3", L="x, y, z", S="abcdef", P="/d/e/file.gz",
                  N="A", R="$(A)-$(a)") == expected


def test_self_reference_is_an_error() -> None:
    with pytest.raises(MacroError):
        expand("$(X)", X="$(X)+")


def test_units() -> None:
    assert scaled_request("1G", "M") == 1024
    assert scaled_request("1.5g", "M") == 1536
    assert scaled_request("500MB", "K") == 512000
    assert scaled_request("4096", "M") == 4096
    assert scaled_request("100K", "M") == 1
    assert scaled_request("x+1", "M") is None


def test_arguments_and_environment_syntaxes() -> None:
    assert arguments_attribute("a  b") == ("Args", "a b")
    assert arguments_attribute('"one \'two three\' ""q"""') == ("Arguments", "one two' 'three \"q\"")
    assert arguments_attribute(None) == ("Arguments", "")
    assert parse_environment("A=1;B=x y") == {"A": "1", "B": "x y"}
    assert parse_environment("\"A=1 B='x y' C=''\"") == {"A": "1", "B": "x y", "C": ""}
    assert quote_v2("it's") == "it''''s"


def test_queue_forms(host: SubmitHost, fs: MemoryFileSystem) -> None:
    r = run("executable = /bin/true\narguments = $(a) $(b) $(Step) $(Row)\n"
            "queue 2 a,b from (\n  x 1\n  y 2\n)\n", host, fs)
    assert [j["Args"] for j in r.jobs] == ["x 1 0 0", "x 1 1 0", "y 2 0 1", "y 2 1 1"]
    r = run("executable = /bin/true\narguments = $(Item)\nqueue in [1:] (p, q, r)\n", host, fs)
    assert [j["Args"] for j in r.jobs] == ["q", "r"]
    r = run("executable = /bin/true\ninitialdir = $(d)\nqueue d matching dirs run_*\n", host, fs)
    assert [j["Iwd"] for j in r.jobs] == ["/home/alice/jobs/run_0", "/home/alice/jobs/run_1"]
    r = run("executable = /bin/true\nN = 3\nqueue $(N)\nqueue\n", host, fs)
    assert [j["ProcId"] for j in r.jobs] == [0, 1, 2, 3]


def test_copies_equal_full_builds(host: SubmitHost, fs: MemoryFileSystem) -> None:
    fast = run("executable = /bin/true\nqueue 3\n", host, fs).jobs
    slow = run("executable = /bin/true\n+P = $(Process) * 0\nqueue 3\n", host, fs).jobs
    for a, b in zip(fast, slow, strict=True):
        b = b.copy()
        del b["P"]
        assert a == b


def test_conditionals_and_include(host: SubmitHost, fs: MemoryFileSystem) -> None:
    fs.files["/home/alice/jobs/common.inc"] = "priority = 7\n"
    r = run("executable = /bin/true\ninclude : common.inc\nif defined nothing\n priority = 1\n"
            "elif $(priority) > 5\n +Big = true\nelse\n +Big = false\nendif\nqueue\n", host, fs)
    assert r.jobs[0]["JobPrio"] == 7 and r.jobs[0]["Big"] is True


def test_policy_and_accounting(host: SubmitHost, fs: MemoryFileSystem) -> None:
    r = run("executable = /bin/true\nperiodic_hold = NumJobStarts > 3\non_exit_hold = ExitCode != 0\n"
            "accounting_group = physics\naccounting_group_user = bob\nmax_retries = 4\n"
            "deferral_time = QDate + 60\nqueue\n", host, fs)
    job = r.jobs[0]
    assert str(job["PeriodicHold"]) == "NumJobStarts > 3"
    assert job["AccountingGroup"] == "physics.bob"
    assert str(job["OnExitRemove"]) == "NumJobCompletions > JobMaxRetries || ExitCode is 0"
    assert str(job["DeferralTime"]) == "QDate + 60" and job["DeferralPrepTime"] == 300


@pytest.mark.parametrize(("text", "message", "line"), [
    ("executable = /bin/true\nrequirements = (a ==\nqueue\n", "Parse error in expression", 2),
    ("executable = /nope\nqueue\n", "Executable file /nope does not exist", 1),
    ("universe = standard\nexecutable = /bin/true\nqueue\n", "universe", 1),
    ("executable = /bin/true\nrequest_cpu = 2\nqueue\n", "request_cpus", 2),
    ("executable = /bin/true\nqueue 2 in (a\n", "no closing", 2),
    ("executable = /bin/true\nthis is not a command\nqueue\n", "is not a command", 2),
    ("executable = /bin/true\nrequest_cpu = \\\n  2\nqueue\n", "request_cpus", 2),
    ("executable = /bin/true\nX @=END\n a\n", "no closing @END", 2),
    ("executable = /bin/true\nif Foo\nendif\nqueue\n", "is not a conditional", 2),
    ('executable = /bin/true\nif "a" + 1\nendif\nqueue\n', "does not evaluate to a boolean", 2),
    ("executable = /bin/true\nif 1 >\nendif\nqueue\n", "not a valid ClassAd expression", 2),
    ("executable = /bin/true\nqueue\nelse\n", "else without matching if", 3),
    ("executable = /bin/true\nif true\nqueue\n", "missing endif", 0),
])
def test_errors_name_file_and_line(host: SubmitHost, fs: MemoryFileSystem, text: str, message: str,
                                   line: int) -> None:
    with pytest.raises(SubmitFileError) as info:
        run(text, host, fs)
    assert message in str(info.value)
    if info.value.line:
        assert info.value.line == line
        assert "t.sub" in str(info.value) or info.value.file in ("", "t.sub")


def test_unused_lines_are_reported(host: SubmitHost, fs: MemoryFileSystem) -> None:
    r = run("executable = /bin/true\nmy_var = 1\nused = 2\narguments = $(used)\nqueue\n", host, fs)
    assert r.warnings == ["the line 'my_var = 1' was unused by condor_submit. Is it a typo?"]


@pytest.mark.parametrize(("condition", "big"), [
    ("$(priority) >= 7 && $(priority) < 8", True), ("$(priority) == 3", False),
    ("true", True), ("no", False), ("version >= 9.0", True), ("!defined priority", False),
])
def test_conditions_read_like_condor_submit(host: SubmitHost, fs: MemoryFileSystem,
                                            condition: str, big: bool) -> None:
    r = run(f"executable = /bin/true\npriority = 7\nif {condition}\n +Big = true\nelse\n"
            " +Big = false\nendif\nqueue\n", host, fs)
    assert r.jobs[0]["Big"] is big


def test_lines_read_like_the_configuration_reader(host: SubmitHost, fs: MemoryFileSystem) -> None:
    r = run("executable = /bin/true\n+Note = \"a\" + \\\n# commented out\n  \"b\"\n"
            "+Block @=END\n  strcat(\"x\",\n\n  # a comment\n  \"y\")\n@END\n"
            "queue 2 v from (\n  # no item\n  p\n\n  q\n)\n", host, fs)
    assert len(r.jobs) == 4  # two items, blank and comment lines left out
    assert str(r.jobs[0]["Note"]) == '"a" + "b"'
    assert str(r.jobs[0]["Block"]) == 'strcat("x","y")'
