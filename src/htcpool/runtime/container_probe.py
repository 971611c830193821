"""Which container runtimes this execute point can use, found and tested at start-up.

HTCondor's startd probes its container runtimes when it starts and advertises one
only when a test container really ran (the admin manual, *Setting Up for Special
Environments*: Docker Universe and Singularity Support); this module does the same
for the startd's machine attributes (``machine_attrs``):

* Candidates: the ``DOCKER`` knob when it is set in the configuration, else
  ``docker`` and ``podman`` found on ``PATH`` (a Docker-compatible command line); the
  ``SINGULARITY`` knob when set, else ``apptainer`` and ``singularity`` on ``PATH``.
  A knob naming a file that is not there counts as no runtime. Of each kind the
  first candidate that passes the test is advertised, else the first that failed.
* The test: a container made from a one-file root file system, the host's static
  ``busybox`` (Debian's busybox-static) as ``/bin/busybox``, must run
  ``sh -c 'exit 37'`` and end with status 37 within ``PROBE_TIMEOUT`` seconds. Docker
  imports that file system as the image ``PROBE_IMAGE``; podman runs it with
  ``--rootfs``; apptainer and singularity run the directory as a sandbox. Without a
  static busybox the test cannot be made and the runtime is not advertised.
* A runtime that passes: ``HasDocker`` and ``DockerVersion`` (its ``--version``
  line), or ``HasSingularity``, ``SingularityVersion`` and, for apptainer,
  ``HasApptainer``; and ``HasContainer`` once either passes, with the image kinds it
  can run, which condor_submit's Requirements for a container job test:
  ``HasDockerURL`` (both kinds), ``HasSIF`` and ``HasSandboxImage`` (apptainer and
  singularity). One found that fails:
  ``HasDocker`` or ``HasSingularity`` false with ``DockerOfflineReason`` or
  ``SingularityOfflineReason``, and ``OfflineUniverses`` (the machine attribute the manual
  describes for a universe that is presently offline, which ``condor_status -offline`` lists)
  naming ``"Docker"`` or ``"Singularity"``, and ``"Container"`` too when no runtime found
  works. None found: no attribute at all.
* Results are kept per runtime path for the life of the process: a startd probes
  once, as HTCondor's does, and a reconfigured one keeps them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the starter imports this module; it reads the configuration only for a container job
    from htcpool.config import Config

PROBE_TIMEOUT = 60.0
PROBE_IMAGE = "htcpool-probe:latest"
PROBE_STATUS = 37
_BUSYBOX_PLACES = ("/bin/busybox", "/usr/bin/busybox")


class Kind(Enum):
    """A runtime's command-line family."""

    DOCKER = "docker"            # docker or podman
    SINGULARITY = "singularity"  # apptainer or singularity


@dataclass(frozen=True, slots=True)
class Runtime:
    kind: Kind
    path: str

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


@dataclass(frozen=True, slots=True)
class ProbeResult:
    runtime: Runtime
    works: bool
    version: str = ""
    reason: str = ""


Run = Callable[[list[str], float], tuple[int, str]]

_results: dict[Runtime, ProbeResult] = {}


def _knob(config: Config, name: str) -> str | None:
    """The knob's value when the configuration sets it (HTCondor's table default does not count)."""
    found = config.lookup(name, "STARTD")
    if found is None or found.definition is None:
        return None
    return config.get_str(name, subsystem="STARTD") or ""


def find_runtimes(config: Config, which: Callable[[str], str | None] = shutil.which) -> list[Runtime]:
    """The configured or installed runtimes, in order of preference (see the module rules)."""
    found = []
    for kind, knob, names in ((Kind.DOCKER, "DOCKER", ("docker", "podman")),
                              (Kind.SINGULARITY, "SINGULARITY", ("apptainer", "singularity"))):
        configured = _knob(config, knob)
        if configured is not None:
            path = configured.split()[0] if configured.strip() else ""
            if path and (os.path.isfile(path) or which(path)):
                found.append(Runtime(kind, path if os.path.isabs(path) else which(path) or path))
            continue
        found.extend(Runtime(kind, path) for path in map(which, names) if path)
    return found


