"""Handing a message over within one process, exactly as the wire would deliver it.

``carry(message)`` encodes the message, passes the JSON text through ``json`` and
decodes it again, so a message sent in memory (in-process tests, a driver checking its
traffic) meets the same checks and arrives as the same value as one sent over HTTP.
Messages are frozen, so a driver that trusts its sender may also hand the object itself
over; the protocol tests check that every message type survives ``carry`` unchanged.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from htcpool.protocol.codec import decode, encode

M = TypeVar("M")


def carry(message: M) -> M:
    """``message`` after a trip through its JSON text."""
    text = json.dumps(encode(message))
    result: Any = decode(json.loads(text))
    return result

