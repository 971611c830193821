"""Identities, tokens, authorization and TLS of a pool (docs/security.md).

* ``levels``: the authorization levels, how they imply one another, the level of every message;
* ``authz``: ALLOW_/DENY_ lists in HTCondor's syntax, with htcpool's defaults;
* ``tokens``: IDTOKENS-like JSON Web Tokens, the pool's signing keys, token files;
* ``peercred``: local users known by their uid on the daemons' Unix sockets (the FS method);
* ``gate``: a daemon's authentication and authorization of each request;
* ``credentials``: the keys and tokens on disk, and the gate built from the configuration;
* ``tls``: the pool's certificate authority and host certificates, and where a token may go.

The package imports none of its modules here: ``htcpool submit`` needs only ``tls`` (to decide
where its token may travel) and must not pay for PyJWT and the rest.
"""
