"""Reading configuration from files: the only module of the package that touches the disk.

The order is HTCondor's (``real_config``):

1. detected macros (:mod:`htcpool.config.probe`) are inserted;
2. the root file: the one named by ``CONDOR_CONFIG`` (``ONLY_ENV`` means none), else the
   first of ``/etc/condor/condor_config``, ``/usr/local/etc/condor_config``,
   ``~condor/condor_config`` that exists; ``CONFIG_ROOT`` is its directory;
3. every file of each ``LOCAL_CONFIG_DIR`` directory in sorted order, skipping names
   that match ``LOCAL_CONFIG_DIR_EXCLUDE_REGEXP``; then each ``LOCAL_CONFIG_FILE``
   (a missing one is an error while ``REQUIRE_LOCAL_CONFIG_FILE`` is true); then the
   directories again if reading changed ``LOCAL_CONFIG_DIR``;
4. environment variables ``_CONDOR_NAME`` (prefix in any case) define ``NAME``;
5. the detected CPU counts are recomputed with the final ``COUNT_HYPERTHREAD_CPUS``.

Commands (``include : cmd |``, ``include command : cmd``, a ``LOCAL_CONFIG_FILE`` ending in
``|``) run only when ``allow_commands`` is true. The per-user ``user_config`` file and
runtime/persistent settings (``condor_config_val -set``) are not read.
"""

from __future__ import annotations

import os
import random
import re
import shlex
from collections.abc import Callable, Mapping, Sequence

from htcpool.config.config import Config
from htcpool.config.errors import ConfigIncludeError
from htcpool.config.lookup import Context
from htcpool.config.macro_set import DETECTED, ENVIRONMENT, MacroSet
from htcpool.config.macros import LazyRandom, RandomSource
from htcpool.config.parser import Reader, SourceLoader
from htcpool.config.probe import MachineFacts, detected_macros, probe_machine
from htcpool.config.typed import text_to_bool

ROOT_CANDIDATES = ("/etc/condor/condor_config", "/usr/local/etc/condor_config")


class FileLoader:
    """Reads files and runs commands for the reader."""

    def read_file(self, path: str) -> str:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            return handle.read()

    def run_command(self, command: str) -> str:
        import subprocess  # only for a ``|`` source: 2.5 ms of every tool's start

        try:
            done = subprocess.run(
                shlex.split(command), capture_output=True, text=True, check=False, timeout=60
            )
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            raise OSError(f"cannot run: {exc}") from exc
        if done.returncode != 0:
            raise OSError(f"exited with status {done.returncode}")
        return done.stdout

    def list_dir(self, path: str) -> list[str]:
        return sorted(
            name for name in os.listdir(path) if os.path.isfile(os.path.join(path, name))
        )


def find_root_config(environ: Mapping[str, str]) -> str | None:
    """The root configuration file to read, "" for ONLY_ENV, None when none exists."""
    named = environ.get("CONDOR_CONFIG")
    if named:
        return "" if named == "ONLY_ENV" else named
    candidates = list(ROOT_CANDIDATES)
    try:
        import pwd

        candidates.append(os.path.join(pwd.getpwnam("condor").pw_dir, "condor_config"))
    except (KeyError, ImportError):
        pass
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    return None


def _list(value: str | None) -> list[str]:
    return [item for item in re.split(r"[\s,]+", value or "") if item]


def _read_local_dirs(reader: Reader, config: Config) -> str:
    dirs = config.get_str("LOCAL_CONFIG_DIR") or ""
    pattern = config.get_str("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP")
    exclude = re.compile(pattern) if pattern else None
    lister = getattr(reader.loader, "list_dir", None)
    for directory in _list(dirs):
        if lister is None:
            raise ConfigIncludeError(f"cannot list {directory}: no directory loader", directory)
        try:
            names = lister(directory)
        except OSError:
            continue
        for name in sorted(names):
            if exclude is not None and exclude.search(name):
                continue
            reader.read_file(os.path.join(directory, name))
    return dirs


