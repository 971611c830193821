"""Container jobs: the startd's runtime probe (runtime/container_probe.py) and the command line a
container job runs with (runtime/container.py), with fake runtimes; and a real starter refusing a
container job on a machine without a working runtime."""

from __future__ import annotations

import asyncio
from pathlib import Path

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.runtime import container_probe
from htcpool.runtime.container import (
    SINGULARITY_DEFAULT_TARGET,
    ContainerJob,
    adapt,
    command_line,
    container_job,
)
from htcpool.runtime.container_probe import (
    PROBE_STATUS,
    Kind,
    ProbeResult,
    Runtime,
    container_attributes,
    find_runtimes,
    probe,
)
from htcpool.runtime.launch import LaunchSpec, launch_spec
from htcpool.runtime.starter_client import StarterHandle

DOCKER = Runtime(Kind.DOCKER, "/usr/bin/podman")
APPTAINER = Runtime(Kind.SINGULARITY, "/usr/bin/apptainer")


def spec_for(tmp_path: Path, machine: ClassAd | None = None, **attrs: object) -> LaunchSpec:
    ad = ClassAd({"Cmd": str(tmp_path / "job.sh"), "Iwd": str(tmp_path), "Arguments": "a b",
                  "Environment": "GREETING=hi", **attrs})
    return launch_spec(ad, str(tmp_path / "scratch"), "slot1_1", {}, machine, now=1_800_000_000.0)


def which_of(*present: str):  # type: ignore[no-untyped-def]
    return lambda name: f"/usr/bin/{name}" if name in present else None


# --------------------------------------------------------------------------- the probe
def test_runtimes_come_from_the_knobs_or_else_the_path() -> None:
    plain = Config.from_text("", subsystem="STARTD")
    assert find_runtimes(plain, which_of("podman", "apptainer")) == [DOCKER, APPTAINER]
    assert find_runtimes(plain, which_of()) == []
    knob = Config.from_text("DOCKER = /no/such/docker", subsystem="STARTD")
    assert find_runtimes(knob, which_of("docker")) == []  # the knob wins, and names nothing


def fake_run(test_status: int, calls: list[list[str]]):  # type: ignore[no-untyped-def]
    def run(argv: list[str], timeout: float) -> tuple[int, str]:
        calls.append(argv)
        if argv[1] == "--version":
            return 0, f"{Path(argv[0]).name} version 9.9\n"
        return test_status, "crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted" if test_status else ""
    return run


def test_a_runtime_is_advertised_only_when_the_test_container_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(container_probe, "_results", {})
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"\x7fELF static")
    calls: list[list[str]] = []
    good = probe(DOCKER, fake_run(PROBE_STATUS, calls), busybox=str(busybox))
    assert good == ProbeResult(DOCKER, True, "podman version 9.9")
    assert "--rootfs" in calls[-1] and calls[-1][-3:] == ["sh", "-c", f"exit {PROBE_STATUS}"]
    bad = probe(APPTAINER, fake_run(126, []), busybox=str(busybox))
    assert not bad.works and "setrlimit" in bad.reason
    assert container_attributes([good]) == {"HasDocker": True, "DockerVersion": "podman version 9.9",
                                            "HasContainer": True, "HasDockerURL": True}
    assert container_attributes([bad]) == {"HasSingularity": False, "SingularityOfflineReason": bad.reason,
                                           "OfflineUniverses": ["Singularity", "Container"]}
    assert container_attributes([good, bad])["OfflineUniverses"] == ["Singularity"]  # docker still runs them
    assert container_attributes([]) == {}
    apptainer = ProbeResult(APPTAINER, True, "apptainer version 1.3")
    attrs = container_attributes([apptainer])
    assert all(attrs[name] is True for name in ("HasApptainer", "HasSingularity", "HasSIF", "HasSandboxImage"))


def test_without_a_static_busybox_nothing_is_advertised(monkeypatch) -> None:
    monkeypatch.setattr(container_probe, "_results", {})
    monkeypatch.setattr(container_probe, "static_busybox", lambda: None)
    result = probe(DOCKER, fake_run(PROBE_STATUS, []))
    assert not result.works and "busybox" in result.reason


# --------------------------------------------------------------------------- the command line
def test_a_job_without_a_container_runs_as_it_is(tmp_path: Path) -> None:
    spec = spec_for(tmp_path)
    assert container_job(spec.job_ad_text, spec.machine_ad_text) is None
    assert adapt(spec) == (spec.argv, dict(spec.environment), spec.cwd)


