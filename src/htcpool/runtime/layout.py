"""Where a pool keeps its files, and the pool token.

A pool lives in one local directory (``LOCAL_DIR``)::

    condor_config        the pool's configuration (written by ``htcpool up`` when absent)
    pool.token           the shared secret every request carries (mode 0600)
    run/<daemon>.address the URL each daemon listens on; run/master.pid
    log/<Daemon>Log      each daemon's log
    spool/               the schedd's queue and history (SQLite), the accountant's records
    execute/             the starters' scratch directories
    sensors.json         optional scripted sensor readings (tests, demonstrations)

The default local directory is ``$HTCPOOL_LOCAL_DIR`` or ``~/.htcpool``.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

TOKEN_HEADER = "Authorization"


def default_local_dir() -> Path:
    env = os.environ.get("HTCPOOL_LOCAL_DIR")
    return Path(env) if env else Path.home() / ".htcpool"


@dataclass(frozen=True)
class PoolLayout:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "condor_config"

    @property
    def token_file(self) -> Path:
        return self.root / "pool.token"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def log(self) -> Path:
        return self.root / "log"

    @property
    def spool(self) -> Path:
        return self.root / "spool"

    @property
    def execute(self) -> Path:
        return self.root / "execute"

    @property
    def sensors(self) -> Path:
        return self.root / "sensors.json"

    @property
    def master_pid(self) -> Path:
        return self.run / "master.pid"

    def address_file(self, daemon: str) -> Path:
        return self.run / f"{daemon.lower()}.address"

    def log_file(self, daemon: str) -> Path:
        return self.log / f"{daemon.capitalize()}Log"

    def make(self) -> None:
        for d in (self.root, self.run, self.log, self.spool, self.execute):
            d.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)

    def ensure_token(self) -> str:
        """The pool token, created (readable by the pool's user only) on first use."""
        if not self.token_file.exists():
            fd = os.open(self.token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
        return self.read_token()

    def read_token(self) -> str:
        mode = self.token_file.stat().st_mode & 0o077
        if mode:
            raise PermissionError(f"{self.token_file} must be readable by its owner only (mode 0600)")
        return self.token_file.read_text().strip()

    def read_address(self, daemon: str) -> str | None:
        try:
            text = self.address_file(daemon).read_text().strip()
        except OSError:
            return None
        return text or None

    def write_address(self, daemon: str, url: str) -> None:
        tmp = self.address_file(daemon).with_suffix(".tmp")
        tmp.write_text(url + "\n")
        os.replace(tmp, self.address_file(daemon))

    def clear_address(self, daemon: str) -> None:
        try:
            self.address_file(daemon).unlink()
        except OSError:
            pass
