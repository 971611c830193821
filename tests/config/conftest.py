"""Fixtures for the configuration tests: HTCondor's reader in a child process."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from tests.config.reference_reader import ReferenceReader


@pytest.fixture(scope="session")
def reference() -> Iterator[ReferenceReader]:
    """One HTCondor reader child per test worker (skips when htcondor is missing)."""
    try:
        found = importlib.util.find_spec("htcondor2") is not None
    except ImportError:  # a finder that answers "not here" by raising
        found = False
    if not found:
        pytest.skip("the htcondor package (the reference reader) is not installed")
    reader = ReferenceReader()
    yield reader
    reader.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the ``slow`` tests out unless they are asked for with ``-m slow``."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
