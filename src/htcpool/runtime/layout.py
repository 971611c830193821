"""Where a pool keeps its files, and the daemons' token.

A pool lives in one local directory (``LOCAL_DIR``)::

    condor_config        the pool's configuration (written by ``htcpool up`` when absent)
    pool.token           the daemons' own token, condor@<TRUST_DOMAIN> (mode 0600; docs/security.md)
    passwords.d/POOL     the pool's token signing key (SEC_PASSWORD_DIRECTORY, mode 0700/0600)
    tokens.d/            tokens the pool's user keeps for clients (SEC_TOKEN_SYSTEM_DIRECTORY)
    run/<daemon>.address the URL each daemon listens on; run/master.pid. On a host of a pool across
                         hosts that runs no collector, run/collector.address is the URL of the
                         collector COLLECTOR_HOST names (runtime/hostplan.py)
    run/collectors       where COLLECTOR_HOST lists several collectors, their URLs one a line, in
                         its order: the tools try the next when one does not answer
    run/<daemon>.sock    each daemon's Unix socket: local users are known by their uid there
    run/trust_domain     the pool's TRUST_DOMAIN, which clients pick their tokens by
    run/ca.pem           the pool's certificate authority, when its TCP ports speak HTTPS
    log/<Daemon>Log      each daemon's log
    spool/               the schedd's queue and history (SQLite), the accountant's records
    execute/             the starters' scratch directories (0711 in a root pool: each is its job's, 0700)
    sensors.json         optional scripted sensor readings (tests, demonstrations)

The default local directory is ``$HTCPOOL_LOCAL_DIR`` or ``~/.htcpool``.
"""

from __future__ import annotations

import contextlib
import os
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

    @property
    def ca_file(self) -> Path:
        """The pool's certificate authority, public (present when its daemons speak HTTPS)."""
        return self.run / "ca.pem"

    def socket_file(self, daemon: str) -> Path:
        return self.run / f"{daemon.lower()}.sock"

    def make(self) -> None:
        """The directories, open where every local user must reach them (the configuration, the
        daemons' addresses and sockets) and closed where they hold the pool's state. Where root
        runs the pool, jobs run as their owners (``runas``), so ``execute/`` can be searched by
        everyone but not listed: each scratch directory in it is its owner's alone (mode 0700)."""
        for d in (self.root, self.run, self.log, self.spool, self.execute):
            d.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)
        os.chmod(self.run, 0o755)
        for private in (self.spool, self.log):
            os.chmod(private, 0o700)
        os.chmod(self.execute, 0o711 if os.geteuid() == 0 else 0o700)

    def ensure_token(self) -> str:
        """The daemons' token, made with the pool's signing key on first use (docs/security.md)."""
        from htcpool.config import read_config
        from htcpool.runtime.security.credentials import SecurityPaths, ensure_pool_credentials

        if self.config.exists():
            env = dict(os.environ, CONDOR_CONFIG=str(self.config))
            config = read_config(str(self.config), environ=env, subsystem="TOOL")
        else:
            config = read_config(None, environ={"CONDOR_CONFIG": "ONLY_ENV", "_CONDOR_LOCAL_DIR": str(self.root)},
                                 subsystem="TOOL")
        self.run.mkdir(parents=True, exist_ok=True)
        return ensure_pool_credentials(self, SecurityPaths.of(config, self))

    def read_token(self) -> str:
        mode = self.token_file.stat().st_mode & 0o077
        if mode:
            raise PermissionError(f"{self.token_file} must be readable by its owner only (mode 0600)")
        return self.token_file.read_text().strip()

    def local_route(self, url: str) -> str:
        """``unix:<socket>`` of the daemon of this pool listening at ``url`` when it has a socket
        here (a local user is then known by their uid); ``url`` itself otherwise."""
        if url.startswith("unix:"):
            return url
        try:
            files = list(self.run.glob("*.address"))
        except OSError:
            return url
        for path in files:
            try:
                if path.read_text().strip() == url:
                    sock = path.with_suffix(".sock")
                    if sock.exists():
                        return f"unix:{sock}"
            except OSError:
                continue
        return url

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

    @property
    def collectors_file(self) -> Path:
        return self.run / "collectors"

    def read_collectors(self) -> list[str]:
        """The collectors' URLs where the pool has several (``run/collectors``); empty otherwise."""
        try:
            return [line.strip() for line in self.collectors_file.read_text().splitlines() if line.strip()]
        except OSError:
            return []

    def write_collectors(self, urls: list[str]) -> None:
        """Keep ``urls`` in ``run/collectors``; none removes the file."""
        if not urls:
            with contextlib.suppress(OSError):
                self.collectors_file.unlink()
            return
        tmp = self.collectors_file.with_suffix(".tmp")
        tmp.write_text("".join(url + "\n" for url in urls))
        os.replace(tmp, self.collectors_file)

    def clear_address(self, daemon: str) -> None:
        try:
            self.address_file(daemon).unlink()
        except OSError:
            pass
