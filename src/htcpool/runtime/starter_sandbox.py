"""The starter's sandbox: the job's scratch directory, its files in and out, its streams.

Before the job starts (``prepare_scratch``) the scratch directory is made as the job's account
(``job_account``), the job ad and the slot's ad are written into it and the input files are
copied in, read as the submit side's account; when the job runs as an account other than its
owner's, the executable is copied in too (``staged_executable``), as HTCondor transfers it.
``open_streams`` opens the job's stdin, stdout and stderr as the submit side. After the job
(``output_names``, ``transfer_outputs``) the listed outputs, or the new and changed top-level
files, go back to ``Iwd``; ``remove_scratch`` removes the directory. The starter (``starter``)
runs these around the job's process; a failure before the job starts is a ``StartupFailure``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from typing import IO

from htcpool.runtime.job_account import acting_as, copy_between, make_scratch
from htcpool.runtime.launch import JOB_AD_FILE, LaunchSpec
from htcpool.runtime.runas import Account


class StartupFailure(Exception):
    """The job cannot be started (reported as an ``error`` event)."""


def prepare_scratch(spec: LaunchSpec) -> dict[str, tuple[int, int]]:
    """Make the scratch directory, write the job ad, copy the inputs (each with its account's
    identity, ``job_account``); return the snapshot."""
    try:
        make_scratch(spec.scratch_dir, spec.run_as)
        _fill_scratch(spec)
    except OSError as e:
        raise StartupFailure(f"cannot prepare scratch directory: {e}") from None
    return snapshot(spec.scratch_dir)


def _fill_scratch(spec: LaunchSpec) -> None:
    """The job ad and the slot's ad (as the job's account), the input files (read as the owner)
    into the scratch directory."""
    with acting_as(spec.run_as):
        with open(spec.job_ad_path, "w") as f:
            f.write(spec.job_ad_text)
        if spec.machine_ad_text:
            with open(spec.machine_ad_path, "w") as f:
                f.write(spec.machine_ad_text)
    if _stages_executable(spec):
        copy_as(spec.executable, staged_executable(spec).executable, submit_side(spec), spec.run_as)
    for source in spec.transfer_input:
        # a directory named with a trailing slash gives its contents, as in HTCondor
        with acting_as(submit_side(spec)):
            contents = source.endswith("/") and os.path.isdir(source)
        target = spec.scratch_dir if contents else os.path.join(spec.scratch_dir, os.path.basename(source.rstrip("/")))
        copy_as(source, target, submit_side(spec), spec.run_as)


def _stages_executable(spec: LaunchSpec) -> bool:
    """Whether the executable is copied into the scratch directory: the job runs there as an
    account other than its owner's, which may not reach the owner's files (as HTCondor transfers
    the executable)."""
    return spec.owner_account is not None and spec.cwd == spec.scratch_dir


def staged_executable(spec: LaunchSpec) -> LaunchSpec:
    """The launch running the copy ``prepare_scratch`` made of the executable, when it made one."""
    if not _stages_executable(spec):
        return spec
    return dataclasses.replace(spec, executable=os.path.join(spec.scratch_dir, os.path.basename(spec.executable)))


def submit_side(spec: LaunchSpec) -> Account | None:
    """The account the job's ``Iwd`` files are read and written as: the owner's, or the job's."""
    return spec.owner_account or spec.run_as


def copy_as(source: str, target: str, reader: Account | None, writer: Account | None) -> None:
    """``copy``, reading as ``reader`` and writing as ``writer`` (the submit side's and the scratch
    directory's accounts, ``job_account``)."""
    if reader == writer:
        with acting_as(reader):
            copy(source, target)
    else:
        copy_between(source, target, reader, writer)


def copy(source: str, target: str) -> None:
    """Copy a file, or a directory with everything in it, to ``target``."""
    if os.path.isdir(source):
        shutil.copytree(source, target, dirs_exist_ok=True)
    else:
        shutil.copy2(source, target)


def snapshot(directory: str) -> dict[str, tuple[int, int]]:
    """Top-level plain files of ``directory``: name → (mtime in ns, size)."""
    out: dict[str, tuple[int, int]] = {}
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    out[entry.name] = (st.st_mtime_ns, st.st_size)
    except OSError:
        pass
    return out


def output_names(spec: LaunchSpec, before: dict[str, tuple[int, int]]) -> list[str]:
    """What goes back to ``Iwd``: the listed outputs, or the new and changed top-level files."""
    if not spec.transfer_new_files:
        return list(spec.transfer_output)
    own = {JOB_AD_FILE}
    for stream in (spec.stdout, spec.stderr):
        if os.path.dirname(stream) == spec.scratch_dir:
            own.add(os.path.basename(stream))
    after = snapshot(spec.scratch_dir)
    return sorted(n for n, stamp in after.items() if n not in own and before.get(n) != stamp)


def transfer_outputs(spec: LaunchSpec, names: list[str]) -> list[str]:
    """Copy ``names`` from scratch (read as the job's account) to the output destination (written
    as the submit side's, ``submit_side``); the problems, as messages."""
    problems: list[str] = []
    for name in names:
        target = os.path.join(spec.output_destination, os.path.basename(name.rstrip("/")))
        try:
            copy_as(os.path.join(spec.scratch_dir, name), target, spec.run_as, submit_side(spec))
        except OSError as e:
            problems.append(f"cannot transfer output {name}: {e}")
    return problems


def open_streams(spec: LaunchSpec) -> list[IO[bytes]]:
    """The job's stdin, stdout and stderr (one file when stdout and stderr are the same), opened
    as the submit side's account (``submit_side``)."""
    opened: list[IO[bytes]] = []
    try:
        with acting_as(submit_side(spec)):
            for path, mode in ((spec.stdin, "rb"), (spec.stdout, "wb"), (spec.stderr, "wb")):
                opened.append(opened[1] if len(opened) == 2 and path == spec.stdout else open(path, mode))
    except OSError as e:
        for f in set(opened):
            f.close()
        raise StartupFailure(f"cannot open {e.filename}: {e.strerror}") from None
    return opened


def remove_scratch(spec: LaunchSpec) -> None:
    if spec.scratch_dir and os.path.abspath(spec.scratch_dir) != os.path.abspath(spec.iwd):
        shutil.rmtree(spec.scratch_dir, ignore_errors=True)


__all__ = ["StartupFailure", "copy", "copy_as", "open_streams", "output_names", "prepare_scratch",
           "remove_scratch", "snapshot", "staged_executable", "submit_side", "transfer_outputs"]
