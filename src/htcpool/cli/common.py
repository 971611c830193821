"""What the pool tools share: reaching the pool, checking what the user typed, the local time
zone, the console width, errors.

Tools find the pool as HTCondor's do: the ``LOCAL_DIR`` of the configuration ``CONDOR_CONFIG``
names, else ``$HTCPOOL_LOCAL_DIR`` (default ``~/.htcpool``) (``locate``), and talk to its
daemons on their Unix sockets, or with a token (``PoolClient``, docs/security.md). Every failure to reach the pool, a
refused request or a malformed expression on the command line ends the tool
with a one-line message and status 1 (``run_tool``); expressions are checked
here, before anything is sent, so the message names what the user typed.
"""

from __future__ import annotations

import getpass
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import httpx

from htcpool.classad import ClassAd, ClassAdError, ExprTree
from htcpool.cli.locate import LocateError, pool_layout
from htcpool.protocol import AdList, QueryAds
from htcpool.runtime.http_client import RequestRefused
from htcpool.runtime.pool import PoolClient, PoolNotRunning

#: Attributes that are capabilities (a claim id lets its holder use the slot); HTCondor's tools
#: never print them, only their ``Public`` forms.
PRIVATE_ATTRIBUTES = ("ClaimId", "ClaimIds", "Capability", "PreemptClaimId", "ChildClaimIds",
                      "TransferKey")


class ToolError(Exception):
    """A tool cannot go on; the message is printed as it is."""


def connect() -> PoolClient:
    try:
        return PoolClient(pool_layout())
    except (PoolNotRunning, LocateError) as e:
        raise ToolError(str(e)) from None
    except OSError as e:  # an unreadable local directory
        raise ToolError(str(e)) from None


def request(client: PoolClient, daemon: str, message: Any, url: str | None = None) -> Any:
    """``message`` to the pool's ``daemon`` (at ``url`` when given: one of several startds)."""
    try:
        return client.send_to(url, message) if url else client.send(daemon, message)
    except PoolNotRunning as e:
        raise ToolError(str(e)) from None
    except RequestRefused as e:
        raise ToolError(e.detail) from None
    except httpx.HTTPError as e:  # a daemon that stopped or hung while answering
        raise ToolError(f"no answer from the {daemon}: {e or type(e).__name__}") from None


def pool_collector(pool: str | None) -> str | None:
    """The URL of the collector ``-pool HOST[:PORT]`` names (COLLECTOR_HOST's form); None without it."""
    if not pool:
        return None
    from htcpool.cli.remote_master import RemoteMasterError, pool_url

    try:
        return pool_url(pool)
    except RemoteMasterError as e:
        raise ToolError(str(e)) from None


def check_constraint(text: str | None, option: str = "-constraint") -> str | None:
    """``text`` when it is a ClassAd expression; else a ToolError naming it and the problem."""
    if text is None:
        return None
    try:
        ExprTree(text)
    except ClassAdError as e:
        raise ToolError(f"{option} {text!r} is not a valid ClassAd expression: {e}") from None
    return text


def check_expressions(texts: Sequence[str] | None, option: str = "-af") -> None:
    """Each of ``texts`` must be a ClassAd expression (HTCondor: ``Error: Invalid expression``)."""
    for text in texts or ():
        check_constraint(text, option)


def without_private(ads: Iterable[ClassAd]) -> list[ClassAd]:
    """Copies of ``ads`` without their capabilities (claim ids), as HTCondor's tools print ads."""
    out = []
    for ad in ads:
        if any(name in ad for name in PRIVATE_ATTRIBUTES):
            ad = ad.copy()
            for name in PRIVATE_ATTRIBUTES:
                if name in ad:
                    del ad[name]
        out.append(ad)
    return out


def console_width() -> int | None:
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def user() -> str:
    return getpass.getuser()


def run_tool(prog: str, body: Callable[[], int]) -> int:
    """``body``'s status; a ToolError is printed after the tool's name (its HTCondor name when it
    was started under one, ``condor_q``) and gives status 1."""
    import htcpool.cli

    try:
        return body()
    except ToolError as e:
        print(f"{htcpool.cli.INVOKED_AS or prog}: {e}", file=sys.stderr)
        return 1


def schedd_identity(client: PoolClient) -> tuple[str, str]:
    """The schedd's Name and address, as condor_q prints them in its heading."""
    reply = request(client, "collector", QueryAds("Scheduler", "", ("Name", "ScheddIpAddr", "MyAddress")))
    ads = list(reply.ads) if isinstance(reply, AdList) else []
    if not ads:
        return f"{user()}@localhost", client.url("schedd")
    own = client.layout.read_address("schedd")  # a pool may have several schedds: this host's own
    ad = next((each for each in ads if each.get("MyAddress") == own), ads[0])
    return str(ad.get("Name", "")), str(ad.get("ScheddIpAddr", ""))


def startd_url(client: PoolClient, name: str | None) -> str | None:
    """The URL of the startd whose machine or slot is ``name`` (several startds may run under one
    master, docs/defrag.md); None for the pool's own startd."""
    if name is None:
        return None
    reply = request(client, "collector", QueryAds("Machine", "", ("Name", "Machine", "MyAddress")))
    for slot in list(reply.ads) if isinstance(reply, AdList) else []:
        if name.lower() in (str(slot.get("Machine", "")).lower(), str(slot.get("Name", "")).lower()):
            address = slot.get("MyAddress")
            return address if isinstance(address, str) and address else None
    return None


def startd_identity(client: PoolClient, name: str | None = None) -> tuple[str, str]:
    """The pool's startd as the execute-side tools name it: (machine, address).

    ``name`` is what the user typed: a machine name or a slot name (``slot1@host``); a ToolError
    (HTCondor's ``Can't find address for startd NAME``) when no slot of the startd has it."""
    reply = request(client, "collector", QueryAds("Machine", "", ("Name", "Machine", "StartdIpAddr")))
    slots = list(reply.ads) if isinstance(reply, AdList) else []
    for slot in slots:
        machine, slot_name = str(slot.get("Machine", "")), str(slot.get("Name", ""))
        if name is None or name.lower() in (machine.lower(), slot_name.lower()):
            return machine, str(slot.get("StartdIpAddr", client.url("startd")))
    if name is None:
        return "localhost", client.url("startd")
    raise ToolError(f"Can't find address for startd {name}")
