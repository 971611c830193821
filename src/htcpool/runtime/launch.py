"""From a job ClassAd to the description of one process launch.

``launch_spec`` reads the attributes condor_submit wrote and resolves them into
plain values the starter can act on without knowing ClassAds:

* ``Cmd`` is the executable, made absolute against ``Iwd`` when relative;
* ``Arguments`` (new syntax, as the ad stores it: no outer double quotes) wins
  over ``Args`` (old syntax, split on white space);
* ``Environment`` (new syntax) wins over ``Env`` (old syntax, ``;``-separated);
  ``extra_env`` is laid over it, then ``TMPDIR``, ``_CONDOR_SCRATCH_DIR``,
  ``_CONDOR_SLOT``, ``_CONDOR_JOB_AD`` and ``_CONDOR_MACHINE_AD`` (the slot's ad,
  written beside the job ad when the startd gives one), which the job cannot
  override. Nothing else of the starter's own environment reaches the job;
* ``wrapper`` (the startd's ``USER_JOB_WRAPPER``) runs instead of the job, with the
  job's executable and arguments as its arguments, as HTCondor's starter does: the
  wrapper ends with ``exec "$@"`` to become the job;
* ``In``, ``Out`` and ``Err`` are made absolute against ``Iwd``; ``/dev/null``
  stays as it is;
* ``KillSig`` (a name with or without ``SIG``, or a number) becomes a canonical
  name such as ``SIGTERM``;
* ``TransferInput`` names files (or directories) copied into the scratch
  directory before the job starts; ``TransferOutput`` names what is copied back
  to ``Iwd`` afterwards. When ``ShouldTransferFiles`` is ``YES`` or
  ``IF_NEEDED`` and ``TransferOutput`` is absent, every top-level file the job
  created or changed in its scratch directory goes back instead.
* With ``ShouldTransferFiles = "NO"`` the job shares the submitter's file
  system, so, as in HTCondor, it runs in ``Iwd`` and nothing is transferred;
  otherwise it runs in its scratch directory.

The result is a frozen ``LaunchSpec`` that travels to the starter process as
JSON. Pure: nothing here touches the file system or the clock; expressions are
evaluated at the ``now`` the caller passes (``Arguments = strcat("run-", time())``
reads it).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from htcpool.runtime.cgroups import CgroupSpec
from htcpool.runtime.runas import Account

if TYPE_CHECKING:  # the starter imports this module; it needs no ClassAd machinery
    from htcpool.classad import ClassAd, EvalContext

JOB_AD_FILE = ".job.ad"
MACHINE_AD_FILE = ".machine.ad"
DEFAULT_USAGE_INTERVAL = 5.0


class LaunchError(ValueError):
    """A job ad that cannot be turned into a process launch (the input is bad)."""


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """Everything the starter needs to run, watch and clean up after one job."""

    executable: str
    arguments: tuple[str, ...]
    environment: Mapping[str, str]
    cwd: str
    scratch_dir: str
    iwd: str
    slot_name: str
    job_ad_text: str
    stdin: str = "/dev/null"
    stdout: str = "/dev/null"
    stderr: str = "/dev/null"
    kill_sig: str = "SIGTERM"
    transfer_input: tuple[str, ...] = ()
    transfer_output: tuple[str, ...] = ()
    transfer_new_files: bool = False
    output_destination: str = ""
    usage_interval: float = DEFAULT_USAGE_INTERVAL
    machine_ad_text: str = ""
    wrapper: str = ""
    #: the job's cgroup (``runtime.confinement``), None to run it without one; ``usage_interval``
    #: is CGROUP_POLLING_INTERVAL, the usage reported every ``update_interval``
    #: (STARTER_UPDATE_INTERVAL), the first after ``initial_update_interval``
    cgroup: CgroupSpec | None = None
    update_interval: float = DEFAULT_USAGE_INTERVAL
    initial_update_interval: float = DEFAULT_USAGE_INTERVAL
    nice: int = 0  #: JOB_RENICE_INCREMENT: the job runs this much nicer than the starter
    #: the account the job runs as when the starter runs as root (``runas``); None: the starter's
    run_as: Account | None = None
    #: the job's owner, where it runs as another account (a slot user, nobody): its ``Iwd`` files
    #: are read and written as the owner
    owner_account: Account | None = None
    #: where the starter notes its job's exit before reporting it, and what the note says besides
    #: (claim_id, slot, schedd, job): ``exit_notes``; empty: no note
    exit_note: str = ""
    exit_context: Mapping[str, str] = field(default_factory=dict)

    @property
    def job_ad_path(self) -> str:
        return os.path.join(self.scratch_dir, JOB_AD_FILE)

    @property
    def machine_ad_path(self) -> str:
        return os.path.join(self.scratch_dir, MACHINE_AD_FILE)

    @property
    def argv(self) -> list[str]:
        """What is executed: the job, or the wrapper with the job's command line after it."""
        job = [self.executable, *self.arguments]
        return [self.wrapper, *job] if self.wrapper else job

    @property
    def kill_signal(self) -> int:
        return signal_number(self.kill_sig)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (lists for tuples, plain dicts for mappings). A shallow copy: every
        field that is not a plain value is replaced below (``asdict``'s deep copy cost half a
        millisecond of each job's start)."""
        out = {f.name: getattr(self, f.name) for f in _FIELDS}
        out["arguments"] = list(self.arguments)
        out["environment"] = dict(self.environment)
        out["transfer_input"] = list(self.transfer_input)
        out["transfer_output"] = list(self.transfer_output)
        out["cgroup"] = None if self.cgroup is None else self.cgroup.to_json()
        out["run_as"] = None if self.run_as is None else self.run_as.to_json()
        out["owner_account"] = None if self.owner_account is None else self.owner_account.to_json()
        out["exit_context"] = dict(self.exit_context)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> LaunchSpec:
        """The spec ``to_json`` wrote (as a dict or JSON text); LaunchError on a malformed one."""
        try:
            if isinstance(data, str):
                data = json.loads(data)
            if not isinstance(data, Mapping):
                raise TypeError("a launch description is a JSON object")
            return cls(
                executable=str(data["executable"]),
                arguments=tuple(str(a) for a in data.get("arguments", ())),
                environment={str(k): str(v) for k, v in dict(data.get("environment", {})).items()},
                cwd=str(data["cwd"]),
                scratch_dir=str(data["scratch_dir"]),
                iwd=str(data["iwd"]),
                slot_name=str(data.get("slot_name", "")),
                job_ad_text=str(data.get("job_ad_text", "")),
                stdin=str(data.get("stdin", "/dev/null")),
                stdout=str(data.get("stdout", "/dev/null")),
                stderr=str(data.get("stderr", "/dev/null")),
                kill_sig=canonical_signal(data.get("kill_sig", "SIGTERM")),
                transfer_input=tuple(str(p) for p in data.get("transfer_input", ())),
                transfer_output=tuple(str(p) for p in data.get("transfer_output", ())),
                transfer_new_files=bool(data.get("transfer_new_files", False)),
                output_destination=str(data.get("output_destination", "")),
                usage_interval=float(data.get("usage_interval", DEFAULT_USAGE_INTERVAL)),
                machine_ad_text=str(data.get("machine_ad_text", "")),
                wrapper=str(data.get("wrapper", "")),
                cgroup=CgroupSpec.from_json(data.get("cgroup")),
                update_interval=float(data.get("update_interval", DEFAULT_USAGE_INTERVAL)),
                initial_update_interval=float(data.get("initial_update_interval", DEFAULT_USAGE_INTERVAL)),
                nice=int(data.get("nice", 0)),
                run_as=Account.from_json(data.get("run_as")),
                owner_account=Account.from_json(data.get("owner_account")),
                exit_note=str(data.get("exit_note", "")),
                exit_context={str(k): str(v) for k, v in dict(data.get("exit_context", {})).items()},
            )
        except (KeyError, TypeError, ValueError) as e:
            raise LaunchError(f"malformed launch description: {e!r}") from None


def signal_number(value: str | int) -> int:
    """A signal given as a number, or a name with or without ``SIG``, as its number here."""
    return int(signal.Signals[canonical_signal(value)])


def canonical_signal(value: object) -> str:
    """A signal's canonical name (``SIGTERM``); LaunchError for one this system lacks."""
    text = str(value).strip().strip('"').upper()
    try:
        if text.lstrip("-").isdigit():
            return signal.Signals(int(text)).name
        name = text if text.startswith("SIG") else "SIG" + text
        return signal.Signals[name].name
    except (KeyError, ValueError):
        raise LaunchError(f"unknown signal {value!r}") from None


def _string(job: ClassAd, attr: str, context: EvalContext) -> str | None:
    """A string (or number) attribute's text; None when absent, UNDEFINED or ERROR."""
    if attr not in job:
        return None
    try:
        value = job.eval(attr, context)
    except Exception as e:  # an expression that cannot be evaluated at all
        raise LaunchError(f"job attribute {attr} cannot be evaluated: {e}") from None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _resolve(path: str, base: str) -> str:
    """``path`` made absolute against ``base``, keeping a trailing slash (it means "contents")."""
    if path == "/dev/null":
        return path
    resolved = os.path.normpath(os.path.join(base, os.path.expanduser(path)))
    return resolved + "/" if path.endswith("/") and resolved != "/" else resolved


def _names(value: str | None) -> list[str]:
    return [n.strip() for n in (value or "").split(",") if n.strip()]


def _words(value: str, attr: str) -> list[str]:
    """The words of a new-syntax value (imported late: the starter never parses ads)."""
    from htcpool.submit.argsenv import split_v2
    from htcpool.submit.errors import SubmitError

    try:
        return split_v2(value)
    except SubmitError as e:
        raise LaunchError(f"{attr}: {e}") from None


def job_arguments(job: ClassAd, context: EvalContext) -> tuple[str, ...]:
    """The argument vector after the executable: ``Arguments`` first, else ``Args``."""
    v2 = _string(job, "Arguments", context)
    if v2 is not None and v2.strip():
        return tuple(_words(v2, "Arguments"))
    v1 = _string(job, "Args", context)
    return tuple((v1 or "").split())


def job_environment(job: ClassAd, context: EvalContext) -> dict[str, str]:
    """NAME → value from ``Environment`` (new syntax) or else ``Env`` (old syntax)."""
    v2 = _string(job, "Environment", context)
    if v2 is not None:
        entries = _words(v2, "Environment")
        attr = "Environment"
    else:
        entries = [e.strip() for e in (_string(job, "Env", context) or "").split(";")]
        attr = "Env"
    env: dict[str, str] = {}
    for entry in entries:
        if not entry:
            continue
        name, eq, value = entry.partition("=")
        if not eq or not name:
            raise LaunchError(f"{attr}: entry {entry!r} is not of the form NAME=VALUE")
        env[name] = value
    return env


#: LaunchSpec's fields, in order (``LaunchSpec.to_json``)
_FIELDS = fields(LaunchSpec)


def launch_spec(job: ClassAd, scratch_dir: str, slot_name: str, extra_env: Mapping[str, str],
                machine_ad: ClassAd | None = None, wrapper: str = "", *, now: float) -> LaunchSpec:
    """The launch of ``job`` in ``scratch_dir`` on slot ``slot_name`` (through ``wrapper`` if given),
    its expressions read at ``now``."""
    from htcpool.classad import EvalContext, fixed_clock

    if wrapper and not os.path.isabs(wrapper):
        raise LaunchError(f"USER_JOB_WRAPPER {wrapper!r} is not an absolute path")
    context = EvalContext(clock=fixed_clock(now))
    cmd = _string(job, "Cmd", context)
    if not cmd:
        raise LaunchError("job ad has no Cmd (the executable)")
    iwd = _string(job, "Iwd", context) or scratch_dir
    if not os.path.isabs(iwd):
        raise LaunchError(f"Iwd {iwd!r} is not an absolute path")
    scratch_dir = os.path.abspath(scratch_dir)
    should_transfer = (_string(job, "ShouldTransferFiles", context) or "IF_NEEDED").upper()
    shared_fs = should_transfer == "NO"

    environment = job_environment(job, context)
    environment.update(extra_env)
    job_ad_path = os.path.join(scratch_dir, JOB_AD_FILE)
    environment.update({
        "TMPDIR": scratch_dir,
        "_CONDOR_SCRATCH_DIR": scratch_dir,
        "_CONDOR_SLOT": slot_name,
        "_CONDOR_JOB_AD": job_ad_path,
    })
    if machine_ad is not None:
        environment["_CONDOR_MACHINE_AD"] = os.path.join(scratch_dir, MACHINE_AD_FILE)

    outputs = _string(job, "TransferOutput", context)
    return LaunchSpec(
        executable=_resolve(cmd, iwd),
        arguments=job_arguments(job, context),
        environment=environment,
        cwd=iwd if shared_fs else scratch_dir,
        scratch_dir=scratch_dir,
        iwd=iwd,
        slot_name=slot_name,
        job_ad_text=job.printOld(),
        stdin=_resolve(_string(job, "In", context) or "/dev/null", iwd),
        stdout=_resolve(_string(job, "Out", context) or "/dev/null", iwd),
        stderr=_resolve(_string(job, "Err", context) or "/dev/null", iwd),
        kill_sig=canonical_signal(_string(job, "KillSig", context) or "SIGTERM"),
        transfer_input=() if shared_fs else tuple(_resolve(n, iwd)
                                                  for n in _names(_string(job, "TransferInput", context))),
        transfer_output=() if shared_fs else tuple(_names(outputs)),
        transfer_new_files=not shared_fs and outputs is None,
        output_destination=iwd,
        machine_ad_text="" if machine_ad is None else machine_ad.printOld(),
        wrapper=wrapper,
    )


__all__ = [
    "DEFAULT_USAGE_INTERVAL",
    "JOB_AD_FILE",
    "MACHINE_AD_FILE",
    "LaunchError",
    "LaunchSpec",
    "canonical_signal",
    "job_arguments",
    "job_environment",
    "launch_spec",
    "signal_number",
]
