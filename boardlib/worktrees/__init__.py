"""Per-task git worktrees with their system-of-record files, the handoff, and garbage collection.

    from boardlib import Board
    from boardlib.worktrees import Worktrees

    with Board("board.db") as board:
        trees = Worktrees(board)  # root: KANBAN_WORKTREES, else <state>/worktrees
        made = trees.provision("TASK-1", "/path/to/repo")
        ...
        result = trees.complete("TASK-1", "alice")  # diff, then the verification gate
        trees.land("TASK-1", actor="operator")  # verified merge onto its base branch

Importing this package does not import the git modules (they load on first use: `resume` and
`write_handoff` stay file-only). The core below it never imports this package.
"""

from typing import TYPE_CHECKING, Any

from .gc import GC_ACTOR, WorktreeJanitor, collect_garbage, start_worktree_gc
from .layout import BRANCH_PREFIX, Layout, branch_name
from .lock import WorktreeLock
from .manager import NO_ISOLATION_KINDS, Worktrees, isolation_for
from .results import (
    CheckoutState,
    CompleteResult,
    DetailResult,
    DiffStat,
    FileStat,
    GcReport,
    GitFailure,
    HandoffResult,
    PauseResult,
    ProvisionResult,
    ResumeResult,
    WorktreeInfo,
)
from .sor import SOR_FILES

if TYPE_CHECKING:
    from .landing import STEPS as LAND_STEPS
    from .landing import Lander, LandingPreview, LandResult
    from .sync import SyncResult

# Landing and sync run git at import: their names load on first use.
_LAZY = {
    "LAND_STEPS": ("landing", "STEPS"),
    "Lander": ("landing", "Lander"),
    "LandingPreview": ("landing", "LandingPreview"),
    "LandResult": ("landing", "LandResult"),
    "SyncResult": ("sync", "SyncResult"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module, attribute = _LAZY[name]
    return getattr(importlib.import_module(f".{module}", __name__), attribute)


__all__ = [
    "BRANCH_PREFIX",
    "GC_ACTOR",
    "LAND_STEPS",
    "NO_ISOLATION_KINDS",
    "SOR_FILES",
    "CheckoutState",
    "CompleteResult",
    "DetailResult",
    "DiffStat",
    "FileStat",
    "GcReport",
    "GitFailure",
    "HandoffResult",
    "LandResult",
    "Lander",
    "LandingPreview",
    "Layout",
    "PauseResult",
    "ProvisionResult",
    "ResumeResult",
    "SyncResult",
    "WorktreeInfo",
    "WorktreeJanitor",
    "WorktreeLock",
    "Worktrees",
    "branch_name",
    "collect_garbage",
    "isolation_for",
    "start_worktree_gc",
]
