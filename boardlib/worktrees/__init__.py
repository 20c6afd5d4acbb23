"""Per-task git worktrees with their system-of-record files, the handoff, and garbage collection.

    from boardlib import Board
    from boardlib.worktrees import Worktrees

    with Board("board.db") as board:
        trees = Worktrees(board)  # root: KANBAN_WORKTREES, else <state>/worktrees
        made = trees.provision("TASK-1", "/path/to/repo")
        ...
        result = trees.complete("TASK-1", "alice")  # diff, then the verification gate

Importing this package does not import git: the git-backed steps load gitpython on first use, so
`resume` and `write_handoff` stay file-only. The core below it (board, rules, store) never
imports this package: worktrees are a layer on top of the board.
"""

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

__all__ = [
    "BRANCH_PREFIX",
    "GC_ACTOR",
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
    "Layout",
    "PauseResult",
    "ProvisionResult",
    "ResumeResult",
    "WorktreeInfo",
    "WorktreeJanitor",
    "WorktreeLock",
    "Worktrees",
    "branch_name",
    "collect_garbage",
    "isolation_for",
    "start_worktree_gc",
]
