"""Where a task's worktree lives, and the checks that keep every path we build or delete inside
the state folder.

Layout: `<root>/<sha1(realpath(repo))[:12]>/<slot>`, branch `kanban/task-<slot>`, lock files
under `<root>/<repo hash>/.locks/`. A task's slot is its id, or `<id>@<board key>` when another
board sharing the repository already holds that name (boards number their tasks alike, so two
boards on one repository both have a TASK-1); the slot a worktree got is read back from the
branch its workspace row records. The root is `KANBAN_WORKTREES`, else `<state>/worktrees`, so a
user's repository never gains a stray checkout and its own `git status` stays clean.

Nothing here trusts a path read back from the board: a path about to be deleted is rebuilt from the
root, the repository and the task id, and must lie strictly inside the root.
"""

import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import invalid_input
from ..location import BoardLocation, location_key
from ..paths import worktrees_root
from ..processes import machine_id

if TYPE_CHECKING:
    from ..records import Workspace

BRANCH_PREFIX = "kanban/task-"
# Between a task id and a board key in a slot: no task id holds it, so no slot is another's.
SLOT_SEPARATOR = "@"
_BOARD_KEY = re.compile(r"[0-9a-f]{12}")

# A task id becomes a folder name and part of a branch name: letters, digits, `.`, `_`, `-`, not
# starting with a dot or dash. The board's own ids (`TASK-42`) always fit.
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_task_id(task_id: object) -> str:
    """The id, or a typed refusal when it could not be a safe folder and branch name."""
    if (
        not isinstance(task_id, str)
        or not _TASK_ID.fullmatch(task_id)
        or ".." in task_id
        or task_id.endswith((".lock", "."))
    ):
        raise invalid_input(
            "task id cannot name a worktree (letters, digits, '.', '_' and '-' only)",
            field="id",
            id=task_id if isinstance(task_id, str) else None,
        )
    return task_id


def task_slot(task_id: str, board: str | None = None) -> str:
    """What names a task's folder, branch and synced-baseline ref: its id, followed by `board`
    (a board key) when the plain name belongs to another board."""
    check_task_id(task_id)
    if board is None:
        return task_id
    if not _BOARD_KEY.fullmatch(board):
        raise ValueError(f"not a board key: {board!r}")
    return f"{task_id}{SLOT_SEPARATOR}{board}"


def branch_name(task_id: str, board: str | None = None) -> str:
    return f"{BRANCH_PREFIX}{task_slot(task_id, board)}"


def slot_board(task_id: str, branch: str | None) -> str | None:
    """The board key in the slot of a task's recorded branch; None for the plain name (and for
    a row of an older board, which records no key)."""
    keyed = f"{BRANCH_PREFIX}{task_id}{SLOT_SEPARATOR}"
    if branch is None or not branch.startswith(keyed):
        return None
    board = branch.removeprefix(keyed)
    return board if _BOARD_KEY.fullmatch(board) else None


def branch_slot(task_id: str, branch: str | None) -> str:
    """The slot of a task's recorded branch (`slot_board`)."""
    return task_slot(task_id, slot_board(task_id, branch))


def is_task_branch(name: str) -> bool:
    """Whether a branch name is one of a task's (any board's), not a base to land on."""
    return name.startswith(BRANCH_PREFIX)


def repo_key(repo_root: Path) -> str:
    """The namespace of one repository's worktrees: a hash of its real path."""
    return hashlib.sha1(os.path.realpath(repo_root).encode()).hexdigest()[:12]


def board_key(board: BoardLocation) -> str:
    """A short fingerprint of the board (its file, or its database without credentials), written
    into each baseline commit so a branch left by another board sharing the repository is never
    mistaken for ours."""
    return location_key(board)


class Layout:
    """Paths under one worktrees root."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(os.path.realpath(root if root is not None else worktrees_root()))

    def repo_dir(self, repo_root: Path) -> Path:
        return self.root / repo_key(repo_root)

    def worktree_path(self, repo_root: Path, task_id: str, board: str | None = None) -> Path:
        """Where the task's checkout in slot `task_slot(task_id, board)` lives."""
        return self.repo_dir(repo_root) / task_slot(task_id, board)

    def lock_path(self, repo_root: Path, task_id: str, board: str) -> Path:
        """The lock of one board's worktree of a task: each board's own, so another board's
        task of the same id never waits on it."""
        return self.repo_dir(repo_root) / ".locks" / f"task-{task_slot(task_id, board)}.lock"

    def repo_lock_path(self, repo_root: Path) -> Path:
        return self.repo_dir(repo_root) / ".locks" / "repo.lock"

    def contains(self, path: Path | str) -> bool:
        """True when `path` (symlinks resolved) lies strictly inside the root."""
        resolved = Path(os.path.realpath(path))
        return resolved != self.root and resolved.is_relative_to(self.root)

    def owns_worktree(
        self, repo_root: Path, task_id: str, path: Path | str, board: str | None = None
    ) -> bool:
        """True when `path` is exactly where this task's worktree belongs under this root. The
        last component is not resolved: a symlink planted in the checkout's place is still the
        checkout's place (to be unlinked, never followed), not a path somewhere else."""
        given = Path(path)
        where = Path(os.path.realpath(given.parent)) / given.name
        return where == self.worktree_path(repo_root, task_id, board)

    def remove_tree(self, repo_root: Path, task_id: str, board: str | None = None) -> bool:
        """Recursively delete a task's worktree folder, but only after rebuilding its path from the
        root, the repository and the task id and checking it lies two levels inside the root. A
        symlink in its place is unlinked, never followed. Returns whether anything was removed."""
        path = self.worktree_path(repo_root, task_id, board)
        if path.parent.parent != self.root or not self.contains(path.parent):
            raise RuntimeError(f"refusing to delete {path}: not inside {self.root}")
        if path.is_symlink():
            path.unlink()
            return True
        if not path.exists():
            return False
        if not self.contains(path) or Path(os.path.realpath(path)).parent.parent != self.root:
            raise RuntimeError(f"refusing to delete {path}: not inside {self.root}")
        shutil.rmtree(path)
        return True


def elsewhere(ws: "Workspace", here: str | None = None) -> str | None:
    """The machine holding `ws`'s files when it is another one and this one cannot see them (a
    live checkout, or the repository of a finished one, not on this disk): what reads or changes
    them is done there, and this machine says so rather than that they are gone. None when they
    are judged here: this machine's, a row from before hosts were recorded, or one whose checkout
    and repository are both on this disk (a container started again under a new host name)."""
    if ws.host is None or ws.host == (here or machine_id()):
        return None
    repo_here = Path(ws.repo_path).is_dir()
    if ws.status != "active":
        return None if repo_here else ws.host
    checkout = ws.worktree_path
    return None if checkout and Path(checkout).is_dir() and repo_here else ws.host
