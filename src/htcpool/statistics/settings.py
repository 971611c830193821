"""The knobs of one statistics collection: what to publish and the ``Recent`` window.

``statistics_settings(get, collection)`` reads ``STATISTICS_TO_PUBLISH`` (``publish``),
``STATISTICS_WINDOW_SECONDS`` (default 1200) and ``STATISTICS_WINDOW_QUANTUM`` (default 240),
each overridden for the collection by ``STATISTICS_WINDOW_SECONDS_<COLLECTION>`` and
``STATISTICS_WINDOW_QUANTUM_<COLLECTION>`` (the manual names ``DC`` and ``SCHEDD``; the others
are read the same way). A window or quantum that is not a positive whole number keeps its default
and is reported in ``problems`` naming the knob, as is an option of ``STATISTICS_TO_PUBLISH``
that is not known.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from htcpool.statistics.publish import DEFAULTS, Collection, Publish, parse_publish
from htcpool.statistics.window import DEFAULT_QUANTUM, DEFAULT_WINDOW, Window

KNOB = "STATISTICS_TO_PUBLISH"


@dataclass(frozen=True, slots=True)
class StatsSettings:
    publish: Publish = field(default_factory=Publish)
    window: int = DEFAULT_WINDOW
    quantum: int = DEFAULT_QUANTUM

    def make_window(self, started: float) -> Window:
        return Window(started, self.window, self.quantum)


def _positive(get: Callable[[str], str | None], names: tuple[str, ...], default: int, problems: list[str]) -> int:
    for name in names:
        text = get(name)
        if text is None or not text.strip():
            continue
        try:
            value = int(text.strip())
        except ValueError:
            value = 0
        if value > 0:
            return value
        problems.append(f"{name} = {text.strip()}: expected a whole number of seconds above 0; using {default}")
        return default
    return default


def statistics_settings(get: Callable[[str], str | None], collection: Collection,
                        problems: list[str] | None = None) -> StatsSettings:
    """The settings of ``collection`` from the configuration ``get`` reads."""
    seen = problems if problems is not None else []
    found: list[str] = []
    publish = parse_publish(get(KNOB), collection, found)
    seen.extend(f"{KNOB}: {problem}" for problem in found)
    suffixes = [collection.value] + (["DAEMONCORE"] if collection is Collection.DC else
                                     ["SCHEDULER"] if collection is Collection.SCHEDD else [])
    window = _positive(get, (*(f"STATISTICS_WINDOW_SECONDS_{s}" for s in suffixes), "STATISTICS_WINDOW_SECONDS"),
                       DEFAULT_WINDOW, seen)
    quantum = _positive(get, (*(f"STATISTICS_WINDOW_QUANTUM_{s}" for s in suffixes), "STATISTICS_WINDOW_QUANTUM"),
                        DEFAULT_QUANTUM, seen)
    return StatsSettings(publish, window, quantum)


def default_settings(collection: Collection) -> StatsSettings:
    return StatsSettings(DEFAULTS[collection])


__all__ = ["KNOB", "StatsSettings", "default_settings", "statistics_settings"]
