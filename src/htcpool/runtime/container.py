"""Running a container universe job: from a ``LaunchSpec`` to the runtime's command line.

The starter calls ``adapt(spec)`` just before it starts the job. A job that asks for
no container (no ``WantContainer``/``WantDocker`` true, or no image) runs as it is;
this is decided from the job ad's text without loading the ClassAd language. A
container job runs inside its image instead, as HTCondor's starter runs it (the admin
manual, *Setting Up for Special Environments*: Docker Universe and Singularity
Support):

* The runtime: ``DockerImage`` jobs (``WantDocker``) use the Docker-compatible one;
  other container jobs use apptainer/singularity when the machine ad says
  ``HasSingularity``, else Docker/podman when it says ``HasDocker``. Its path is the
  starter's ``DOCKER`` or ``SINGULARITY`` knob, else the command found on ``PATH``
  (``container_probe.find_runtimes``, read from ``CONDOR_CONFIG``).
* The image: ``ContainerImage`` or ``DockerImage``; Docker and podman drop a
  ``docker://`` prefix, apptainer takes it as it is (a ``.sif`` file or a sandbox
  directory too).
* The scratch directory is mounted read-write at the target directory: the
  starter's ``SINGULARITY_TARGET_DIR`` for apptainer, else the job's
  ``ContainerTargetDir`` (submit's ``container_target_dir``), else ``/srv`` for
  apptainer and the scratch directory's own path for Docker. The job starts there.
* The environment is the job's, with every value that names the scratch directory
  (``_CONDOR_SCRATCH_DIR``, ``TMPDIR``, ``_CONDOR_JOB_AD``, ``_CONDOR_MACHINE_AD``)
  rewritten to the target directory; Docker gets it as ``-e`` options, apptainer as
  ``APPTAINERENV_``/``SINGULARITYENV_`` variables with ``--cleanenv``.
* The executable: with ``TransferExecutable`` false it is a path inside the image;
  otherwise it is copied into the scratch directory and run from the target.
* Docker containers run ``--rm`` with every capability dropped, as the starter's own
  user and group, named ``htcpool_<scratch directory name>``; the runtime's client
  stays in the foreground, so the starter's signals reach the job through it.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass

from htcpool.runtime.container_probe import Kind, Runtime
from htcpool.runtime.launch import LaunchSpec

SINGULARITY_DEFAULT_TARGET = "/srv"
_WANTS = re.compile(r"^\s*(WantContainer|WantDocker|ContainerImage|DockerImage)\s*=", re.M | re.I)


class ContainerError(OSError):
    """The job's container cannot be set up (the starter reports it as a start failure)."""


@dataclass(frozen=True, slots=True)
class ContainerJob:
    """What the job ad asks for."""

    kind: Kind
    image: str
    target_dir: str  # the job's ContainerTargetDir; empty when not given
    transfer_executable: bool = True
    #: the machine ad's DockerVersion or SingularityVersion: names the runtime the probe chose
    runtime_version: str = ""


def container_job(job_ad_text: str, machine_ad_text: str = "") -> ContainerJob | None:
    """The container the job asks for, or None (see the module rules)."""
    if not _WANTS.search(job_ad_text):
        return None
    from htcpool.classad import ClassAdError, parseOne

    try:
        job = parseOne(job_ad_text)
        machine = parseOne(machine_ad_text) if machine_ad_text.strip() else None
    except ClassAdError as e:
        raise ContainerError(f"the job ad cannot be read: {e}") from None
    docker = job.get("WantDocker") is True
    if not (docker or job.get("WantContainer") is True):
        return None
    image = job.get("DockerImage") if docker else job.get("ContainerImage", job.get("DockerImage"))
    if not isinstance(image, str) or not image.strip():
        raise ContainerError("the job wants a container but names no image (ContainerImage)")
    if docker:
        kind = Kind.DOCKER
    elif machine is not None and machine.get("HasSingularity") is True:
        kind = Kind.SINGULARITY
    elif machine is not None and machine.get("HasDocker") is True:
        kind = Kind.DOCKER
    else:
        raise ContainerError("this execute point has no working container runtime")
    target = job.get("ContainerTargetDir")
    version = machine.get("DockerVersion" if kind is Kind.DOCKER else "SingularityVersion") \
        if machine is not None else ""
    return ContainerJob(kind, image.strip(), target if isinstance(target, str) else "",
                        job.get("TransferExecutable") is not False, version if isinstance(version, str) else "")


