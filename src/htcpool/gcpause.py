"""Holding Python's cyclic garbage collector off while many objects are made at once.

A 10,000-job cluster is tens of thousands of new ClassAds, tables and expression nodes, and no
reference cycles. Left alone, the collector starts a pass every 700 new objects and, as the
younger generations fill, walks every object of the process again, the whole job queue of a
schedd included: about half of the time of a large submit (docs/performance.md, "Submit and
schedd"). ``paused_gc()`` holds it off for such a block. On the way out it hands every object
alive at that point to the oldest generation (``gc.freeze`` then ``gc.unfreeze``: the module's
manual calls the pair a move to the oldest generation) before turning the collector back on, so
the young generation it re-enables on is empty: the new ads, which survive the block, are looked
at by the next full collection (as they would be after two younger ones) instead of by an
immediate catch-up pass over all of them. Cyclic garbage made before or during the block is
still collected, by that full collection. Pauses nest (the inner one does nothing), and a block that raises still re-enables it.
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
        gc.freeze()  # everything alive now to the permanent generation,
        gc.unfreeze()  # and from there to the oldest one: nothing young is left to catch up on
        gc.enable()


__all__ = ["LARGE_RUN", "paused_gc"]
