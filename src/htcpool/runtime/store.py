"""Durable state of the live daemons: SQLite files that survive kill -9, and what they share.

The decision cores hand their state to a store through small protocols: the schedd's job
queue through ``QueueStore`` (``htcpool.schedd.store``), the negotiator's accountant through
``AccountantStore`` (``htcpool.negotiator.records``). The live driver implements both over
SQLite, one file per daemon under the pool's spool directory:

* ``SqliteQueueStore`` (``queue_store``): the jobs in the queue, the history of jobs that left
  (newest first, with constraint and limits), the next cluster id;
* ``SqliteAccountantStore`` (``accountant_store``): the accountant's update time and customer
  records, loaded exactly as ``MemoryStore`` would give them back.

Both come from ``SqliteDatabase`` (``database``): write-ahead logging with ``synchronous=FULL``
so that every call is on disk when it returns, ``batch()`` to make many calls one transaction
(a 10,000-job cluster is one commit), a ``meta`` table for the driver's own values, and a
``problems`` list of the damaged rows a load skipped instead of failing. ``StoreError`` is what
goes wrong: a file that cannot be opened or is not a store, a closed store, a malformed history
constraint.

Typical use, in a schedd driver::

    store = SqliteQueueStore(spool / "job_queue.db")
    jobs, next_cluster = store.load()
    schedd = Schedd(settings, now, store=store, jobs=jobs, next_cluster=next_cluster)
    with store.batch():
        schedd.handle(Submit(owner, ads), now)  # every job and the counter: one durable commit
"""

from htcpool.runtime.accountant_store import SqliteAccountantStore
from htcpool.runtime.database import SqliteDatabase, StoreError, ad_text, parse_ad
from htcpool.runtime.queue_store import SqliteQueueStore

__all__ = [
    "SqliteAccountantStore",
    "SqliteDatabase",
    "SqliteQueueStore",
    "StoreError",
    "ad_text",
    "parse_ad",
]
