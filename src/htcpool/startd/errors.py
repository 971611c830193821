"""Errors of the startd core.

``StartdError`` is the base. ``StartdUsageError`` means the caller misused the API
(an illegal event for the slot's state, an unknown slot); ``LayoutError`` means
the configuration asks for a slot layout the machine cannot provide. Bad policy
*expressions* are not exceptions: they are reported as ``PolicyProblem`` actions and
the slot falls back to a documented safe value (see ``policy``).
"""

from __future__ import annotations


class StartdError(Exception):
    """Base of every startd error."""


class StartdUsageError(StartdError):
    """The caller asked for something the core cannot do in its current state."""


class IllegalTransition(StartdUsageError):
    """An event the state table does not allow in the slot's current state/activity."""

    def __init__(self, event: str, where: str) -> None:
        super().__init__(f"event {event} is not allowed in state {where}")
        self.event = event
        self.where = where


class LayoutError(StartdError):
    """An impossible or malformed slot layout (SLOT_TYPE_<N>, NUM_SLOTS_TYPE_<N> …)."""
