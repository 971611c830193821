"""Suite-wide: tests that compare with the project's shared material (goldens, seeds, reference)
are skipped, with the reason, when ``../shared`` is not beside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared import SHARED

_USES_SHARED = ("tests.shared", "golden_pool", "import GOLDEN")


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
