"""What is at a board path, found out without changing a byte of it.

Opening a file with the normal read-write connection is not harmless: the connection recipe
switches the file to WAL (a write), the migrations add kanban's tables, and closing the last
connection checkpoints someone else's write-ahead log. So before any of that the store looks at the
path through a read-only URI connection (`mode=ro`), which never writes, and decides:

- nothing there: `MISSING` (created only when the caller said it may create a board);
- an empty SQLite file (0 bytes, or no tables and `user_version` 0): `EMPTY`, treated like missing;
- a kanban board: its schema version;
- anything else (another application's database, a text file, a folder, a device, a FIFO, a
  socket): `not_a_board`, and the file is left byte for byte as it was. What is not a regular file
  is refused from its `stat` alone, before SQLite (or a plain read) opens it, so nothing is made
  beside it and a FIFO is never opened to wait on.
"""

import errno
import os
import sqlite3
import stat
import threading
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from ..errors import BOARD_FILE_GONE, BoardError, Reason
from ..shell import shell_command
from .base import CREATING_VERBS
from .contention import is_transient_lock_error

MISSING = -1
SQLITE_READONLY = 8  # the primary result code of "attempt to write a readonly database"
EMPTY = 0

# The tables that make a file a kanban board (the first migration creates them all).
BOARD_TABLES = frozenset({"tasks", "task_deps", "events"})


# The board files this process has stores open on, by (device, inode), counted per store.
_open_here: Counter[tuple[int, int]] = Counter()
_open_here_lock = threading.Lock()


def hold(path: Path) -> tuple[int, int] | None:
    """Count a store of this process as open on the file at `path` (see `_torn`, the reason);
    the key for `release`, None when there is no file."""
    key = file_key(path)
    if key is not None:
        with _open_here_lock:
            _open_here[key] += 1
    return key


def release(key: tuple[int, int] | None) -> None:
    if key is None:
        return
    with _open_here_lock:
        _open_here[key] -= 1
        if _open_here[key] <= 0:
            del _open_here[key]


def _open_in_this_process(path: Path) -> bool:
    key = file_key(path)
    with _open_here_lock:
        return key is not None and key in _open_here