def test_apptainer_mounts_the_scratch_directory_at_srv(tmp_path: Path) -> None:
    machine = ClassAd({"HasSingularity": True, "SingularityVersion": "apptainer version 1.3"})
    spec = spec_for(tmp_path, machine, WantContainer=True, ContainerImage="docker://alpine:3")
    job = container_job(spec.job_ad_text, spec.machine_ad_text)
    assert job == ContainerJob(Kind.SINGULARITY, "docker://alpine:3", "", True, "apptainer version 1.3")
    argv, env = command_line(spec, job, APPTAINER, target=SINGULARITY_DEFAULT_TARGET, uid=1, gid=1,
                             host_path="/usr/bin")
    scratch = spec.scratch_dir
    assert argv[:2] == ["/usr/bin/apptainer", "exec"]
    assert f"{scratch}:/srv" in argv and argv[argv.index("--pwd") + 1] == "/srv"
    assert argv[-4:] == ["docker://alpine:3", "/srv/job.sh", "a", "b"]
    assert env["APPTAINERENV__CONDOR_SCRATCH_DIR"] == "/srv" and env["APPTAINERENV_TMPDIR"] == "/srv"
    assert env["APPTAINERENV__CONDOR_JOB_AD"] == "/srv/.job.ad"
    assert env["APPTAINERENV__CONDOR_MACHINE_AD"] == "/srv/.machine.ad"
    assert env["APPTAINERENV_GREETING"] == "hi" and env["PATH"] == "/usr/bin"


def test_docker_mounts_the_scratch_directory_at_its_own_path_or_the_target_dir(tmp_path: Path) -> None:
    machine = ClassAd({"HasDocker": True, "DockerVersion": "podman version 4.3.1"})
    spec = spec_for(tmp_path, machine, WantDocker=True, DockerImage="docker://busybox:1", TransferExecutable=False)
    job = container_job(spec.job_ad_text, spec.machine_ad_text)
    assert job is not None and job.kind is Kind.DOCKER and not job.transfer_executable
    scratch = spec.scratch_dir
    argv, _ = command_line(spec, job, DOCKER, target=scratch, uid=7, gid=8)
    assert argv[:3] == ["/usr/bin/podman", "run", "--rm"]
    assert f"{scratch}:{scratch}" in argv and argv[argv.index("--workdir") + 1] == scratch
    assert argv[argv.index("--user") + 1] == "7:8" and "--cap-drop" in argv
    assert f"_CONDOR_SCRATCH_DIR={scratch}" in argv and "GREETING=hi" in argv
    assert argv[-4:] == ["busybox:1", str(tmp_path / "job.sh"), "a", "b"]  # not transferred: the image's path
    moved = spec_for(tmp_path, machine, WantContainer=True, ContainerImage="img", ContainerTargetDir="/work")
    job = container_job(moved.job_ad_text, moved.machine_ad_text)
    assert job is not None and job.target_dir == "/work"
    argv, _ = command_line(moved, job, DOCKER, target="/work", uid=0, gid=0)
    assert "_CONDOR_SCRATCH_DIR=/work" in argv and argv[-3:] == ["/work/job.sh", "a", "b"]


def test_a_container_job_without_an_image_is_refused(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, ClassAd({"HasDocker": True}), WantContainer=True)
    try:
        container_job(spec.job_ad_text, spec.machine_ad_text)
    except OSError as e:
        assert "names no image" in str(e)
    else:
        raise AssertionError("a container job without an image was accepted")


def test_the_starter_refuses_a_container_job_where_no_runtime_works(tmp_path: Path) -> None:
    """The startd advertised no runtime, yet the job came: the start fails with the reason."""
    (tmp_path / "job.sh").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "job.sh").chmod(0o755)
    spec = spec_for(tmp_path, ClassAd({"Name": "slot1"}), WantContainer=True, ContainerImage="docker://alpine:3")
    seen: list[dict[str, object]] = []

    async def go() -> None:
        handle = await StarterHandle.spawn(spec, seen.append)
        await asyncio.wait_for(handle.wait(), 10)

    asyncio.run(go())
    errors = [e for e in seen if e["event"] == "error"]
    assert errors and "no working container runtime" in str(errors[0]["message"]), seen
