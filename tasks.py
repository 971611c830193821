#!/usr/bin/env python3
"""Set up and run htcpool with nothing but Python and pip.

    python3 tasks.py run     install into .venv (once) and run the main job
    python3 tasks.py test    install into .venv (once) and run lint, type checks and tests
    python3 tasks.py bench   install into .venv (once) and run the benchmarks

The virtual environment lives in .venv beside this file and is reused; it is
rebuilt when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".htcpool-installed"
#: the test run's environment. Python 3.11 places a traceback's ``^~~~`` markers by calling
#: ``ast.parse``, and the parser's depth counter is shared: a finalizer that formats a traceback
#: (an asyncio task or future dropped unfinished logs one) run by the garbage collector in the
#: middle of another ``ast.parse`` (pytest rewriting a test module's asserts, or formatting a
#: failure) makes that parse fail with "SystemError: AST constructor recursion depth mismatch",
#: which kills a pytest-xdist worker. Without column positions in code objects, tracebacks carry
#: no markers and never parse (tests/test_tasks.py reproduces both).
#: Bytecode is written (an empty PYTHONDONTWRITEBYTECODE is no request) even where the
#: environment asks Python not to: the suite starts hundreds of interpreters (every daemon of
#: every pool, every tool run as a user types it, each worker rewriting the tests' asserts), and
#: without cached bytecode each compiles the sources again (importing every daemon's service
#: 1.65 s against 0.95 s, a tool 0.89 s against 0.70 s, measured; docs/performance.md)
TEST_ENV = {"PYTHONNODEBUGRANGES": "1", "PYTHONDONTWRITEBYTECODE": ""}


def _python() -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / "python"


def ensure_venv(extras: str) -> Path:
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted and _python().exists():
        return _python()
    if not _python().exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    py = str(_python())
    subprocess.run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    target = f"{ROOT}[{extras}]" if extras else str(ROOT)
    subprocess.run([py, "-m", "pip", "install", "-q", "-e", target], check=True)
    STAMP.write_text(wanted)
    return _python()


def run(cmd: list[str], env: dict[str, str] | None = None) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, env=None if env is None else {**os.environ, **env}).returncode


def main(argv: list[str]) -> int:
    what = argv[0] if argv else "run"
    rest = argv[1:]
    if what == "run":
        py = ensure_venv("test")
        return run([str(py), "-m", "htcpool", "demo", *rest])
    if what == "test":
        py = ensure_venv("test")
        for step in (
            [str(py), "-m", "ruff", "check", "src", "tests", "benchmarks", "tasks.py"],
            [str(py), "-m", "mypy"],
        ):
            if run(step) != 0:
                return 1
        # the package's bytecode once, before the workers and the first pools all compile it
        run([str(py), "-m", "compileall", "-q", "src"], env=TEST_ENV)
        # four workers on two cores, handing out tests as workers free up: the live-pool tests
        # spend most of their time waiting on daemons (with two workers the suite took 11 min
        # with the CPU two-thirds idle)
        return run([str(py), "-m", "pytest", "-n", "4", "--dist", "worksteal", *rest], env=TEST_ENV)
    if what == "bench":
        py = ensure_venv("test")
        return run([str(py), "-m", "benchmarks", *rest])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
