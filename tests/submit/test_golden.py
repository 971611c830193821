"""``htcpool submit -dry-run`` against HTCondor's own output, byte for byte (stdout and stderr)."""

from __future__ import annotations

import re

import pytest

from htcpool.submit import format_dry_run, submit_description
from tests.submit.conftest import GOLDEN, golden_fs, golden_host

CASES = sorted(p.stem for p in GOLDEN.glob("*.sub"))


def test_all_goldens_present() -> None:
    assert len(CASES) == 30


@pytest.mark.parametrize("name", CASES)
def test_dry_run_matches_condor_submit(name: str) -> None:
    expected = (GOLDEN / f"{name}.out").read_text()
    expected_err = (GOLDEN / f"{name}.err").read_text()
    qdate = int(re.search(r"^QDate=(\d+)$", expected, re.M).group(1))  # type: ignore[union-attr]
    result = submit_description((GOLDEN / f"{name}.sub").read_text(), file=f"{name}.sub",
                                host=golden_host(qdate), fs=golden_fs())
    assert format_dry_run(result.jobs, result.cluster_id) == expected
    assert "".join(f"WARNING: {w}\n" for w in result.warnings) == expected_err
