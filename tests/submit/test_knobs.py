"""condor_submit's configuration knobs (admin manual, "condor_submit Configuration File Entries").

Each knob is read by ``settings_from_config`` under HTCondor's name and changes the job ad
as condor_submit 25 does (src/condor_utils/submit_utils.cpp in HTCondor was the reference for
the order of precedence: the submit file's command, then an attribute SUBMIT_ATTRS put in,
then the knob's default).
"""

from __future__ import annotations

import pytest

from htcpool.classad import ExprTree
from htcpool.submit import (
    MemoryFileSystem,
    SubmitFileError,
    SubmitHost,
    settings_from_config,
    submit_description,
)
from htcpool.submit.settings import knob_name

HOST = SubmitHost(user="alice", cwd="/home/alice", now=1_700_000_000)
FS = MemoryFileSystem(sizes={"/bin/true": 35 * 1024})
JOB = "executable = /bin/true\n"


def ad_with(config: dict[str, str], text: str = JOB + "queue\n"):  # type: ignore[no-untyped-def]
    result = submit_description(text, file="t.sub", host=HOST, fs=FS,
                                settings=settings_from_config(config.get))
    return result.jobs[0], result.warnings


def expr(ad, attr: str) -> str:  # type: ignore[no-untyped-def]
    return str(ad.lookup(attr))


def test_the_request_defaults_are_read_under_htcondors_names() -> None:
    assert knob_name("job_default_request_cpus") == "JOB_DEFAULT_REQUESTCPUS"
    ad, _ = ad_with({"JOB_DEFAULT_REQUESTCPUS": "4", "JOB_DEFAULT_REQUESTMEMORY": "2G",
                     "JOB_DEFAULT_REQUESTDISK": "3M"})
    assert (ad["RequestCpus"], ad["RequestMemory"], ad["RequestDisk"]) == (4, 2048, 3072)
    assert "(TARGET.Cpus >= RequestCpus)" in expr(ad, "Requirements")
    # the file's commands win over the defaults
    ad, _ = ad_with({"JOB_DEFAULT_REQUESTCPUS": "4"}, JOB + "request_cpus = 2\nqueue\n")
    assert ad["RequestCpus"] == 2
    # the old misspelling is not a knob
    ad, _ = ad_with({"JOB_DEFAULT_REQUEST_CPUS": "4"})
    assert ad["RequestCpus"] == 1


def test_a_gpu_default_makes_a_gpu_request() -> None:
    ad, _ = ad_with({"JOB_DEFAULT_REQUESTGPUS": "1"})
    assert ad["RequestGPUs"] == 1
    assert "(TARGET.GPUs >= RequestGPUs)" in expr(ad, "Requirements")


def test_submit_attrs_are_defaults_and_plus_names_are_forced() -> None:
    config = {"SUBMIT_ATTRS": "Experiment, +Site", "SUBMIT_EXPRS": "Tier", "Experiment": '"cms"',
              "Site": '"unl"', "Tier": "2"}
    ad, _ = ad_with(config, JOB + '+Experiment = "atlas"\nqueue\n')
    assert (ad["Experiment"], ad["Site"], ad["Tier"]) == ("atlas", "unl", 2)
    ad, _ = ad_with(config)
    assert ad["Experiment"] == "cms"
    # a SUBMIT_ATTRS value that is not an expression is left out, with a warning naming it
    ad, warnings = ad_with({"SUBMIT_ATTRS": "Group", "Group": "physics dept"})
    assert "Group" not in ad and any("SUBMIT_ATTRS names Group" in w for w in warnings)


def test_submit_attrs_can_supply_a_request_the_default_does_not_override() -> None:
    ad, _ = ad_with({"SUBMIT_ATTRS": "RequestMemory", "RequestMemory": "512"})
    assert ad["RequestMemory"] == 512


def test_notification_default_and_start() -> None:
    ad, _ = ad_with({"JOB_DEFAULT_NOTIFICATION": "Complete"})
    assert ad["JobNotification"] == 2
    ad, _ = ad_with({}, JOB + "notification = start\nqueue\n")
    assert ad["JobNotification"] == 4


def test_default_should_transfer_files() -> None:
    ad, _ = ad_with({"SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES": "YES"})
    assert ad["ShouldTransferFiles"] == "YES" and "(TARGET.HasFileTransfer)" in expr(ad, "Requirements")
    ad, _ = ad_with({"SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES": "sometimes"})  # invalid: ignored
    assert ad["ShouldTransferFiles"] == "IF_NEEDED"


def test_append_and_default_rank_fall_back_to_the_generic_knobs() -> None:
    ad, _ = ad_with({"DEFAULT_RANK": "Mips", "APPEND_RANK": "KFlops"})
    assert expr(ad, "Rank") == "(Mips) + (KFlops)"
    ad, _ = ad_with({"DEFAULT_RANK": "Mips", "DEFAULT_RANK_VANILLA": "Memory"})
    assert expr(ad, "Rank") == "Memory"
    ad, _ = ad_with({"APPEND_REQUIREMENTS": "TARGET.HasBig", "APPEND_REQ_VANILLA": "TARGET.HasSmall"})
    assert expr(ad, "Requirements").startswith("(TARGET.HasSmall) && ")


def test_lease_duration_default() -> None:
    ad, _ = ad_with({"JOB_DEFAULT_LEASE_DURATION": "600"})
    assert ad["JobLeaseDuration"] == 600


def test_missing_units_warn_or_refuse() -> None:
    text = JOB + "request_memory = 100\nqueue\n"
    _, warnings = ad_with({"SUBMIT_REQUEST_MISSING_UNITS": "warn"}, text)
    assert "request_memory=100 defaults to megabytes, but should contain a units suffix " \
           "(i.e K, M, G or T)" in warnings
    with pytest.raises(SubmitFileError, match="must contain a units suffix"):
        ad_with({"SUBMIT_REQUEST_MISSING_UNITS": "error"}, text)
    _, warnings = ad_with({"SUBMIT_REQUEST_MISSING_UNITS": "warn"}, JOB + "request_memory = 1G\nqueue\n")
    assert not any("units" in w for w in warnings)


def test_getenv_may_be_forbidden() -> None:
    with pytest.raises(SubmitFileError, match="SUBMIT_ALLOW_GETENV = false"):
        ad_with({"SUBMIT_ALLOW_GETENV": "false"}, JOB + "getenv = true\nqueue\n")
    ad, _ = ad_with({"SUBMIT_ALLOW_GETENV": "false"}, JOB + "getenv = HOME\nqueue\n")
    assert ad["JobUniverse"] == 5


def test_unused_line_warnings_may_be_turned_off() -> None:
    text = JOB + "typo_command = 1\nqueue\n"
    assert any("Is it a typo?" in w for w in ad_with({}, text)[1])
    assert ad_with({"WARN_ON_UNUSED_SUBMIT_FILE_MACROS": "false"}, text)[1] == []


def test_a_malformed_knob_is_named() -> None:
    with pytest.raises(ValueError, match="SUBMIT_ALLOW_GETENV must be a boolean"):
        settings_from_config({"SUBMIT_ALLOW_GETENV": "perhaps"}.get)
    with pytest.raises(ValueError, match="SCHEDD_INTERVAL must be an integer"):
        settings_from_config({"SCHEDD_INTERVAL": "often"}.get)


def test_requirements_parse_after_every_knob() -> None:
    ad, _ = ad_with({"APPEND_REQUIREMENTS": "TARGET.HasBig", "JOB_DEFAULT_REQUESTGPUS": "2"})
    assert ExprTree(expr(ad, "Requirements"))  # parses back
