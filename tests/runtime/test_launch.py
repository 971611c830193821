"""launch_spec: from job ads to launch descriptions, without running anything."""

from __future__ import annotations

import json
import signal

import pytest

from htcpool.classad import ClassAd, ExprTree, parseOne
from htcpool.runtime.launch import LaunchError, LaunchSpec, canonical_signal, launch_spec

SCRATCH = "/var/execute/dir_1"
NOW = 1_800_000_000.0


def job(**attrs: object) -> ClassAd:
    ad = ClassAd({"Cmd": "/bin/true", "Iwd": "/home/alice/run"})
    for name, value in attrs.items():
        ad[name] = value
    return ad


def spec_of(ad: ClassAd, extra_env: dict[str, str] | None = None) -> LaunchSpec:
    return launch_spec(ad, SCRATCH, "slot1_1", extra_env or {}, now=NOW)


def test_new_syntax_arguments_keep_quoted_words() -> None:
    spec = spec_of(job(Arguments="-n 'two words' it''s \"\"q\"\""))
    assert spec.arguments == ("-n", "two words", "its", '"q"')


def test_old_syntax_arguments_split_on_white_space() -> None:
    assert spec_of(job(Args="a  b\tc")).arguments == ("a", "b", "c")


def test_new_syntax_wins_over_old() -> None:
    assert spec_of(job(Args="old", Arguments="new one")).arguments == ("new", "one")


def test_no_arguments() -> None:
    assert spec_of(job()).arguments == ()


def test_environment_new_syntax() -> None:
    env = spec_of(job(Environment="A=1 B='x y' C=")).environment
    assert (env["A"], env["B"], env["C"]) == ("1", "x y", "")


def test_environment_old_syntax() -> None:
    env = spec_of(job(Env="A=1;B=two words ; C=3")).environment
    assert (env["A"], env["B"], env["C"]) == ("1", "two words", "3")


def test_condor_variables_cannot_be_overridden() -> None:
    ad = job(Environment="_CONDOR_SLOT=fake FOO=ad")
    env = spec_of(ad, {"FOO": "extra", "BAR": "b"}).environment
    assert env["_CONDOR_SLOT"] == "slot1_1"
    assert env["_CONDOR_SCRATCH_DIR"] == SCRATCH == env["TMPDIR"]
    assert env["_CONDOR_JOB_AD"] == SCRATCH + "/.job.ad"
    assert (env["FOO"], env["BAR"]) == ("extra", "b")
    assert set(env) == {"_CONDOR_SLOT", "_CONDOR_SCRATCH_DIR", "_CONDOR_JOB_AD", "TMPDIR", "FOO", "BAR"}


def test_paths_resolve_against_iwd() -> None:
    spec = spec_of(job(Cmd="bin/sim", In="in.dat", Out="/abs/out", Err="/dev/null"))
    assert spec.executable == "/home/alice/run/bin/sim"
    assert spec.stdin == "/home/alice/run/in.dat"
    assert spec.stdout == "/abs/out"
    assert spec.stderr == "/dev/null"
    assert spec.cwd == SCRATCH and spec.output_destination == "/home/alice/run"


def test_streams_default_to_dev_null() -> None:
    spec = spec_of(job())
    assert (spec.stdin, spec.stdout, spec.stderr) == ("/dev/null",) * 3


@pytest.mark.parametrize("given, name", [
    ("SIGTERM", "SIGTERM"), ("usr1", "SIGUSR1"), ("9", "SIGKILL"), (2, "SIGINT"), ("SIGQUIT", "SIGQUIT"),
])
def test_kill_signal_forms(given: object, name: str) -> None:
    spec = spec_of(job(KillSig=given))
    assert spec.kill_sig == name
    assert spec.kill_signal == int(signal.Signals[name])


def test_kill_signal_defaults_to_sigterm() -> None:
    assert spec_of(job()).kill_sig == "SIGTERM"


def test_unknown_kill_signal_is_rejected() -> None:
    with pytest.raises(LaunchError, match="unknown signal"):
        spec_of(job(KillSig="SIGNOPE"))
    with pytest.raises(LaunchError):
        canonical_signal(999)


def test_transfer_lists() -> None:
    spec = spec_of(job(ShouldTransferFiles="YES", TransferInput="a.txt, /data/b ,sub/c,dir/",
                       TransferOutput="result.txt,plots"))
    assert spec.transfer_input == ("/home/alice/run/a.txt", "/data/b", "/home/alice/run/sub/c",
                                   "/home/alice/run/dir/")
    assert spec.transfer_output == ("result.txt", "plots")
    assert not spec.transfer_new_files


@pytest.mark.parametrize("mode", ["YES", "IF_NEEDED"])
def test_without_transfer_output_new_files_go_back(mode: str) -> None:
    spec = spec_of(job(ShouldTransferFiles=mode))
    assert spec.transfer_new_files and spec.transfer_output == ()


def test_empty_transfer_output_means_nothing_back() -> None:
    spec = spec_of(job(ShouldTransferFiles="YES", TransferOutput=""))
    assert not spec.transfer_new_files and spec.transfer_output == ()


def test_shared_file_system_runs_in_iwd_without_transfer() -> None:
    spec = spec_of(job(ShouldTransferFiles="NO", TransferInput="a", TransferOutput="b"))
    assert spec.cwd == "/home/alice/run"
    assert spec.transfer_input == () and spec.transfer_output == () and not spec.transfer_new_files


def test_missing_cmd_is_a_launch_error() -> None:
    with pytest.raises(LaunchError, match="no Cmd"):
        spec_of(ClassAd({"Iwd": "/tmp"}))


@pytest.mark.parametrize("attrs", [{"Arguments": "'unbalanced"}, {"Environment": "A=1 'B"},
                                   {"Environment": "NOEQUALS"}, {"Env": "=1"}])
def test_unparsable_arguments_or_environment(attrs: dict[str, str]) -> None:
    with pytest.raises(LaunchError):
        spec_of(job(**attrs))


def test_launch_error_is_a_value_error() -> None:
    assert issubclass(LaunchError, ValueError)


def test_json_round_trip() -> None:
    spec = spec_of(job(Arguments="a 'b c'", Environment="X=1", KillSig="SIGUSR1",
                       TransferInput="in", ShouldTransferFiles="YES"))
    text = json.dumps(spec.to_json())
    assert LaunchSpec.from_json(json.loads(text)) == spec
    assert LaunchSpec.from_json(text) == spec


@pytest.mark.parametrize("data", ['{"cwd": "/"}', "[1, 2]", "not json", '{"executable": "x"}'])
def test_malformed_json_is_a_launch_error(data: str) -> None:
    with pytest.raises(LaunchError):
        LaunchSpec.from_json(data)


def test_job_ad_text_is_the_old_form_of_the_ad() -> None:
    ad = job(ClusterId=4, ProcId=2, Arguments="x")
    again = parseOne(spec_of(ad).job_ad_text)
    assert again["ClusterId"] == 4 and again["Cmd"] == "/bin/true" and again["Arguments"] == "x"


def test_attributes_that_read_the_time_see_the_launch_time() -> None:
    spec = spec_of(job(Arguments=ExprTree('strcat("--at ", time())'), Out=ExprTree('strcat("out.", CurrentTime)')))
    assert spec.arguments == ("--at", "1800000000")
    assert spec.stdout == "/home/alice/run/out.1800000000"