def file_key(path: Path) -> tuple[int, int] | None:
    """Which file `path` names now, by (device, inode); None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def board_gone(path: Path) -> BoardError:
    """The board file this process opened was removed or replaced meanwhile."""
    what = "replaced by another file" if path.exists() else "removed"
    return BoardError(
        Reason.DATABASE_UNAVAILABLE,
        f"the board file {path} was {what} after this process opened it; nothing was read or "
        "written. Put the board back and restart this process (a server, a watcher, the "
        "terminal board) on it",
        path=str(path),
        why=BOARD_FILE_GONE,
    )


def not_a_board(path: Path, why: str) -> BoardError:
    return BoardError(
        Reason.NOT_A_BOARD,
        f"{path} is not a kanban board ({why}); it was left untouched. Point --db/KANBAN_DB at a "
        "board file, or create one with `kanban db init PATH`",
        path=str(path),
    )


def no_board(path: Path) -> BoardError:
    where = f"{path} is an empty file, not a board yet" if path.exists() else f"no board at {path}"
    return BoardError(
        Reason.NO_BOARD,
        f"{where}: check --db/KANBAN_DB, or create one with "
        f"`{shell_command('kanban', 'db', 'init', str(path))}` {CREATING_VERBS}",
        path=str(path),
    )


def newer_schema(path: Path, version: int, supported: int) -> BoardError:
    return BoardError(
        Reason.NEWER_SCHEMA,
        f"{path} was written by a newer kanban (board schema {version}, this kanban knows "
        f"{supported}); it was left untouched: upgrade kanban to work on it",
        path=str(path),
        schema_version=version,
        supported_schema_version=supported,
    )


def permission_denied(path: Path) -> BoardError:
    """The operating system refuses this user the board file or a folder on its way."""
    return BoardError(
        Reason.PERMISSION_DENIED,
        f"this user may not read the board {path} (permission denied); nothing was read or "
        "written: ask its owner for read access to the file and its folders, or point "
        "--db/KANBAN_DB at a board you may read",
        path=str(path),
    )


def locked(path: Path) -> BoardError:
    return BoardError(
        Reason.BUSY,
        f"database busy, try again: another process holds {path.name} locked",
        path=str(path),
    )


def probe(path: Path, *, timeout_s: float = 1.5) -> int:
    """`MISSING`, `EMPTY`, or the schema version of the kanban board at `path`; `not_a_board`
    for anything else. Reads only, through a connection that cannot write. A file another
    process holds exclusively locked is waited for up to `timeout_s` (the write budget), then
    `busy`: never a hang, never an untyped "database is locked"."""
    try:
        what, found = _examined(path)
    except PermissionError:  # a folder on the way this user may not enter
        raise permission_denied(path) from None
    if what is not None:  # before anything opens it: SQLite would make -journal, -wal beside it
        raise not_a_board(path, f"it is {what}")
    if found is None:
        return MISSING
    size = found.st_size
    if size == 0:
        return EMPTY
    torn = None if _open_in_this_process(path) else _torn(path)
    if torn is not None:
        raise not_a_board(path, torn)
    try:
        try:
            version, tables = _look(f"file:{quote(str(path))}?mode=ro", timeout_s)
        except sqlite3.OperationalError as error:
            if not _cannot_open(error):
                raise
            if not os.access(path, os.R_OK):
                raise permission_denied(path) from None
            # A write-ahead-logged file on a read-only folder, without its `-shm`: only an
            # `immutable` look can read it, and that is safe exactly when no log is pending.
            version, tables = _look(read_only_uri(path), timeout_s)
    except sqlite3.OperationalError as error:
        if is_transient_lock_error(error):
            raise locked(path) from None
        raise
    except sqlite3.DatabaseError as error:
        damaged = "malformed" in str(error)
        why = f"a damaged database ({error})" if damaged else f"not a SQLite database: {error}"
        raise not_a_board(path, why) from None
    if version == 0 and not tables:
        return EMPTY
    if version == 0 or not tables >= BOARD_TABLES:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise not_a_board(path, f"a SQLite database with other tables: {shown}")
    return version


def not_a_file_at(path: Path) -> str | None:
    """What `path` is when its `stat` alone says it cannot be a board file ("a FIFO", "a folder",
    "a FIFO, through a symbolic link to /tmp/pipe", "a dangling symbolic link": creating through
    one would put a board wherever it points); None for a regular file, a symbolic link to one,
    or nothing there. Opens nothing. `PermissionError` for a folder on the way this user may not
    enter."""
    return _examined(path)[0]


# What `Path.exists` takes for "nothing there"; any other failure of the stat is raised.
_NOTHING_THERE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _examined(path: Path) -> tuple[str | None, os.stat_result | None]:
    """`not_a_file_at`'s answer and the path's stat (None when nothing is there), from one stat
    (a second look only at a path that is not a regular file): the board's open runs it."""
    try:
        found = path.stat()  # follows a link: one to a board file is a board
    except OSError as error:
        if error.errno not in _NOTHING_THERE:
            raise
        return ("a dangling symbolic link" if path.is_symlink() else None), None
    what = _not_a_file(found.st_mode)
    if what is not None and path.is_symlink():
        what += f", through a symbolic link to {os.path.realpath(path)}"
    return what, None if what is not None else found