def run_command(argv: list[str], timeout: float) -> tuple[int, str]:
    """Run ``argv``; (exit status, its output), status -1 when it could not run or timed out."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        return -1, str(e)
    return done.returncode, (done.stdout + done.stderr).strip()


def static_busybox() -> str | None:
    """A statically linked busybox on this host, which a one-file test container can run."""
    for path in _BUSYBOX_PLACES:
        if os.path.isfile(path):
            try:
                with open(path, "rb") as f:
                    head = f.read(1 << 16)
            except OSError:
                continue
            if b"ld-linux" not in head and b".interp" not in head:  # no program interpreter: static
                return path
    return None


def test_container(runtime: Runtime, rootfs: str, run: Run = run_command) -> tuple[int, str]:
    """Run the test container from the one-file root file system ``rootfs``."""
    script = ["/bin/busybox", "sh", "-c", f"exit {PROBE_STATUS}"]
    if runtime.kind is Kind.SINGULARITY:
        return run([runtime.path, "exec", "--contain", rootfs, *script], PROBE_TIMEOUT)
    if runtime.name.startswith("podman"):
        return run([runtime.path, "run", "--rm", "--network=none", "--rootfs", rootfs, *script], PROBE_TIMEOUT)
    tarball = os.path.join(os.path.dirname(rootfs), "rootfs.tar")
    status, out = run(["tar", "-C", rootfs, "-cf", tarball, "."], PROBE_TIMEOUT)
    if status != 0:
        return status, out
    status, out = run([runtime.path, "import", tarball, PROBE_IMAGE], PROBE_TIMEOUT)
    if status != 0:
        return status, out
    return run([runtime.path, "run", "--rm", "--network=none", PROBE_IMAGE, *script], PROBE_TIMEOUT)


def probe(runtime: Runtime, run: Run = run_command, busybox: str | None = None) -> ProbeResult:
    """Whether ``runtime`` runs a test container (kept per runtime; see the module rules)."""
    known = _results.get(runtime)
    if known is not None:
        return known
    status, version = run([runtime.path, "--version"], PROBE_TIMEOUT)
    version = version.splitlines()[0] if status == 0 and version else ""
    busybox = busybox or static_busybox()
    if status != 0:
        result = ProbeResult(runtime, False, reason=f"{runtime.path} --version failed: {version or status}")
    elif busybox is None:
        result = ProbeResult(runtime, False, version, "no static busybox to build the test container from")
    else:
        with tempfile.TemporaryDirectory(prefix="htcpool-probe-") as tmp:
            rootfs = os.path.join(tmp, "rootfs")
            os.makedirs(os.path.join(rootfs, "bin"))
            shutil.copy2(busybox, os.path.join(rootfs, "bin", "busybox"))
            status, out = test_container(runtime, rootfs, run)
        result = ProbeResult(runtime, True, version) if status == PROBE_STATUS else ProbeResult(
            runtime, False, version, f"the test container ended with status {status}: {_last_line(out)}")
    _results[runtime] = result
    return result


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def container_attributes(results: list[ProbeResult]) -> dict[str, Any]:
    """The machine attributes the probe results give (see the module rules)."""
    attrs: dict[str, Any] = {}
    for result in results:
        prefix = "Docker" if result.runtime.kind is Kind.DOCKER else "Singularity"
        attrs[f"Has{prefix}"] = result.works
        if result.works:
            attrs[f"{prefix}Version"] = result.version
            attrs["HasContainer"] = attrs["HasDockerURL"] = True
            if result.runtime.kind is Kind.SINGULARITY:
                attrs["HasSIF"] = attrs["HasSandboxImage"] = True
            if result.runtime.name.startswith("apptainer"):
                attrs["HasApptainer"] = True
        else:
            attrs[f"{prefix}OfflineReason"] = result.reason
    offline = [("Docker" if r.runtime.kind is Kind.DOCKER else "Singularity") for r in results if not r.works]
    if offline and not attrs.get("HasContainer"):
        offline.append("Container")  # a runtime was found, and none of them runs a container
    if offline:
        attrs["OfflineUniverses"] = offline
    return attrs


def chosen_runtimes(config: Config) -> list[ProbeResult]:
    """Of each kind, the first runtime found that passes the test, else the first found."""
    chosen: dict[Kind, ProbeResult] = {}
    for runtime in find_runtimes(config):
        result = probe(runtime)
        if runtime.kind not in chosen or (result.works and not chosen[runtime.kind].works):
            chosen[runtime.kind] = result
    return list(chosen.values())


def probe_machine(config: Config) -> dict[str, Any]:
    """The container attributes of this machine (see the module rules)."""
    return container_attributes(chosen_runtimes(config))


__all__ = ["PROBE_IMAGE", "Kind", "ProbeResult", "Runtime", "container_attributes", "find_runtimes", "probe",
           "chosen_runtimes", "probe_machine", "run_command", "static_busybox", "test_container"]
