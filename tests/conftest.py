"""Suite-wide: tests that compare with the project's shared material (goldens, seeds, reference)
are skipped, with the reason, when ``../shared`` is not beside the repository.

HTCondor's own ``htcondor2`` (the test-only reference) sets ``CONDOR_CONFIG=/dev/null`` in the
process that first imports it when none is set. htcpool's tools honour ``CONDOR_CONFIG`` as
HTCondor's do, so a tool run in-process later in the same test worker would read that. The
reference is therefore imported here once, before any test, and the variable put back as it was.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from tests.shared import SHARED

_USES_SHARED = ("tests.shared", "golden_pool", "import GOLDEN")

# Pools the suite starts as root run their jobs as root, as before the system pool: the tests
# submit as made-up owners into root's private temporary directories. The tests of the system
# pool (tests/e2e/test_system_pool.py) start theirs without this (docs/security.md). Set before
# the reference is imported, so that it reads the same configuration as htcpool.
if os.geteuid() == 0:
    os.environ.setdefault("_CONDOR_DISABLE_SETUID", "True")


def _import_the_reference_without_its_environment() -> None:
    before = os.environ.get("CONDOR_CONFIG")
    with contextlib.suppress(ImportError):
        import htcondor2  # noqa: F401
    if before is None:
        os.environ.pop("CONDOR_CONFIG", None)
    else:
        os.environ["CONDOR_CONFIG"] = before


_import_the_reference_without_its_environment()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SHARED.is_dir():
        return
    skip = pytest.mark.skip(reason=f"the shared goldens and references are not at {SHARED}")
    uses: dict[Path, bool] = {}
    for item in items:
        path = Path(str(item.fspath))
        if path not in uses:
            uses[path] = any(word in path.read_text() for word in _USES_SHARED)
        if uses[path]:
            item.add_marker(skip)
