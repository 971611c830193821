"""Local names (``-local-name B``), as HTCondor's own reader looks them up.

A daemon with a local name looks a knob up as ``LOCAL.NAME``, then ``SUBSYS.NAME``, then
``NAME``. The manual ("Introduction to Configuration") puts ``SUBSYS.LOCAL.NAME`` first as
well, but HTCondor 25's reader never looks that form up, and neither does htcpool. The
reference check runs HTCondor's reader (``htcondor2``) in a child process with its subsystem
and local name set; it is skipped when the bindings or their library entry points are absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from htcpool.config import Config

TEXT = """\
EXECUTE = /pool/execute
FOO = plain
STARTD.FOO = subsystem
B.FOO = local
STARTD.B.FOO = both
BAR = plain
STARTD.BAR = subsystem
B.BAR = local
BAZ = plain
STARTD.BAZ = subsystem
QUX = plain
USES_FOO = x$(FOO)
B.EXECUTE = $(EXECUTE)/b
"""


def read(local_name: str | None, subsystem: str = "STARTD") -> Config:
    return Config.from_text(TEXT, subsystem=subsystem, local_name=local_name)


@pytest.mark.parametrize(("name", "with_local", "without_local"), [
    ("FOO", "local", "subsystem"),        # STARTD.B.FOO is never looked up
    ("BAR", "local", "subsystem"),        # LOCAL.NAME comes before SUBSYS.NAME
    ("BAZ", "subsystem", "subsystem"),
    ("QUX", "plain", "plain"),
    ("USES_FOO", "xlocal", "xsubsystem"),  # a reference is looked up in the reader's context too
    ("EXECUTE", "/pool/execute/b", "/pool/execute"),
])
def test_lookup_order_is_local_name_then_subsystem_then_plain(name: str, with_local: str, without_local: str) -> None:
    assert read("B").get_str(name) == with_local
    assert read(None).get_str(name) == without_local


def test_local_name_is_case_insensitive_and_another_name_sees_nothing_of_b() -> None:
    assert read("b").get_str("FOO") == "local"
    assert read("C").get_str("FOO") == "subsystem"
    assert read("B", subsystem="SCHEDD").get_str("FOO") == "local"  # B. is B's, whatever the daemon


def test_a_self_reference_under_the_local_name_means_the_plain_knob() -> None:
    text = "START = (KeyboardIdle > 15)\n" + TEXT + 'B.START = $(START) && (TARGET.Owner == "b")\n'
    config = Config.from_text(text, subsystem="STARTD", local_name="B")
    assert config.get_str("START") == '(KeyboardIdle > 15) && (TARGET.Owner == "b")'
    assert Config.from_text(text, subsystem="STARTD").get_str("START") == "(KeyboardIdle > 15)"


def test_an_accessor_can_ask_with_another_local_name() -> None:
    config = read(None)
    assert config.get_str("FOO", local_name="B") == "local"
    found = config.provenance("FOO", local_name="B")
    assert found is not None and found.name.upper() == "B.FOO"


_PROBE = textwrap.dedent("""
    import ctypes, glob, json, os, sys
    import htcondor2
    found = glob.glob(os.path.join(os.path.dirname(htcondor2.__file__), "..", "htcondor.libs",
                                   "libcondor_utils*"))
    lib = ctypes.CDLL(found[0])
    get = lib._Z15get_mySubSystemv
    get.restype = ctypes.c_void_p
    set_local = lib._ZN13SubsystemInfo12setLocalNameEPKc
    set_local.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    htcondor2.set_subsystem("STARTD")
    set_local(get(), sys.argv[1].encode())
    htcondor2.reload_config()
    print(json.dumps({n: htcondor2.param.get(n) for n in sys.argv[2:]}))
""")


def _reference(tmp_path: Path, local_name: str, names: list[str]) -> dict[str, str | None]:
    try:
        import htcondor2  # noqa: F401
    except ImportError:
        pytest.skip("htcondor2 (HTCondor's Python bindings) is not installed")
    config = tmp_path / "condor_config"
    config.write_text(TEXT)
    env = dict(os.environ, CONDOR_CONFIG=str(config))
    done = subprocess.run([sys.executable, "-c", _PROBE, local_name, *names], env=env, capture_output=True,
                          text=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"HTCondor's reader could not be given a local name: {done.stderr.strip()[-300:]}")
    result: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_htcondor_reads_local_names_as_htcpool_does(tmp_path: Path) -> None:
    """``FOO`` is the case the manual gets wrong: HTCondor finds ``B.FOO``, not ``STARTD.B.FOO``."""
    names = ["FOO", "BAR", "BAZ", "QUX", "USES_FOO", "EXECUTE"]
    reference = _reference(tmp_path, "B", names)
    ours = read("B")
    assert reference == {n: ours.get_str(n) for n in names}
    assert reference["FOO"] == "local"
