"""The startd's answers to administrators: condor_status -direct, and what the master is asked.

``direct_query`` answers ``QueryAds`` sent to the startd itself (condor_status -direct): the slot
ads as the collector would have them, with the machine's attributes, the daemon's statistics
when asked for (-statistics) and its address; a constraint that does not parse is answered 400.

``carry_daemon_action`` carries out the core's ``DaemonAction`` at the end of a drain or a
shutdown: ``restart`` and ``reconfig`` are asked of the master (a reconfig restarts an idle
startd, which then reads the new configuration); condor_drain -exit-on-completion asks the
master to turn the startd off, so that it is not started again; without a master the startd
stops on its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from htcpool.classad import ClassAdError, EvalContext, ExprTree, fixed_clock
from htcpool.protocol import AdList, Command, DaemonCommand, How, QueryAds
from htcpool.protocol import startd as m
from htcpool.runtime.daemon import Daemon
from htcpool.runtime.http import RequestRefused
from htcpool.startd import Startd

log = logging.getLogger("htcpool.startd")

#: what the startd asks of the master for the core's DaemonAction kinds it cannot do alone
BY_MASTER = {m.DaemonActionKind.RESTART: Command.RESTART, m.DaemonActionKind.RECONFIG: Command.RECONFIG}


def direct_query(core: Startd, machine_attrs: Mapping[str, object], daemon: Daemon, message: QueryAds) -> AdList:
    """condor_status -direct: the slot ads as the collector would have them."""
    if message.my_type.lower() not in ("machine", "any"):
        return AdList(())
    try:
        test = ExprTree(message.constraint) if message.constraint else None
    except ClassAdError as e:
        raise RequestRefused(400, f"the constraint {message.constraint!r} does not parse: {e}") from None
    now = daemon.clock()
    ctx = EvalContext(clock=fixed_clock(now))
    statistics = daemon.statistics.attributes(now, message.statistics)  # -statistics WHICH
    out = []
    for ad in core.ads().values():
        ad = ad.copy()
        ad.update(machine_attrs)
        ad.update(statistics)
        ad["MyAddress"] = daemon.url
        if test is None or test.evaluate(ad, None, ctx) is True:
            out.append(ad)
    return AdList(tuple(out))


def carry_daemon_action(daemon: Daemon, a: m.DaemonAction) -> None:
    kind = m.DaemonActionKind(a.kind)
    if kind in BY_MASTER:  # restart, reconfig: see the module docstring
        ask_master(daemon, BY_MASTER[kind])
    elif a.no_restart and daemon.address_of("master") is not None:
        log.info("draining completed: the startd exits and the master is told not to restart it")
        ask_master(daemon, Command.OFF)  # the master marks it unwanted, then stops it
    else:
        daemon.request_stop(How.GRACEFUL)


def ask_master(daemon: Daemon, command: Command) -> None:
    if daemon.address_of("master") is None:
        log.warning("no master runs to %s the startd; it goes on as it is", command.value)
        return

    async def resolve() -> str | None:
        return daemon.address_of("master")

    log.info("asking the master to %s the startd", "turn off" if command is Command.OFF else command.value)
    daemon.outbox.post("master", DaemonCommand(command, daemons=(daemon.name,)), resolve)


__all__ = ["BY_MASTER", "ask_master", "carry_daemon_action", "direct_query"]
