"""What the pool tools share: reaching the pool, the local time zone, the console width, errors.

Tools find the pool through ``$HTCPOOL_LOCAL_DIR`` (default ``~/.htcpool``) and
talk to its daemons with the pool token. Every failure to reach the pool or a
refused request ends the tool with a one-line message and status 1.
"""

from __future__ import annotations

import getpass
import shutil
import sys
import time
from collections.abc import Callable
from typing import Any

from htcpool.runtime.http import RequestRefused
from htcpool.runtime.pool import PoolClient, PoolNotRunning, local_layout


class ToolError(Exception):
    """A tool cannot go on; the message is printed as it is."""


def connect() -> PoolClient:
    try:
        return PoolClient(local_layout())
    except PoolNotRunning as e:
        raise ToolError(str(e)) from None


def request(client: PoolClient, daemon: str, message: Any) -> Any:
    try:
        return client.send(daemon, message)
    except PoolNotRunning as e:
        raise ToolError(str(e)) from None
    except RequestRefused as e:
        raise ToolError(e.detail) from None


def local_zone(now: float | None = None) -> int:
    """Seconds east of UTC of the local time at ``now``."""
    t = time.localtime(now)
    return t.tm_gmtoff


def console_width() -> int | None:
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def user() -> str:
    return getpass.getuser()


def run_tool(prog: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except ToolError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1


def schedd_identity(client: PoolClient) -> tuple[str, str]:
    """The schedd's Name and address, as condor_q prints them in its heading."""
    from htcpool.protocol import AdList, QueryAds

    reply = request(client, "collector", QueryAds("Scheduler", "", ("Name", "ScheddIpAddr")))
    ads = list(reply.ads) if isinstance(reply, AdList) else []
    if not ads:
        return f"{user()}@localhost", client.url("schedd")
    ad = ads[0]
    return str(ad.get("Name", "")), str(ad.get("ScheddIpAddr", ""))
