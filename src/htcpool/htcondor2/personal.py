"""``PersonalPool``: a personal htcpool pool in a directory, as ``htcondor2.personal`` has it.

``PersonalPool(local_dir, config=…, raw_config=…)`` writes the personal
configuration of docs/pool.md ("The personal configuration") into
``local_dir/condor_config``, with ``config``'s knobs and ``raw_config`` appended;
``start()`` starts the master (``htcpool.runtime.pool.start_pool``) and returns
once the daemons are up and the slots are in the collector; ``stop()`` shuts the
pool down. Used as a context manager it points this process at the pool while
inside (``use_config``: ``CONDOR_CONFIG`` and the bindings' default pool) and
stops it on the way out. ``state`` follows HTCondor's ``PersonalPoolState``.
"""

from __future__ import annotations

import enum
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from htcpool.htcondor2._errors import HTCondorException


class PersonalPoolState(enum.StrEnum):
    UNINITIALIZED = "UNINITIALIZED"
    INITIALIZED = "INITIALIZED"
    STARTING = "STARTING"
    READY = "READY"
    STOPPING = "STOPPING"
    STOPPED = "STOPPED"


class SetCondorConfig:
    """Points ``CONDOR_CONFIG`` and the bindings' default pool at one pool while set."""

    def __init__(self, config_file: Path) -> None:
        self.config_file = Path(config_file)
        self.previous: str | None = None

    def set(self) -> None:
        from htcpool.htcondor2._param import reload_config
        from htcpool.htcondor2._pool import use_pool

        self.previous = os.environ.get("CONDOR_CONFIG")
        os.environ["CONDOR_CONFIG"] = str(self.config_file)
        use_pool(self.config_file.parent)
        reload_config()

    def unset(self) -> None:
        from htcpool.htcondor2._param import reload_config
        from htcpool.htcondor2._pool import use_pool

        if self.previous is None:
            os.environ.pop("CONDOR_CONFIG", None)
        else:
            os.environ["CONDOR_CONFIG"] = self.previous
        use_pool(None)
        reload_config()

    def __enter__(self) -> SetCondorConfig:
        self.set()
        return self

    def __exit__(self, *exc: object) -> None:
        self.unset()


