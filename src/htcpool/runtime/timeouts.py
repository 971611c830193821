"""How long a client waits for a daemon's host to take a connection.

A request's own timeout (30 s for the tools, 10 s between daemons) covers a daemon that is slow
to answer. A host that is down or behind a firewall that drops packets never refuses a
connection, so without a shorter limit on connecting alone a client would spend the whole
request timeout on it before trying the next collector of ``COLLECTOR_HOST`` (the HTCondor
manual's "High Availability of the Central Manager": queries go to the collectors in order).
HTCondor has no knob for this; a TCP handshake that has not finished in ``CONNECT_TIMEOUT``
seconds (three SYN retransmissions' worth) is taken as a host that is not there.
"""

from __future__ import annotations

#: seconds allowed for a TCP connection (and a TLS handshake's connect) to be taken
CONNECT_TIMEOUT = 5.0


def connect_timeout(timeout: float) -> float:
    """The connect limit for a request whose whole limit is ``timeout``."""
    return min(timeout, CONNECT_TIMEOUT)


__all__ = ["CONNECT_TIMEOUT", "connect_timeout"]
