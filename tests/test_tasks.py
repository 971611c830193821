"""The test run's environment (``tasks.TEST_ENV``) keeps Python 3.11's parser safe from a
traceback formatted by a finalizer in the middle of another parse, and writes bytecode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tasks

#: objects in reference loops whose finalizer formats a traceback (as a dropped asyncio task
#: logs one), collected by the garbage collector while a large module is being parsed
PROGRAM = """
import ast, gc, traceback
class Dropped:
    def __init__(self):
        self.me = self
    def __del__(self):
        try:
            {}["x"]
        except KeyError:
            traceback.format_exc()
source = "\\n".join(f"def f{i}(a, b):\\n    return [a + b * {i} for x in range(a) if x and b]" for i in range(2000))
gc.set_threshold(50)
failures = 0
for _ in range(10):
    for _ in range(200):
        Dropped()
    try:
        ast.parse(source)
    except SystemError:
        failures += 1
        break  # one is proof enough
print(failures)
"""


def _failures(where: Path, env: dict[str, str]) -> int:
    # from a file: a traceback marks columns only on source lines it can read
    program = where / "parse_under_finalizers.py"
    program.write_text(PROGRAM)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONNODEBUGRANGES"}
    done = subprocess.run([sys.executable, str(program)], env={**clean, **env}, capture_output=True,
                          text=True, timeout=120, check=True)
    return int(done.stdout.strip())


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the parser's shared depth counter is 3.11's")
def test_a_finalizer_formatting_a_traceback_breaks_a_parse_without_the_test_environment(tmp_path: Path) -> None:
    assert _failures(tmp_path, {}) > 0


def test_the_test_environment_keeps_parses_whole(tmp_path: Path) -> None:
    assert _failures(tmp_path, tasks.TEST_ENV) == 0


def test_the_test_environment_writes_bytecode_where_the_environment_says_not_to() -> None:
    """Hundreds of interpreters in a run import the same sources: their compiled form is kept."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    probe = [sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"]
    assert subprocess.run(probe, env=env, capture_output=True, text=True).stdout == "True\n"
    assert subprocess.run(probe, env={**env, **tasks.TEST_ENV}, capture_output=True, text=True).stdout == "False\n"
