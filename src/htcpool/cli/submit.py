"""``htcpool submit``: condor_submit's command line.

    htcpool submit [-dry-run FILE] [-append LINE]... [-queue ARGS] [-batch-name NAME] [-factory]
                   [SUBMIT_FILE | -] [name=value]...

As condor_submit does, it reads the pool's configuration (``CONDOR_CONFIG``, else
the personal pool's ``condor_config``, else HTCondor's standard places; none at
all means HTCondor's defaults) for the submit knobs (``JOB_DEFAULT_REQUEST*``,
``SUBMIT_ATTRS``, ``APPEND_REQ*`` … in ``htcpool.submit.settings``) and the
machine's ``ARCH``, ``OPSYS`` and ``FILESYSTEM_DOMAIN``; then it asks the schedd
for a new cluster id (``NewCluster``) before expanding the file, so ``$(Cluster)``
is the id the jobs get, and sends the jobs in one ``Submit`` naming it. A file with
``max_materialize`` or ``max_idle`` (or any file with ``-factory``) is sent as a
late-materialization factory instead: its first job as the cluster ad and the recipe
(``htcpool.submit.materialize``: the text, the environment variables and file answers it used), in
one ``SubmitFactory``; the schedd makes the jobs.

With ``-dry-run FILE`` the job ads are printed in condor_submit's dry-run
format to FILE (``-`` for standard output), nothing is submitted and the
cluster is 1; warnings go to standard error as ``WARNING: …`` lines, errors as
``ERROR: …`` with exit status 1. This module is the boundary with the machine:
it reads the clock, the environment, the user name and the disk and hands them
to the submit core as a ``SubmitHost`` and a ``FileSystemView``. It imports
only what submitting needs (the schedd is reached through ``cli.wire``), so the
command starts fast (docs/performance.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import platform
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from htcpool.clock import wall_clock
from htcpool.submit import (
    RecordingEnviron,
    RecordingFileSystem,
    SubmitError,
    SubmitHost,
    SubmitSettings,
    recorded_digest,
    submit_description,
)
from htcpool.submit.limits import decode_text, read_limited

if TYPE_CHECKING:
    from htcpool.cli.wire import WireClient


class DiskFileSystem:
    """The submit core's view of the real file system."""

    def size(self, path: str) -> int | None:
        try:
            return os.stat(path).st_size
        except OSError:
            return None

    def read_text(self, path: str) -> str | None:
        """The file's text; None if it cannot be opened. A file past ``MAX_INPUT_BYTES`` (such as
        ``/dev/zero``), or one that is not UTF-8 text, raises a ``SubmitError`` saying so."""
        try:
            with open(path, "rb") as stream:
                data = read_limited(stream, path)
        except OSError:
            return None
        return decode_text(data, path)

    def list_dir(self, path: str) -> list[tuple[str, bool]] | None:
        try:
            with os.scandir(path) as entries:
                return sorted((e.name, e.is_dir()) for e in entries)
        except OSError:
            return None


class SubmitConfigError(Exception):
    """The pool's configuration cannot be read, or a submit knob in it is malformed."""


def _config_root() -> str | None:
    """CONDOR_CONFIG's file (None: let the reader look), else the personal pool's, else None."""
    if "CONDOR_CONFIG" in os.environ:
        return None
    from htcpool.runtime.layout import default_local_dir

    path = default_local_dir() / "condor_config"
    return str(path) if path.exists() else None


