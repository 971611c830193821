"""``send_command``, ``ping``, ``enable_debug``, ``enable_log`` and ``disable_debug``.

``send_command(location, command, target)`` turns one of HTCondor's
``DaemonCommands`` into the ``DaemonCommand`` message the pool's master carries
out (docs/pool.md, "The daemons"): the ``Daemons…`` commands act on every daemon,
``DaemonOn``/``DaemonOff``/``DaemonOffFast`` on the daemon ``target`` names, and
``Off…``, ``Restart`` and ``Reconfig`` on the daemon the location ad is (the
whole pool for the master). ``enable_debug`` sends htcpool's client log to
standard error; ``enable_log`` to the file the ``TOOL_LOG`` knob names.
"""

from __future__ import annotations

import logging
from typing import Any

from htcpool.htcondor2._enums import DaemonCommand
from htcpool.htcondor2._errors import HTCondorException
from htcpool.htcondor2._pool import default_connection

#: htcondor2 command -> (htcpool command, how, whether it names the location's daemon)
_COMMANDS = {
    DaemonCommand.DaemonsOn: ("on", "graceful", False),
    DaemonCommand.DaemonsOff: ("off", "graceful", False),
    DaemonCommand.DaemonsOffFast: ("off", "fast", False),
    DaemonCommand.DaemonsOffPeaceful: ("off", "peaceful", False),
    DaemonCommand.DaemonOn: ("on", "graceful", True),
    DaemonCommand.DaemonOff: ("off", "graceful", True),
    DaemonCommand.DaemonOffFast: ("off", "fast", True),
    DaemonCommand.OffGraceful: ("off", "graceful", True),
    DaemonCommand.OffFast: ("off", "fast", True),
    DaemonCommand.OffForce: ("off", "fast", True),
    DaemonCommand.OffPeaceful: ("off", "peaceful", True),
    DaemonCommand.Restart: ("restart", "graceful", True),
    DaemonCommand.RestartPeaceful: ("restart", "peaceful", True),
    DaemonCommand.Reconfig: ("reconfig", "graceful", True),
}
_DAEMON_NAMES = {"DaemonMaster": "master", "Scheduler": "schedd", "Machine": "startd",
                 "Collector": "collector", "Negotiator": "negotiator"}
_log = logging.getLogger("htcpool")


def send_command(ad: Any, dc: DaemonCommand, target: str | None = None) -> None:
    """Send an administrative command to the daemon the location ``ad`` names."""
    from htcpool.protocol import Command, How
    from htcpool.protocol import DaemonCommand as DaemonCommandMessage

    if not isinstance(dc, DaemonCommand):
        raise TypeError("dc must be a DaemonCommand")
    if dc not in _COMMANDS:
        raise HTCondorException(f"DaemonCommand.{dc.name} is not supported by htcpool's master")
    command, how, names_daemon = _COMMANDS[dc]
    my_type = str(ad.get("MyType", "")) if hasattr(ad, "get") else ""
    daemon = _DAEMON_NAMES.get(my_type)
    if daemon is None:
        raise HTCondorException(f"the location ad names no daemon of this pool (MyType {my_type!r})")
    daemons: tuple[str, ...] = ()
    if dc in (DaemonCommand.DaemonOn, DaemonCommand.DaemonOff, DaemonCommand.DaemonOffFast):
        if not target:
            raise HTCondorException(f"DaemonCommand.{dc.name} needs a target daemon (such as 'SCHEDD')")
        daemons = (target.lower(),)
    elif names_daemon and daemon != "master":
        daemons = (daemon,)
    default_connection().send("master", DaemonCommandMessage(Command(command), How(how), daemons))


def ping(location: Any, authz: str | None = None, security: Any = None) -> Any:
    """Whether the daemon a location ad names answers: a ClassAd with its address and name."""
    import httpx

    from htcpool.classad import ClassAd

    address = location.get("MyAddress") if hasattr(location, "get") else location
    if not isinstance(address, str) or not address:
        raise HTCondorException("ping needs a location ad with MyAddress, or an address")
    try:
        response = httpx.get(address + "/v1/ping", timeout=default_connection().timeout, trust_env=False)
        daemon = response.json().get("daemon", "")
    except (httpx.HTTPError, ValueError) as e:
        raise HTCondorException(f"Failed to ping {address}: {e or type(e).__name__}") from None
    return ClassAd({"MyAddress": address, "Daemon": daemon, "AuthorizationSucceeded": True})


def enable_debug(flags: str | None = None) -> None:
    """Write htcpool's client log to standard error."""
    _handler(logging.StreamHandler())


def enable_log() -> None:
    """Write htcpool's client log to the file ``TOOL_LOG`` names (nothing when it is not set)."""
    from htcpool.htcondor2._param import param

    path = param.get("TOOL_LOG")
    if path:
        _handler(logging.FileHandler(path))


def disable_debug() -> None:
    for handler in list(_log.handlers):
        if getattr(handler, "_htcondor2", False):
            _log.removeHandler(handler)


def _handler(handler: logging.Handler) -> None:
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    handler._htcondor2 = True  # type: ignore[attr-defined]
    _log.addHandler(handler)
    _log.setLevel(logging.DEBUG)
