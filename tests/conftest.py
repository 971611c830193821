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

#: directories of the tests that spend most of their time waiting on live daemons
_LIVE = ("e2e", "faults")
_WIDE_SCOPES = ("module", "class", "package", "session")


def _live_block(item: pytest.Item) -> str | None:
    """The block a live-pool test travels in: its module when one of its fixtures outlives a
    test (moving its tests apart would start that fixture again), else the test alone; None for a
    test that keeps a core busy."""
    parts = item.nodeid.split("::", 1)[0].split("/")  # relative to the repository: tests/<dir>/…
    if len(parts) < 3 or parts[0] != "tests" or parts[1] not in _LIVE:
        return None
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    wide = any(d.scope in _WIDE_SCOPES for ds in defs for d in ds if d.baseid)
    return str(item.fspath) if wide else item.nodeid


def spread_live_tests(items: list[pytest.Item], workers: int = 1) -> list[pytest.Item]:
    """The tests in an order that spreads the live-pool tests evenly among the others.

    A live-pool test spends most of its time waiting on its daemons, the others keep a core
    busy. In collection order the live tests come as one run of some 150 tests (``tests/e2e``),
    and pytest-xdist's workers, handed out contiguous shares of the list, all end up waiting on
    pools at the same time near the end of the run, the cores idle. Spread out, every worker
    alternates waiting and computing. The live tests marked ``long`` (a minute or more) open the
    ``workers`` shares, taken in turn, so that none of them starts late and keeps the last worker
    waiting at the end. The order within each kind is kept otherwise."""
    blocks: dict[str, list[pytest.Item]] = {}
    busy: list[pytest.Item] = []
    for item in items:
        key = _live_block(item)
        if key is None:
            busy.append(item)
        else:
            blocks.setdefault(key, []).append(item)
    if not blocks or not busy:
        return items
    long = [b for b in blocks.values() if any(i.get_closest_marker("long") for i in b)]
    rest = [b for b in blocks.values() if b not in long]
    step = len(busy) / max(1, len(rest))
    spread: list[pytest.Item] = []
    for i, block in enumerate(rest):
        spread.extend(busy[round(i * step):round((i + 1) * step)])
        spread.extend(block)
    spread.extend(busy[round(len(rest) * step):])
    share = len(spread) / workers
    ordered: list[pytest.Item] = []
    for k in range(workers):
        for block in long[k::workers]:
            ordered.extend(block)
        ordered.extend(spread[round(k * share):round((k + 1) * share)])
    return ordered


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # pytest-xdist tells each worker how many there are; a run without it is one worker
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    items[:] = spread_live_tests(items, workers)
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
