"""The schedd's job queue and history on disk: the schedd core's ``QueueStore`` over SQLite.

Tables (besides ``meta``, see ``database``):

* ``jobs (cluster, proc, ad)``: one row per job in the queue, keyed by its id; ``save_job``
  replaces the row, ``delete_job`` removes it.
* ``history (seq, cluster, proc, ad)``: the ads of jobs that left, ``seq`` growing with every
  ``append_history``, so newest first is ``seq`` descending. Cluster and proc are copied out of
  the ad (``ClusterId``/``ProcId``) when it has them.
* ``counters (name, value)``: ``next_cluster``.

Every call is durable when it returns; wrap a submission of many jobs in ``batch()`` so that the
whole cluster is one transaction and one sync (and either all of it or none of it is kept).

``load()`` returns the queue and the next cluster id. A job row that does not read back is
skipped and reported in ``problems``. The next cluster id is never below one more than the
highest cluster in the queue or the history, so a crash between saving the jobs of a cluster
and saving the counter cannot make a later submission reuse the id.

``history(constraint, limit, match_ads, scan_limit)`` reads newest first and stops as soon as it
has enough: ``limit`` and ``match_ads`` (condor_history's ``-limit`` and ``-match``, which are
the same option) cap the ads returned, ``scan_limit`` (``-scanlimit``) the ads examined. The
constraint is ClassAd text evaluated with each ad as ``MY`` in the caller's ``context`` (the
schedd passes the clock of the query, so ``CompletionDate > time() - 3600`` works); an ad counts
when the result is ``true`` or a non-zero number, as in HTCondor, and not when the constraint
cannot be evaluated for it (without a clock, one that reads the time selects nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, ClassAdParseError, EvalContext, ExprTree
from htcpool.classad.operators import bool_equiv
from htcpool.runtime.database import READ_ERRORS, SqliteDatabase, StoreError, ad_text, parse_ad
from htcpool.schedd.store import JobId

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS jobs ("
    " cluster INTEGER NOT NULL, proc INTEGER NOT NULL, ad TEXT NOT NULL,"
    " PRIMARY KEY (cluster, proc)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS history ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, cluster INTEGER, proc INTEGER, ad TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
)


def _int_attr(ad: ClassAd, name: str) -> int | None:
    """An integer attribute the schedd wrote (``ClusterId``, ``ProcId``); None otherwise."""
    try:
        value = ad.evaluate(name)
    except ClassAdError:  # not the schedd's literal: the row is kept without the column
        return None
    return value if type(value) is int else None


def compile_constraint(constraint: str) -> ExprTree:
    """Parse a constraint, turning a parse error into a ``StoreError`` that quotes it."""
    try:
        return ExprTree(constraint)
    except ClassAdParseError as e:
        raise StoreError(
            f"constraint {constraint!r} is not a ClassAd expression: "
            f"column {e.column}: {e.reason}\n{e.excerpt()}"
        ) from None


class SqliteQueueStore(SqliteDatabase):
    """A ``QueueStore`` kept in one SQLite file (created with its tables when missing)."""

    _schema = _SCHEMA

    # ------------------------------------------------------------------ QueueStore
    def save_job(self, job_id: JobId, ad: ClassAd) -> None:
        cluster, proc = job_id
        self.connection.execute(
            "INSERT OR REPLACE INTO jobs (cluster, proc, ad) VALUES (?, ?, ?)",
            (cluster, proc, ad_text(ad)),
        )

    def delete_job(self, job_id: JobId) -> None:
        self.connection.execute("DELETE FROM jobs WHERE cluster = ? AND proc = ?", job_id)

    def append_history(self, ad: ClassAd) -> None:
        self.connection.execute(
            "INSERT INTO history (cluster, proc, ad) VALUES (?, ?, ?)",
            (_int_attr(ad, "ClusterId"), _int_attr(ad, "ProcId"), ad_text(ad)),
        )

    def save_next_cluster(self, cluster_id: int) -> None:
        self.connection.execute(
            "INSERT INTO counters (name, value) VALUES ('next_cluster', ?) "
            "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (int(cluster_id),),
        )

    # ------------------------------------------------------------------ loading
    def load(self) -> tuple[dict[JobId, ClassAd], int]:
        """The jobs in the queue (by id, in id order) and the next cluster id to hand out."""
        conn = self.connection
        jobs: dict[JobId, ClassAd] = {}
        rows = conn.execute("SELECT cluster, proc, ad FROM jobs ORDER BY cluster, proc")
        for cluster, proc, text in rows:
            try:
                jobs[(cluster, proc)] = parse_ad(text)
            except READ_ERRORS as e:
                self.report(f"jobs: job {cluster}.{proc} skipped: {e}")
        row = conn.execute("SELECT value FROM counters WHERE name = 'next_cluster'").fetchone()
        stored = int(row[0]) if row is not None else 1
        highest = conn.execute(
            "SELECT MAX(m) FROM (SELECT MAX(cluster) AS m FROM jobs"
            " UNION ALL SELECT MAX(cluster) FROM history)"
        ).fetchone()[0]
        next_cluster = stored
        if highest is not None and highest >= stored:
            next_cluster = highest + 1
            self.report(
                f"counters: next cluster {stored} is not above cluster {highest} "
                f"already used; continuing at {next_cluster}"
            )
        return jobs, max(next_cluster, 1)

    def job_count(self) -> int:
        return int(self.connection.execute("SELECT COUNT(*) FROM jobs").fetchone()[0])

    # ------------------------------------------------------------------ history
    def history_count(self) -> int:
        return int(self.connection.execute("SELECT COUNT(*) FROM history").fetchone()[0])

    def _history_rows(self) -> Iterator[tuple[int, str]]:
        cursor = self.connection.execute("SELECT seq, ad FROM history ORDER BY seq DESC")
        while True:
            rows = cursor.fetchmany(256)
            if not rows:
                return
            yield from rows

    def history(
        self,
        constraint: str | None = None,
        limit: int | None = None,
        match_ads: int | None = None,
        *,
        scan_limit: int | None = None,
        context: EvalContext | None = None,
    ) -> list[ClassAd]:
        """Ads of jobs that left the queue, newest first (see the module docstring)."""
        expr = compile_constraint(constraint) if constraint and constraint.strip() else None
        caps = [n for n in (limit, match_ads) if n is not None and n >= 0]
        wanted = min(caps) if caps else None
        out: list[ClassAd] = []
        if wanted == 0:
            return out
        scanned = 0
        for seq, text in self._history_rows():
            if scan_limit is not None and scanned >= scan_limit:
                break
            scanned += 1
            try:
                ad = parse_ad(text)
            except READ_ERRORS as e:
                self.report(f"history: entry {seq} skipped: {e}")
                continue
            if expr is not None and not _holds(expr, ad, context):
                continue
            out.append(ad)
            if wanted is not None and len(out) >= wanted:
                break
        return out


def _holds(expr: ExprTree, ad: ClassAd, context: EvalContext | None) -> bool:
    try:
        value: Any = expr.evaluate(ad, None, context)
    except ClassAdError:  # an evaluation that cannot complete selects nothing
        return False
    return bool_equiv(value) is True
