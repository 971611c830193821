"""What both ends of a daemon conversation share, with no HTTP library in it: the endpoint's path,
``RequestRefused`` and the reading of an answer (``decode_answer``), and the trust of a pool's
certificate authority (``verify``). The daemons (``runtime/http.py``, whose network client is
aiohttp's) and the tools (``runtime/http_client.py``, httpx's) import it; neither imports the
other's client library, each a fresh process paying its imports at every start."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

from htcpool import protocol
from htcpool.protocol import Failure, ProtocolError
from htcpool.runtime.security.tls import client_context

PATH = "/v1/message"


class RequestRefused(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def decode_answer(status: int, body: bytes) -> Any:
    """The answer's message; RequestRefused for a ``Failure`` or an answer that is not one."""
    try:
        reply = protocol.decode(json.loads(body))
    except (ValueError, ProtocolError) as e:
        raise RequestRefused(status, f"unreadable answer: {e}") from None
    if isinstance(reply, Failure):
        raise RequestRefused(reply.status, reply.detail)
    return reply


def verify(ca_file: Path | None) -> ssl.SSLContext | bool:
    """Trust the pool's CA when it has one (its daemons then speak HTTPS), else the defaults."""
    if ca_file is not None and ca_file.exists():
        return client_context(ca_file)
    return True


__all__ = ["PATH", "RequestRefused", "decode_answer", "verify"]
