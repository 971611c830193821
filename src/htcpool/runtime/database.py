"""The foundation of the live driver's SQLite stores: durable opening, transactions, ad text.

``queue_store`` (the schedd's job queue and history) and ``accountant_store`` (the negotiator's
customer records) both build on ``SqliteDatabase``; ``store`` is their public face. A database
is one connection in autocommit mode with ``journal_mode=WAL`` and ``synchronous=FULL``, so each
statement run outside a batch is its own transaction and is on disk (the write-ahead log is
synced) when the call returns: a write that was acknowledged survives the process being killed.
``batch()`` groups many calls into one transaction (``BEGIN IMMEDIATE`` … ``COMMIT``); batches
nest, only the outermost one commits, and an exception rolls the whole batch back before it
propagates. A subclass may hold rows back inside a batch and write them with one
``executemany`` just before the commit (``_before_commit``; ``_after_rollback`` undoes what it
remembered of a batch that failed). One connection serves one thread. Each subclass has its own
schema version (``_schema_version``) and brings an older file's tables up to it (``_upgrade``).

Ads are kept as text in the new ClassAd syntax (``[ a = 1; b = "x" ]``, what ``repr(ad)`` shows),
with two differences: reals are written with the shortest digits that read back to the same
double (``repr`` of a Python float), where HTCondor's ``%1.15E`` would drop the last bit, and
infinities as ``1e999`` (a literal, where ``real("INF")`` would read back as a call). So
``parse_ad(ad_text(ad)) == ad`` holds for strings with quotes and newlines, lists, nested ads and
unevaluated expressions alike (NaN, equal to nothing, is the one value that cannot compare).

Rows that cannot be read back (a damaged ad, a record of the wrong shape) never stop a load:
the store skips them and appends a line naming the file, table and row to ``problems`` (once per
row, however often it is read).

Every store also has a small ``meta`` table of text values for the driver's own use (the
daemon's address, a pool id): ``get_meta`` and ``set_meta``. The schema version is kept in
``PRAGMA user_version``; a file written by a newer version is refused with a ``StoreError``.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from typing import Any, Self

from htcpool.classad import ClassAd, ClassAdError
from htcpool.classad.unparse import _Printer

#: the schema version this module writes (``PRAGMA user_version``); a newer file is refused
SCHEMA_VERSION = 1

_META_TABLE = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


class StoreError(Exception):
    """A store that cannot be opened or used, or a request it cannot answer (a bad constraint)."""


# ------------------------------------------------------------------ ad text


class _ExactPrinter(_Printer):
    """The canonical new-syntax printer, except that reals keep every bit."""

    __slots__ = ()

    def value(self, v: Any) -> None:
        if type(v) is not float or v == 0.0 or math.isnan(v):
            super().value(v)
        elif math.isinf(v):  # an overflowing literal reads back as the infinity itself
            self.out.append("1e999" if v > 0 else "-1e999")
        else:
            self.out.append(repr(v))


def ad_text(ad: ClassAd) -> str:
    """``ad`` as one line of new-syntax text that ``parse_ad`` reads back to an equal ad."""
    printer = _ExactPrinter()
    printer.value(ad)
    return "".join(printer.out)


def parse_ad(text: str) -> ClassAd:
    """The ad ``ad_text`` wrote; ``ClassAdError`` (or ``ValueError``) when the text is damaged."""
    if not text.lstrip().startswith("["):
        raise ValueError("not a ClassAd in the new syntax")
    return ClassAd(text)  # exactly one ad: two run together are damage, not a merge


#: what reading a damaged row may raise; anything else is a bug and propagates
READ_ERRORS: tuple[type[BaseException], ...] = (ClassAdError, ValueError, TypeError, KeyError)


# ------------------------------------------------------------------ the database


class SqliteDatabase:
    """One SQLite file opened for durable writes; subclasses add their tables in ``_schema``."""

    #: CREATE statements of the subclass's tables (``IF NOT EXISTS``)
    _schema: tuple[str, ...] = ()
    #: the version of the subclass's tables (``PRAGMA user_version``); a newer file is refused
    _schema_version = SCHEMA_VERSION

    def __init__(self, path: str | PathLike[str]) -> None:
        self.path = Path(path)
        #: rows skipped because they could not be read, one line each
        self.problems: list[str] = []
        self._depth = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"{self.path}: cannot open the database: {e}") from None
        self._conn: sqlite3.Connection | None = conn
        try:
            self._prepare(conn)
        except sqlite3.DatabaseError as e:
            conn.close()
            self._conn = None
            raise StoreError(f"{self.path}: not a usable database: {e}") from None

    def _prepare(self, conn: sqlite3.Connection) -> None:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"{self.path}: the file system refuses write-ahead logging ({mode})")
        conn.execute("PRAGMA synchronous=FULL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > self._schema_version:
            raise StoreError(
                f"{self.path}: written by a newer htcpool (schema {version}, "
                f"this one reads up to {self._schema_version})"
            )
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in (_META_TABLE, *self._schema):
                conn.execute(statement)
            self._upgrade(conn)
            conn.execute(f"PRAGMA user_version={self._schema_version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _upgrade(self, conn: sqlite3.Connection) -> None:
        """Bring tables an older version created up to this one's (inside the opening transaction)."""

    def _before_commit(self) -> None:
        """Write what the subclass held back for the end of the outermost batch."""

    def _after_rollback(self) -> None:
        """Forget what the subclass remembered of a batch that was rolled back."""

    @property
    def connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"{self.path}: the store is closed")
        return self._conn

    @contextmanager
    def batch(self, *, synced: bool = True) -> Iterator[None]:
        """Make every call inside one transaction, committed (and synced) when the block ends.
        ``synced=False`` (the outermost batch decides) commits without waiting for the disk: the
        transaction survives the process being killed, not the machine going down, until the
        next synced commit, which syncs it too (SQLite's ``synchronous=NORMAL`` in WAL mode)."""
        conn = self.connection
        if self._depth == 0:
            if not synced:  # SQLite takes the setting only outside a transaction
                conn.execute("PRAGMA synchronous=NORMAL")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except BaseException:
                self._synced_again(synced)
                raise
        self._depth += 1
        try:
            yield
            if self._depth == 1:
                self._before_commit()
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                conn.execute("ROLLBACK")
                self._after_rollback()
                self._synced_again(synced)
            raise
        self._depth -= 1
        if self._depth == 0:
            try:
                conn.execute("COMMIT")
            finally:
                self._synced_again(synced)

    def _synced_again(self, synced: bool) -> None:
        if not synced:
            self.connection.execute("PRAGMA synchronous=FULL")

    @property
    def in_batch(self) -> bool:
        return self._depth > 0

    def report(self, problem: str) -> None:
        """Note a row that was skipped (once, however often it is read)."""
        line = f"{self.path}: {problem}"
        if line not in self.problems:
            self.problems.append(line)

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        """The value stored under ``key``, or None."""
        row = self.connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` durably (inside a batch: when the batch commits)."""
        self.connection.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Close the connection (an open batch is rolled back); closing twice is harmless."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._depth:
            self._depth = 0
            conn.execute("ROLLBACK")
            self._after_rollback()
        conn.close()

    @property
    def closed(self) -> bool:
        return self._conn is None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
