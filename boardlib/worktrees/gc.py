"""Garbage collection of worktrees, at open and on an interval (not only at start-up).

A finished task's checkout is committed and removed after the retention period (its branch stays);
a vanished checkout or branch is pruned; a paused workspace is left alone. Every recursive delete
goes through `Layout.remove_tree`. A worktree another machine made is left to that machine (its
checkout is not on this one's disk), and marking one stale is exactly-once across janitors. The
rules: docs/architecture.md#worktree-garbage-collection and docs/worktrees.md
"""

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .. import transitions as t
from ..actors import GC
from ..config import WORKTREE_GC_INTERVAL, WORKTREE_RETENTION
from ..errors import BoardError, Reason
from ..processes import machine_id
from .layout import Layout, board_key, branch_name, elsewhere, slot_board
from .lock import WorktreeLock
from .results import GcReport, GitFailure

if TYPE_CHECKING:
    from ..board import Board
    from ..records import Task, Workspace

GC_ACTOR = GC  # declared in boardlib.actors
DAY_MS = 24 * 3600 * 1000
DEFAULT_RETENTION_MS = DAY_MS
DEFAULT_INTERVAL_MS = 10 * 60 * 1000


def retention_ms_from_env() -> int:
    """`KANBAN_WORKTREE_RETENTION_MS`: how long a terminal task keeps its checkout (1 day)."""
    return int(WORKTREE_RETENTION.read(DEFAULT_RETENTION_MS))


def _finished_at(task: "Task") -> int:
    return task.completed_at or task.updated_at


def collect_garbage(
    board: "Board",
    *,
    root: Path | str | None = None,
    retention_ms: int | None = None,
    lock_timeout_s: float = 1.0,
) -> GcReport:
    """One pass over the active workspaces; returns what it did. Never raises for one bad
    workspace: its error is reported and the pass goes on."""
    layout = Layout(root)
    board_id = board_key(board.path)
    retention = retention_ms_from_env() if retention_ms is None else retention_ms
    report = GcReport()
    now = board.now()
    here = machine_id()
    for ws in board.workspaces_with_status("active"):
        host = elsewhere(ws, here)  # its own machine's janitor judges it
        if host is not None:
            report.elsewhere.append({"workspaceId": ws.id, "host": host})
            continue
        try:
            _collect_one(board, board_id, layout, ws, now, retention, lock_timeout_s, report)
        except BoardError as error:
            if error.reason == Reason.BUSY:
                report.skipped.append({"workspaceId": ws.id, "why": error.message})
            else:
                report.errors.append({"workspaceId": ws.id, "error": error.message})
        except (GitFailure, OSError, RuntimeError) as error:
            report.errors.append({"workspaceId": ws.id, "error": str(error)})
    return report


