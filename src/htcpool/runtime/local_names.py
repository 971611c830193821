"""Several instances of one daemon under one master: names, kinds, local names and their files.

HTCondor runs a second startd on a computer as the manual's "Introduction to Configuration"
shows for a second schedd: a ``DAEMON_LIST`` entry whose program is the startd's, started
with a local name, and the instance's own settings under the local-name prefix::

    DAEMON_LIST   = MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD, STARTD_B
    STARTD_B      = $(STARTD)
    STARTD_B_ARGS = -local-name B
    B.NUM_CPUS    = 2

(The manual also shows ``STARTD.B.NUM_CPUS``; HTCondor's configuration reader never looks
that form up, and htcpool's follows it: ``htcpool.config.lookup``.) How htcpool reads that:

* ``daemon_entries(config)`` gives each ``DAEMON_LIST`` name (``MASTER`` skipped) its kind
  (collector, negotiator, schedd, startd, defrag): the name itself when it is one, else the
  program its knob names (``$(STARTD)`` is ``…/condor_startd``: kind startd), and its local
  name from ``<NAME>_ARGS`` (``-local-name B``). A name of no known kind is reported and left
  out. The collector comes first, then the kinds in order, each in ``DAEMON_LIST`` order.
* The instance's name in the pool's directory is the ``DAEMON_LIST`` name in lower case:
  ``run/startd_b.address``, and ``htcpool off -daemon startd_b`` reaches it.
* Its files, unless configured under its local name: the log ``<NAME>_LOG`` (as the manual's
  ``XYZZY_LOG``) or ``<SUBSYS>_LOG`` set under the local name, else ``log/StartdLog.B``; the
  starters' log ``log/StarterLog.B``; the execute directory ``EXECUTE`` set under the local
  name, else ``execute.B`` beside the pool's ``execute``; a second schedd's spool (its queue and
  history) ``SPOOL`` set under its local name, else ``spool.B`` (``spool_dir``), and its name
  ``SCHEDD_NAME``, else ``B@<FULL_HOSTNAME>`` (``schedd_name``).
* ``startd_name``: the startd's daemon name as HTCondor builds it (``build_valid_daemon_name``):
  ``STARTD_NAME`` (for an instance with a local name and no ``STARTD_NAME``, the local name),
  completed with ``@<FULL_HOSTNAME>`` when it has no ``@``. Its slots are then
  ``slot1@B@host``; htcpool also publishes that name as the slots' ``Machine`` (HTCondor keeps the
  host name there), so each instance counts as a machine of its own in ``condor_status``, in the
  negotiator and in the defrag daemon (docs/defrag.md, "Several machines on one computer").
"""

from __future__ import annotations

import getpass
import logging
import shlex
from dataclasses import dataclass
from pathlib import Path

from htcpool.config import Config
from htcpool.runtime.layout import PoolLayout

log = logging.getLogger("htcpool.master")

#: the daemons htcpool has, in the order the master starts them (the collector first)
KINDS = ("collector", "negotiator", "schedd", "startd", "defrag")


@dataclass(frozen=True)
class DaemonEntry:
    """One ``DAEMON_LIST`` daemon: its name (lower case), its kind and its local name."""

    name: str
    kind: str
    local_name: str | None = None


def kind_of(config: Config, name: str) -> str | None:
    """The daemon kind ``name`` runs: itself, or the program its knob names (``condor_startd``)."""
    lower = name.lower()
    if lower in KINDS:
        return lower
    program = config.get_str(name.upper()) or ""
    base = program.replace("\\", "/").rsplit("/", 1)[-1].strip().lower()
    kind = base.removeprefix("condor_")
    return kind if kind in KINDS else None


def local_name_of(args: str) -> str | None:
    """The ``-local-name`` of a daemon's arguments (``<NAME>_ARGS``), or None."""
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    for i, word in enumerate(words):
        if word.lower() in ("-local-name", "-localname") and i + 1 < len(words):
            return words[i + 1]
    return None


