"""A daemon's log levels from ``<SUBSYS>_DEBUG`` and ``ALL_DEBUG``, HTCondor's debug categories.

HTCondor's daemons always write ``D_ALWAYS`` (and ``D_ERROR``, ``D_STATUS``) messages; the
knobs add categories (admin manual, "Daemon Logging Configuration File Entries"): a list of
``D_<NAME>`` words separated by spaces or commas, each optionally with a verbosity ``:1`` or
``:2``, and ``-D_<NAME>`` taking one back out. Here the categories become Python logger
levels:

* ``D_FULLDEBUG`` (or ``D_ALL``, ``D_ANY``): every ``htcpool`` logger writes DEBUG lines;
* a category with a logger of its own (``D_COMMAND``: each message a daemon receives;
  ``D_JOB``: the job ads a startd starts; ``D_MACHINE``: a startd's sensor readings each poll;
  ``D_MATCH``, ``D_ACCOUNTANT``, ``D_LOAD``, ``D_NETWORK`` …) turns that logger to DEBUG;
* the other categories HTCondor knows are accepted and change nothing here;
* a word that is no category is reported once, with the knob it came from, as a warning, and
  the rest of the list still applies.

``apply_debug_levels`` is called once when a daemon starts; ``debug_logger`` names the logger
of a category, for the code that writes such lines.
"""

from __future__ import annotations

import logging
import re

from htcpool.config import Config

#: HTCondor's categories that have a logger here (the logger writes DEBUG when the category is on)
LOGGERS = {
    "D_COMMAND": "htcpool.debug.command",
    "D_JOB": "htcpool.debug.job",
    "D_MACHINE": "htcpool.debug.machine",
    "D_MATCH": "htcpool.debug.match",
    "D_ACCOUNTANT": "htcpool.debug.accountant",
    "D_LOAD": "htcpool.debug.load",
    "D_NETWORK": "htcpool.debug.network",
    "D_PROCFAMILY": "htcpool.debug.procfamily",
    "D_STATS": "htcpool.debug.stats",
    "D_SECURITY": "htcpool.debug.security",
}
#: categories that turn every logger to DEBUG
EVERYTHING = {"D_FULLDEBUG", "D_ALL", "D_ANY"}
#: categories HTCondor knows that change nothing here (always on, or formatting only)
ACCEPTED = {
    "D_ALWAYS", "D_ERROR", "D_STATUS", "D_GENERAL", "D_PID", "D_FDS", "D_CAT", "D_CATEGORY",
    "D_TIMESTAMP", "D_SUB_SECOND", "D_IDENT", "D_BACKTRACE", "D_PRIV", "D_DAEMONCORE",
    "D_HOSTNAME", "D_PROTOCOL", "D_SYSCALLS", "D_CKPT", "D_AUDIT", "D_TEST", "D_CRON",
    "D_ZKM", "D_HOTSPOT", "D_THREADS", "D_TIMERS", "D_LEVELMASK", "D_VERBOSE", "D_NOHEADER",
    "D_TERSE", "D_EXCEPT", "D_KEYBOARD", "D_CONFIG", "D_PERF_TRACE", "D_SECMAP",
}
_WORD = re.compile(r"^(-?)(D_[A-Z_]+)(?::[0-2])?$")


def parse_debug(text: str) -> tuple[set[str], list[str]]:
    """The categories a ``_DEBUG`` value turns on, and the words that are not categories."""
    on: set[str] = set()
    unknown: list[str] = []
    for word in re.split(r"[\s,]+", text.strip()):
        if not word:
            continue
        m = _WORD.match(word.upper())
        if m is None or not (m.group(2) in LOGGERS or m.group(2) in EVERYTHING or m.group(2) in ACCEPTED):
            unknown.append(word)
            continue
        (on.discard if m.group(1) else on.add)(m.group(2))
    return on, unknown


def debug_logger(category: str) -> logging.Logger:
    """The logger of one of ``LOGGERS``' categories (it writes only when the category is on)."""
    return logging.getLogger(LOGGERS[category])


def apply_debug_levels(config: Config, subsystem: str) -> set[str]:
    """Set the loggers' levels from ``ALL_DEBUG`` and ``<SUBSYS>_DEBUG``; the categories on."""
    on: set[str] = set()
    for knob in ("ALL_DEBUG", f"{subsystem.upper()}_DEBUG"):
        text = config.get_str(knob) or ""
        found, unknown = parse_debug(text)
        on |= found
        if unknown:
            logging.getLogger("htcpool.daemon").warning(
                "%s: %s %s not a debug level; known levels are D_FULLDEBUG, D_COMMAND, D_JOB, D_MACHINE "
                "and the rest of HTCondor's D_ names", knob, ", ".join(unknown), "is" if len(unknown) == 1 else "are")
    everything = bool(on & EVERYTHING)
    logging.getLogger("htcpool").setLevel(logging.DEBUG if everything else logging.INFO)
    for category, name in LOGGERS.items():
        logging.getLogger(name).setLevel(logging.DEBUG if everything or category in on else logging.INFO)
    return on


__all__ = ["LOGGERS", "apply_debug_levels", "debug_logger", "parse_debug"]
