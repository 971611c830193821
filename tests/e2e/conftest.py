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
    for pool in pools:
        pool.stop("fast")
