"""Catching a task's worktree up with its base branch: `kanban task workspace sync ID`.

The base's tip is merged (or the branch rebased onto it) inside the task's own worktree, never in
the user's checkout. Uncommitted work is committed first, as pause and complete do. A conflict is
left in the worktree for the agent to resolve (the answer is `merge_conflict` naming the files);
it then completes again, which commits the resolution.

After a sync the task's baseline moves: diffs, the empty-work test and landing are then taken
from the synced tip, not from where the worktree was first made. The new baseline is a commit of
the synced tip's tree with the scaffold's bookkeeping files (so `init.sh`'s provision-time verify
command stays the operator's), kept alive by `refs/kanban/baselines/<slot>` (`layout.task_slot`:
the task id, and the board's key when another board on the repository holds the id).
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import transitions as t
from .. import validation as validate
from ..actors import is_agent
from ..errors import BoardError, Reason, invalid_input
from ..lifecycle import check_worker
from ..records import Record
from . import gitrepo, landgit
from .landing import Lander
from .layout import branch_name, branch_slot
from .results import GitFailure, name_files

if TYPE_CHECKING:
    from .manager import Worktrees

SYNC_STRATEGIES = ("merge", "rebase")


@dataclass(frozen=True, slots=True)
class SyncResult(Record):
    """What a sync did: the base tip now in the worktree, from where, and how."""

    task_id: str
    strategy: str
    into: str
    base_tip: str
    previous_base: str  # the commit the worktree was made from (or last synced with)
    up_to_date: bool  # nothing to bring in: the worktree already had the base's tip
    head: str | None = None  # the task branch afterwards
    baseline: str | None = None  # the new baseline commit
    commits: int = 0  # base commits brought in
    committed: bool = False  # uncommitted work was committed first
    conflicts: list[str] = field(default_factory=list)
    path: str | None = None
    action: str = "sync"


def sync_with_base(
    trees: "Worktrees",
    task_id: str,
    *,
    actor: str,
    strategy: str = "merge",
    into: str | None = None,
    epoch: int | None = None,
) -> SyncResult:
    """Merge the base branch's tip into the task's worktree (`strategy="rebase"`: rebase the task
    branch onto it). An agent syncs only a task it holds; operators any. Refusals (`invalid_input`,
    `not_assignee`, `invalid_state`, `not_found`) write nothing; a conflict is `merge_conflict`
    with the files, left in the worktree to resolve."""
    actor = validate.name(actor, "actor")  # before anything is committed or merged in its name
    if not isinstance(strategy, str) or strategy not in SYNC_STRATEGIES:
        raise invalid_input(
            f"strategy must be one of {', '.join(SYNC_STRATEGIES)}", field="strategy"
        )
    task, ws = trees._workspace(task_id)
    check_worker(task, "sync the worktree of", actor=actor, epoch=epoch)
    if task.status == t.CANCELLED:
        raise BoardError(Reason.INVALID_STATE, f"cannot sync: {task_id} is cancelled", id=task_id)
    if is_agent(actor) and task.status in (t.IN_REVIEW, t.DONE):
        # Handed in: a sync (and the resolving after it) would change work that was judged, or
        # is being judged, and it would land unreviewed.
        raise BoardError(
            Reason.INVALID_STATE,
            f"cannot sync {task_id} as {actor}: it is {t.label(task.status)}, its work handed "
            "in for judging; an operator may sync it (or reject it back to its builder while "
            "it is in review)",
            id=task_id,
            status=task.status,
        )
    repo = Path(ws.repo_path)
    with trees._lock(repo, task_id, "sync"):
        task, ws = trees._workspace(task_id)
        path = trees._live_checkout(ws, "sync")
        trees._check_branch(path, ws, "sync")
        pending = gitrepo.operation_in_progress(path)
        if pending is not None:
            raise BoardError(
                Reason.INVALID_STATE,
                f"cannot sync: a {pending} is under way in the worktree of {task_id}; resolve "
                "its conflicts and complete (or finish the rebase) first",
                id=task_id,
                files=gitrepo.unmerged_files(path),
                path=str(path),
            )
        lander = Lander(trees)
        branch = ws.branch or branch_name(task_id)
        into_name = lander._base_branch(ws, repo, into, branch)
        assert ws.base_commit is not None
        previous = landgit.parent_of(repo, ws.base_commit)
        tip = gitrepo.branch_head(repo, into_name)
        assert previous is not None and tip is not None
        head = gitrepo.head(path)
        if tip == previous or landgit.is_ancestor(repo, tip, head):
            return SyncResult(
                task_id=task_id, strategy=strategy, into=into_name, base_tip=tip,
                previous_base=previous, up_to_date=True, head=head, baseline=ws.base_commit,
                path=str(path),
            )  # fmt: skip
        incoming = landgit.count_commits(repo, previous, tip)
        committed = (
            gitrepo.commit_all(
                path, f"kanban: {task_id} work saved before syncing with {into_name}"
            )
            is not None
        )
        conflicts = _bring_in(path, tip, into_name, task_id, strategy)
        baseline = _new_baseline(trees, repo, ws.base_commit, tip, task_id, branch, into_name)
        trees.board.update_workspace(
            ws.id,
            actor=actor,
            base_commit=baseline,
            reason=f"synced with {into_name}@{tip[:12]} ({strategy})"
            + (f"; {len(conflicts)} conflict(s) to resolve" if conflicts else ""),
        )
        result = SyncResult(
            task_id=task_id, strategy=strategy, into=into_name, base_tip=tip,
            previous_base=previous, up_to_date=False, head=gitrepo.head(path),
            baseline=baseline, commits=incoming, committed=committed, conflicts=conflicts,
            path=str(path),
        )  # fmt: skip
    if conflicts:
        shown = name_files(conflicts, 10)
        raise BoardError(
            Reason.MERGE_CONFLICT,
            f"syncing {task_id} with {into_name} conflicts in {shown}: the conflicts are left in "
            f"the worktree ({path}); resolve them, then "
            + ("complete again" if task.status == t.IN_PROGRESS else "land again"),
            id=task_id,
            status=task.status,
            files=conflicts,
            into=into_name,
            base_tip=tip,
            strategy=strategy,
            path=str(path),
            baseline=result.baseline,
        )
    return result


def _bring_in(path: Path, tip: str, into: str, task_id: str, strategy: str) -> list[str]:
    """Merge or rebase; the conflicting files ([] when it went through)."""
    options = [*landgit.NO_HOOKS, *landgit.identity(path)]
    if strategy == "merge":
        message = f"kanban: sync {task_id} with {into}"
        args = ["merge", "--no-ff", "--no-edit", "--no-verify", "-m", message, tip]
    else:
        args = ["rebase", "--no-autostash", tip]
    status, _, stderr = gitrepo.run(path, *options, *args, check=False)
    if status == 0:
        return []
    conflicts = gitrepo.unmerged_files(path)
    if not conflicts and gitrepo.operation_in_progress(path) is None:
        raise GitFailure(args, status, stderr)
    return conflicts


def _new_baseline(
    trees: "Worktrees", repo: Path, scaffold: str, tip: str, task_id: str, branch: str, into: str
) -> str:
    """The baseline after a sync: the synced tip's tree with the scaffold's bookkeeping files,
    on the tip; a ref keeps it from git's garbage collection."""
    tree = landgit.without_bookkeeping(repo, landgit.tree_of(repo, tip), scaffold)
    # the board that made the branch, as the scaffold (or the baseline before) says: a board
    # whose file moved since has another key, and its branch is still its own
    board = gitrepo.commit_board(repo, scaffold) or trees.board_key
    message = (
        f"kanban: baseline of {task_id} after syncing with {into}@{tip[:12]}\n\n"
        f"Kanban-Task: {task_id}\nKanban-Board: {board}\n"
    )
    commit = landgit.commit_tree(repo, tree, (tip,), message)
    landgit.update_refs(
        repo,
        [f"update {landgit.baseline_ref(branch_slot(task_id, branch))} {commit}"],
        message.split("\n")[0],
    )
    return commit