def _read_local_files(reader: Reader, config: Config) -> None:
    files = config.get_str("LOCAL_CONFIG_FILE") or ""
    required = config.get_bool("REQUIRE_LOCAL_CONFIG_FILE", default=True)
    if files.rstrip().endswith("|"):
        reader.read_command(files.rstrip().rstrip("| "), 1, 0, "LOCAL_CONFIG_FILE")
        return
    for path in _list(files):
        reader.read_file(path, 1, bool(required), 0, "LOCAL_CONFIG_FILE")


def assemble(
    roots: Sequence[tuple[str, str | None]],
    *,
    subsystem: str | None,
    local_name: str | None,
    environ: Mapping[str, str],
    facts: MachineFacts,
    rng: random.Random | None = None,
    loader: SourceLoader | None = None,
    allow_commands: bool = False,
    config_root: str = "",
    cwd: str = "",
    clock: Callable[[], float] | None = None,
) -> Config:
    """Run the whole read: detected macros, the roots (name, text or None to load), locals, env.

    ``clock`` is the time the configuration's ClassAd evaluations (``$EVAL``, typed values)
    see; None leaves it without one."""
    macros = MacroSet()
    context = Context(subsystem or None, local_name or None)
    rng_source: RandomSource = rng if rng is not None else LazyRandom(0)
    for name, value in detected_macros(facts, subsystem, local_name, environ).items():
        macros.insert(name, value, DETECTED, 0)
    if config_root:
        macros.insert("CONFIG_ROOT", config_root, DETECTED, 0)
    reader = Reader(macros, context, environ, loader, allow_commands, rng_source, cwd, clock=clock)
    for name, text in roots:
        if text is None:
            reader.read_file(name)
        else:
            reader.sources.append(name)
            reader.read_text(text, name)
    config = Config(macros, context, environ=environ, rng=rng_source, facts=facts, cwd=cwd, clock=clock)
    if reader.loader is not None and roots:
        dirs = _read_local_dirs(reader, config)
        _read_local_files(reader, config)
        if (config.get_str("LOCAL_CONFIG_DIR") or "") != dirs:
            _read_local_dirs(reader, config)
    for key, value in environ.items():
        if key[:8].lower() == "_condor_" and len(key) > 8:
            reader.macros.insert(key[8:], reader.expander(ENVIRONMENT, 0).expand_self(
                value, reader.self_names(key[8:])), ENVIRONMENT, 0)
    hyper = text_to_bool(config.get_str("COUNT_HYPERTHREAD_CPUS") or "true", clock)
    for name, value in detected_macros(facts, subsystem, local_name, environ,
                                       hyper is not False).items():
        if name.startswith("DETECTED_"):
            macros.insert(name, value, DETECTED, 0)
    config.sources = list(reader.sources)
    config.warnings = list(reader.warnings)
    return config


def read_config(
    root: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    facts: MachineFacts | None = None,
    subsystem: str | None = "TOOL",
    local_name: str | None = None,
    rng: random.Random | None = None,
    allow_commands: bool = False,
    loader: SourceLoader | None = None,
    clock: Callable[[], float] | None = None,
) -> Config:
    """Read the configuration from files, as an HTCondor daemon or tool would.

    ``clock`` is the time ClassAd evaluations in the configuration see (``$EVAL(time())``,
    an integer knob written as an expression of ``time()``): the reading program's clock.
    Without one such values are errors; nothing here reads the time itself."""
    env = dict(os.environ) if environ is None else dict(environ)
    path = root if root is not None else find_root_config(env)
    if path is None:
        raise ConfigIncludeError(
            "no configuration found: CONDOR_CONFIG is not set and none of "
            + ", ".join(ROOT_CANDIDATES)
            + ", ~condor/condor_config exists"
        )
    roots: list[tuple[str, str | None]] = [(path, None)] if path else []
    return assemble(
        roots,
        subsystem=subsystem,
        local_name=local_name,
        environ=env,
        facts=facts if facts is not None else probe_machine(),
        rng=rng,
        loader=loader if loader is not None else FileLoader(),
        allow_commands=allow_commands,
        config_root=os.path.dirname(os.path.abspath(path)) if path else "",
        cwd=os.getcwd(),
        clock=clock,
    )
