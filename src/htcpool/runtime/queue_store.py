"""The schedd's job queue and history on disk: the schedd core's ``QueueStore`` over SQLite.

Tables (besides ``meta``, see ``database``):

* ``clusters (cluster, ad)``: the ad every job of a cluster is stored against, as HTCondor's
  queue keeps a cluster ad that its proc ads chain to: the first ad saved of the cluster.
* ``jobs (cluster, proc, ad, base)``: one row per job in the queue, keyed by its id; ``save_job``
  replaces the row, ``delete_job`` removes it (and the cluster's row with its last job). With
  ``base = 1`` the row holds only the attributes whose expressions differ from the cluster's
  ad (``htcpool.protocol.adchanges``: the same expression object or an equal plain
  literal counts as unchanged), so a 10,000-job cluster is one ad and 10,000 rows of
  ``[ ]`` (a job's ``ProcId`` is stored only when it is not the row's ``proc``); a job that lacks one of the cluster ad's attributes, or spells one
  differently, is stored whole (``base = 0``, as every row of a file from before the column).
  ``save_copies`` writes the copies of a cluster's proc 0 (which the schedd's admission has
  told apart) as ``[ ]`` rows without comparing each, when proc 0 is the cluster ad.
* ``history (seq, cluster, proc, ad)``: the ads of jobs that left, ``seq`` growing with every
  ``append_history``, so newest first is ``seq`` descending. Cluster and proc are copied out of
  the ad (``ClusterId``/``ProcId``) when it has them.
* ``counters (name, value)``: ``next_cluster``.
* ``factories (cluster, state)``: one row per late-materialization factory, its state as the
  core hands it (JSON: limits, next proc, the recipe); ``load_factories`` reads them back.

Every call is durable when it returns; wrap a submission of many jobs in ``batch()`` so that the
whole cluster is one transaction and one sync (and either all of it or none of it is kept).
Inside a batch the job rows are held back and written with one ``executemany`` before the
commit (or before any other statement on the table, so the order of changes holds).

``load()`` returns the queue and the next cluster id; the jobs of a cluster share the
expressions of its cluster ad, as they did when submitted. A job row that does not read back
(or whose cluster ad does not) is skipped and reported in ``problems``. The next cluster id is never below one more than the
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

import json
import sqlite3
from collections.abc import Iterator
from os import PathLike
from typing import Any

from htcpool.classad import ClassAd, ClassAdError, ClassAdParseError, EvalContext, ExprTree
from htcpool.classad.operators import bool_equiv
from htcpool.protocol.adchanges import ClusterShape, job_changes, job_from_changes
from htcpool.runtime.database import READ_ERRORS, SqliteDatabase, StoreError, ad_text, parse_ad
from htcpool.schedd.store import JobId

_NO_CHANGES = "[ ]"  # the row of a job that is its cluster ad but for its ProcId
_UNCHANGED = (_NO_CHANGES, 1)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS jobs ("
    " cluster INTEGER NOT NULL, proc INTEGER NOT NULL, ad TEXT NOT NULL,"
    " base INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (cluster, proc)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS clusters (cluster INTEGER PRIMARY KEY, ad TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS history ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, cluster INTEGER, proc INTEGER, ad TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS factories (cluster INTEGER PRIMARY KEY, state TEXT NOT NULL)",
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
    _schema_version = 2  # 2: cluster ads and jobs stored as their changes (``jobs.base``)

    def __init__(self, path: str | PathLike[str]) -> None:
        #: the cluster ad of each cluster with jobs in the queue, and the procs it has
        self._bases: dict[int, ClassAd] = {}
        self._shapes: dict[int, ClusterShape] = {}  # of the cluster ads, made when first compared with
        self._procs: dict[int, set[int]] = {}
        self._pending: list[tuple[int, int, str, int]] = []  # job rows held back in a batch
        self._new_bases: list[tuple[int, str]] = []
        self._undo: list[tuple[int, int | None, ClassAd | None]] = []  # see _after_rollback
        super().__init__(path)

    def _upgrade(self, conn: sqlite3.Connection) -> None:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
        if "base" not in columns:  # a file of schema 1: every row is a whole ad
            conn.execute("ALTER TABLE jobs ADD COLUMN base INTEGER NOT NULL DEFAULT 0")

    # ------------------------------------------------------------------ QueueStore
    def save_job(self, job_id: JobId, ad: ClassAd) -> None:
        cluster, proc = job_id
        base = self._bases.get(cluster)
        if base is None:
            base = self._bases[cluster] = ad.copy()
            self._new_bases.append((cluster, ad_text(base)))
            self._undo.append((cluster, None, None))
        procs = self._procs.get(cluster)
        if procs is None:
            procs = self._procs[cluster] = set()
        if proc not in procs:
            procs.add(proc)
            self._undo.append((cluster, proc, None))
        shape = self._shapes.get(cluster)
        if shape is None or not shape.of(base):
            shape = self._shapes[cluster] = ClusterShape(base)
        if shape.unchanged(ad, proc):
            self._pending.append((cluster, proc, *_UNCHANGED))
        else:
            changes = job_changes(ad, base, proc)
            if changes is None:
                self._pending.append((cluster, proc, ad_text(ad), 0))
            else:
                self._pending.append((cluster, proc, ad_text(changes) if len(changes) else _NO_CHANGES, 1))
        self._write_now()

    def save_copies(self, cluster: int, first: ClassAd, copies: list[tuple[int, ClassAd]]) -> None:
        """``first``'s copies (``QueueStore.save_copies``): when ``first`` is the cluster ad but
        for its ``ProcId``, so is each copy, and its row is ``[ ]`` with nothing compared;
        otherwise each goes through ``save_job``."""
        base = self._bases.get(cluster)
        shape = self._shapes.get(cluster)
        if base is not None and (shape is None or not shape.of(base)):
            shape = self._shapes[cluster] = ClusterShape(base)
        if base is None or shape is None or not shape.unchanged(first, 0):
            for proc, ad in copies:
                self.save_job((cluster, proc), ad)
            return
        procs = self._procs.setdefault(cluster, set())
        new = [proc for proc, _ in copies if proc not in procs]
        procs.update(new)
        self._undo.extend((cluster, proc, None) for proc in new)
        self._pending.extend((cluster, proc, *_UNCHANGED) for proc, _ in copies)
        self._write_now()

    def _write_now(self) -> None:
        """Outside a batch every call is its own transaction, on disk when it returns."""
        if not self.in_batch:
            with self.batch():
                pass

    def delete_job(self, job_id: JobId) -> None:
        cluster, proc = job_id
        with self.batch():
            self._write_pending()
            self.connection.execute("DELETE FROM jobs WHERE cluster = ? AND proc = ?", job_id)
            procs = self._procs.get(cluster)
            if procs is not None and proc in procs:
                procs.discard(proc)
                self._undo.append((cluster, -proc - 1, None))
                if not procs:  # the cluster's last job: its cluster ad goes too
                    del self._procs[cluster]
                    self._undo.append((cluster, None, self._bases.pop(cluster, None)))
                    self._shapes.pop(cluster, None)
                    self.connection.execute("DELETE FROM clusters WHERE cluster = ?", (cluster,))

    def _before_commit(self) -> None:
        self._write_pending()
        self._undo = []

    def _write_pending(self) -> None:
        """Write the cluster ads and job rows held back so far (in the open transaction)."""
        conn = self.connection
        if self._new_bases:
            conn.executemany("INSERT OR REPLACE INTO clusters (cluster, ad) VALUES (?, ?)", self._new_bases)
            self._new_bases = []
        if self._pending:
            conn.executemany("INSERT OR REPLACE INTO jobs (cluster, proc, ad, base) VALUES (?, ?, ?, ?)",
                             self._pending)
            self._pending = []

    def _after_rollback(self) -> None:
        """Put the cluster ads and proc sets back as they were before the batch (newest first):
        ``(cluster, None, ad)`` had ``ad`` (None: no cluster ad), ``(cluster, proc, None)`` had
        no ``proc`` and ``(cluster, -proc - 1, None)`` had it."""
        self._pending, self._new_bases = [], []
        for cluster, proc, ad in reversed(self._undo):
            if proc is None:
                if ad is None:
                    self._bases.pop(cluster, None)
                    self._shapes.pop(cluster, None)
                else:
                    self._bases[cluster] = ad
            elif proc >= 0:
                self._procs.get(cluster, set()).discard(proc)
            else:
                self._procs.setdefault(cluster, set()).add(-proc - 1)
        self._procs = {cluster: procs for cluster, procs in self._procs.items() if procs}
        self._undo = []

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

    def save_factory(self, cluster_id: int, state: dict[str, Any]) -> None:
        self.connection.execute("INSERT OR REPLACE INTO factories (cluster, state) VALUES (?, ?)",
                                (int(cluster_id), json.dumps(state)))

    def delete_factory(self, cluster_id: int) -> None:
        self.connection.execute("DELETE FROM factories WHERE cluster = ?", (int(cluster_id),))

    def load_factories(self) -> dict[int, dict[str, Any]]:
        """The factories' states by cluster; a row that does not read back is skipped and
        reported in ``problems``."""
        out: dict[int, dict[str, Any]] = {}
        for cluster, text in self.connection.execute("SELECT cluster, state FROM factories ORDER BY cluster"):
            try:
                state = json.loads(text)
            except ValueError as e:
                self.report(f"factories: factory {cluster} skipped: {e}")
                continue
            if isinstance(state, dict):
                out[int(cluster)] = state
            else:
                self.report(f"factories: factory {cluster} skipped: not a JSON object")
        return out

    # ------------------------------------------------------------------ loading
    def load(self) -> tuple[dict[JobId, ClassAd], int]:
        """The jobs in the queue (by id, in id order) and the next cluster id to hand out."""
        conn = self.connection
        bases = self._load_bases()
        jobs: dict[JobId, ClassAd] = {}
        rows = conn.execute("SELECT cluster, proc, ad, base FROM jobs ORDER BY cluster, proc")
        for cluster, proc, text, on_base in rows:
            try:
                ad = parse_ad(text)
                if on_base:
                    ad = job_from_changes(bases[cluster], ad, proc)
            except KeyError:
                self.report(f"jobs: job {cluster}.{proc} skipped: its cluster ad is missing or damaged")
                continue
            except READ_ERRORS as e:
                self.report(f"jobs: job {cluster}.{proc} skipped: {e}")
                continue
            jobs[(cluster, proc)] = ad
            self._procs.setdefault(cluster, set()).add(proc)
        self._bases = {cluster: ad for cluster, ad in bases.items() if cluster in self._procs}
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

    def _load_bases(self) -> dict[int, ClassAd]:
        bases: dict[int, ClassAd] = {}
        for cluster, text in self.connection.execute("SELECT cluster, ad FROM clusters"):
            try:
                bases[cluster] = parse_ad(text)
            except READ_ERRORS as e:
                self.report(f"clusters: the ad of cluster {cluster} skipped: {e}")
        return bases

    def job_count(self) -> int:
        self._write_pending()
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
