"""Which pool the bindings talk to, and the one way they send it a message.

HTCondor's bindings find their pool through the configuration; htcpool's pools
live in a local directory (docs/pool.md), found the same way the tools find it:
the directory of ``CONDOR_CONFIG`` when it holds a pool token, else
``$HTCPOOL_LOCAL_DIR``, else ``~/.htcpool``. A ``Connection`` holds that
directory and an HTTP client with a bounded timeout; it reaches each daemon on
its Unix socket when the pool has one (the user is known by their uid), else on
its TCP address with the user's token for the pool (docs/security.md). Every failure (no pool, a
daemon that is down or does not answer in time, a refused request) becomes an
``HTCondorException`` naming the daemon and its address, so no call hangs.
``use_pool`` switches the default connection (``PersonalPool.use_config``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from htcpool.htcondor2._errors import HTCondorException

if TYPE_CHECKING:
    from htcpool.runtime.http_client import SyncClient
    from htcpool.runtime.layout import PoolLayout

#: seconds a request may take before it fails (connecting to a daemon that is down fails at once)
DEFAULT_TIMEOUT = 20.0

_default: Connection | None = None
_chosen: Path | None = None


def pool_directory() -> Path:
    """The local directory of the pool this process talks to."""
    config = os.environ.get("CONDOR_CONFIG")
    if config:
        directory = Path(config).parent
        if (directory / "pool.token").exists():
            return directory
    from htcpool.runtime.layout import default_local_dir

    return default_local_dir()


class Connection:
    """Messages to the daemons of one pool."""

    def __init__(self, root: Path | str, timeout: float = DEFAULT_TIMEOUT) -> None:
        from htcpool.runtime.layout import PoolLayout

        self.layout: PoolLayout = PoolLayout(Path(root))
        self.timeout = timeout
        self._client: SyncClient | None = None

    @property
    def root(self) -> Path:
        return self.layout.root

    def address(self, daemon: str) -> str:
        url = self.layout.read_address(daemon)
        if url is None:
            raise HTCondorException(f"Unable to locate the {daemon} of the pool in {self.root}: "
                                    "it is not running (start the pool with `htcpool up`)")
        return url

    def client(self) -> SyncClient:
        if self._client is None:
            from htcpool.runtime.http_client import SyncClient
            from htcpool.runtime.security.credentials import client_chooser, client_token

            if not self.layout.token_file.exists():
                raise HTCondorException(f"no pool in {self.root} (no pool token; start one with "
                                        "`htcpool up`)")
            layout = self.layout
            self._client = SyncClient(lambda: client_token(layout), self.timeout, layout.ca_file,
                                      client_chooser(layout))
        return self._client

    def send(self, daemon: str, message: Any, url: str | None = None) -> Any:
        """``message`` to ``daemon`` (at ``url`` when given); its answer, or HTCondorException."""
        import httpx

        from htcpool.runtime.http_client import RequestRefused

        targets = [url] if url else self._targets(daemon)
        target = targets[0]
        try:
            for target in targets[:-1]:  # several collectors: the next when one cannot be reached
                try:
                    return self.client().send(self.layout.local_route(target), message)
                except (httpx.ConnectError, httpx.ConnectTimeout):
                    continue
            target = targets[-1]
            return self.client().send(self.layout.local_route(target), message)
        except RequestRefused as e:
            raise HTCondorException(f"the {daemon} at {target} refused the request: {e.detail}") from None
        except httpx.TimeoutException:
            raise HTCondorException(f"the {daemon} at {target} did not answer within "
                                    f"{self.timeout:g} s") from None
        except httpx.HTTPError as e:
            raise HTCondorException(f"Failed to connect to the {daemon} at {target}: "
                                    f"{e or type(e).__name__}") from None

    def _targets(self, daemon: str) -> list[str]:
        """Where ``daemon`` is: for the collector, every collector COLLECTOR_HOST lists
        (``run/collectors``), the pool's own first, as the tools ask them (``PoolClient.send``)."""
        if daemon != "collector":
            return [self.address(daemon)]
        first = self.layout.read_address(daemon)
        others = [u for u in self.layout.read_collectors() if u != first]
        return [first, *others] if first else others or [self.address(daemon)]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def default_connection() -> Connection:
    """The connection to the pool of this process's configuration (re-read when it changes)."""
    global _default
    root = _chosen or pool_directory()
    if _default is None or _default.root != root:
        _default = Connection(root)
    return _default


def use_pool(root: Path | str | None) -> None:
    """Make ``root`` the pool of later calls (None: back to the configuration's)."""
    global _chosen
    _chosen = None if root is None else Path(root)


def connection_for(location: Any) -> tuple[Connection, str | None]:
    """The connection and the address a location ad (from ``Collector.locate``) names."""
    conn = default_connection()
    if location is None:
        return conn, None
    address = location.get("MyAddress") if hasattr(location, "get") else None
    if not isinstance(address, str) or not address:
        raise HTCondorException("the location ad has no MyAddress attribute")
    return conn, address
