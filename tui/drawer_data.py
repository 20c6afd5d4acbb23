"""What the task drawer reads, in a worker thread, through the library: never on the event loop,
never git or SQL of its own.

Two reads, because they cost very differently:
- `read_task`: the task with everything around it (`Board.view`), its events and audit rows
  (the History tab). A few SQLite reads, done again whenever the live feed says the task changed.
- `read_workspace`: `Worktrees.fingerprinted_detail` (the SoR files, the whole diff against the
  baseline up to `DIFF_LIMIT`, files over `FILE_LIMIT` left out and summarised, the checkout
  state; three or four git runs) with the diff indexed by line (`index_diff`: no object per line).
  It runs git, so it is read only while the Files or Diff tab is on screen, and again only when
  `Worktrees.fingerprint` (one `git status`) says the worktree changed: agents edit files without
  touching the database.
"""

from dataclasses import dataclass

from boardlib import Board, BoardError, Reason
from boardlib.records import AuditEntry, Event, TaskView
from boardlib.worktrees import CheckoutState, DetailResult, GitFailure, Worktrees
from boardlib.worktrees.diffs import DiffIndex, index_diff

EVENT_PAGE = 1000
DIFF_LIMIT = 64 * 1024 * 1024  # the drawer reads the whole diff up to this (the HTTP route: 2 MB)
FILE_LIMIT = 16 * 1024 * 1024  # a file larger than this (a generated bundle) is summarised


@dataclass(frozen=True, slots=True)
class TaskData:
    task_id: str
    view: TaskView
    events: list[Event]  # oldest first
    audit: list[AuditEntry]
    checkout: CheckoutState | None = None  # the workspace's true state, when it has one


@dataclass(frozen=True, slots=True)
class WorkspaceData:
    task_id: str
    fingerprint: str
    detail: DetailResult | None  # None: the task has no workspace
    index: DiffIndex | None = None
    problem: str | None = None  # why the workspace could not be read (git failed, unreadable diff)

    @property
    def paths(self) -> list[str]:
        return [file.path for file in self.index.files] if self.index is not None else []


def task_events(board: Board, task_id: str) -> list[Event]:
    """Every event of one task, oldest first (paged: a long task has thousands of heartbeats)."""
    events: list[Event] = []
    since = 0
    while True:
        page = board.events(since=since, task_id=task_id, limit=EVENT_PAGE)
        events += page
        if len(page) < EVENT_PAGE:
            return events
        since = page[-1].seq


def checkout_of(board: Board, task_id: str, view: TaskView | None = None) -> CheckoutState | None:
    """What git says of the task's checkout (None without a workspace, or when git cannot say)."""
    view = view or board.view(task_id)
    if not view.workspaces:
        return None
    try:  # the row alone can say "active" of a cleaned worktree: ask git
        return Worktrees(board).checkout_state(task_id)
    except (BoardError, GitFailure, OSError):
        return None


def read_task(board: Board, task_id: str) -> TaskData:
    view = board.view(task_id)
    checkout = checkout_of(board, task_id, view)
    return TaskData(
        task_id=task_id,
        view=view,
        events=task_events(board, task_id),
        audit=board.audit(task_id),
        checkout=checkout,
    )


def fingerprint(board: Board, task_id: str) -> str:
    """Changes whenever the task's worktree does (see `Worktrees.fingerprint`)."""
    try:
        return Worktrees(board).fingerprint(task_id)
    except (GitFailure, OSError) as error:
        return f"unreadable: {error}"


def read_workspace(board: Board, task_id: str) -> WorkspaceData:
    trees = Worktrees(board)
    try:  # the fingerprint is taken first, from the same `git status` as the checkout's state
        mark, detail = trees.fingerprinted_detail(
            task_id, diff_limit_bytes=DIFF_LIMIT, file_limit_bytes=FILE_LIMIT
        )
    except BoardError as error:
        if error.reason == Reason.NOT_FOUND:
            return WorkspaceData(task_id, fingerprint(board, task_id), None)
        return WorkspaceData(task_id, fingerprint(board, task_id), None, problem=error.message)
    except (GitFailure, OSError) as error:
        return WorkspaceData(task_id, fingerprint(board, task_id), None, problem=str(error))
    index = index_diff(detail.diff, truncated=detail.diff_truncated)
    return WorkspaceData(task_id, mark, detail, index)
