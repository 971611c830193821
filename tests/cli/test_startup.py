"""What a command-line tool imports: it is a fresh process at every command, so everything it
imports is paid each time (``runtime/http_client.py``). A tool talks to daemons and never serves:
none of the daemons' server side (Starlette, uvicorn, the asynchronous aiohttp sender, the
daemon, its gate) may come with it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SERVER_SIDE = ("starlette", "uvicorn", "aiohttp", "htcpool.runtime.http", "htcpool.runtime.daemon",
               "htcpool.runtime.security.gate")


@pytest.mark.parametrize("args", [["q"], ["status"], ["userprio"], ["history"], ["hold", "1.0"], ["rm", "1.0"]],
                         ids=lambda args: args[0])
def test_a_tool_imports_no_server(args: list[str], tmp_path: Path) -> None:
    # no pool in the directory: the tool imports all it needs to reach one, then says it is not running
    env = {k: v for k, v in os.environ.items() if k != "CONDOR_CONFIG"} | {"HTCPOOL_LOCAL_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "htcpool", *args], capture_output=True,
                          text=True, timeout=60, env=env, cwd=tmp_path)
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "htcpool.runtime.http_client" in modules, done.stderr[-1000:]  # it went as far as a client
    assert not {m for m in modules if m.split(".")[0] in SERVER_SIDE or m in SERVER_SIDE}
