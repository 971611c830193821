"""HTCondor's own configuration reader (``htcondor2``), run in a child process.

``htcondor2.param`` is process-global state bound to the file named by ``CONDOR_CONFIG``,
so the reference never runs in the test process. :class:`ReferenceReader` keeps one
child interpreter per test worker; each request writes a configuration text to the
child's file, calls ``htcondor2.reload_config()`` and looks names up, answering with
JSON: name -> [kind, value], where kind is ``"missing"`` (KeyError), ``"error"`` (any
other exception, value is its text) or the Python type name of the value. A
configuration HTCondor rejects kills the child; the request then answers
``{"__error__": <stderr>}`` and the next request starts a fresh child. A lookup that
never ends (a recursive macro) answers ``{"__hang__": True}`` after a timeout.

Run as a script, this file is the child.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHILD = Path(__file__).resolve()


def _child() -> None:
    path = os.environ["CONDOR_CONFIG"]
    first = True
    for request_line in sys.stdin:
        request = json.loads(request_line)
        Path(path).write_text(request["text"])
        for key, value in request.get("env", {}).items():
            os.environ[key] = value
        import htcondor2

        if not first:
            htcondor2.reload_config()
        first = False
        answer: dict[str, Any] = {}
        for name in request["names"]:
            try:
                value = htcondor2.param[name]
            except KeyError:
                answer[name] = ["missing", None]
            except Exception as exc:  # the reference's own error, reported as data
                answer[name] = ["error", str(exc)]
            else:
                answer[name] = [type(value).__name__, value]
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


class ReferenceReader:
    """A long-lived child process answering configuration lookups."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        self.path = Path(self._dir.name) / "condor_config"
        self._proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.lower().startswith("_condor_")}
        env["CONDOR_CONFIG"] = str(self.path)
        self.path.write_text("")
        # stderr goes to a file: HTCondor prints warnings there, and an unread pipe
        # would fill up and stall the child.
        self._stderr = open(Path(self._dir.name) / "stderr", "w+")  # noqa: SIM115
        return subprocess.Popen(
            [sys.executable, str(CHILD)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            cwd=self._dir.name,
        )

    def values(self, text: str, names: list[str], timeout: float = 10.0) -> dict[str, Any]:
        """Look every name up in HTCondor's reading of ``text``.

        Answers ``{"__hang__": True}`` when HTCondor does not answer within ``timeout``
        seconds (it loops forever on recursive macros).
        """
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"text": text, "names": names}) + "\n")
        self._proc.stdin.flush()
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        if not ready:
            # HTCondor expands a macro that refers back to itself forever.
            self._proc.kill()
            self._proc.wait(timeout=30)
            self._proc = None
            self._stderr.close()
            return {"__hang__": True}
        line = self._proc.stdout.readline()
        if not line:
            proc, self._proc = self._proc, None
            proc.wait(timeout=30)
            self._stderr.seek(0)
            stderr = self._stderr.read()
            self._stderr.close()
            return {"__error__": stderr.strip()}
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=30)
            self._proc = None
            self._stderr.close()
        self._dir.cleanup()


if __name__ == "__main__":
    _child()
