"""`kanban db copy`: move a whole board between SQLite and PostgreSQL (either way, or between two
boards of one kind) with nothing lost, and prove it.

The source is read in one snapshot; the target, which must be empty, is written in one
transaction: every table in `TABLES` order (parents first), every row with its keys as they were
(ids, seqs, event cursors), then the target's sequences are moved past them. Before that
transaction commits, the target is read back inside it and each table's row count and content
hash must equal the source's, else the copy is rolled back (a target it made is unmade again).

The content hash is over canonical rows, so both backends hash the same board alike: columns in
name order, each row a compact JSON array in key order (integers as integers, floats by `repr`,
text as text), one line each, sha256 over all lines. The JSON columns are TEXT on both sides, so
they hash byte for byte.
"""

import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..config import BoardConfig
from ..errors import BoardError, Reason
from ..location import BoardLocation, DatabaseUrl, display_location, location_key
from ..records import Record
from ..validation import NUL
from . import open_store
from .base import TABLES, Row, Tx


@dataclass(slots=True)
class TableDigest(Record):
    rows: int
    sha256: str


@dataclass(slots=True)
class CopyReport(Record):
    """What `copy_board` moved: per table, the rows and the hash both sides agreed on."""

    source: str
    target: str
    source_backend: str
    target_backend: str
    tables: dict[str, TableDigest] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = Record.to_json(self)
        out["tables"] = {name: digest.to_json() for name, digest in self.tables.items()}
        out["rows"] = sum(digest.rows for digest in self.tables.values())
        return out


def _canonical(value: Any) -> Any:
    if isinstance(value, float):
        return repr(value)  # the exact double, the same text on both backends
    if isinstance(value, (bytes, memoryview)):
        return bytes(value).hex()
    return value


def digest_rows(rows: list[Row]) -> TableDigest:
    """Row count and content hash of one table's rows (already in key order)."""
    hasher = hashlib.sha256()
    if rows:
        names = rows[0].keys()
        order = sorted(range(len(names)), key=lambda i: names[i])
        hasher.update(json.dumps([names[i] for i in order]).encode())
        for row in rows:
            line = [_canonical(row[i]) for i in order]
            hasher.update(b"\n" + json.dumps(line, ensure_ascii=False).encode())
    return TableDigest(rows=len(rows), sha256=hasher.hexdigest())


def board_digest(tx: Tx) -> dict[str, TableDigest]:
    """Every table's count and hash, read in the caller's transaction."""
    return {table: digest_rows(tx.table_rows(table)) for table, _ in TABLES}


def _refuse_text_postgres_cannot_store(tables: dict[str, list[Row]]) -> None:
    """A SQLite board can hold text with a NUL (written before the board refused it); a
    PostgreSQL text column cannot. Refused before the target is touched, naming the first such
    row by its key and the column, so it can be mended on the source."""
    for table, keys in TABLES:
        for row in tables[table]:
            names = row.keys()
            for column, value in zip(names, row, strict=True):
                if isinstance(value, str) and NUL in value:
                    named = ("id", *keys) if "id" in names else keys
                    key = {name: row[name] for name in named}
                    where = ", ".join(f"{name}={part!r}" for name, part in key.items())
                    raise BoardError(
                        Reason.INVALID_INPUT,
                        f"the source's {table} row {where} holds a NUL character (U+0000) in "
                        f"{column}, which PostgreSQL text cannot store: replace it on the source "
                        "board and copy again (the target was not touched)",
                        table=table,
                        column=column,
                        key=key,
                    )


def copy_board(
    source: BoardLocation, target: BoardLocation, config: BoardConfig | None = None
) -> CopyReport:
    """Copy the board at `source` into the empty board at `target` (created if missing)."""
    config = config or BoardConfig()
    if location_key(source) == location_key(target):
        raise BoardError(
            Reason.INVALID_INPUT,
            f"source and target are the same board: {display_location(source)}",
        )
    reader = open_store(source, config, read_only=True)
    try:

        def dump(tx: Tx) -> dict[str, list[Row]]:
            return {table: tx.table_rows(table) for table, _ in TABLES}

        tables = reader.read(dump)
        backend = reader.backend
    finally:
        reader.close()
    expected = {table: digest_rows(rows) for table, rows in tables.items()}
    if isinstance(target, DatabaseUrl):
        _refuse_text_postgres_cannot_store(tables)
    writer = open_store(target, config)
    try:

        def load(tx: Tx) -> dict[str, TableDigest]:
            present = {table: len(tx.table_rows(table)) for table, _ in TABLES}
            if any(present.values()):
                raise BoardError(
                    Reason.INVALID_INPUT,
                    f"the target board is not empty: {display_location(target)} "
                    "(copy into a new file or an empty schema)",
                    rows={table: n for table, n in present.items() if n},
                )
            for table, rows in tables.items():
                if rows:
                    tx.load_rows(table, rows[0].keys(), (tuple(row) for row in rows))
            tx.finish_load()
            copied = board_digest(tx)
            differ = sorted(table for table in expected if copied[table] != expected[table])
            if differ:
                raise BoardError(
                    Reason.INVALID_INPUT,
                    f"the copy does not match its source in {', '.join(differ)}: rolled back",
                    tables=differ,
                )
            return copied

        try:
            copied = writer.write(load)
        except BaseException:
            # a target this copy made is unmade, as it was; the copy's own error is the one told
            with contextlib.suppress(Exception):
                writer.discard_new_board()
            raise
        return CopyReport(
            source=display_location(source),
            target=display_location(target),
            source_backend=backend,
            target_backend=writer.backend,
            tables=copied,
        )
    finally:
        writer.close()
