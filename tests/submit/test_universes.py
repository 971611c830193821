"""Universes at submit: container and docker jobs as condor_submit 25 writes them, local and
scheduler jobs, and every universe htcpool does not run refused with a message that names it
(condor_submit's man page, "universe", "container_image", "docker_image"; HTCondor's
submit_utils.cpp for the Requirements clauses and messages)."""

from __future__ import annotations

import pytest

from htcpool.submit import (
    MemoryFileSystem,
    SubmitFileError,
    SubmitHost,
    SubmitSettings,
    submit_description,
)
from htcpool.submit.universe import ImageKind, image_kind

HOST = SubmitHost(user="alice", cwd="/home/alice", now=1_700_000_000)
FS = MemoryFileSystem(sizes={"/bin/true": 35 * 1024, "/home/alice/images/debian.sif": 50 * 1024 * 1024})


def job(commands: str, settings: SubmitSettings | None = None):  # type: ignore[no-untyped-def]
    result = submit_description(f"executable = /bin/true\n{commands}\nqueue\n", file="u.sub", host=HOST,
                                fs=FS, settings=settings)
    return result.jobs[0]


def requirements(ad) -> str:  # type: ignore[no-untyped-def]
    return str(ad.lookup("Requirements"))


def test_a_container_job_with_a_docker_url() -> None:
    ad = job("universe = container\ncontainer_image = docker://alpine:3")
    assert (ad["JobUniverse"], ad["WantContainer"], ad["ContainerImage"]) == (5, True, "docker://alpine:3")
    assert ad["WantDockerImage"] is True and ad["ContainerImageSource"] == "docker"
    assert "TransferInput" not in ad
    req = requirements(ad)
    assert req.startswith('(TARGET.Arch == "X86_64") && TARGET.HasContainer && TARGET.HasDockerURL && ')
    assert "OpSys" not in req


def test_a_sif_image_travels_with_the_job() -> None:
    ad = job("universe = container\ncontainer_image = images/debian.sif\ncontainer_target_dir = /work\n"
             "transfer_container = true")
    assert ad["ContainerImage"] == "debian.sif" and ad["WantSIF"] is True
    assert ad["ContainerImageFullPath"] == "images/debian.sif" and ad["ContainerImageSource"] == "cedar"
    assert ad["TransferInput"] == "images/debian.sif" and ad["TransferInputSizeMB"] == 51
    assert ad["ContainerTargetDir"] == "/work" and ad["TransferContainer"] is True
    assert "TARGET.HasContainer && TARGET.HasSIF" in requirements(ad)


def test_an_image_on_a_shared_file_system_is_local() -> None:
    ad = job("universe = container\ncontainer_image = /cvmfs/img/debian/",
             SubmitSettings(container_shared_fs="/cvmfs"))
    assert ad["ContainerImageSource"] == "local" and ad["ContainerImage"] == "/cvmfs/img/debian/"
    assert "TARGET.HasSandboxImage" in requirements(ad)
    ad = job("universe = container\ncontainer_image = /data/debian.sif\ntransfer_container = false")
    assert ad["ContainerImageSource"] == "local" and "TransferInput" not in ad


def test_a_vanilla_job_naming_an_image_is_a_container_job() -> None:
    ad = job("container_image = docker://alpine:3")
    assert ad["WantContainer"] is True and "TARGET.HasContainer" in requirements(ad)
    ad = job("universe = container\ndocker_image = alpine:3")
    assert ad["DockerImage"] == "alpine:3" and ad["WantDockerImage"] is True
    assert "TARGET.HasContainer && TARGET.HasDockerURL" in requirements(ad)


def test_a_docker_job() -> None:
    ad = job('universe = docker\ndocker_image = "debian:12"')
    assert (ad["JobUniverse"], ad["WantDocker"], ad["DockerImage"]) == (5, True, "debian:12")
    assert requirements(ad).startswith('(TARGET.Arch == "X86_64") && TARGET.HasDocker && ')


@pytest.mark.parametrize(("commands", "message"), [
    ("universe = container", "container jobs require a container_image or docker_image"),
    ("universe = docker", "docker jobs require a docker_image"),
    ("universe = container\ncontainer_image = library://x/y", "'library://x/y' is not a valid container image"),
    ("universe = container\ncontainer_image = \"\"", "is not a valid container image"),
    ("universe = docker\ndocker_image = a\ncontainer_image = b",
     "docker universe does not allow use of container_image."),
    ("container_image = a\ndocker_image = b", "cannot declare both docker_image and container_image"),
])
def test_bad_image_commands_are_refused(commands: str, message: str) -> None:
    with pytest.raises(SubmitFileError, match=message.replace(".", r"\.").replace("(", r"\(")):
        job(commands)


@pytest.mark.parametrize(("name", "number"), [("local", 12), ("scheduler", 7), ("12", 12), ("Vanilla", 5)])
def test_universes_htcpool_runs(name: str, number: int) -> None:
    ad = job(f"universe = {name}")
    assert ad["JobUniverse"] == number
    if number != 5:  # HTCondor's Requirements for them: no file-transfer clause, plain disk check
        assert requirements(ad) == str(job("universe = local").lookup("Requirements"))
        assert requirements(ad).endswith("(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory)")


@pytest.mark.parametrize("name", ["parallel", "java", "vm", "grid", "standard", "mpi", "pvm", "11"])
def test_universes_htcpool_does_not_run_are_refused(name: str) -> None:
    with pytest.raises(SubmitFileError) as e:
        job(f"universe = {name}")
    text = str(e.value)
    assert "is not a supported universe" in text
    assert "htcpool runs vanilla, local, scheduler, container and docker universe jobs" in text


def test_an_unknown_universe() -> None:
    with pytest.raises(SubmitFileError, match="I don't know about the 'cosmic' universe"):
        job("universe = cosmic")


def test_the_default_universe_knob() -> None:
    assert job("", SubmitSettings(default_universe="local"))["JobUniverse"] == 12
    with pytest.raises(SubmitFileError, match="'Java' is not a supported universe"):
        job("", SubmitSettings(default_universe="java"))


@pytest.mark.parametrize(("image", "kind"), [("docker://x", ImageKind.DOCKER_REPO), ("a/b.sif", ImageKind.SIF),
                                             ("dir/", ImageKind.SANDBOX), ("dir", ImageKind.SANDBOX)])
def test_image_kinds(image: str, kind: ImageKind) -> None:
    assert image_kind(image) is kind