def daemon_entries(config: Config) -> list[DaemonEntry]:
    """The daemons the master runs, from ``DAEMON_LIST``, in start order."""
    text = config.get_str("DAEMON_LIST") or ""
    entries: list[DaemonEntry] = []
    for raw in text.replace(",", " ").split():
        if raw.lower() == "master" or any(e.name == raw.lower() for e in entries):
            continue
        kind = kind_of(config, raw)
        if kind is None:
            log.warning("DAEMON_LIST names %s, which htcpool does not have; ignored", raw)
            continue
        local = local_name_of(config.get_str(f"{raw.upper()}_ARGS") or "")
        if kind == raw.lower() and local is None:
            entries.append(DaemonEntry(kind, kind))
        else:
            entries.append(DaemonEntry(raw.lower(), kind, local))
    return sorted(entries, key=lambda e: KINDS.index(e.kind))


def _set_under_local_name(config: Config, knob: str, local_name: str) -> bool:
    """Whether ``knob``'s value comes from a definition under the local-name prefix."""
    found = config.provenance(knob)
    if found is None or found.is_default:
        return False
    return found.name.upper().startswith(f"{local_name.upper()}.")


def log_file(layout: PoolLayout, config: Config, entry: DaemonEntry) -> Path:
    """Where the daemon logs: see the module docstring."""
    if entry.local_name is None:
        return layout.log_file(entry.kind)
    own = config.get_str(f"{entry.name.upper()}_LOG")
    if own:
        return Path(own)
    knob = f"{entry.kind.upper()}_LOG"
    if _set_under_local_name(config, knob, entry.local_name):
        return Path(config.get_str(knob) or "")
    return layout.log / f"{entry.kind.capitalize()}Log.{entry.local_name}"


def starter_log(layout: PoolLayout, local_name: str | None) -> Path:
    return layout.log / ("StarterLog" if local_name is None else f"StarterLog.{local_name}")


def execute_dir(layout: PoolLayout, config: Config, local_name: str | None) -> Path:
    """The startd's execute directory: see the module docstring."""
    if local_name is None:
        return layout.execute
    if _set_under_local_name(config, "EXECUTE", local_name):
        return Path(config.get_str("EXECUTE") or "")
    return layout.execute.with_name(f"{layout.execute.name}.{local_name}")


def spool_dir(layout: PoolLayout, config: Config, local_name: str | None) -> Path:
    """A schedd's spool (its queue and history): the pool's ``spool``; for an instance with a local
    name, ``SPOOL`` set under that name, else ``spool.<local name>`` beside the pool's (the manual's
    ``SPOOL = $(SPOOL).XYZZY``), so that each schedd keeps a queue of its own."""
    if local_name is None:
        return layout.spool
    if _set_under_local_name(config, "SPOOL", local_name):
        return Path(config.get_str("SPOOL") or "")
    return layout.spool.with_name(f"{layout.spool.name}.{local_name}")


def schedd_name(config: Config, local_name: str | None, default: str) -> str:
    """A schedd's name: ``SCHEDD_NAME``; for an instance with a local name and no ``SCHEDD_NAME``,
    the local name completed with ``@<FULL_HOSTNAME>`` as HTCondor's ``build_valid_daemon_name``
    does; else ``default`` (the pool's one schedd)."""
    name = (config.get_str("SCHEDD_NAME") or "").strip()
    if name:
        return name
    if local_name is None:
        return default
    return f"{local_name}@{config.get_str('FULL_HOSTNAME') or 'localhost'}"


def local_schedd_name(config: Config, local_name: str | None = None) -> str:
    """The name this host's schedd (``local_name``: one of several) goes by: ``schedd_name`` with
    the pool's default, ``<user>@<FULL_HOSTNAME>``."""
    return schedd_name(config, local_name, f"{getpass.getuser()}@{config.get_str('FULL_HOSTNAME') or 'localhost'}")


def startd_name(config: Config, local_name: str | None) -> str:
    """The startd's daemon name (HTCondor's ``build_valid_daemon_name``): see the module docstring."""
    host = config.get_str("FULL_HOSTNAME") or "localhost"
    name = (config.get_str("STARTD_NAME") or local_name or "").strip()
    if not name:
        return host
    return name if "@" in name else f"{name}@{host}"


__all__ = ["KINDS", "DaemonEntry", "daemon_entries", "execute_dir", "kind_of", "local_name_of", "log_file",
           "schedd_name", "spool_dir", "starter_log", "startd_name"]
