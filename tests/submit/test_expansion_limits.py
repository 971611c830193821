"""Submit-side limits (docs/reliability.md): descriptions that ask for unbounded work stop
with a clear error, naming file and line, long before memory runs out."""

from __future__ import annotations

import io
import time

import pytest

from htcpool.cli.submit import DiskFileSystem
from htcpool.config import Config
from htcpool.submit import (
    MemoryFileSystem,
    SubmitError,
    SubmitFileError,
    SubmitHost,
    SubmitSettings,
    settings_from_config,
)
from htcpool.submit import submit_description as describe
from htcpool.submit.limits import MAX_QUEUE_COUNT, InputTooLarge, decode_text, read_limited

HOST = SubmitHost(user="alice", cwd="/tmp", now=1_700_000_000)
HUGE = "9" * 400


def submit(text: str, **kwargs: object) -> object:
    kwargs.setdefault("fs", MemoryFileSystem(files={"/bin/true": "#!"}))
    return describe("executable = /bin/true\n" + text, file="job.sub", host=HOST, **kwargs)  # type: ignore[arg-type]


def refused(text: str, **kwargs: object) -> SubmitFileError:
    start = time.perf_counter()
    with pytest.raises(SubmitFileError) as info:
        submit(text, **kwargs)
    assert time.perf_counter() - start < 5.0
    return info.value


@pytest.mark.parametrize("count", ["1e10", "1e300", "2147483648", "1.0/0", "-1"])
def test_a_queue_count_past_procids_is_refused(count: str) -> None:
    error = refused(f"queue {count}\n")
    assert error.line == 2 and "queue count" in error.message
    assert len(str(error)) < 300


def test_a_count_times_items_past_procids_is_refused() -> None:
    error = refused(f"queue {MAX_QUEUE_COUNT} x in (a b c)\n")
    assert "ProcId is a 32-bit integer" in error.message


def test_max_jobs_per_submission_is_counted_before_building() -> None:
    settings = SubmitSettings(max_jobs_per_submission=100)
    start = time.perf_counter()
    error = refused("queue 2000000000\n", settings=settings)
    assert time.perf_counter() - start < 1.0
    assert "MAX_JOBS_PER_SUBMISSION" in error.message and "2000000000 > 100" in error.message
    # the statements of one description add up
    error = refused("queue 60\nqueue 60\n", settings=settings)
    assert error.line == 3
    assert len(submit("queue 100\n", settings=settings).jobs) == 100  # type: ignore[attr-defined]


def test_the_knob_reaches_the_settings() -> None:
    assert settings_from_config(Config.from_text("").get_str).max_jobs_per_submission == 20000
    knob = Config.from_text("MAX_JOBS_PER_SUBMISSION = 7")
    assert settings_from_config(knob.get_str).max_jobs_per_submission == 7


def test_include_of_an_endless_file_is_refused() -> None:
    error = refused("include : /dev/zero\nqueue\n", fs=DiskFileSystem())
    assert error.line == 2 and "/dev/zero" in error.message and "MiB" in error.message


def test_queue_from_an_endless_file_is_refused() -> None:
    error = refused("queue x from /dev/zero\n", fs=DiskFileSystem())
    assert error.line == 2 and "/dev/zero" in error.message


def test_a_huge_request_is_refused_by_name() -> None:
    error = refused(f"request_memory = {HUGE}\nqueue\n")
    assert error.command == "request_memory" and "too large" in error.message
    assert HUGE not in str(error)
    error = refused(f"request_gpus = 1\ngpus_minimum_memory = {HUGE}\nqueue\n")
    assert error.command == "gpus_minimum_memory"


def test_a_huge_factory_limit_is_refused() -> None:
    error = refused(f"max_materialize = {HUGE}\nqueue 10\n", allow_factory=True)
    assert error.command == "max_materialize" and "out of range" in error.message
    assert HUGE not in str(error)


def test_read_limited_stops_at_the_limit() -> None:
    assert read_limited(io.BytesIO(b"abc"), "f", limit=3) == b"abc"
    with pytest.raises(InputTooLarge, match="f is larger"):
        read_limited(io.BytesIO(b"abcd"), "f", limit=3)


@pytest.mark.parametrize(("data", "words"), [
    (b"a = 1\nb = \xff\n", ("line 2", "UTF-8", "0xff")),
    (b"a = 1\n\nb = x\x00y\n", ("line 3", "NUL")),
])
def test_text_that_is_not_text_is_refused(data: bytes, words: tuple[str, ...]) -> None:
    with pytest.raises(SubmitError) as info:
        decode_text(data, "job.sub")
    for word in words:
        assert word in str(info.value)


def test_ordinary_descriptions_still_work() -> None:
    result = submit("queue 3 x in (a b)\n", settings=SubmitSettings(max_jobs_per_submission=6))
    assert [ad["ProcId"] for ad in result.jobs] == list(range(6))  # type: ignore[attr-defined]