def pool_settings() -> tuple[SubmitSettings, dict[str, str]]:
    """The submit knobs and the machine facts (ARCH, OPSYS, FILESYSTEM_DOMAIN) of the pool's
    configuration; HTCondor's defaults when there is no configuration at all."""
    from htcpool.config import ConfigError, read_config
    from htcpool.config.files import find_root_config
    from htcpool.submit import settings_from_config

    root = _config_root()
    if root is None and find_root_config(dict(os.environ)) is None:
        return SubmitSettings(), {}
    try:
        config = read_config(root, subsystem="SUBMIT", clock=wall_clock)
        settings = settings_from_config(config.get_str)
        facts = {k: v for k in ("ARCH", "OPSYS", "FILESYSTEM_DOMAIN") if (v := config.get_str(k))}
    except (ConfigError, ValueError) as e:
        raise SubmitConfigError(f"the configuration: {e}") from None
    return settings, facts


def local_host(facts: dict[str, str] | None = None) -> SubmitHost:
    """The submitting user and machine as this process sees them (``facts`` from the
    configuration take precedence)."""
    facts = facts or {}
    machine = platform.machine().upper().replace("AMD64", "X86_64")
    return SubmitHost(user=getpass.getuser(), cwd=os.getcwd(), now=int(wall_clock()),
                      environ=dict(os.environ), arch=facts.get("ARCH", machine),
                      opsys=facts.get("OPSYS", platform.system().upper()),
                      file_system_domain=facts.get("FILESYSTEM_DOMAIN", platform.node() or "localhost"))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="htcpool submit", description="Submit jobs (condor_submit).")
    p.add_argument("-dry-run", "-dry", dest="dry_run", metavar="FILE",
                   help="print the job ads to FILE ('-' for standard output) instead of submitting")
    p.add_argument("-append", "-a", dest="append", action="append", default=[], metavar="LINE",
                   help="add a submit command before the queue statement")
    p.add_argument("-queue", dest="queue", metavar="ARGS", help="queue statement replacing the file's")
    p.add_argument("-batch-name", dest="batch_name", metavar="NAME", help="set batch_name")
    p.add_argument("-terse", dest="terse", action="store_true", help="print only the job ids")
    p.add_argument("-factory", dest="factory", action="store_true",
                   help="send the jobs as a late materialization factory")
    p.add_argument("-name", "-remote", dest="schedd_name", metavar="SCHEDD",
                   help="submit to the schedd named SCHEDD (the pool may have several)")
    p.add_argument("args", nargs="*", help="submit file ('-' for standard input) and name=value pairs")
    return p


def main(argv: list[str]) -> int:
    options = _parser().parse_args(argv)
    files = [a for a in options.args if "=" not in a]
    extra = [a for a in options.args if "=" in a] + list(options.append)
    if options.batch_name:
        extra.append(f"batch_name = {options.batch_name}")
    if len(files) > 1:
        print(f"ERROR: only one submit file may be given, not {' '.join(files)}", file=sys.stderr)
        return 1
    name = files[0] if files else "-"
    try:
        if name == "-":
            text = decode_text(read_limited(sys.stdin.buffer, "standard input"), "standard input")
        else:
            with open(name, "rb") as stream:
                text = decode_text(read_limited(stream, name), name)
    except OSError as e:
        print(f"ERROR: Failed to open command file ({e.strerror})", file=sys.stderr)
        return 1
    except SubmitError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        return 1
    try:
        settings, facts = pool_settings()
    except SubmitConfigError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        return 1
    owner = getpass.getuser()
    schedd: WireClient | None = None
    cluster = 1  # condor_submit -dry-run numbers the cluster 1
    if options.dry_run is None:
        from htcpool.cli.wire import WireError
        try:
            schedd = _schedd(options.schedd_name)
            cluster = _new_cluster(schedd, owner)
        except (WireError, OSError) as e:
            print(f"\nERROR: Failed submitting the job(s): {e}", file=sys.stderr)
            return 1
    host = local_host(facts)
    environ = RecordingEnviron(host.environ)
    fs = RecordingFileSystem(DiskFileSystem())
    file = "" if name == "-" else name
    try:
        result = submit_description(text, file=file, host=dataclasses.replace(host, environ=environ),
                                    fs=fs, settings=settings, cluster_id=cluster,
                                    extra_commands=extra, queue_args=options.queue,
                                    allow_factory=schedd is not None, force_factory=options.factory)
    except SubmitError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f"WARNING: {warning}", file=sys.stderr)
    if schedd is not None and result.factory is not None and result.jobs:
        from htcpool.protocol.schedd import SubmitFactory
        from htcpool.submit import digest_to_json

        digest = recorded_digest(text, cluster, host, environ, settings, fs, file=file,
                                 extra_commands=extra, queue_args=options.queue)
        message = SubmitFactory(owner, result.jobs[0], digest_to_json(digest), cluster)
        return _submit_to_schedd(schedd, owner, cluster, message, options.terse)
    if schedd is not None:
        from htcpool.protocol import Submit

        return _submit_to_schedd(schedd, owner, cluster, Submit(owner, tuple(result.jobs), cluster)
                                 if result.jobs else None, options.terse)
    from htcpool.submit import format_dry_run

    listing = format_dry_run(result.jobs, result.cluster_id)
    if options.dry_run == "-":
        sys.stdout.write(listing)
    else:
        Path(options.dry_run).write_text(listing)
    return 0


