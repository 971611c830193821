"""No traceback reaches a user (docs/reliability.md): the tools, run in-process on random and
hostile input, end with an exit status and at most a few plain lines on standard error."""

from __future__ import annotations

import contextlib
import http.client
import io
import sys
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import htcpool.cli
import htcpool.cli.classad_eval  # noqa: F401 - imported here, not first inside a hypothesis example
import htcpool.cli.submit  # noqa: F401
from htcpool.cli import COMMANDS, main
from htcpool.cli.names import run

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def call(argv: list[str], tool: str | None = None) -> tuple[int, str]:
    """Run ``htcpool argv`` (or HTCondor's ``tool``) in-process: exit status and standard error."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = run(tool, argv) if tool is not None else main(argv)
        except SystemExit as e:  # argparse's own usage errors: status 2 and a usage line
            status = e.code if isinstance(e.code, int) else 1
        finally:
            htcpool.cli.INVOKED_AS = None
    return status, err.getvalue()


def assert_clean(status: int, stderr: str, *, must_fail: bool = False) -> None:
    assert "Traceback" not in stderr, stderr
    # lines end at "\n" only: an argument echoed back may itself hold "\r" or U+0085
    assert len(stderr.rstrip("\n").split("\n")) <= 6, stderr
    if must_fail:
        assert status != 0 and stderr.strip(), (status, stderr)


def submit_file(tmp_path: Path, data: bytes) -> tuple[int, str]:
    path = tmp_path / "job.sub"
    path.write_bytes(data)
    return call(["submit", "-dry-run", str(tmp_path / "ads.txt"), str(path)])


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_as_a_submit_file(tmp_path: Path, data: bytes) -> None:
    assert_clean(*submit_file(tmp_path, data))


LINES = st.sampled_from([
    "executable = /bin/true", "queue", "queue 3", "arguments = $(Process)", "include : /dev/null",
    "if $(x)", "endif", "request_memory = 1G", "+Attr = 1", "x = $INT(y)", "requirements = a ? b",
    "queue x in (a, b)", "$(", "@=end", "@end", "\\", "queue 1 from (\n1\n2\n)",
])


@FUZZ
@given(lines=st.lists(st.one_of(LINES, st.text(max_size=30)), max_size=8))
def test_random_submit_descriptions(tmp_path: Path, lines: list[str]) -> None:
    text = "\n".join(lines).encode("utf-8", "surrogateescape")
    assert_clean(*submit_file(tmp_path, text))


@FUZZ
@given(args=st.lists(st.text(max_size=40), min_size=1, max_size=3))
def test_random_expressions_to_classad_eval(args: list[str]) -> None:
    assert_clean(*call(["classad_eval", *args]))


@FUZZ
@given(args=st.lists(st.text(max_size=20), max_size=4))
def test_random_arguments_to_submit(tmp_path: Path, args: list[str]) -> None:
    path = tmp_path / "job.sub"
    path.write_text("executable = /bin/true\nqueue\n")
    assert_clean(*call(["submit", "-dry-run", str(tmp_path / "ads.txt"), str(path), *args]))


@pytest.mark.parametrize("data", [
    b"executable = /bin/true\narguments = \xff\xfe\nqueue\n",
    b"executable = /bin/true\narguments = a\x00b\nqueue\n",
    b"executable = /bin/true\nrequest_memory = " + b"9" * 400 + b"\nqueue\n",
    b"executable = /bin/true\nqueue 1e10\n",
    b"executable = /bin/true\ninclude : /dev/zero\nqueue\n",
    b"executable = /bin/true\nqueue x from /dev/zero\n",
    b"executable = /bin/true\nX = $INT(" + b"9" * 400 + b")\narguments = $(X)\nqueue\n",
])
def test_hostile_submit_files_fail_in_one_line(tmp_path: Path, data: bytes) -> None:
    status, stderr = submit_file(tmp_path, data)
    assert_clean(status, stderr, must_fail=True)
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert stderr.startswith("ERROR: ")


@pytest.mark.parametrize("expression", ['abstime("99999999")', "9" * 400, 'formatTime(1e300)',
                                        "\x00", "[" * 5000])
def test_hostile_expressions(expression: str) -> None:
    assert_clean(*call(["classad_eval", expression]))


# A tool that meets what it did not expect: the guard in ``main`` answers for it.
FAILURES = {
    "disconnect": httpx.RemoteProtocolError("Server disconnected without sending a response."),
    "reset": ConnectionResetError(104, "Connection reset by peer"),
    "http": http.client.RemoteDisconnected("Remote end closed connection without response"),
    "overflow": OverflowError("int too large to convert to float"),
    "decode": UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    "recursion": RecursionError("maximum recursion depth exceeded"),
    "bug": KeyError("JobStatus"),
}


def failing_tool(argv: list[str]) -> int:
    raise FAILURES[argv[0]]


@pytest.mark.parametrize("which", sorted(FAILURES))
def test_the_guard_turns_any_failure_into_one_line(monkeypatch: pytest.MonkeyPatch, which: str) -> None:
    monkeypatch.setitem(COMMANDS, "q", (f"{__name__}:failing_tool", "fails"))
    status, stderr = call(["q", which])
    assert status == 1
    assert len(stderr.splitlines()) == 1 and stderr.startswith("htcpool q: error: "), stderr
    if which in ("disconnect", "http"):
        assert "lost contact with the daemon" in stderr or "RemoteDisconnected" in stderr
    status, stderr = call([which], tool="condor_q")
    assert status == 1 and stderr.startswith("condor_q: error: "), stderr


def test_an_interrupt_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(argv: list[str]) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(sys.modules[__name__], "failing_tool", interrupted)
    monkeypatch.setitem(COMMANDS, "q", (f"{__name__}:failing_tool", "fails"))
    status, stderr = call(["q"])
    assert status == 130 and stderr == "htcpool q: interrupted\n"
