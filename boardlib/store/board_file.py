"""What is at a board path, found out without changing a byte of it.

Opening a file with the normal read-write connection is not harmless: the connection recipe
switches the file to WAL (a write), the migrations add kanban's tables, and closing the last
connection checkpoints someone else's write-ahead log. So before any of that the store looks at the
path through a read-only URI connection (`mode=ro`), which never writes, and decides:

- nothing there: `MISSING` (created only when the caller said it may create a board);
- an empty SQLite file (0 bytes, or no tables and `user_version` 0): `EMPTY`, treated like missing;
- a kanban board: its schema version;
- anything else (another application's database, a text file, a folder): `not_a_board`, and the
  file is left byte for byte as it was.
"""

import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..errors import BoardError, Reason

MISSING = -1
EMPTY = 0

# The tables that make a file a kanban board (the first migration creates them all).
BOARD_TABLES = frozenset({"tasks", "task_deps", "events"})


def not_a_board(path: Path, why: str) -> BoardError:
    return BoardError(
        Reason.NOT_A_BOARD,
        f"{path} is not a kanban board ({why}); it was left untouched. Point --db/KANBAN_DB at a "
        "board file, or create one with `kanban db init PATH`",
        path=str(path),
    )


def no_board(path: Path) -> BoardError:
    return BoardError(
        Reason.NO_BOARD,
        f"no board at {path}: check --db/KANBAN_DB, or create one with `kanban db init {path}` "
        "(or `kanban task dispatch`, which creates the board it files into)",
        path=str(path),
    )


def probe(path: Path) -> int:
    """`MISSING`, `EMPTY`, or the schema version of the kanban board at `path`; `not_a_board`
    for anything else. Reads only, through a connection that cannot write."""
    if not path.exists():
        if path.is_symlink():  # creating through it would put a board wherever it points
            raise not_a_board(path, "it is a dangling symbolic link")
        return MISSING
    if path.is_dir():
        raise not_a_board(path, "it is a folder")
    if path.stat().st_size == 0:
        return EMPTY
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise not_a_board(path, f"SQLite cannot open it: {error}") from None
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error) or "malformed" in str(error):
            raise not_a_board(path, f"not a SQLite database: {error}") from None
        raise
    finally:
        conn.close()
    if version == 0 and not tables:
        return EMPTY
    if version == 0 or not tables >= BOARD_TABLES:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise not_a_board(path, f"a SQLite database with other tables: {shown}")
    return version
