"""Fixtures for the end-to-end tests: each test gets its own live pool, stopped afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.pool import LivePool


@pytest.fixture
def make_pool(tmp_path: Path) -> Iterator[object]:
    pools: list[LivePool] = []

    def make(extra_config: str = "") -> LivePool:
        pool = LivePool(tmp_path / f"p{len(pools)}", extra_config)
        pools.append(pool)
        pool.start()
        return pool

    yield make
    failures = []
    for pool in pools:  # every pool is stopped, even after one of them failed to stop
        try:
            pool.stop("fast")
        except Exception as e:  # reported once all are down
            failures.append(f"{pool.layout.root}: {e!r}")
    assert not failures, f"pools that did not stop: {failures}"
