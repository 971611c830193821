"""HTCondor's own ``htcondor2`` and ``classad2`` (the test-only ``htcondor`` package), when installed."""

from __future__ import annotations

from typing import Any

import pytest

try:
    import classad2 as real_classad2
    import htcondor2 as real_htcondor2
except ImportError:  # pragma: no cover - depends on the environment
    real_classad2 = None
    real_htcondor2 = None

requires_reference = pytest.mark.skipif(real_htcondor2 is None,
                                        reason="HTCondor's htcondor2 is not installed")


def plain(value: Any) -> Any:
    """A value of either library as plain Python, so the two compare with ``==``."""
    if isinstance(value, dict) or (hasattr(value, "keys") and hasattr(value, "printOld")):
        return {str(k).lower(): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    kind = type(value).__name__
    if kind == "Value":
        return f"<{value.name}>"
    if kind == "ExprTree":
        return f"expr:{value}"
    return value
