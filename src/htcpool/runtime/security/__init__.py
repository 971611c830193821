"""Identities, tokens and authorization of a pool (docs/security.md).

* ``levels``: the authorization levels, how they imply one another, the level of every message;
* ``authz``: ALLOW_/DENY_ lists in HTCondor's syntax, with htcpool's defaults;
* ``tokens``: IDTOKENS-like JSON Web Tokens, the pool's signing keys, token files;
* ``peercred``: local users known by their uid on the daemons' Unix sockets (the FS method);
* ``gate``: a daemon's authentication and authorization of each request;
* ``credentials``: the keys and tokens on disk, and the gate built from the configuration.
"""

from htcpool.runtime.security.gate import Gate, Peer, Refused, SharedSecret
from htcpool.runtime.security.levels import Level, level_of

__all__ = ["Gate", "Level", "Peer", "Refused", "SharedSecret", "level_of"]
