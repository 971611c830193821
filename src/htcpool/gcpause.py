"""Holding Python's cyclic garbage collector off while many objects are made at once.

A 10,000-job cluster is tens of thousands of new ClassAds, tables and expression nodes, and no
reference cycles. Left alone, the collector starts a pass every 700 new objects and, as the
younger generations fill, walks every object of the process again, the whole job queue of a
schedd included: about half of the time of a large submit (docs/performance.md, "Submit and
schedd"). ``paused_gc()`` holds it off for such a block; afterwards it runs as usual and catches
up once. Pauses nest (the inner one does nothing), and a block that raises still re-enables it.
The submit language, the protocol codec, the schedd's queue and its service use it for runs of
at least ``LARGE_RUN`` ads.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: runs of at least this many ads are made with the collector held off
LARGE_RUN = 1000


@contextmanager
def paused_gc() -> Iterator[None]:
    """Hold the cyclic garbage collector off for the block (a no-op when it is off already)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


__all__ = ["LARGE_RUN", "paused_gc"]
