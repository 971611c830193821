"""GPU submit commands, as the HTCondor manual's "Jobs That Require GPUs" (in "Submitting a Job")
and condor_submit 25 (SetRequestGpus / SetResourceRequirements in HTCondor's submit_utils.cpp)
write them."""

from __future__ import annotations

import pytest

from htcpool.classad import ExprTree
from htcpool.submit import MemoryFileSystem, SubmitHost, SubmitSettings, submit_description
from htcpool.submit.gpus import runtime_version

HOST = SubmitHost(user="alice", cwd="/home/alice", now=1_700_000_000)
FS = MemoryFileSystem(sizes={"/bin/true": 35 * 1024})


def job(commands: str, settings: SubmitSettings | None = None):  # type: ignore[no-untyped-def]
    result = submit_description(f"executable = /bin/true\n{commands}\nqueue\n", file="g.sub", host=HOST,
                                fs=FS, settings=settings)
    return result.jobs[0], result.warnings


def text(ad, attr: str) -> str:  # type: ignore[no-untyped-def]
    return str(ad.lookup(attr))


def test_request_gpus_alone() -> None:
    ad, _ = job("request_gpus = 1")
    assert ad["RequestGPUs"] == 1 and "RequireGPUs" not in ad
    assert "(TARGET.GPUs >= RequestGPUs)" in text(ad, "Requirements")


def test_require_gpus_counts_matching_devices() -> None:
    ad, _ = job("request_gpus = 2\nrequire_gpus = Capability >= 8.0")
    assert text(ad, "RequireGPUs") == str(ExprTree("Capability >= 8.0"))
    assert "(countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs)" in text(ad, "Requirements")
    assert "TARGET.GPUs >=" not in text(ad, "Requirements")


def test_limits_become_attributes_and_are_folded_into_require_gpus() -> None:
    ad, _ = job("request_gpus = 1\ngpus_minimum_capability = 7.5\ngpus_maximum_capability = 9.0\n"
                "gpus_minimum_memory = 4GB\ngpus_minimum_runtime = 12.1")
    assert (ad["GPUsMinCapability"], ad["GPUsMaxCapability"]) == (7.5, 9.0)
    assert (ad["GPUsMinMemory"], ad["GPUsMinRuntime"]) == (4096, 12010)
    assert text(ad, "RequireGPUs") == ("Capability >= GPUsMinCapability && Capability <= GPUsMaxCapability"
                                       " && GlobalMemoryMb >= GPUsMinMemory"
                                       " && MaxSupportedVersion >= GPUsMinRuntime")
    assert "countMatches(MY.RequireGPUs,TARGET.AvailableGPUs)" in text(ad, "Requirements")


def test_a_limit_on_a_property_the_user_tests_is_left_to_the_user() -> None:
    ad, _ = job("request_gpus = 1\nrequire_gpus = Capability > 6 || DriverVersion >= 12\n"
                "gpus_minimum_capability = 7.0\ngpus_minimum_memory = 2000")
    assert text(ad, "RequireGPUs") == ("(Capability > 6 || DriverVersion >= 12) && "
                                       "GlobalMemoryMb >= GPUsMinMemory")
    assert ad["GPUsMinMemory"] == 2000


def test_gpu_limits_without_a_gpu_request_are_unused() -> None:
    ad, warnings = job("gpus_minimum_capability = 7.0")
    assert "GPUsMinCapability" not in ad and "RequestGPUs" not in ad
    assert any("gpus_minimum_capability" in w and "unused" in w for w in warnings)


@pytest.mark.parametrize(("given", "stored"), [("12", 12000), ("12.1", 12010), ("11.8", 11080),
                                               ("12010", 12010), ("12.100", None), ("cuda", None)])
def test_runtime_versions(given: str, stored: int | None) -> None:
    assert runtime_version(given) == stored


def test_runtime_as_expression() -> None:
    ad, _ = job("request_gpus = 1\ngpus_minimum_runtime = MY.WantedRuntime")
    assert text(ad, "GPUsMinRuntime") == "MY.WantedRuntime"


def test_mistyped_gpu_commands_warn() -> None:
    ad, warnings = job("request_gpu = 1")
    assert "request_gpu is not a valid submit keyword, did you mean request_gpus?" in warnings
    assert "RequestGPUs" not in ad and "Requestgpu" not in ad
    ad, warnings = job("request_gpus = 1\nrequest_gpu_memory = 4000")
    assert "request_gpu_memory is not a submit command, did you mean gpus_minimum_memory?" in warnings
    assert "Requestgpu_memory" not in ad


def test_gpus_sort_among_custom_resources() -> None:
    ad, _ = job("request_gpus = 1\nrequest_cogs = 1\nrequest_Widgets = 2")
    req = text(ad, "Requirements")
    assert req.index("TARGET.cogs") < req.index("TARGET.GPUs") < req.index("TARGET.Widgets")


def test_gpus_keep_their_clause_when_custom_requirements_are_off() -> None:
    settings = SubmitSettings(submit_generate_custom_resource_requirements=False)
    ad, _ = job("request_gpus = 1\nrequest_cogs = 1", settings)
    assert "TARGET.GPUs >= RequestGPUs" in text(ad, "Requirements")
    assert "cogs" not in text(ad, "Requirements")


def test_gpu_memory_missing_units() -> None:
    _, warnings = job("request_gpus = 1\ngpus_minimum_memory = 4000",
                      SubmitSettings(submit_request_missing_units="warn"))
    assert any(w.startswith("gpus_minimum_memory=4000 defaults to megabytes") for w in warnings)
