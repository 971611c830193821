"""``HTCondorException``: what the bindings raise when the pool refuses or cannot be reached."""

from __future__ import annotations


class HTCondorException(Exception):
    """A request the pool refused, a daemon that did not answer, or bad input to a call.

    As in HTCondor's bindings it derives from ``Exception`` directly; the message says
    what went wrong and, for a daemon, which one and at which address."""