class PersonalPool:
    """A personal pool in ``local_dir`` (the HTCondor manual's ``htcondor2.personal.PersonalPool``)."""

    def __init__(self, local_dir: Path | str | None = None, config: Mapping[str, str] | None = None,
                 raw_config: str | None = None, detach: bool = False, use_config: bool = True) -> None:
        from htcpool.runtime.layout import PoolLayout

        self.local_dir = Path(local_dir if local_dir is not None
                              else Path.home() / ".htcpool" / "personal").absolute()
        self.layout = PoolLayout(self.local_dir)
        self.config_file = self.layout.config
        self.execute_dir, self.log_dir = self.layout.execute, self.layout.log
        self.run_dir, self.spool_dir = self.layout.run, self.layout.spool
        self._config = {k: "" if v is None else str(v) for k, v in (config or {}).items()}
        self._raw_config = raw_config or ""
        self._detach = detach
        self._use_config = use_config
        self._conn: Any = None
        self.state = PersonalPoolState.UNINITIALIZED
        if use_config:
            self.initialize()

    def __repr__(self) -> str:
        return f"PersonalPool(local_dir={self.local_dir}, state={self.state.value})"

    def initialize(self, overwrite_config: bool = True) -> PersonalPool:
        from htcpool.runtime.pool import PERSONAL_CONFIG

        if self.state is not PersonalPoolState.UNINITIALIZED:
            return self
        if not overwrite_config and self.config_file.exists():
            raise FileExistsError(f"{self.config_file} exists and overwrite_config is False")
        self.layout.make()
        extra = "".join(f"{name} = {value}\n" for name, value in self._config.items())
        self.config_file.write_text(PERSONAL_CONFIG.format(local_dir=self.local_dir)
                                    + "\n# PersonalPool(config=…)\n" + extra
                                    + "\n# PersonalPool(raw_config=…)\n" + self._raw_config + "\n")
        self.layout.ensure_token()
        self.state = PersonalPoolState.INITIALIZED
        return self

    def use_config(self) -> SetCondorConfig:
        return SetCondorConfig(self.config_file)

    def start(self) -> PersonalPool:
        """Start the pool; returns once its daemons are up and its slots advertised."""
        from htcpool.runtime.pool import PoolNotRunning, start_pool

        if self.state is PersonalPoolState.READY:
            return self
        self.initialize()
        self.state = PersonalPoolState.STARTING
        try:
            start_pool(self.layout, timeout=60)
        except PoolNotRunning as e:
            self.state = PersonalPoolState.STOPPED
            raise HTCondorException(f"the personal pool in {self.local_dir} did not start: {e}") from None
        self.state = PersonalPoolState.READY
        return self

    def stop(self) -> None:
        from htcpool.protocol import How
        from htcpool.runtime.pool import stop_pool

        if self.state not in (PersonalPoolState.READY, PersonalPoolState.STARTING):
            return
        self.state = PersonalPoolState.STOPPING
        if self._conn is not None:
            self._conn.close()
        stop_pool(self.layout, How.FAST, timeout=30)
        self.state = PersonalPoolState.STOPPED

    def detach(self) -> PersonalPool:
        self._detach = True
        return self

    def _connection(self) -> Any:
        from htcpool.htcondor2._pool import Connection

        if self._conn is None:
            self._conn = Connection(self.local_dir)
        return self._conn

    @property
    def schedd(self) -> Any:
        from htcpool.htcondor2._schedd import Schedd

        return Schedd._of(self._connection())

    @property
    def collector(self) -> Any:
        from htcpool.htcondor2._collector import Collector

        return Collector._of(self._connection())

    def run_command(self, args: list[str], stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE,
                    universal_newlines: bool = True, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        """Run a command (a condor_* tool, say) against this pool; its output with ends stripped."""
        env = dict(kwargs.pop("env", None) or os.environ, CONDOR_CONFIG=str(self.config_file),
                   HTCPOOL_LOCAL_DIR=str(self.local_dir))
        done = subprocess.run([str(a) for a in args], stdout=stdout, stderr=stderr,
                              text=universal_newlines, env=env, **kwargs)
        if isinstance(done.stdout, str):
            done.stdout = done.stdout.rstrip()
        if isinstance(done.stderr, str):
            done.stderr = done.stderr.rstrip()
        return done

    def get_config_val(self, macro: str, default: str | None = None) -> str:
        from htcpool.config import read_config

        value = read_config(str(self.config_file), subsystem="TOOL").get_str(macro)
        if value is None:
            if default is None:
                raise KeyError(macro)
            return default
        return str(value)

    def who(self) -> Any:
        """condor_who -quick's ad: each daemon's state (``Alive``), and ``IsReady``."""
        from htcpool.classad import ClassAd
        from htcpool.protocol import Command, DaemonCommand

        try:
            rows = self._connection().send("master", DaemonCommand(Command.STATUS)).rows
        except HTCondorException:
            return ClassAd()
        ad = ClassAd({"MASTER": "Alive"})
        for row in rows:
            ad[str(row["Name"]).upper()] = "Alive" if int(row.get("Pid", 0)) else "Stopped"
        ad["IsReady"] = all(ad[name] == "Alive" for name in ad if name != "MASTER")
        return ad

    def __enter__(self) -> PersonalPool:
        if self._use_config:
            self.use_config().set()
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._use_config:
            self.use_config().unset()

    def __del__(self) -> None:
        if not getattr(self, "_detach", True) and getattr(self, "state", None) is PersonalPoolState.READY:
            try:
                self.stop()
            except Exception:  # interpreter shutdown: nothing left to report to
                return
