"""Errors of the negotiator core.

One base class, ``NegotiatorError``, and a shallow split: ``NegotiatorUsageError`` for a caller that
misused the API (an unknown record, an argument out of range), ``PolicyError`` for configuration that
cannot be used (an expression that does not parse, a group name that is not valid).
"""

from __future__ import annotations


class NegotiatorError(Exception):
    """Base class of every error raised by ``htcpool.negotiator``."""


class NegotiatorUsageError(NegotiatorError):
    """The caller misused the API: bad argument, unknown submitter, value out of range."""


class PolicyError(NegotiatorError):
    """A policy knob holds something the negotiator cannot use; the message names the knob."""
