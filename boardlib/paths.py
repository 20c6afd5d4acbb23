"""Where kanban keeps its files when nobody says otherwise.

The board: `--db`, else `KANBAN_DB`, else `$XDG_STATE_HOME/kanban/board.db` (XDG_STATE_HOME defaults
to `~/.local/state`). Per-task worktrees live beside it, under `<state>/worktrees`, unless
`KANBAN_WORKTREES` says otherwise, so a user's repository never gains a stray checkout.
"""

import os
import re
from collections.abc import Mapping
from pathlib import Path

from .errors import BoardError, Reason

# `scheme://...`: a database URL, not a file name (a Windows drive `C:\\` has no `//`).
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)$", re.DOTALL)


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kanban"


def board_location(raw: str | os.PathLike[str]) -> Path:
    """Where a board is, from what a user typed (`--db`, `KANBAN_DB`): a file path, or a database
    URL. The one place that tells the two apart. `sqlite:///abs/path` is the file; any other URL
    (`postgresql://...`) is refused with `unsupported_backend` instead of becoming a folder named
    `postgresql:` with a fresh SQLite file in it."""
    text = os.fspath(raw)
    match = _URL.match(text)
    if match is None:
        return Path(text).expanduser()
    scheme = match["scheme"].lower()
    if scheme == "sqlite" and match["rest"].startswith("/"):
        return Path(match["rest"]).expanduser()
    backend = "PostgreSQL" if scheme in ("postgres", "postgresql") else f"{scheme!r}"
    raise BoardError(
        Reason.UNSUPPORTED_BACKEND,
        f"{backend} boards are not supported by this kanban: --db/KANBAN_DB takes the path of a "
        "SQLite board file (or sqlite:///path)",
        scheme=scheme,
    )


def default_board_path(environ: Mapping[str, str] | None = None) -> Path:
    """`KANBAN_DB` (a path or URL, see `board_location`), else the per-user default."""
    env = os.environ if environ is None else environ
    explicit = env.get("KANBAN_DB")
    return board_location(explicit) if explicit else state_dir(env) / "board.db"


def is_default_board(path: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Whether `path` is the per-user default board, which any first write may create."""
    env = os.environ if environ is None else environ
    return path.expanduser() == (state_dir(env) / "board.db").expanduser()


def worktrees_root(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    explicit = env.get("KANBAN_WORKTREES")
    return Path(explicit) if explicit else state_dir(env) / "worktrees"


# What one board is on disk: the SQLite file, its write-ahead log and shared memory, and the lock
# file writers queue on (store/writer_queue.py).
WRITERS_SUFFIX = "-writers"
BOARD_FILE_SUFFIXES = ("", "-wal", "-shm", WRITERS_SUFFIX)


def board_files(board: Path) -> list[Path]:
    return [board.with_name(board.name + suffix) for suffix in BOARD_FILE_SUFFIXES]


def writers_lock_path(board: Path) -> Path:
    return board.with_name(board.name + WRITERS_SUFFIX)