def _collect_one(
    board: "Board",
    board_id: str,
    layout: Layout,
    ws: "Workspace",
    now: int,
    retention: int,
    lock_timeout_s: float,
    report: GcReport,
) -> None:
    from . import gitrepo

    repo = Path(ws.repo_path)
    task = board.find_task(ws.task_id)
    branch = ws.branch or branch_name(ws.task_id)
    slot = slot_board(ws.task_id, branch)  # this board's own checkout, never another's
    if ws.worktree_path is None or not layout.owns_worktree(
        repo, ws.task_id, ws.worktree_path, slot
    ):
        report.skipped.append(
            {"workspaceId": ws.id, "why": f"recorded outside {layout.root}: {ws.worktree_path}"}
        )
        return
    path = layout.worktree_path(repo, ws.task_id, slot)
    expired = task is None or (task.status in t.TERMINAL and now - _finished_at(task) >= retention)
    present = path.is_dir() and not path.is_symlink()
    if present and not expired:
        return  # the common case: a live checkout of a live task, nothing to check with git
    lock = WorktreeLock(
        layout.lock_path(repo, ws.task_id, board_id),
        purpose=f"garbage-collect {ws.task_id}",
        timeout_s=lock_timeout_s,
        subject=ws.task_id,
    )
    with lock:
        fresh = [row for row in board.workspaces(ws.task_id) if row.id == ws.id]
        if not fresh or fresh[0].status != "active":
            return  # someone acted on it while we waited
        if slot is None and gitrepo.remade_by_another(
            repo, branch, ws.task_id, board_id, ws.base_commit
        ):  # what is at its place is another board's work: never committed to nor removed
            _mark_stale(board, ws, f"branch {branch} {gitrepo.REMADE}", report)
            return
        present = path.is_dir() and not path.is_symlink()
        repo_alive = gitrepo.open_repo(repo) is not None
        if expired:
            if present:
                if not repo_alive:
                    report.skipped.append(
                        {"workspaceId": ws.id, "why": f"repository {repo} is gone; checkout kept"}
                    )
                    return
                if gitrepo.current_branch(path) != branch:
                    report.skipped.append(
                        {"workspaceId": ws.id, "why": f"checkout is not on {branch}; kept"}
                    )
                    return
                if gitrepo.commit_all(path, f"kanban: {ws.task_id} work kept by gc"):
                    report.committed.append(ws.id)
                with _repo_lock(layout, repo, lock_timeout_s):
                    gitrepo.remove_worktree(repo, path)
                    layout.remove_tree(repo, ws.task_id, slot)
                report.removed.append(ws.id)
            elif repo_alive:
                with _repo_lock(layout, repo, lock_timeout_s):
                    gitrepo.prune(repo)
            status = task.status if task else "deleted"
            _mark_stale(board, ws, f"task {status} for longer than the retention period", report)
            return
        # A live task whose checkout is missing: paused (fine) or vanished (stale)?
        if not repo_alive:
            _mark_stale(board, ws, f"repository {repo} is gone", report)
            return
        entry = gitrepo.registered(repo, path)
        if entry is not None:
            with _repo_lock(layout, repo, lock_timeout_s):
                gitrepo.prune(repo)
            _mark_stale(board, ws, "worktree folder vanished", report)
        elif gitrepo.branch_head(repo, branch) is None:
            _mark_stale(board, ws, f"worktree and branch {branch} are gone", report)


def _repo_lock(layout: Layout, repo: Path, timeout_s: float) -> WorktreeLock:
    return WorktreeLock(
        layout.repo_lock_path(repo),
        purpose="garbage collection",
        timeout_s=max(timeout_s, 5.0),
        subject=f"repository {repo}",
    )


def _mark_stale(board: "Board", ws: "Workspace", why: str, report: GcReport) -> None:
    """Only while still active, in the UPDATE itself: two janitors that share no lock (two
    machines on one Postgres board) both judging it stale write one event between them."""
    try:
        board.update_workspace(
            ws.id, status="stale", actor=GC_ACTOR, reason=why, only_from="active"
        )
    except BoardError as error:
        if error.reason != Reason.CONFLICT:
            raise
        report.skipped.append({"workspaceId": ws.id, "why": "another janitor acted on it first"})
        return
    report.stale.append(ws.id)


class WorktreeJanitor:
    """Runs `collect_garbage` in a daemon thread: once at start, then every `interval_s`.
    `stop()` ends it promptly. Errors of a pass never kill the thread."""

    def __init__(
        self,
        board: "Board",
        *,
        interval_s: float,
        root: Path | str | None = None,
        retention_ms: int | None = None,
    ) -> None:
        self.board = board
        self.interval_s = interval_s
        self.root = root
        self.retention_ms = retention_ms
        self.last_report: GcReport | None = None
        self.passes = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kanban-worktree-gc", daemon=True)

    def run_once(self) -> GcReport:
        report = collect_garbage(self.board, root=self.root, retention_ms=self.retention_ms)
        self.last_report = report
        self.passes += 1
        return report

    def _run(self) -> None:
        while not self._stopped.is_set():
            # A busy or closed board must not kill the janitor: the next pass tries again.
            with contextlib.suppress(Exception):
                self.run_once()
            if self._stopped.wait(self.interval_s):
                return

    def start(self) -> "WorktreeJanitor":
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask the loop to end and wait up to `timeout_s` for a pass under way (a daemon thread:
        one still running then does not keep the process alive)."""
        self._stopped.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=timeout_s)


def start_worktree_gc(
    board: "Board",
    *,
    interval_ms: int | None = None,
    root: Path | str | None = None,
    retention_ms: int | None = None,
) -> WorktreeJanitor:
    """Garbage-collect now and then every interval (`KANBAN_WORKTREE_GC_INTERVAL_MS`, default
    10 min) in the background; stop the returned janitor when the process shuts down."""
    interval = interval_ms or int(WORKTREE_GC_INTERVAL.read(DEFAULT_INTERVAL_MS))
    return WorktreeJanitor(
        board, interval_s=interval / 1000, root=root, retention_ms=retention_ms
    ).start()
