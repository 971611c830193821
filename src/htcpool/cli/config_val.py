"""``htcpool config_val``: query the configuration like ``condor_config_val``.

Reads the configuration the way a tool does (``CONDOR_CONFIG`` or the standard places,
subsystem ``TOOL`` unless ``-subsystem`` says otherwise) and prints, for each NAME, its
expanded value (``-raw`` for the unexpanded one, ``-verbose`` for value, location and raw
text, ``-default`` for the parameter table's default). Also ``-dump [pattern]``,
``-summary``, ``-config`` and ``use CATEGORY[:TEMPLATE]``. Undefined names are reported
on standard error as ``Not defined: NAME`` and make the exit status 1. Querying a
running daemon (``-name``, ``-pool``, ``-set``...) is not supported.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from htcpool.clock import wall_clock
from htcpool.config import ConfigError, read_config
from htcpool.config.conditions import CONDOR_VERSION
from htcpool.config.report import (
    config_sources,
    describe_use,
    dump,
    summary,
    verbose_query,
)

VERSION_LINE = "$CondorVersion: {} htcpool $".format(".".join(map(str, CONDOR_VERSION)))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="htcpool config_val", add_help=False)
    parser.add_argument("-help", "-h", action="store_true")
    parser.add_argument("-version", action="store_true")
    parser.add_argument("-verbose", "-v", action="store_true")
    parser.add_argument("-dump", "-d", action="store_true")
    parser.add_argument("-expand", action="store_true")
    parser.add_argument("-raw", action="store_true")
    parser.add_argument("-default", action="store_true")
    parser.add_argument("-config", action="store_true")
    parser.add_argument("-summary", action="store_true")
    parser.add_argument("-subsystem", default=None)
    parser.add_argument("-local-name", dest="local_name", default=None)
    parser.add_argument("-root-config", dest="root_config", default=None)
    parser.add_argument("-macro", action="store_true")
    parser.add_argument("names", nargs="*")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool on ``argv`` (without the program name); return the exit status."""
    parser = _parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.help:
        parser.print_usage()
        return 0
    if args.version:
        print(VERSION_LINE)
        return 0
    names: list[str] = list(args.names)
    if names and names[0].lower() == "use":
        return _use(names[1:])
    subsystem = args.subsystem.upper() if args.subsystem else "TOOL"
    try:
        config = read_config(args.root_config or _pool_config(), subsystem=subsystem,
                             local_name=args.local_name, clock=wall_clock)
    except ConfigError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1
    for warning in config.warnings:
        print(warning, file=sys.stderr)
    if args.config:
        print("\n".join(config_sources(config)))
        if not names:
            return 0
    if args.summary:
        print("\n".join(summary(config, VERSION_LINE)))
        return 0
    if args.dump:
        print("\n".join(dump(config, names, args.expand, args.verbose)))
        return 0
    if not names:
        parser.print_usage(sys.stderr)
        return 1
    status = 0
    for name in names:
        try:
            status |= _query(config, name, args)
        except ConfigError as exc:
            print(f"ERROR: {exc}", file=sys.stderr)
            status = 1
    return status


def _query(config: object, name: str, args: argparse.Namespace) -> int:
    from htcpool.config import Config

    assert isinstance(config, Config)
    if args.macro:
        print(config.expand(name, args.subsystem, args.local_name))
        return 0
    if args.default:
        raw = config.table_default(name, args.subsystem)
        if raw is None:
            print(f"Not defined: {name.upper()}", file=sys.stderr)
            return 1
        print(config.expander(args.subsystem, args.local_name).expand(raw))
        return 0
    if args.verbose:
        block = verbose_query(config, name, args.subsystem, args.local_name)
        if block is None:
            print(f"Not defined: {name.upper()}", file=sys.stderr)
            return 1
        print("\n".join(block))
        return 0
    if args.raw:
        value = config.raw(name, args.subsystem, None, args.local_name)
    else:
        value = config.get_str(name, args.subsystem, None, args.local_name)
    if value is None:
        print(f"Not defined: {name.upper()}", file=sys.stderr)
        return 1
    print(value)
    return 0


def _use(words: list[str]) -> int:
    spec = "".join(w for w in words if not w.startswith("-"))
    if not spec:
        print("use needs a CATEGORY[:TEMPLATE] argument", file=sys.stderr)
        return 1
    lines, found = describe_use(spec)
    print("\n".join(lines), file=sys.stdout if found else sys.stderr)
    return 0 if found else 1


if __name__ == "__main__":
    raise SystemExit(main())


def _pool_config() -> str | None:
    """Without CONDOR_CONFIG, the personal pool's configuration when there is one
    ($HTCPOOL_LOCAL_DIR or ~/.htcpool), else HTCondor's standard places."""
    import os

    if "CONDOR_CONFIG" in os.environ:
        return None
    from htcpool.runtime.layout import default_local_dir

    path = default_local_dir() / "condor_config"
    return str(path) if path.exists() else None
