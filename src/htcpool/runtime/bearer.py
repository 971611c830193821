"""Which token a daemon's request carries, and which it carries again after a 401.

A token goes as ``Authorization: Bearer …`` only where it may travel (``tls.token_may_travel``:
HTTPS, a Unix socket, this host's loopback), or anywhere for an in-process transport, where nothing
leaves the process. With a ``chooser``, a server of another pool is given the token its pool issued:
its 401 reply names its trust domain (``WWW-Authenticate: Bearer realm="…"``), the request is sent
once more with the token ``chooser`` gives for that domain, and that token is used for the server's
address from then on (docs/flocking.md, "Credentials").

``Bearer`` holds that choice for both of the daemons' clients (``http.DaemonClient``): the
network's (``aio_sender``) and the in-process one of the tests (httpx's ``Auth``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from htcpool.runtime.security.tls import token_may_travel

#: A trust domain -> the token this client holds from it (None: none)
Chooser = Callable[[str], "str | None"]

_REALM = re.compile(r'realm="([^"]*)"')


def realm_of(header: str) -> str | None:
    """The trust domain a 401 reply's ``WWW-Authenticate: Bearer realm="…"`` names."""
    match = _REALM.search(header)
    return match.group(1) if match else None


def server_of(url: str) -> str:
    """``scheme://host:port`` of ``url``: what a token choice and its travel are kept by."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Bearer:
    """The token of each request (see the module docstring)."""

    def __init__(self, token: str | None, anywhere: bool = False, chooser: Chooser | None = None) -> None:
        self.token = token
        self.anywhere = anywhere
        self.chooser = chooser
        self._chosen: dict[str, str] = {}  # server -> the token its pool issued
        self._travels: dict[str, bool] = {}  # server -> whether a token may go there

    def _may_travel(self, server: str) -> bool:
        if self.anywhere:
            return True
        known = self._travels.get(server)
        if known is None:
            known = self._travels[server] = token_may_travel(server)
        return known

    def first(self, url: str) -> str | None:
        """The token the first sending of a request to ``url`` carries; None: none."""
        server = server_of(url)
        if not self._may_travel(server):
            return None
        return self._chosen.get(server, self.token) if self.chooser is not None else self.token

    def again(self, url: str, sent: str | None, status: int, www_authenticate: str) -> str | None:
        """The token to send the request with once more, after the answer ``status`` with that
        ``WWW-Authenticate``; None: the answer stands."""
        server = server_of(url)
        if status != 401 or self.chooser is None or not self._may_travel(server):
            return None
        realm = realm_of(www_authenticate)
        other = self.chooser(realm) if realm else None
        if other is None or other == sent:
            return None
        self._chosen[server] = other
        return other


__all__ = ["Bearer", "Chooser", "realm_of", "server_of"]