def _not_a_file(mode: int) -> str | None:
    """What a path that is not a regular file is, from its mode, or None for a regular file. A
    device, FIFO or socket reports size 0, so it would pass for an empty board to create, and
    SQLite would put its `-journal` (and the writers' lock file) beside it, in `/dev` for
    `/dev/null`; opening a FIFO to read it would wait forever for a writer. Stat only, no open."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _torn(path: Path) -> str | None:
    """Why a SQLite file is cut short, from its 100-byte header alone, or None. SQLite itself
    reads a truncated file as far as it goes (the lost pages come back as missing rows, and a
    write lands in a damaged file), so the probe compares the file with what its header says:
    whole pages, and at least as many as the header counts. Only without a pending write-ahead
    log or rollback journal: a checkpoint in flight may leave the file short, and the log then
    still holds every page. The log is looked for before and after the header is read, and the
    size is taken last: a writer that closed meanwhile checkpointed into the file (its header
    counting the new pages) and deleted its log only once the file was whole, so a size read
    before the header (as it was) could call a healthy, growing board cut short (seen once as
    `not_a_board` in a 16-process claim race).

    It reads the header with a plain file descriptor, so it runs only on a file no store of this
    process has open (`hold`): closing any descriptor of a file drops every POSIX lock the process
    holds on it, SQLite's own locks included. Another process then takes itself for the last one
    out, deletes the write-ahead log and its index from under our connections, and they never see
    another commit. Measured: a TUI whose app opened a second store on its board stopped showing
    changes made by agents; a reader missed every commit after the next writer closed."""
    if _log_pending(path):
        return None
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except OSError:
        return None  # gone or unreadable meanwhile: SQLite's own open says which
    if _log_pending(path):
        return None
    size = _size(path)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return None  # not SQLite at all: SQLite's own error says so
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    change_counter = header[24:28]
    pages = int.from_bytes(header[28:32], "big")
    if page_size < 512 or page_size & (page_size - 1):
        return None
    if size % page_size:
        return f"a damaged database: {size} bytes is not a whole number of {page_size}-byte pages"
    if header[92:96] == change_counter and size < pages * page_size:
        return (
            f"a damaged database: {size} bytes where its header counts {pages} pages of "
            f"{page_size} ({pages * page_size} bytes); it was cut short, restore it from a backup"
        )
    return None


def _log_pending(path: Path) -> bool:
    return any(_size(path.with_name(path.name + suffix)) for suffix in ("-wal", "-journal"))


def _size(path: Path) -> int:
    """A file's size, 0 when it is not there: a write-ahead log comes and goes under other
    processes (the last connection to close deletes it), so asking whether it exists and then
    its size races with them."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _look(uri: str, timeout_s: float) -> tuple[int, set[str]]:
    conn = sqlite3.connect(uri, uri=True, timeout=max(timeout_s, 0.0))
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()
    return version, tables


def _cannot_open(error: sqlite3.OperationalError) -> bool:
    """SQLite could not open the file, or could not make its `-shm` to read it: "unable to
    open" (a read-only mount) or `SQLITE_READONLY` (a folder whose modes refuse this user)."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return "unable to open" in str(error) or code == SQLITE_READONLY


def may_write(path: Path) -> bool:
    """Whether this process may write the board at `path`, as the operating system says: the
    file, and its folder or else the `-wal`/`-shm` beside it. SQLite opens a file it may not
    write without a word and only refuses the first write, so a live view asks here first and
    opens read-only, saying why, instead of failing each write. (Root may write anything.)"""
    import os

    if not os.access(path, os.W_OK):
        return False
    if os.access(path.parent, os.W_OK):
        return True
    sides = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    return all(side.exists() and os.access(side, os.W_OK) for side in sides)


def read_only_uri(path: Path) -> str:
    """How to read a board this process cannot write (a read-only folder or file): `mode=ro`
    while a write-ahead log is pending (its `-shm` then exists too), else `immutable=1`, which
    needs no `-shm` and cannot miss anything because everything is in the main file."""
    pending = _size(path.with_name(path.name + "-wal")) > 0
    return f"file:{quote(str(path))}?{'mode=ro' if pending else 'immutable=1'}"


def cannot_open(error: BaseException) -> bool:
    """SQLite's "unable to open database file": on a board the probe already found, that means
    the file or its folder is read-only for this process."""
    return isinstance(error, sqlite3.OperationalError) and _cannot_open(error)