def target_dir(job: ContainerJob, spec: LaunchSpec, configured: str = "") -> str:
    """Where the scratch directory appears inside the container."""
    if job.kind is Kind.SINGULARITY:
        return configured or job.target_dir or SINGULARITY_DEFAULT_TARGET
    return job.target_dir or spec.scratch_dir


def inside(value: str, scratch: str, target: str) -> str:
    """``value`` with a leading scratch directory path replaced by the target directory."""
    if value == scratch or value.startswith(scratch + os.sep):
        return target + value[len(scratch):]
    return value


def command_line(spec: LaunchSpec, job: ContainerJob, runtime: Runtime, *, target: str,
                 uid: int, gid: int, host_path: str = "") -> tuple[list[str], dict[str, str]]:
    """(argv, environment of the runtime's process) that run the job in its image."""
    scratch = spec.scratch_dir
    env = {name: inside(value, scratch, target) for name, value in spec.environment.items()}
    executable = spec.executable
    if job.transfer_executable:
        executable = inside(os.path.join(scratch, os.path.basename(executable)), scratch, target)
    program = [spec.wrapper, executable, *spec.arguments] if spec.wrapper else [executable, *spec.arguments]
    image = job.image
    if job.kind is Kind.SINGULARITY:
        prefix = "APPTAINERENV_" if runtime.name.startswith("apptainer") else "SINGULARITYENV_"
        outer = {f"{prefix}{name}": value for name, value in env.items()}
        outer["PATH"] = host_path or os.defpath
        argv = [runtime.path, "exec", "--cleanenv", "--no-home", "--contain", "-S", "/tmp", "-S", "/var/tmp",
                "--bind", f"{scratch}:{target}", "--pwd", target, image, *program]
        return argv, outer
    image = image.removeprefix("docker://")
    argv = [runtime.path, "run", "--rm", "--name", f"htcpool_{os.path.basename(scratch)}",
            "--volume", f"{scratch}:{target}", "--workdir", target, "--user", f"{uid}:{gid}",
            "--cap-drop", "all", "--security-opt", "no-new-privileges"]
    if spec.stdin != "/dev/null":
        argv.append("--interactive")
    for name, value in sorted(env.items()):
        argv += ["--env", f"{name}={value}"]
    return [*argv, image, *program], {"PATH": host_path or os.defpath}


def _runtime(job: ContainerJob) -> tuple[Runtime, str]:
    """The job's runtime as the starter's configuration names it (the one the machine ad's version
    line names, else the first of its kind), and SINGULARITY_TARGET_DIR."""
    from htcpool.config import ConfigError, read_config
    from htcpool.runtime.container_probe import find_runtimes

    path = os.environ.get("CONDOR_CONFIG", "")
    try:
        config = read_config(path, subsystem="STARTER") if path else None
    except (ConfigError, OSError) as e:
        raise ContainerError(f"cannot read the configuration {path}: {e}") from None
    runtimes = find_runtimes(config) if config is not None else []
    kind = job.kind
    candidates = [r for r in runtimes if r.kind is kind]
    named = [r for r in candidates if r.name.lower() in job.runtime_version.lower()]
    runtime = next(iter(named or candidates), None)
    if runtime is None:
        raise ContainerError(f"no {kind.value} runtime configured or on PATH")
    configured = (config.get_str("SINGULARITY_TARGET_DIR", subsystem="STARTER") or "") if config else ""
    return runtime, configured


def adapt(spec: LaunchSpec) -> tuple[list[str], dict[str, str], str]:
    """(argv, environment, working directory) that start the job: in its container when it asks
    for one, else as the spec says. ContainerError when the container cannot be set up."""
    job = container_job(spec.job_ad_text, spec.machine_ad_text)
    if job is None:
        return spec.argv, dict(spec.environment), spec.cwd
    runtime, configured = _runtime(job)
    target = target_dir(job, spec, configured)
    if job.transfer_executable and os.path.dirname(spec.executable) != spec.scratch_dir:
        try:
            shutil.copy2(spec.executable, os.path.join(spec.scratch_dir, os.path.basename(spec.executable)))
        except OSError as e:
            raise ContainerError(f"cannot copy {spec.executable} into the scratch directory: {e}") from None
    argv, env = command_line(spec, job, runtime, target=target, uid=os.getuid(), gid=os.getgid(),
                             host_path=os.environ.get("PATH", ""))
    return argv, env, spec.scratch_dir


__all__ = ["SINGULARITY_DEFAULT_TARGET", "ContainerError", "ContainerJob", "adapt", "command_line",
           "container_job", "inside", "target_dir"]
