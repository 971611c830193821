"""The negotiator's accountant on disk: the ``AccountantStore`` of ``negotiator.records`` in SQLite.

Tables (besides ``meta``, see ``database``):

* ``accountant (id = 1, last_update_time)``: the one row of the ``Accountant.`` ad's time.
* ``customers (name, record)``: one row per customer record, ``record`` being the record's
  ``to_dict()`` (HTCondor's attribute names) as JSON. JSON writes Python floats with all their
  digits, so a record reads back bit for bit.

``commit`` applies one transaction of the accountant (new update time, changed records, deleted
names) and is durable when it returns. ``load`` gives what ``MemoryStore`` would have given after
the same commits: the last update time (0.0 when nothing was ever committed) and the records in
the order they were first stored (an update keeps a record's place; deleting and storing it again
moves it to the end), because an upsert keeps the row's rowid and a new row gets a larger one.

A record that does not read back (damaged JSON, not an object) is skipped and reported in
``problems``; the name column is authoritative for the record's name. A field that is not a
usable number (missing its type, NaN, infinite, beyond ``MAX_USERPRIO_VALUE`` in size, or
below the least its meaning allows: a factor 1, a priority 0.5, a ceiling -1, a usage or a time
0) is put back to a fresh record's value and reported, so the negotiator never computes with
it (a factor put back is chosen afresh by the accountant on first use).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from htcpool.negotiator.records import ATTRIBUTES, LEASED, AccountantSnapshot, CustomerRecord
from htcpool.negotiator.userprio import MAX_USERPRIO_VALUE
from htcpool.runtime.database import READ_ERRORS, SqliteDatabase

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS accountant ("
    " id INTEGER PRIMARY KEY CHECK (id = 1), last_update_time REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS customers (name TEXT PRIMARY KEY, record TEXT NOT NULL)",
)


def record_text(record: CustomerRecord) -> str:
    """A record as the JSON object stored in ``customers.record``."""
    return json.dumps(record.to_dict(), separators=(",", ":"))


#: the least stored value of the fields with one (the others: 0)
_LEAST = {"priority": 0.5, "priority_factor": 0.0, "ceiling": -1.0, "ceiling_pre_lease_value": -1.0}
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(CustomerRecord)}
_EXPIRATIONS = frozenset(expiration for expiration, _ in LEASED.values())


def _usable(field: str, value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if not math.isfinite(value) or abs(value) > MAX_USERPRIO_VALUE:
        return False
    return value >= _LEAST.get(field, 0.0) or (field == "priority_factor" and value == 0)


def repaired(data: dict[str, Any]) -> list[str]:
    """Put back, in ``data`` (a stored record), every field that is not a usable number; one
    line per field put back."""
    notes = []
    for field, attr in ATTRIBUTES.items():
        if attr not in data:
            continue
        value = data[attr]
        if value is None and (field in _EXPIRATIONS or field.endswith("_pre_lease_value")):
            del data[attr]  # never leased
            continue
        if _usable(field, value):
            continue
        default = _DEFAULTS[field]
        if default is None:
            del data[attr]
        else:
            data[attr] = default
        notes.append(f"{attr} = {value!r} is not usable; put back to {default!r}")
    return notes


def read_record(name: str, text: str) -> tuple[CustomerRecord, list[str]]:
    """The record stored as ``text`` under ``name`` and the fields ``repaired`` put back;
    raises one of ``READ_ERRORS`` when damaged beyond that."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise TypeError(f"expected a JSON object, found {type(data).__name__}")
    data["Name"] = name
    notes = repaired(data)
    return CustomerRecord.from_dict(data), notes


class SqliteAccountantStore(SqliteDatabase):
    """An ``AccountantStore`` kept in one SQLite file (created with its tables when missing)."""

    _schema = _SCHEMA

    def load(self) -> AccountantSnapshot:
        """Everything stored, as it was after the last commit."""
        conn = self.connection
        row = conn.execute("SELECT last_update_time FROM accountant WHERE id = 1").fetchone()
        last_update_time = float(row[0]) if row is not None else 0.0
        records: list[CustomerRecord] = []
        for name, text in conn.execute("SELECT name, record FROM customers ORDER BY rowid"):
            try:
                record, notes = read_record(name, text)
            except READ_ERRORS as e:
                self.report(f"customers: record {name!r} skipped: {e}")
                continue
            records.append(record)
            for note in notes:
                self.report(f"customers: record {name!r}: {note}")
        return AccountantSnapshot(last_update_time, tuple(records))

    def commit(
        self, last_update_time: float, changed: Sequence[CustomerRecord], deleted: Sequence[str]
    ) -> None:
        """Apply one transaction: the new update time, changed records, deleted names."""
        conn = self.connection
        with self.batch():
            conn.execute(
                "INSERT INTO accountant (id, last_update_time) VALUES (1, ?) "
                "ON CONFLICT(id) DO UPDATE SET last_update_time = excluded.last_update_time",
                (float(last_update_time),),
            )
            conn.executemany(
                "INSERT INTO customers (name, record) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET record = excluded.record",
                [(rec.name, record_text(rec)) for rec in changed],
            )
            conn.executemany("DELETE FROM customers WHERE name = ?", [(n,) for n in deleted])

    def record_count(self) -> int:
        return int(self.connection.execute("SELECT COUNT(*) FROM customers").fetchone()[0])