def _schedd(name: str | None = None) -> WireClient:
    """A connection to the pool's schedd (found as every tool finds its pool: cli/locate.py), or
    to the one named ``name`` among the collector's Scheduler ads (``-name``, ``-remote``)."""
    from htcpool.cli.locate import LocateError, pick_schedd, pool_layout
    from htcpool.cli.wire import WireClient, WireError, ask_collectors, daemon_client

    try:
        layout = pool_layout()
    except LocateError as e:
        raise WireError(str(e)) from None
    if name is None:
        return daemon_client(layout, "schedd")
    from htcpool.protocol import QueryAds
    from htcpool.runtime.security.credentials import client_chooser, client_token

    ads = list(ask_collectors(layout, QueryAds("Scheduler", "", ("Name", "MyAddress"))).ads)
    ad = pick_schedd(ads, name)
    url = ad.get("MyAddress") if ad is not None else None
    if not isinstance(url, str) or not url:
        raise WireError(f"Can't find address for schedd {name}")
    route = layout.local_route(url)
    token = None if route.startswith("unix:") else client_token(layout)
    return WireClient(route, token, 30.0, layout.ca_file, client_chooser(layout))


def _new_cluster(schedd: WireClient, owner: str) -> int:
    from htcpool.protocol.schedd import NewCluster

    reply = schedd.send(NewCluster(owner))
    return int(reply.cluster)


def _submit_to_schedd(schedd: WireClient, owner: str, cluster: int, message: object | None,
                      terse: bool) -> int:
    """Send the cluster (a ``Submit`` or a ``SubmitFactory``; None: no jobs) to the pool's
    schedd and print what condor_submit prints."""
    from htcpool.cli.wire import WireError
    from htcpool.protocol.schedd import SubmitFactory

    if message is None:
        print("ERROR: no jobs queued", file=sys.stderr)
        return 1
    try:
        reply = schedd.send(message)
    except WireError as e:
        print(f"\nERROR: Failed submitting the job(s): {e}", file=sys.stderr)
        return 1
    finally:
        schedd.close()
    for warning in reply.warnings:
        print(f"WARNING: {warning}", file=sys.stderr)
    if terse:
        last = reply.count - 1
        print(f"{reply.cluster}.0 - {reply.cluster}.{last}")
    else:
        # condor_submit's report, as ``cli.formats.format_submit_result`` writes it for many
        # clusters; written here for one so that submitting does not import every formatter
        dots = 1 if isinstance(message, SubmitFactory) else reply.count  # a factory sends one ad
        print(f"Submitting job(s){'.' * dots}\n{reply.count} job(s) submitted to cluster "
              f"{reply.cluster}.\nTo monitor your job(s), run: condor_watch_q -clusters {reply.cluster}")
    return 0
