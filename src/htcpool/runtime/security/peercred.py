"""Local users authenticated by the operating system, as HTCondor's FS method does.

Every daemon that serves tools also listens on a Unix domain socket in the pool's ``run/``
directory (``run/<daemon>.sock``, mode 0666: any local user may connect). The kernel records the
credentials of the process at the other end of such a connection; ``peer_uid`` reads its user id
with ``SO_PEERCRED``, which the client cannot choose, so a local user is known by their OS
account without any token and cannot claim another user's name.

``with_peer_credentials(protocol)`` makes a uvicorn HTTP protocol class that, for a connection on
a Unix socket, puts ``(FS_CLIENT, uid)`` where uvicorn keeps the client's address (the ASGI
scope's ``client``). A TCP connection's client is always ``(ip, port)``, so the marker cannot be
sent from the network; uvicorn's proxy-header rewriting of the client address is turned off by
the daemon (``runtime/http.py``).
"""

from __future__ import annotations

import asyncio
import pwd
import socket
import struct
from typing import Any

#: the "host" of a scope's client tuple for a connection on the local socket
FS_CLIENT = "fs-uid"
_UCRED = struct.Struct("3i")  # pid, uid, gid
#: the longest path a Unix socket may have on Linux (sun_path, less its terminating NUL)
MAX_SOCKET_PATH = 107


def peer_uid(sock: Any) -> int:
    """The user id of the process at the other end of the Unix socket ``sock``."""
    data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    _pid, uid, _gid = _UCRED.unpack(data)
    return int(uid)


def user_name(uid: int) -> str | None:
    """The account name of ``uid`` on this host; None when it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None


def with_peer_credentials(base: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """``base`` (a uvicorn HTTP protocol) that reports the peer's uid on Unix sockets."""

    class PeerCredentials(base):  # type: ignore[valid-type,misc]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family == socket.AF_UNIX:
                try:
                    self.client = (FS_CLIENT, peer_uid(sock))
                except OSError:
                    self.client = ("", 0)  # no address, no token: refused as unauthenticated

    PeerCredentials.__name__ = f"PeerCredentials{base.__name__}"
    return PeerCredentials


def bind_unix(path: str) -> socket.socket | None:
    """A listening-ready Unix socket at ``path`` (a stale one is replaced), mode 0666; None when
    the path is too long for a Unix socket."""
    import os

    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return None
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o666)
    return sock


__all__ = ["FS_CLIENT", "MAX_SOCKET_PATH", "bind_unix", "peer_uid", "user_name", "with_peer_credentials"]
