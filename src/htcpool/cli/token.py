"""``htcpool token_create`` and ``htcpool token_list``: condor_token_create and condor_token_list.

    htcpool token_create -identity USER@DOMAIN [-key NAME] [-authz LEVEL ...] [-lifetime SECONDS]
                         [-token NAME | -file PATH]
    htcpool token_list [-dir DIRECTORY]

``token_create`` signs a token (docs/security.md) with the pool's key ``NAME`` (``POOL``, the
signing key file, by default; others are files of ``SEC_PASSWORD_DIRECTORY``), issued by the
pool's ``TRUST_DOMAIN``. Each ``-authz`` limits the token to one more level; ``-lifetime`` makes
it expire. The token is printed, or written (mode 0600) to ``NAME`` in the user's token
directory (``SEC_TOKEN_DIRECTORY``, ``~/.condor/tokens.d``) with ``-token``, or to ``PATH``
with ``-file``. Only a user who can read the key can make tokens: the pool's administrator.

``token_list`` prints every token in the user's token directory (or ``-dir``): its header, its
claims and the file it is in, one token a line, as condor_token_list does. A line that is not a
token is reported on standard error and the status is 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from htcpool.cli.common import ToolError, run_tool
from htcpool.cli.locate import LocateError, pool_layout

if TYPE_CHECKING:
    from htcpool.config import Config
    from htcpool.runtime.layout import PoolLayout


def _config_and_layout() -> tuple[Config, PoolLayout]:
    from htcpool.config import ConfigError, read_config

    try:
        layout = pool_layout()
    except LocateError as e:
        raise ToolError(str(e)) from None
    if layout.config.exists():
        env = dict(os.environ, CONDOR_CONFIG=str(layout.config))
        try:
            return read_config(str(layout.config), environ=env, subsystem="TOOL"), layout
        except (ConfigError, OSError) as e:
            raise ToolError(f"cannot read the configuration {layout.config}: {e}") from None
    env = {"CONDOR_CONFIG": "ONLY_ENV", "_CONDOR_LOCAL_DIR": str(layout.root)}
    return read_config(None, environ=env, subsystem="TOOL"), layout


def _parse_create(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="htcpool token_create",
                                description="Make an identity token signed with a pool key (condor_token_create).")
    p.add_argument("-identity", required=True, help="the identity the token proves, user@domain")
    p.add_argument("-key", default=None, help="the signing key's name (default: POOL)")
    p.add_argument("-authz", action="append", default=[], help="limit the token to this level (repeatable)")
    p.add_argument("-lifetime", type=int, default=None, help="seconds the token stays valid")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-token", default=None, help="write it to this file of the user's token directory")
    out.add_argument("-file", default=None, help="write it to this file")
    p.add_argument("-debug", action="store_true", help="(accepted; no effect)")
    return p.parse_args(argv)


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")


def create(argv: list[str]) -> int:
    args = _parse_create(argv)

    def body() -> int:
        from htcpool.runtime.security.credentials import SecurityPaths, user_token_directory
        from htcpool.runtime.security.levels import CONFIGURED_LEVELS, Level
        from htcpool.runtime.security.tokens import POOL_KEY, TokenError, create_token

        levels = []
        for name in args.authz:
            if name.upper() not in {str(level) for level in CONFIGURED_LEVELS}:
                raise ToolError(f"-authz {name}: not an authorization level (one of "
                                f"{', '.join(CONFIGURED_LEVELS)})")
            levels.append(Level(name.upper()))
        if args.lifetime is not None and args.lifetime <= 0:
            raise ToolError(f"-lifetime {args.lifetime}: must be a positive number of seconds")
        if args.token is not None and ("/" in args.token or args.token in ("", ".", "..")):
            raise ToolError(f"-token {args.token!r}: a file name without a directory (use -file for a path)")
        config, layout = _config_and_layout()
        paths = SecurityPaths.of(config, layout)
        key_name = args.key or POOL_KEY
        try:
            key = paths.keyring().key(key_name)
            token = create_token(key, key_name, args.identity, paths.trust_domain, time.time(),
                                 args.lifetime, levels)
        except TokenError as e:
            raise ToolError(str(e)) from None
        if args.token is not None:
            _write_private(user_token_directory(layout) / args.token, token)
        elif args.file is not None:
            _write_private(Path(args.file), token)
        else:
            print(token)
        return 0

    return run_tool("token_create", body)


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).replace("/", "\\/")


def list_tokens(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="htcpool token_list", description="List the user's tokens (condor_token_list).")
    p.add_argument("-dir", default=None, help="read tokens from this directory")
    args = p.parse_args(argv)

    def body() -> int:
        from htcpool.runtime.security.credentials import user_token_directory
        from htcpool.runtime.security.tokens import TokenError, describe, read_tokens

        if args.dir is not None:
            directory = Path(args.dir)
        else:
            try:
                directory = user_token_directory(pool_layout())
            except LocateError:
                directory = Path("~/.condor/tokens.d").expanduser()
        if args.dir is not None and not directory.is_dir():
            raise ToolError(f"-dir {directory}: not a directory")
        status = 0
        for path, token in read_tokens([directory]):
            try:
                header, claims = describe(token)
            except TokenError as e:
                print(f"{path}: {e}", file=sys.stderr)
                status = 1
                continue
            print(f"Header: {_json(header)} Payload: {_json(claims)} File: {path}")
        return status

    return run_tool("token_list", body)


__all__ = ["create", "list_tokens"]
