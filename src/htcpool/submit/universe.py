"""The universe pass of the job builder, and the container and docker "toppings".

HTCondor numbers its universes (``UNIVERSE_NUMBERS``: standard 1 … vm 13);
``universe = 5`` works as well as ``universe = vanilla``. ``docker`` and
``container`` are not universes of their own but vanilla jobs with a topping:
``JobUniverse = 5`` plus ``WantDocker`` or ``WantContainer``, as the HTCondor
manual's "Choosing an HTCondor Universe" and condor_submit's man page describe.
htcpool runs vanilla (with either topping), local (12) and scheduler (7) jobs;
every other universe is refused at submit with a message naming it and the
ones that run here (``RUNS_HERE``), so nothing is queued that can never start.

``universe_pass`` sets ``JobUniverse`` and the toppings and checks which image
commands go with which topping (docker: ``docker_image`` only; container:
``container_image`` or ``docker_image``, not both; a vanilla or local job naming
an image becomes a container job). ``images`` (run after the file pass, so
``ShouldTransferFiles`` is known) writes ``DockerImage`` / ``ContainerImage``
with the image kind (``WantDockerImage``, ``WantSIF``, ``WantSandboxImage``) and
``ContainerImageSource`` as condor_submit 25 does; ``requirement_clauses`` gives
the machine attributes a container or docker job needs (``TARGET.HasContainer``
with ``HasDockerURL``/``HasSIF``/``HasSandboxImage``, or ``TARGET.HasDocker``).
Messages for bad image commands are HTCondor's.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from htcpool.submit.jobad import JobBuilder

UNIVERSE_NUMBERS = {
    "standard": 1, "pipe": 2, "linda": 3, "pvm": 4, "vanilla": 5, "pvmd": 6, "scheduler": 7,
    "mpi": 8, "grid": 9, "java": 10, "parallel": 11, "local": 12, "vm": 13,
}
UNIVERSE_NAMES = {number: name for name, number in UNIVERSE_NUMBERS.items()}
VANILLA, SCHEDULER, LOCAL = 5, 7, 12
#: the universes htcpool runs, in the words a user writes them
RUNS_HERE = ("vanilla", "local", "scheduler", "container", "docker")
#: image sources condor_submit never transfers (the starter pulls them)
NEVER_TRANSFER = ("docker://", "oras://")
#: container image prefixes condor_submit refuses
INVALID_IMAGE_PREFIXES = ("instance://", "library://", "shub://")


class Topping(StrEnum):
    NONE = ""
    DOCKER = "docker"
    CONTAINER = "container"


class ImageKind(StrEnum):
    """What a container image string names, by condor_submit's rule (a prefix or a suffix)."""

    DOCKER_REPO = "WantDockerImage"
    SIF = "WantSIF"
    SANDBOX = "WantSandboxImage"


def image_kind(image: str) -> ImageKind:
    text = image.strip()
    if text.startswith("docker:"):
        return ImageKind.DOCKER_REPO
    if text.endswith(".sif"):
        return ImageKind.SIF
    return ImageKind.SANDBOX  # a directory, with or without its trailing slash


def _runs_here() -> str:
    return "htcpool runs " + ", ".join(RUNS_HERE[:-1]) + " and " + RUNS_HERE[-1] + " universe jobs"


def _strip_quotes(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].strip()
    return text


def universe_pass(b: JobBuilder) -> None:
    name = (b.get("universe", "JobUniverse") or b.settings.default_universe or "vanilla").strip()
    low = name.lower()
    b.topping = Topping.NONE
    if low in ("docker", "container"):
        b.universe, b.topping = VANILLA, Topping(low)
    elif low.isdigit() and int(low) in UNIVERSE_NAMES:
        b.universe = int(low)
    elif low in UNIVERSE_NUMBERS:
        b.universe = UNIVERSE_NUMBERS[low]
    else:
        raise b.fail(f"I don't know about the '{name}' universe ({_runs_here()}).", "universe")
    if b.universe not in (VANILLA, SCHEDULER, LOCAL):
        shown = UNIVERSE_NAMES[b.universe].capitalize()
        raise b.fail(f"'{shown}' is not a supported universe: {_runs_here()}.", "universe")
    container_image = b.get("container_image", "ContainerImage")
    docker_image = b.get("docker_image", "DockerImage")
    if b.universe in (VANILLA, LOCAL):
        if b.topping is Topping.DOCKER:
            if container_image:
                raise b.fail("docker universe does not allow use of container_image.", "container_image")
        elif docker_image and container_image:
            raise b.fail("cannot declare both docker_image and container_image", "container_image")
        elif docker_image or container_image:
            b.topping = Topping.CONTAINER
            if docker_image:
                b.ad["WantDockerImage"] = True
    b.ad["JobUniverse"] = b.universe
    if b.topping is Topping.DOCKER:
        b.ad["WantDocker"] = True
    elif b.topping is Topping.CONTAINER:
        b.ad["WantContainer"] = True


