"""Where kanban keeps its files when nobody says otherwise.

The board: `--db`, else `KANBAN_DB`, else `$XDG_STATE_HOME/kanban/board.db` (XDG_STATE_HOME defaults
to `~/.local/state`). Per-task worktrees live beside it, under `<state>/worktrees`, unless
`KANBAN_WORKTREES` says otherwise, so a user's repository never gains a stray checkout.
"""

import os
from collections.abc import Mapping
from pathlib import Path

# The one function that tells a file from a URL lives in location.py (re-exported here).
from .config import WORKTREES_VARIABLE
from .location import BOARD_FILE_SUFFIXES, WRITERS_SUFFIX, BoardLocation, DatabaseUrl
from .location import board_location as board_location


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kanban"


def default_board_path(environ: Mapping[str, str] | None = None) -> BoardLocation:
    """`KANBAN_DB` (a path or a `postgresql://` URL, see `board_location`), else the per-user
    default file."""
    env = os.environ if environ is None else environ
    explicit = env.get("KANBAN_DB")
    return board_location(explicit) if explicit else state_dir(env) / "board.db"


def is_default_board(path: BoardLocation, environ: Mapping[str, str] | None = None) -> bool:
    """Whether `path` is the per-user default board, which any first write may create."""
    if isinstance(path, DatabaseUrl):
        return False
    env = os.environ if environ is None else environ
    return path.expanduser() == (state_dir(env) / "board.db").expanduser()


def worktrees_root(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    explicit = env.get(WORKTREES_VARIABLE)
    return Path(explicit) if explicit else state_dir(env) / "worktrees"


def board_files(board: Path) -> list[Path]:
    return [board.with_name(board.name + suffix) for suffix in BOARD_FILE_SUFFIXES]


def writers_lock_path(board: Path) -> Path:
    return board.with_name(board.name + WRITERS_SUFFIX)