def images(b: JobBuilder) -> None:
    """DockerImage / ContainerImage and what goes with them, for jobs with a topping."""
    b.container_transfer = None  # the builder serves every job of the file
    if b.topping is Topping.NONE:
        return
    docker_image = b.get("docker_image", "DockerImage")
    if b.topping is Topping.DOCKER:
        image = _strip_quotes(docker_image or "")
        if docker_image is None or docker_image == "":
            raise b.fail("docker jobs require a docker_image", "universe")
        if not image:
            raise b.fail(f"'{docker_image}' is not a valid docker_image", "docker_image")
        b.ad["DockerImage"] = image
        return
    if docker_image:
        image = _strip_quotes(docker_image)
        if not image:
            raise b.fail(f"'{docker_image}' is not a valid docker_image for container universe",
                         "docker_image")
        b.ad["DockerImage"] = image
    container_image = b.get("container_image", "ContainerImage")
    if container_image:
        image = _strip_quotes(container_image)
        if not image or image.startswith(INVALID_IMAGE_PREFIXES):
            raise b.fail(f"'{container_image}' is not a valid container image", "container_image")
        b.ad["ContainerImage"] = image
        b.ad[image_kind(image).value] = True
        _image_source(b, image)
    elif not docker_image:
        raise b.fail("container jobs require a container_image or docker_image", "universe")


def _image_source(b: JobBuilder, image: str) -> None:
    """``ContainerImageSource``: where the execution point gets the image from. An image the job
    does not transfer (``transfer_container = false``, a path on ``CONTAINER_SHARED_FS``) is
    ``local``; a docker:// or oras:// image is pulled by the execution point; any other is sent
    with the job's input files (``cedar``, or the URL's scheme) and named by its base name."""
    if not b.get_bool("transfer_container", True):
        b.ad["ContainerImageSource"] = "local"
        return
    shared = [p.strip() for p in b.settings.container_shared_fs.split(",") if p.strip()]
    if any(image.startswith(prefix) for prefix in shared):
        b.ad["ContainerImageSource"] = "local"
        return
    for prefix in NEVER_TRANSFER:
        if image.startswith(prefix):
            b.ad["ContainerImageSource"] = prefix[:-3]
            return
    path = image.rstrip("/")
    b.container_transfer = image
    b.ad["ContainerImage"] = path.rsplit("/", 1)[-1]
    b.ad["ContainerImageFullPath"] = image
    scheme, colon, _ = path.partition(":")
    b.ad["ContainerImageSource"] = scheme if colon else "cedar"


def requirement_clauses(b: JobBuilder, arch: str) -> list[str]:
    """The clauses condor_submit writes for a container or docker job, in place of Arch and OpSys
    (``arch`` is the Arch clause, or "" when the user's Requirements mention Arch)."""
    clauses = [arch] if arch else []
    if b.topping is Topping.DOCKER:
        clauses.append("TARGET.HasDocker")
        network = b.ad.get("DockerNetworkType")
        if isinstance(network, str) and network and network not in ("host", "none", "nat"):
            clauses.append("StringListMember(My.DockerNetworkType, TARGET.DockerNetworks)")
        return clauses
    clauses.append("TARGET.HasContainer")
    if "DockerImage" in b.ad:
        clauses.append("TARGET.HasDockerURL")
        return clauses
    image = b.ad.get("ContainerImageFullPath", b.ad.get("ContainerImage"))
    if isinstance(image, str):
        clauses.append({ImageKind.DOCKER_REPO: "TARGET.HasDockerURL", ImageKind.SIF: "TARGET.HasSIF",
                        ImageKind.SANDBOX: "TARGET.HasSandboxImage"}[image_kind(image)])
    return clauses
