"""Per-task git worktrees: provision, handoff, cold resume, pause, complete, detail.

A file-mutating task gets its own checkout on branch `kanban/task-<id>` (`kanban/task-<id>@<board
key>` when another board on the repository holds that name), outside the user's repository (see
`layout`), with the system-of-record scaffold committed as the baseline every diff
is taken against. The board keeps only pointers (`worktree_ref`/`branch_ref` on the task, a
`workspaces` row per checkout) and changes them through `Board` methods; the checkout itself lives
here. Every operation on one worktree holds its cross-process lock (`lock`), mutations
exclusively, reads shared.

Refusals are `BoardError`s raised before anything is created. A git command that fails after the
operation began raises `GitFailure`, with whatever the operation had created rolled back.

`resume` and `write_handoff` only read and write files, so they do not import git at all.
"""

import contextlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import transitions as t
from .. import validation as validate
from ..actors import OPERATOR, SYSTEM
from ..config import GATE_BEAT, VERIFY_TIMEOUT, WORKTREES_VARIABLE
from ..errors import BoardError, Reason, invalid_input, wrong_state
from ..lifecycle import check_epoch, check_worker
from ..records import CheckReport, Comment, Task, Workspace
from ..review import review_entries
from ..shell import shell_command
from . import sor
from .gate import (
    DEFAULT_TIMEOUT_S,
    EMPTY_DIFF_REMOVED,
    GATE_ACTOR,
    GATE_BEAT_S,
    gate_beating,
    gate_bound_ms,
    run_gate,
)
from .layout import Layout, board_key, branch_name, check_task_id, elsewhere, slot_board
from .lock import WorktreeLock
from .results import (
    CHECKED_OUT,
    CLEANED,
    KEPT,
    MISSING,
    OUTSIDE_WORKTREES,
    PAUSED,
    CheckoutState,
    CompleteInfo,
    CompleteResult,
    DetailResult,
    DiffStat,
    FileStat,
    HandoffResult,
    LandingChoices,
    PauseInfo,
    PauseResult,
    ProvisionResult,
    ResumeResult,
    WorktreeInfo,
    name_files,
)

if TYPE_CHECKING:
    from ..board import Board
    from ..review import ReviewNote
    from .gitrepo import CheckoutStatus, DiffRead, RepoInfo
    from .landing import AbandonResult, Lander, LandingPreview, LandResult
    from .sync import SyncResult

NO_ISOLATION_KINDS = frozenset({"research", "review"})
REPO_PATH_MAX = 4000
BASE_REF_MAX = 400
KIND_MAX = 100
# What `handoff --template` writes where it knows no value: a handoff that still says it is
# refused ("your-runtime" was recorded as the task's runtime).
HANDOFF_PLACEHOLDERS = {"handoffFrom": "your-agent-name", "runtime": "your-runtime"}

_HEX_SHA = re.compile(r"[0-9a-fA-F]{4,64}")
# What `git check-ref-format` refuses anywhere in a name, and whitespace: checked before git runs.
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def isolation_for(kind: str) -> str:
    """Seed 003: `research`/`review` need no isolation; `code` and every other kind a worktree."""
    return "none" if kind.strip().lower() in NO_ISOLATION_KINDS else "worktree"


def _git() -> Any:
    """The git-backed helpers, imported on first use: the file-only operations never pay for it."""
    from . import gitrepo

    return gitrepo


def provision_command(task_id: str, repo_path: str) -> str:
    """The exact shell command that checks a task's branch out again (or makes a fresh worktree)."""
    return shell_command("kanban", "task", "workspace", "provision", task_id, "--repo", repo_path)


def workspace_not_found(task_id: str, why: str | None = None) -> BoardError:
    return BoardError(
        Reason.NOT_FOUND,
        "workspace not found" + (f": {why}" if why else ""),
        id=task_id,
        what="workspace",
    )


class Worktrees:
    """The worktree subsystem for one board. Cheap to build; safe to share between threads."""

    def __init__(
        self,
        board: "Board",
        *,
        root: Path | str | None = None,
        lock_timeout_s: float = 60.0,
        read_lock_timeout_s: float = 2.0,
        verify_timeout_s: float | None = None,
        diff_limit_bytes: int | None = None,
        gate_beat_s: float | None = None,
    ) -> None:
        self.board = board
        self.layout = Layout(root)
        self.diff_limit_bytes = diff_limit_bytes  # None: gitrepo.DIFF_LIMIT
        self.lock_timeout_s = lock_timeout_s
        self.read_lock_timeout_s = read_lock_timeout_s
        if verify_timeout_s is None:
            verify_timeout_s = VERIFY_TIMEOUT.read(DEFAULT_TIMEOUT_S)
        self.verify_timeout_s = verify_timeout_s
        if gate_beat_s is None:
            gate_beat_s = GATE_BEAT.read(GATE_BEAT_S)
        self.gate_beat_s = gate_beat_s  # how often a running gate says it lives (`gate_beating`)
        self.board_key = board_key(board.path)

    # -- locks ----------------------------------------------------------------------------------

    def _lock(
        self, repo: Path, task_id: str, purpose: str, *, shared: bool = False
    ) -> WorktreeLock:
        return WorktreeLock(
            self.layout.lock_path(repo, task_id, self.board_key),
            purpose=f"{purpose} {task_id}",
            shared=shared,
            timeout_s=self.read_lock_timeout_s if shared else self.lock_timeout_s,
            subject=task_id,
        )

    def _repo_lock(self, repo: Path, purpose: str) -> WorktreeLock:
        """Serialises changes to the repository's shared worktree and branch metadata (worktree
        add/remove/prune, branch delete) across tasks. Always taken after a task's lock."""
        return WorktreeLock(
            self.layout.repo_lock_path(repo),
            purpose=purpose,
            timeout_s=self.lock_timeout_s,
            subject=f"repository {repo}",
        )

    # -- lookups --------------------------------------------------------------------------------

    def _workspace(self, task_id: str) -> tuple[Task, Workspace]:
        check_task_id(task_id)
        task = self.board.get_task(task_id)
        rows = self.board.workspaces(task_id)
        if not rows or not rows[-1].worktree_path:
            raise workspace_not_found(task_id)
        return task, rows[-1]

    def _checkout(self, ws: Workspace, *, ours: bool = False) -> tuple[Path | None, str | None]:
        """The workspace's worktree folder when it is live, and a problem when the row cannot be
        trusted: its path must be exactly where this root puts this task's checkout, and its
        branch must still be this board's (`_remade`; `ours` when the caller knows it is)."""
        repo = Path(ws.repo_path)
        slot = slot_board(ws.task_id, ws.branch)
        if not self._owned(ws):
            return None, (
                f"the workspace of {ws.task_id} is recorded at {ws.worktree_path}, outside this "
                f"worktrees folder ({self.layout.root}); run with the same {WORKTREES_VARIABLE}"
            )
        remade = None if ours else self._remade(ws)
        if remade:
            return None, remade
        path = self.layout.worktree_path(repo, ws.task_id, slot)
        if path.is_symlink() or not path.is_dir():
            return None, None
        return path, None

    def _owned(self, ws: Workspace) -> bool:
        """Whether the row's path is exactly where this root puts the task's checkout."""
        if not ws.worktree_path:
            return False
        slot = slot_board(ws.task_id, ws.branch)
        return self.layout.owns_worktree(Path(ws.repo_path), ws.task_id, ws.worktree_path, slot)

    def _untrusted(self, ws: Workspace, problem: str) -> BoardError:
        """The `conflict` of a workspace `_checkout` cannot trust, `why` it is another worktrees
        folder's (`OUTSIDE_WORKTREES`): not someone else's task, a process run elsewhere."""
        why = {} if self._owned(ws) else {"why": OUTSIDE_WORKTREES}
        return BoardError(Reason.CONFLICT, problem, id=ws.task_id, **why)

    def _remade(self, ws: Workspace) -> str | None:
        """Why the row's plain branch (and so its checkout folder) is no longer this workspace's:
        deleted by hand, it was made again by another board on the repository (see
        `gitrepo.remade_by_another`). A keyed branch holds this board's key in its name."""
        branch = ws.branch or branch_name(ws.task_id)
        if slot_board(ws.task_id, branch) is not None:
            return None
        from . import landgit

        gitrepo, repo = _git(), Path(ws.repo_path)
        tip = landgit.branch_tip_from_files(repo, branch)
        if tip is not None and ws.base_commit is not None and tip != ws.base_commit:
            # work committed on the row's scaffold: git's walk would find that scaffold first
            needles = gitrepo.scaffold_needles(ws.task_id)
            if landgit.grown_from(repo, tip, ws.base_commit, needles):
                return None
        other = gitrepo.remade_by_another(
            repo, branch, ws.task_id, self.board_key, ws.base_commit, tip=tip
        )
        if other is None:
            return None
        return (
            f"the branch {branch} of {ws.task_id} was deleted and is now another board's "
            f"{ws.task_id} (board {other}), as is its checkout; this board's work on it is "
            f"gone, and `{provision_command(ws.task_id, ws.repo_path)}` makes a fresh worktree"
        )

    @staticmethod
    def _check_here(ws: Workspace, verb: str) -> None:
        """Refuse (`invalid_state`, naming the machine) to `verb` a workspace whose files are on
        another machine: not "not checked out", which sends the operator to provision it here,
        nor a re-attach of its branch that would judge it without what is uncommitted there."""
        host = elsewhere(ws)
        if host is not None:
            raise BoardError(
                Reason.INVALID_STATE,
                f"cannot {verb} here: the worktree of {ws.task_id} is on machine {host}, not on "
                f"this one; {verb} it from there",
                id=ws.task_id,
                host=host,
            )

    def _live_checkout(self, ws: Workspace, verb: str) -> Path:
        self._check_here(ws, verb)
        path, problem = self._checkout(ws)
        if problem:
            raise self._untrusted(ws, problem)
        if ws.status != "active" or path is None:
            command = provision_command(ws.task_id, ws.repo_path)
            raise BoardError(
                Reason.INVALID_STATE,
                f"cannot {verb}: the worktree of {ws.task_id} is not checked out "
                f"(workspace {ws.status}); run `{command}` to check its branch out again",
                id=ws.task_id,
                workspaceStatus=ws.status,
                command=command,
            )
        return path

    def _reattach_paused(self, ws: Workspace, actor: str) -> Path:
        """Check a paused worktree's branch out again, in place, for an operation that needs the
        files (complete). The caller holds the task's lock. A branch that is gone is refused with
        the command that makes a fresh worktree."""
        gitrepo = _git()
        repo = Path(ws.repo_path)
        branch = ws.branch or branch_name(ws.task_id)
        if not repo.is_dir() or gitrepo.branch_head(repo, branch) is None:
            return self._live_checkout(ws, "re-attach")  # raises, naming the command
        slot = slot_board(ws.task_id, branch)
        path = self.layout.worktree_path(repo, ws.task_id, slot)
        with self._repo_lock(repo, f"re-attach {ws.task_id}"):
            self._clear_leftover(repo, ws.task_id, slot)
            gitrepo.add_worktree(repo, path, branch, start=None)
        self.board.update_workspace(ws.id, actor=actor, reason="re-attached", here=True)
        return path

    def _check_branch(self, path: Path, ws: Workspace, verb: str) -> None:
        """Commits go to the task's branch only: refuse when someone switched the checkout, or
        while a conflict in it is unresolved."""
        self._check_resolved(path, ws, verb)
        self._check_branch_name(ws, verb, _git().current_branch(path))

    @staticmethod
    def _check_resolved(path: Path, ws: Workspace, verb: str) -> None:
        """A stopped rebase, or a merge whose conflicted files still hold git's markers, is
        work the agent has not finished: `git add --all` would commit (and land) the markers.
        A merge whose files were edited clean goes on: completing commits the resolution."""
        gitrepo = _git()
        pending = gitrepo.operation_in_progress(path)
        if pending == "rebase":
            raise BoardError(
                Reason.INVALID_STATE,
                f"cannot {verb}: a rebase is under way in the worktree of {ws.task_id}; finish "
                "it (`git rebase --continue`) or abort it (`git rebase --abort`) first",
                id=ws.task_id,
                files=gitrepo.unmerged_files(path),
                path=str(path),
            )
        files = gitrepo.still_conflicted(path) if pending == "merge" else []
        if files:
            raise BoardError(
                Reason.MERGE_CONFLICT,
                f"cannot {verb}: the worktree of {ws.task_id} has unresolved conflicts in "
                f"{name_files(files)} (git's conflict markers are still there); resolve them first",
                id=ws.task_id,
                files=files,
                path=str(path),
                why="unresolved",
            )

    @staticmethod
    def _check_branch_name(ws: Workspace, verb: str, current: str | None) -> None:
        """`_check_branch` for a checkout whose branch the caller read (None: detached)."""
        branch = ws.branch or branch_name(ws.task_id)
        if current != branch:
            raise BoardError(
                Reason.CONFLICT,
                f"cannot {verb}: the worktree of {ws.task_id} has "
                f"{current or 'a detached HEAD'} checked out, not {branch}; switch back first",
                id=ws.task_id,
                branch=current,
                expected=branch,
            )

    # -- validation (nothing is created before these pass) ------------------------------------

    def _check_repo(self, repo_path: Any) -> "RepoInfo":
        if isinstance(repo_path, os.PathLike):
            repo_path = os.fspath(repo_path)
        if not isinstance(repo_path, str) or not repo_path.strip():
            raise invalid_input("repoPath is required", field="repoPath")
        if len(repo_path) > REPO_PATH_MAX:
            raise invalid_input(
                f"repoPath is longer than {REPO_PATH_MAX} characters", field="repoPath"
            )
        if any(ord(char) < 32 or ord(char) == 127 for char in repo_path):
            raise invalid_input("repoPath contains control characters", field="repoPath")
        if repo_path.startswith("-"):
            raise invalid_input(
                "repoPath must not start with '-' (git could read it as an option)",
                field="repoPath",
            )
        real = Path(os.path.realpath(os.path.abspath(repo_path)))
        try:
            is_dir = real.is_dir()
        except OSError:  # a name the filesystem cannot hold (ENAMETOOLONG), unreadable...
            is_dir = False
        if not is_dir:
            raise invalid_input(
                f"repoPath is not an existing directory: {repo_path}", field="repoPath"
            )
        if real == self.layout.root or self.layout.contains(real):
            raise invalid_input(
                "repoPath lies inside kanban's worktrees folder; give the original repository",
                field="repoPath",
            )
        info: RepoInfo | None = _git().open_repo(real)
        if info is None:
            raise invalid_input(
                f"repoPath is not inside a git work tree (bare repositories have none): "
                f"{repo_path}",
                field="repoPath",
            )
        if self.layout.contains(info.root):
            raise invalid_input(
                "repoPath lies inside kanban's worktrees folder; give the original repository",
                field="repoPath",
            )
        if self.layout.root.is_relative_to(info.root):
            raise invalid_input(
                f"kanban's worktrees folder ({self.layout.root}) lies inside the repository, so "
                f"checkouts would show up in its git status; set {WORKTREES_VARIABLE} elsewhere",
                field="repoPath",
            )
        return info

    @staticmethod
    def _check_base(base_sha: Any, base_ref: Any, *, field: str = "baseRef") -> tuple[str, str]:
        """("sha", hex) or ("ref", name), refusing anything git could read as an option or that
        is not a well-formed ref name (named `field` in the refusal: landing's is `into`)."""
        if base_sha is not None:
            if base_ref not in (None, "HEAD"):
                raise invalid_input("give baseSha or baseRef, not both", field="baseSha")
            if not isinstance(base_sha, str) or not _HEX_SHA.fullmatch(base_sha):
                raise invalid_input(
                    "baseSha must be a commit id of 4 to 64 hexadecimal digits", field="baseSha"
                )
            return "sha", base_sha.lower()
        ref = "HEAD" if base_ref is None else base_ref
        if (
            not isinstance(ref, str)
            or not ref
            or len(ref) > BASE_REF_MAX
            or ref.startswith(("-", "/", "."))
            or ref.endswith(("/", ".", ".lock"))
            or "/." in ref
            or ref == "@"
            or _REF_FORBIDDEN.search(ref)
        ):
            raise invalid_input(
                f"{field} is not a valid ref name (a branch, tag or HEAD; it must not start with "
                "'-' or hold spaces, '..', '~', '^', ':', '?', '*', '[', '\\' or '@{')",
                field=field,
                baseRef=ref if isinstance(ref, str) and len(ref) <= BASE_REF_MAX else None,
            )
        return "ref", ref

    def _resolve_base(self, repo: Path, base: tuple[str, str]) -> str:
        gitrepo = _git()
        kind, value = base
        if kind == "ref" and value != "HEAD" and not gitrepo.ref_name_is_valid(repo, value):
            raise invalid_input(f"baseRef is not a valid ref name: {value}", field="baseRef")
        sha = gitrepo.resolve_commit(repo, value)
        if sha is None:
            field = "baseSha" if kind == "sha" else "baseRef"
            # A repository just made with `git init` has no commit for HEAD to name: say so, and
            # what to do.
            fresh = (
                "; the repository has no commit yet: commit its files first (a task's "
                "worktree branches from a commit)"
                if (kind, value) == ("ref", "HEAD")
                else ""
            )
            raise invalid_input(
                f"{field} {value} does not name a commit in {repo}{fresh}",
                field=field,
                **{field: value},
            )
        return str(sha)

    # -- provision ------------------------------------------------------------------------------

    def provision(
        self,
        task_id: str,
        repo_path: str | os.PathLike[str],
        *,
        base_sha: str | None = None,
        base_ref: str | None = "HEAD",
        kind: str | None = None,
        actor: str = SYSTEM,
        epoch: int | None = None,
    ) -> ProvisionResult:
        """Give `task_id` its worktree on its branch (`_slot_for`) from `repo_path` at `base_sha`
        (or `base_ref`, default HEAD), with the SoR scaffold committed as the baseline, and record
        it on the board. A live checkout is reused; a paused or collected one gets its branch
        checked out again; no second workspace row either way. `kind` defaults to the task's own
        kind (an empty one too: seed 003 allows `kind: ""`, which names no kind);
        `research`/`review` are refused with `no_isolation`."""
        check_task_id(task_id)
        task = self.board.get_task(task_id)
        actor = validate.name(actor, "actor")
        check_worker(task, "provision a worktree for", actor=actor, epoch=epoch)
        blank = isinstance(kind, str) and not kind.strip() and len(kind) <= KIND_MAX
        effective = task.kind if kind is None or blank else kind
        if not isinstance(effective, str) or not effective.strip() or len(effective) > KIND_MAX:
            raise invalid_input(f"kind must be 1 to {KIND_MAX} characters", field="kind")
        if isolation_for(effective) == "none":
            raise BoardError(  # HTTP answers seed 003's `error: "no_isolation"`, this as message
                Reason.NO_ISOLATION,
                f"cannot provision a worktree for {task_id}: a {effective} task changes no files, "
                "so it gets none; do its work without a worktree (or give it a kind that changes "
                "files, such as code)",
                isolation="none",
                kind=effective,
                id=task_id,
            )
        if task.status in t.TERMINAL:
            live = tuple(status for status in t.STATUSES if status not in t.TERMINAL)
            raise wrong_state("provision a worktree", task.status, live, id=task_id)
        if task.dropped:
            raise BoardError(
                Reason.INVALID_STATE,
                f"cannot provision a worktree: {task_id} is dropped (restore it first)",
                id=task_id,
            )
        base = self._check_base(base_sha, base_ref)
        repo = self._check_repo(repo_path)
        base_commit = self._resolve_base(repo.root, base)
        with self._lock(repo.root, task_id, "provision"):
            rows = self.board.workspaces(task_id)
            latest = rows[-1] if rows else None
            same_repo = latest is not None and os.path.realpath(latest.repo_path) == str(repo.root)
            if latest is not None and latest.status in ("active", "stale") and same_repo:
                reused = self._reattach(task, latest, repo, actor)
                if reused is not None:
                    self._write_review(task_id, Path(reused.worktree.worktree_path))
                    return reused
            elif latest is not None and latest.status == "active":
                raise BoardError(
                    Reason.CONFLICT,
                    f"{task_id} already has a worktree of another repository "
                    f"({latest.repo_path}); complete it, or let it go stale, first",
                    id=task_id,
                    repoPath=latest.repo_path,
                )
            made = self._create(task, repo, base_commit, base, actor)
            self._write_review(task_id, Path(made.worktree.worktree_path))
            return made

    def _clear_leftover(self, repo: Path, task_id: str, slot: str | None) -> None:
        """Make room at the task's path (in `slot`, see `layout.task_slot`): prune git's record of
        a vanished checkout; an empty leftover folder goes, a non-empty unregistered one is
        refused (it may hold work)."""
        gitrepo = _git()
        path = self.layout.worktree_path(repo, task_id, slot)
        gitrepo.prune(repo)
        if path.is_symlink():
            self.layout.remove_tree(repo, task_id, slot)
        elif path.exists():
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()
            else:
                raise BoardError(
                    Reason.CONFLICT,
                    f"{path} exists but is not a registered checkout of {task_id}; move it away "
                    "(it may hold someone's files) and provision again",
                    id=task_id,
                    path=str(path),
                )

    def _reattach(
        self, task: Task, ws: Workspace, repo: "RepoInfo", actor: str
    ) -> ProvisionResult | None:
        """Reuse a live checkout, or check the branch out again; None when the branch is gone and
        a fresh worktree is needed."""
        gitrepo = _git()
        branch = ws.branch or branch_name(task.id)
        slot = slot_board(task.id, branch)
        path = self.layout.worktree_path(repo.root, task.id, slot)
        remade = self._remade(ws)
        if remade:  # never reuse another board's checkout: a fresh worktree, in its own slot
            if ws.status == "active":
                self.board.update_workspace(
                    ws.id, status="stale", actor=actor, reason=f"branch {branch} {_git().REMADE}"
                )
            return None
        _, problem = self._checkout(ws)
        if problem:
            raise self._untrusted(ws, problem)
        entry = gitrepo.registered(repo.root, path)
        if entry is not None and not entry.prunable and path.is_dir() and not path.is_symlink():
            if entry.branch != branch:
                raise BoardError(
                    Reason.CONFLICT,
                    f"the worktree of {task.id} has {entry.branch or 'a detached HEAD'} checked "
                    f"out, not {branch}",
                    id=task.id,
                )
            status = "active" if ws.status != "active" else None
            if self._branch_made_again(repo.root, ws, branch):
                updated = self.board.update_workspace(
                    ws.id, status=status, actor=actor, reason=f"branch {branch} made again",
                    here=True,
                )  # fmt: skip
                return self._provisioned(updated, reattached=True)
            updated = self.board.update_workspace(
                ws.id, status=status, actor=actor, reason="reused", here=True
            )
            return self._provisioned(updated, reused=True)
        if gitrepo.branch_head(repo.root, branch) is None:
            if ws.status == "active":
                self.board.update_workspace(
                    ws.id, status="stale", actor=actor, reason=f"branch {branch} is gone"
                )
            return None
        with self._repo_lock(repo.root, f"re-attach {task.id}"):
            self._clear_leftover(repo.root, task.id, slot)
            gitrepo.add_worktree(repo.root, path, branch, start=None)
        updated = self.board.update_workspace(
            ws.id,
            status="active" if ws.status != "active" else None,
            actor=actor,
            reason="re-attached",
            here=True,
        )
        return self._provisioned(updated, reattached=True)

    def _branch_made_again(self, repo: Path, ws: Workspace, branch: str) -> bool:
        """A live checkout whose branch was deleted by hand (`update-ref -d`) is on an unborn
        branch: git cannot read it, and its next commit would be a root commit. The branch is
        made again at the row's baseline (create-only: never over a branch made meanwhile);
        what was committed since shows as staged changes, nothing in the checkout is touched.
        False when the branch is there (or the baseline is gone too)."""
        gitrepo = _git()
        if gitrepo.branch_head(repo, branch) is not None or not ws.base_commit:
            return False
        if gitrepo.resolve_commit(repo, ws.base_commit) is None:
            return False
        with self._repo_lock(repo, f"make the branch of {ws.task_id} again"):
            status, _, stderr = gitrepo.run(
                repo, "update-ref", "-m", f"kanban: {ws.task_id}'s branch made again",
                f"refs/heads/{branch}", ws.base_commit, "", check=False,
            )  # fmt: skip
        if status != 0:
            raise BoardError(
                Reason.CONFLICT,
                f"the branch {branch} of {ws.task_id} was deleted, and could not be made again: "
                f"{stderr.decode(errors='replace').strip()[-200:]}",
                id=ws.task_id,
                branch=branch,
            )
        return True

    def _create(
        self, task: Task, repo: "RepoInfo", base_commit: str, base: tuple[str, str], actor: str
    ) -> ProvisionResult:
        gitrepo = _git()
        made = False  # whether this call made the branch: a rollback deletes only that
        slot: str | None = None
        branch = branch_name(task.id)
        try:
            # The slot is chosen and filled (branch, checkout, scaffold) under the repository's
            # lock: another board of the same worktrees folder choosing at once sees the branch
            # with its scaffold, never a branch it would take for one made by hand.
            with self._repo_lock(repo.root, f"provision {task.id}"):
                slot, baseline = self._slot_for(task.id, repo.root)
                path = self.layout.worktree_path(repo.root, task.id, slot)
                branch = branch_name(task.id, slot)
                if baseline is not None:  # left behind by a crash between git and the board
                    entry = gitrepo.registered(repo.root, path)
                    if (
                        entry is None
                        or entry.prunable
                        or entry.branch != branch
                        or not path.is_dir()
                    ):
                        self._clear_leftover(repo.root, task.id, slot)
                        gitrepo.add_worktree(repo.root, path, branch, start=None)
                else:
                    self._clear_leftover(repo.root, task.id, slot)
                    try:
                        gitrepo.add_worktree(repo.root, path, branch, start=base_commit)
                    finally:
                        # git can fail after making both (a post-checkout hook, a required filter
                        # missing): left there, the branch would refuse every later provision
                        made = gitrepo.branch_head(repo.root, branch) is not None
                    baseline = self._scaffold(task, path, repo.root, branch, base_commit, base)
        except BaseException:
            if made:
                self._rollback(repo.root, task.id, slot, branch, True)
            raise
        try:
            ws = self.board.record_workspace(
                task.id,
                repo_path=str(repo.root),
                branch=branch,
                worktree_path=str(path),
                base_commit=baseline,
                base_ref=self._base_branch_name(repo.root, base),
                actor=actor,
            )
        except BaseException:
            self._rollback(repo.root, task.id, slot, branch, made)
            raise
        return self._provisioned(ws, reattached=not made)

    def _slot_for(self, task_id: str, repo: Path) -> tuple[str | None, str | None]:
        """The slot a new worktree of `task_id` takes (`layout.task_slot`): the plain one, unless
        another board's branch holds it, or a live checkout whose branch was deleted under it
        (another board's: this one's own is reused before), then this board's own. With the
        baseline there when a crash left this board's branch behind. A branch no board made is
        refused: it is someone's own work, and the board neither takes nor touches it."""
        gitrepo = _git()
        for slot in (None, self.board_key):
            branch = branch_name(task_id, slot)
            if gitrepo.branch_head(repo, branch) is None:
                path = self.layout.worktree_path(repo, task_id, slot)
                if slot is None and path.exists() and gitrepo.registered(repo, path) is not None:
                    continue
                return slot, None
            made = gitrepo.branch_maker(repo, branch, task_id, check=True)
            if made is not None and made[0] == self.board_key:
                return slot, made[1]
            if made is None:
                raise BoardError(
                    Reason.CONFLICT,
                    f"branch {branch} already exists in {repo} and no kanban board made it for "
                    f"{task_id}; rename that branch (it keeps its commits) and provision again",
                    id=task_id,
                    branch=branch,
                )
        raise AssertionError("unreachable: this board's own slot is ours or refused above")

    @staticmethod
    def _base_branch_name(repo: Path, base: tuple[str, str]) -> str | None:
        """The branch a worktree is made from (where its work lands by default): the branch
        HEAD is on, or the branch `baseRef` names; None for a commit, a tag or a detached HEAD."""
        gitrepo = _git()
        kind, value = base
        if kind != "ref":
            return None
        if value == "HEAD":
            status, out, _ = gitrepo.run(repo, "symbolic-ref", "--quiet", "HEAD", check=False)
            ref = out.decode(errors="replace").strip() if status == 0 else ""
            return ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
        name = value.removeprefix("refs/heads/")
        return name if gitrepo.branch_head(repo, name) is not None else None

    def _scaffold(
        self,
        task: Task,
        path: Path,
        repo: Path,
        branch: str,
        base_commit: str,
        base: tuple[str, str],
    ) -> str:
        """Write the SoR files and commit them: that commit is the baseline of every diff, and its
        `init.sh` holds the operator's verify command (see `_operator_verify_command`)."""
        label = base[1] if base[0] == "ref" else "pinned sha"
        verify, origin = self._operator_verify_command(repo)
        files = {
            sor.TASK_MD: sor.task_md(
                task.id, task.title, task.description,
                branch=branch, base_commit=base_commit, base_label=label, repo=str(repo),
            ),
            sor.PROGRESS_MD: sor.progress_md(task.id),
            sor.DECISIONS_JSON: "[]\n",
            sor.INIT_SH: sor.init_sh(task.id, verify, fixed_by=origin),
            sor.VERIFICATION_MD: sor.verification_md(task.id),
        }  # fmt: skip
        for name, content in files.items():
            sor.write_file(path, name, content, executable=name == sor.INIT_SH)
        title = " ".join(task.title.split())[:200]
        message = (
            f"{_git().SCAFFOLD_SUBJECT}{task.id}\n\n{title}\n\n"
            f"Kanban-Task: {task.id}\nKanban-Board: {self.board_key}\n"
        )
        return str(_git().commit_files(path, sor.SCAFFOLD_FILES, message))

    def _operator_verify_command(self, repo: Path) -> tuple[str | None, str]:
        """The verify command the operator fixed for new worktrees, and where it was set: the
        repository's `git config kanban.verify`, else the board's `KANBAN_VERIFY_CMD`
        (`BoardConfig.verify_command`). Written into the scaffold's `init.sh`."""
        from_repo = _git().config_value(repo, "kanban.verify")
        if from_repo and "\n" not in from_repo:
            return from_repo, "git config kanban.verify"
        if self.board.config.verify_command:
            return self.board.config.verify_command, "KANBAN_VERIFY_CMD"
        return None, ""

    def _rollback(
        self, repo: Path, task_id: str, slot: str | None, branch: str, created_branch: bool
    ) -> None:
        """Undo a half-made provision, best effort (the original error is what the caller sees)."""
        gitrepo = _git()
        path = self.layout.worktree_path(repo, task_id, slot)
        with self._repo_lock(repo, f"roll back {task_id}"):
            for step in (
                lambda: gitrepo.remove_worktree(repo, path),
                lambda: self.layout.remove_tree(repo, task_id, slot),
                lambda: gitrepo.delete_branch(repo, branch) if created_branch else None,
                lambda: gitrepo.prune(repo),
            ):
                try:
                    step()
                except Exception:  # keep undoing what can be undone
                    continue

    @staticmethod
    def _provisioned(
        ws: Workspace, *, reused: bool = False, reattached: bool = False
    ) -> ProvisionResult:
        assert ws.worktree_path and ws.branch and ws.base_commit
        return ProvisionResult(
            worktree=WorktreeInfo(
                task_id=ws.task_id,
                worktree_path=ws.worktree_path,
                branch=ws.branch,
                base_commit=ws.base_commit,
            ),
            workspace_id=ws.id,
            reused=reused,
            reattached=reattached,
        )

    # -- handoff and cold resume (files only: no git) ------------------------------------------

    def write_handoff(
        self,
        task_id: str,
        handoff: Mapping[str, Any] | str | bytes,
        *,
        actor: str | None = None,
        epoch: int | None = None,
    ) -> HandoffResult:
        """Validate and write `AGENT_HANDOFF.json` into the live worktree (atomically).
        `timestamp` defaults to the board's now. Invalid input raises `invalid_input` with the
        message "invalid handoff" and zod-like `details` ({formErrors, fieldErrors})."""
        from ..models import AgentHandoff, iso_timestamp, validation_details

        if isinstance(handoff, (str, bytes)):
            try:
                handoff = json.loads(handoff)
            except ValueError as error:
                raise invalid_input(
                    "invalid handoff",
                    details={"formErrors": [f"not JSON: {error}"], "fieldErrors": {}},
                ) from None
        if not isinstance(handoff, Mapping):
            raise invalid_input(
                "invalid handoff",
                details={"formErrors": ["the handoff must be a JSON object"], "fieldErrors": {}},
            )
        body = dict(handoff)
        for name, placeholder in HANDOFF_PLACEHOLDERS.items():
            if body.get(name) == placeholder:  # the template's word, never filled in
                raise invalid_input(
                    f"invalid handoff: {name} is still the template's {placeholder!r}; write yours",
                    field=name,
                )
        if body.get("timestamp") is None:
            body["timestamp"] = iso_timestamp(self.board.now())
        try:
            parsed = AgentHandoff.model_validate(body)
        except ValueError as error:
            raise invalid_input("invalid handoff", details=validation_details(error)) from None
        _, ws = self._workspace(task_id)
        repo = Path(ws.repo_path)
        with self._lock(repo, task_id, "write the handoff of"):
            task, ws = self._workspace(task_id)
            if actor is not None or epoch is not None:  # `handoffFrom` alone only describes
                check_worker(task, "write the handoff of", actor=actor or OPERATOR, epoch=epoch)
            path, problem = self._checkout(ws)
            if problem:
                raise self._untrusted(ws, problem)
            if path is None or ws.status != "active":
                raise workspace_not_found(
                    task_id,
                    "the worktree is not checked out; run "
                    f"`{provision_command(task_id, ws.repo_path)}` to check it out again",
                )
            document = parsed.to_json()
            sor.write_file(path, sor.HANDOFF_JSON, json.dumps(document, indent=2) + "\n")
            self.board.update_workspace(
                ws.id, actor=actor or parsed.handoff_from, reason="handoff written"
            )
        return HandoffResult(handoff=document, path=str(path / sor.HANDOFF_JSON))

    # -- review comments anchored to lines (files only: no git) --------------------------------

    def add_comment(
        self,
        task_id: str,
        body: str,
        *,
        author_agent_id: str | None = None,
        author_type: str = "agent",
        path: str | None = None,
        line: int | None = None,
        side: str | None = None,
        line_text: str | None = None,
    ) -> Comment:
        """`Board.add_comment`, then, for a review comment, `REVIEW.md` rewritten in the live
        checkout so an agent that reads only its worktree sees it (a paused one gets it at its
        next provision)."""
        comment = self.board.add_comment(
            task_id, body, author_agent_id=author_agent_id, author_type=author_type,
            path=path, line=line, side=side, line_text=line_text,
        )  # fmt: skip
        if comment.anchored:
            self.write_review(task_id)
        return comment

    def reject(
        self,
        task_id: str,
        reviewer: str,
        reason: str,
        *,
        epoch: int | None = None,
        comments: "Iterable[ReviewNote | dict[str, Any]]" = (),
    ) -> Task:
        """`Board.reject` with its review comments, then `REVIEW.md` rewritten in the checkout."""
        task = self.board.reject(task_id, reviewer, reason, epoch=epoch, comments=comments)
        self.write_review(task_id)
        return task

    def write_review(self, task_id: str) -> str | None:
        """Rewrite `REVIEW.md` (every anchored comment, `boardlib.review`) in the task's live
        checkout; the path written, or None when there is no live checkout, no anchored comment,
        or a mutation holds the worktree (the next provision writes it). Best effort: the
        comments are on the board whatever happens here."""
        try:
            _, ws = self._workspace(task_id)
        except BoardError:
            return None
        path, problem = self._checkout(ws)
        if problem or path is None or ws.status != "active":
            return None
        lock, busy = self._read_lock(Path(ws.repo_path), task_id, "write the review of")
        try:
            if busy is not None:
                return None
            return self._write_review(task_id, path)
        finally:
            if lock is not None:
                lock.release()

    def _write_review(self, task_id: str, path: Path) -> str | None:
        from ..review import review_comments, review_markdown

        comments = self.board.comments(task_id)
        if not review_comments(comments):
            return None
        try:
            sor.write_file(path, sor.REVIEW_MD, review_markdown(task_id, comments))
        except OSError:
            return None
        return str(path / sor.REVIEW_MD)

    # -- the checkout for a person's own tools --------------------------------------------------

    def checkout_path(self, task_id: str) -> Path:
        """The task's live checkout, for an operator's editor or shell: refused (`conflict`) when
        the board's row points anywhere but where this worktrees folder puts the task, as
        `detail` is, and (`invalid_state`) when it is not checked out."""
        _, ws = self._workspace(task_id)
        path = self._live_checkout(ws, "open the worktree")
        if not self.layout.contains(path):
            raise BoardError(
                Reason.CONFLICT, f"{path} is not inside {self.layout.root}", id=task_id
            )
        return Path(os.path.realpath(path))

    def checkout_file(self, task_id: str, relative: str) -> Path:
        """A file of the live checkout by its path in the diff: refused (`invalid_input`) when the
        path is absolute, climbs out with `..`, holds a control character, or resolves (through
        a symlink) outside the checkout."""
        from ..inert import inert

        root = self.checkout_path(task_id)
        parts = relative.split("/") if isinstance(relative, str) else []
        if (
            not parts
            or relative.startswith("/")
            or ".." in parts
            or "" in parts
            or inert(relative) != relative
        ):
            raise invalid_input(
                "the file must be a plain path inside the worktree", field="path", id=task_id
            )
        target = root / relative
        if not Path(os.path.realpath(target)).is_relative_to(root):
            raise invalid_input(
                f"{inert(relative)} leads outside the worktree", field="path", id=task_id
            )
        return target

    def handoff_template(self, task_id: str, *, agent: str | None = None) -> dict[str, Any]:
        """A valid `AGENT_HANDOFF.json` skeleton for `task_id`, to fill in and pass to
        `write_handoff`: every field of the schema with its default, `handoffFrom`/`runtime` from
        `agent` or the task's holder, and the commands `init.sh` already assigns in a live
        checkout. `timestamp` is left out: the board stamps it when the handoff is written.
        Files only (no git); a task without a workspace still gets a skeleton."""
        from ..models import AgentHandoff

        check_task_id(task_id)
        agent = validate.optional_name(agent, "agent")
        task = self.board.get_task(task_id)
        commands = {"init": "./init.sh", "verify": "", "start": ""}
        rows = self.board.workspaces(task_id)
        if rows and rows[-1].worktree_path and rows[-1].status == "active":
            path, problem = self._checkout(rows[-1])
            if path is not None and not problem:
                commands, _ = sor.commands_from_init(sor.read_sor_file(path, sor.INIT_SH))
        skeleton: dict[str, Any] = {
            "handoffFrom": agent or task.assignee_agent_id or HANDOFF_PLACEHOLDERS["handoffFrom"],
            "runtime": task.assignee_runtime or HANDOFF_PLACEHOLDERS["runtime"],
            "completedSubtasks": [],
            "brokenOrUnverified": [],
            "nextBestStep": "",
            "whyBlocked": None,
            "commands": commands,
            "evidence": {"testResults": None, "lintResults": None},
            "warnings": [],
            "nativeSessionId": None,
            "roomCursor": None,
        }
        AgentHandoff.model_validate(skeleton)  # the skeleton is always valid as printed
        return skeleton

    def _read_lock(
        self, repo: Path, task_id: str, purpose: str
    ) -> tuple[Any, dict[str, Any] | None]:
        """A shared lock for a read, or (no lock, who is busy) when a mutation holds it: reads
        then show what is safe to show instead of waiting minutes behind a verification run."""
        lock = self._lock(repo, task_id, purpose, shared=True)
        try:
            return lock.acquire(), None
        except BoardError as error:
            if error.reason != Reason.BUSY:
                raise
            return None, error.details.get("holder") or {"purpose": "unknown"}

    def resume(self, task_id: str) -> ResumeResult:
        """The cold-resume read: the workspace row and the resume state rebuilt only from the
        worktree (the handoff when present, else task-progress.md + init.sh); `resume` and
        `handoff` are None when the worktree is not checked out. `review`: the reviewers'
        comments anchored to lines, from the board (they are in REVIEW.md too). A checkout on
        another machine is named (`host`, and a warning), as land, sync and complete name it:
        not live here is not "not checked out"."""
        _, ws = self._workspace(task_id)
        host = elsewhere(ws)
        path, problem = (None, None) if host else self._checkout(ws)
        warnings = [problem] if problem else []
        if host is not None:
            warnings.append(
                f"the worktree of {task_id} is on machine {host}, not on this one; resume it "
                "from there"
            )
        if path is None:
            return ResumeResult(workspace=ws, resume=None, handoff=None, live=False,
                                warnings=warnings, host=host,
                                review=review_entries(self.board.comments(task_id)))  # fmt: skip
        lock, busy = self._read_lock(Path(ws.repo_path), task_id, "resume")
        try:
            resume, handoff = sor.resume_state(path)
        finally:
            if lock is not None:
                lock.release()
        if busy:
            warnings.append(f"the worktree is busy ({busy.get('purpose')}); read without waiting")
        return ResumeResult(
            workspace=ws, resume=resume, handoff=handoff, live=True, warnings=warnings,
            review=review_entries(self.board.comments(task_id)),
        )  # fmt: skip

    # -- pause ----------------------------------------------------------------------------------

    def pause(
        self, task_id: str, *, actor: str = OPERATOR, epoch: int | None = None
    ) -> PauseResult:
        """Commit uncommitted work to the task's branch, remove the checkout, keep the branch. The
        workspace stays active: a later provision checks the branch out again. Pausing a paused
        worktree changes nothing."""
        gitrepo = _git()
        actor = validate.name(actor, "actor")  # before anything is committed in its name
        _, ws = self._workspace(task_id)
        repo = Path(ws.repo_path)
        with self._lock(repo, task_id, "pause"):
            task, ws = self._workspace(task_id)
            check_worker(task, "pause the worktree of", actor=actor, epoch=epoch)
            if ws.status != "active":
                raise BoardError(
                    Reason.INVALID_STATE,
                    f"cannot pause: the workspace of {task_id} is {ws.status}",
                    id=task_id,
                    workspaceStatus=ws.status,
                )
            self._check_here(ws, "pause")  # not "already paused": its checkout is there
            path, problem = self._checkout(ws)
            if problem:
                raise self._untrusted(ws, problem)
            branch = ws.branch or branch_name(task_id)
            if path is None:
                return PauseResult(
                    PauseInfo(committed=False, head=gitrepo.branch_head(repo, branch))
                )
            self._check_branch(path, ws, "pause")
            sha = gitrepo.commit_all(
                path, f"kanban: pause {task_id}\n\nWork in progress, committed by {actor}."
            )
            head = gitrepo.head(path)
            with self._repo_lock(repo, f"pause {task_id}"):
                gitrepo.remove_worktree(repo, path)
                self.layout.remove_tree(repo, task_id, slot_board(task_id, branch))
            self.board.update_workspace(ws.id, actor=actor, reason="paused")
        return PauseResult(PauseInfo(committed=sha is not None, head=head))

    # -- diffs ----------------------------------------------------------------------------------

    def _stat(self, ws: Workspace, path: Path | None) -> tuple[DiffStat | None, str | None]:
        """Diff-stat of the live worktree (or the paused branch) against the baseline, and the
        tree or commit it describes."""
        gitrepo = _git()
        repo = Path(ws.repo_path)
        if not ws.base_commit:
            return None, None
        if path is not None:
            target = gitrepo.snapshot_tree(path)
            return gitrepo.diff_stat(path, ws.base_commit, target), target
        head = gitrepo.branch_head(repo, ws.branch or branch_name(ws.task_id))
        if head is None:
            return None, None
        return gitrepo.diff_stat(repo, ws.base_commit, head), head

    # -- complete -------------------------------------------------------------------------------

    def complete(
        self,
        task_id: str,
        agent: str,
        *,
        epoch: int | None = None,
        summary: str | None = None,
        verify_timeout_s: float | None = None,
    ) -> CompleteResult:
        """The builder (`agent`, the task's assignee) is done. The diff against the baseline, SoR
        files excluded, decides: empty -> the checkout and branch are removed, the task goes to
        done (nothing to verify) and the workspace is archived; otherwise the work is committed,
        the task goes to in_review and the verification gate judges it (pass -> done, fail ->
        back to the builder until the attempt budget is spent, then blocked; debt -> blocked).
        On a blocked task nothing re-runs: the current status and verdict are returned."""
        gitrepo = _git()
        task, ws = self._workspace(task_id)
        repo = Path(ws.repo_path)
        with self._lock(repo, task_id, "complete"):
            task, ws = self._workspace(task_id)
            if task.status == t.BLOCKED:
                return self._repeat_on_blocked(task, ws)
            if epoch is not None and epoch < task.claim_epoch:  # as the lease verbs judge it
                check_epoch(task, "complete", epoch, agent)
            if task.status == t.IN_PROGRESS:
                if task.assignee_agent_id != agent:
                    raise BoardError(
                        Reason.NOT_ASSIGNEE,
                        f"cannot complete: {task_id} is held by {task.assignee_agent_id}, "
                        f"not {agent}",
                        id=task_id,
                        assignee=task.assignee_agent_id,
                    )
            elif not (task.status == t.IN_REVIEW and agent in task.holders):
                # in_review by one of its holders is a gate interrupted by a crash: run it again.
                raise wrong_state("complete", task.status, t.IN_PROGRESS, id=task_id)
            self._check_here(ws, "complete")  # before a re-attach would take its branch here
            live, problem = self._checkout(ws)
            reattached = False
            if live is None and not problem and ws.status == "active":
                self._reattach_paused(ws, agent)  # paused: bring the branch back, then judge it
                reattached = True
            path = self._live_checkout(ws, "complete")
            self._check_branch(path, ws, "complete")
            stat, _ = self._stat(ws, path)
            assert stat is not None
            if not stat.dirty:
                empty = self._complete_empty(task, ws, path, stat, agent, epoch, summary)
                return replace(empty, reattached=reattached)
            timeout_s = verify_timeout_s or self.verify_timeout_s
            # The gate's start goes with the move to in_review: until its verdict the task waits
            # on the gate, not on a person (`attention.gate_since`).
            gate_ms = gate_bound_ms(timeout_s)
            beat_ms = max(1, int(self.gate_beat_s * 1000))
            if task.status == t.IN_PROGRESS:
                self.board.complete(
                    task_id, agent, epoch=epoch, summary=summary, gate_ms=gate_ms, beat_ms=beat_ms
                )
            else:
                self.board.gate_started(task_id, gate_ms=gate_ms, beat_ms=beat_ms)
            try:
                with gate_beating(self.board, task_id, self.gate_beat_s):
                    gitrepo.commit_all(path, f"kanban: {task_id} completed by {agent}")
                    head = gitrepo.head(path)
                    provisioned = (
                        gitrepo.read_blob(path, ws.base_commit, sor.INIT_SH)
                        if ws.base_commit
                        else None
                    )
                    outcome = run_gate(
                        self.board,
                        task_id,
                        path,
                        builder=agent,
                        timeout_s=timeout_s,
                        provisioned_init=provisioned,
                        runtime=task.assignee_runtime,  # the complete clears it; a fail: back
                    )
            except BaseException as error:  # a server lives on: the task must not wait unseen
                with contextlib.suppress(Exception):
                    why = f"{type(error).__name__}: {error}"[:500]
                    self.board.gate_stopped(task_id, f"the gate stopped without a verdict: {why}")
                raise
            self.board.update_workspace(ws.id, actor=GATE_ACTOR, reason="verified")
            back = outcome.task.status == t.IN_PROGRESS
            return CompleteResult(
                complete=CompleteInfo(dirty=True, diff_stat=stat, cleaned=False),
                task_status=outcome.task.status,
                verified=outcome.verdict.status,
                verification=outcome.verdict.to_json(),
                gate_ran=True,
                claim_epoch=outcome.task.claim_epoch if back else None,
                head=head,
                reattached=reattached,
            )

    def complete_lease(
        self, task_id: str, agent: str, *, summary: str | None = None, epoch: int | None = None
    ) -> Task:
        """The lease protocol's complete (`Board.complete`: in review, nothing committed or run),
        refused `gate_required`, nothing changed, while the holder's task has a live workspace
        (checked out or paused): it put work no gate ran on in review, where a reviewer took it
        for verified work. `complete` commits it and runs the gate; a task without a worktree
        (seed 003's plain complete) goes to review as before. Not the holder, or a stale epoch:
        the board's own refusal comes first."""
        rows = self.board.workspaces(task_id)
        ws = rows[-1] if rows else None
        if ws is None or ws.status != "active":
            return self.board.complete(task_id, agent, summary=summary, epoch=epoch)
        with self._lock(Path(ws.repo_path), task_id, "complete"):
            task = self.board.get_task(task_id)
            held = task.status == t.IN_PROGRESS and task.assignee_agent_id == agent
            if held and (epoch is None or epoch == task.claim_epoch):
                raise BoardError(
                    Reason.GATE_REQUIRED,
                    f"cannot complete {task_id} plainly: its work is in a worktree, which "
                    "`workspace complete` commits and judges with the verify gate (the plain "
                    "complete would put it in review unverified); nothing changed",
                    id=task_id,
                    use="workspace complete",
                    worktreePath=ws.worktree_path,
                )
            return self.board.complete(task_id, agent, summary=summary, epoch=epoch)

    def _repeat_on_blocked(self, task: Task, ws: Workspace) -> CompleteResult:
        """A repeat complete on a blocked task: seed 003's answer, `verified: 'fail'` whatever
        blocked it (a debt verdict too: it cannot re-enter review); the stored verdict itself
        is in `verification`. The gate does not run again, and `note` says so with what moves the
        task (the answer read as a fresh gate result)."""
        path, _ = self._checkout(ws)
        try:
            stat, _ = self._stat(ws, path if ws.status == "active" else None)
        except Exception:  # a read for the answer, not a decision
            stat = None
        stat = stat or DiffStat(0, 0, 0, False)
        return CompleteResult(
            complete=CompleteInfo(dirty=stat.dirty, diff_stat=stat, cleaned=False),
            task_status=task.status,
            verified="fail",
            verification=json.loads(task.verification) if task.verification else None,
            note=(
                f"{task.id} is blocked ({task.blocked_reason}): this complete changed nothing and "
                "ran no gate (`verified` is the answer for any blocked task, `verification` the "
                "stored verdict)"
            ),
        )

    def _complete_empty(
        self,
        task: Task,
        ws: Workspace,
        path: Path,
        stat: DiffStat,
        agent: str,
        epoch: int | None,
        summary: str | None,
    ) -> CompleteResult:
        """No deliverable: done without a gate run, checkout and branch removed, archived. A
        failing verdict from an earlier attempt still refuses done (nothing is changed)."""
        from ..lifecycle import verdict_blocks_done

        if verdict_blocks_done(task.verification):
            raise BoardError(
                Reason.VERIFICATION_REQUIRED,
                f"cannot complete {task.id} with an empty diff: it carries a failing verdict "
                "from an earlier gate run; deliver the work again, or an operator overrides",
                id=task.id,
                verification=task.verification,
            )
        if task.status == t.IN_PROGRESS:
            self.board.complete(task.id, agent, epoch=epoch, summary=summary)
        done = self.board.move(
            task.id, t.DONE, actor=GATE_ACTOR, reason="empty diff: nothing to verify"
        )
        cleaned = self._discard(ws, path)
        self.board.update_workspace(
            ws.id,
            status="archived" if cleaned else None,
            actor=GATE_ACTOR,
            reason=EMPTY_DIFF_REMOVED if cleaned else "cleanup failed",
        )
        return CompleteResult(
            complete=CompleteInfo(dirty=False, diff_stat=stat, cleaned=cleaned),
            task_status=done.status,
        )

    def _discard(self, ws: Workspace, path: Path) -> bool:
        """Remove a checkout and its branch (only for work with nothing to keep)."""
        gitrepo = _git()
        repo = Path(ws.repo_path)
        branch = ws.branch or branch_name(ws.task_id)
        try:
            with self._repo_lock(repo, f"clean up {ws.task_id}"):
                gitrepo.remove_worktree(repo, path)
                self.layout.remove_tree(repo, ws.task_id, slot_board(ws.task_id, branch))
                gitrepo.delete_branch(repo, branch)
        except Exception:  # garbage collection retries a failed cleanup later
            return False
        return True

    # -- checkout state and detail -------------------------------------------------------------

    def checkout_state(self, task_id: str) -> CheckoutState:
        """What is true of the task's checkout now (see `CheckoutState`), whatever the row says:
        for a live checkout, from one `git status`."""
        task, ws = self._workspace(task_id)
        path, problem = self._checkout(ws)
        path = path if ws.status == "active" else None
        status = None
        if path is not None and not problem:
            with contextlib.suppress(_git().GitFailure):  # said by `_checkout_state`, asking again
                status = _git().checkout_status(path)
        return self._checkout_state(task, ws, path, problem, status)

    def _checkout_state(
        self,
        task: Task,
        ws: Workspace,
        path: Path | None,
        problem: str | None,
        status: "CheckoutStatus | None" = None,
    ) -> CheckoutState:
        """`checkout_state`; with the checkout's `status` when the caller read it (`detail`):
        HEAD and what is uncommitted are read from it, not asked of git again."""
        gitrepo = _git()
        repo = Path(ws.repo_path)
        branch = ws.branch or branch_name(ws.task_id)
        host = elsewhere(ws) if ws.status == "active" and path is None else None
        if host is not None:
            # not "deleted outside the board": its files are on the machine that made it
            return CheckoutState(
                MISSING, f"checked out on another machine ({host}), not on this one",
                branch=branch,
            )  # fmt: skip
        if problem:
            return CheckoutState(MISSING, problem, branch=branch)
        if path is not None:
            try:
                # the board's own files (a gate's VERIFICATION.md, a reviewer's REVIEW.md) are not
                # the agent's work left uncommitted
                if status is not None and status.head is not None:
                    at, uncommitted = status.head, status.uncommitted(sor.SOR_FILES)
                else:
                    at = gitrepo.head(path)
                    uncommitted = gitrepo.has_uncommitted(path, besides=sor.SOR_FILES)
            except gitrepo.GitFailure as error:
                return CheckoutState(
                    CHECKED_OUT, f"checked out at {path}, but git cannot read it: {error}",
                    branch=branch, path=str(path),
                )  # fmt: skip
            state = "with uncommitted changes" if uncommitted else "everything committed"
            return CheckoutState(
                CHECKED_OUT,
                f"checked out at {path} on {branch} ({state})",
                branch=branch,
                head=at,
                path=str(path),
                uncommitted=uncommitted,
            )
        head = gitrepo.branch_head(repo, branch) if repo.is_dir() else None
        if head is None:
            if ws.status == "active":
                return CheckoutState(
                    MISSING,
                    f"the checkout and its branch {branch} are gone (garbage collection will "
                    "mark the workspace stale)",
                    branch=branch,
                )
            why = ""
            if task.landed_commit is not None:
                why = f" (landed as {task.landed_commit[:7]} on {task.landed_into})"
            elif ws.status == "archived":
                why = " (an empty diff: nothing to keep)"
            return CheckoutState(CLEANED, f"worktree and branch {branch} removed{why}")
        command = None if task.status in t.TERMINAL else provision_command(task.id, ws.repo_path)
        if ws.status == "active":
            expected = self.layout.worktree_path(repo, ws.task_id, slot_board(ws.task_id, branch))
            # a pause unregisters the checkout; one git still lists was deleted behind its back
            deleted = gitrepo.registered(repo, expected) is not None
            if deleted:
                state, again = MISSING, ""
                summary = (
                    f"the checkout at {expected} was deleted outside the board: what was not "
                    f"committed in it is lost; {branch} keeps what was, at {head[:12]}"
                )
            else:
                state, again = PAUSED, " (complete does it by itself)"
                summary = f"paused: all work committed on {branch} at {head[:12]}"
            if command:
                summary += f"; `{command}` checks it out again{again}"
            return CheckoutState(
                state, summary, branch=branch, head=head, uncommitted=None if deleted else False,
                resume_command=command,
            )  # fmt: skip
        summary = f"checkout removed; the work is kept on branch {branch} at {head[:12]}"
        return CheckoutState(
            KEPT, summary, branch=branch, head=head, uncommitted=False, resume_command=command
        )

    def check(self, *, full: bool = False) -> CheckReport:
        """`Board.check`, and every active workspace whose checkout should be on this machine and
        is not (deleted outside the board, its branch or repository gone) among its problems. One
        on another machine is listed in `elsewhere`, not a problem: its files are on that disk. A
        live checkout costs a look at its folder, a missing one a few git reads."""
        report = self.board.check(full=full)
        for ws in self.board.workspaces_with_status("active"):
            host = elsewhere(ws)
            if host is not None:
                report.elsewhere.append({"workspaceId": ws.id, "taskId": ws.task_id, "host": host})
                continue
            if ws.worktree_path and Path(ws.worktree_path).is_dir():
                continue  # there: a look, no git (as garbage collection passes a live one)
            path, problem = self._checkout(ws)
            task = self.board.find_task(ws.task_id)
            if path is not None or task is None or problem is not None:
                continue  # for garbage collection to judge (a row outside the root, remade)
            state = self._checkout_state(task, ws, None, None)
            if state.state == MISSING:
                report.problems.append(f"workspace {ws.id} of {ws.task_id}: {state.summary}")
        report.ok = not report.problems
        return report

    def fingerprint(self, task_id: str) -> str:
        """A cheap token that changes whenever the task's workspace changes (an agent editing files
        in the checkout, a commit, a pause, a new row): what a viewer polls to know when to read
        `detail` again. One `git status` for a checkout, one `rev-parse` otherwise; no lock."""
        gitrepo = _git()
        try:
            _, ws = self._workspace(task_id)
        except BoardError as error:
            if error.reason != Reason.NOT_FOUND:
                raise
            return "none"
        path, problem = self._checkout(ws)
        status, head = None, None
        if not problem and path is not None and ws.status == "active":
            status = gitrepo.checkout_status(path)
        elif not problem:
            repo = Path(ws.repo_path)
            head = gitrepo.branch_head(repo, ws.branch) if ws.branch and repo.is_dir() else None
        return self._fingerprint(ws, problem, status, head)

    @staticmethod
    def _fingerprint(
        ws: Workspace, problem: str | None, status: "CheckoutStatus | None", head: str | None
    ) -> str:
        """`fingerprint` from what was read: the live checkout's status, else its branch's head
        and the repository's `config_stamp` (a setting that changes what its diff says)."""
        row = f"{ws.id}:{ws.status}:{ws.last_used_at}"
        if problem:
            return f"{row}:problem"
        if status is not None:
            return f"{row}:live:{status.digest}"
        return f"{row}:branch:{head}:{_git().config_stamp(Path(ws.repo_path))}"

    def detail(
        self,
        task_id: str,
        *,
        diff_limit_bytes: int | None = None,
        file_limit_bytes: int | None = None,
    ) -> DetailResult:
        """The drawer's Workspace tab: the SoR files present (only those names), the unified diff
        and diff-stat against the baseline with the SoR files excluded, every changed file with
        its counts, the true checkout state and the cold-resume state. A live worktree is read as
        it is on disk (untracked files included); a paused one from its branch. The diff is capped
        (`diff_limit_bytes`, this object's unless given; cut at a line) and git is killed past a
        timeout. With `file_limit_bytes`, a file larger than that (a generated bundle) is left out
        of the text and marked omitted in `diff_files`, with every file's `size`."""
        return self.fingerprinted_detail(
            task_id, diff_limit_bytes=diff_limit_bytes, file_limit_bytes=file_limit_bytes
        )[1]

    def fingerprinted_detail(
        self,
        task_id: str,
        *,
        diff_limit_bytes: int | None = None,
        file_limit_bytes: int | None = None,
    ) -> tuple[str, DetailResult]:
        """`detail`, and the `fingerprint` of the workspace as it was read (taken first: a change
        during the read changes the next one), from the same `git status` the checkout state is
        read from. A live checkout costs one `git status`, a `git add` in a temporary index and
        one `git diff` (plus a `cat-file` for the sizes with `file_limit_bytes`); a diff read
        before, of a checkout whose files have not changed since (`CheckoutStatus.settled`) or of
        the same commit, is not read again (`gitrepo.kept_diff`)."""
        from .sor import resume_state_from

        gitrepo = _git()
        diff_limit_bytes = validate.optional_integer(diff_limit_bytes, "diffLimitBytes", minimum=1)
        file_limit_bytes = validate.optional_integer(file_limit_bytes, "fileLimitBytes", minimum=0)
        task, ws = self._workspace(task_id)
        repo = Path(ws.repo_path)
        path, problem = self._checkout(ws)
        warnings = [problem] if problem else []
        if ws.status != "active":
            path = None
        status: CheckoutStatus | None = None
        unreadable: str | None = None
        try:
            status = gitrepo.checkout_status(path) if path is not None and not problem else None
        except gitrepo.GitFailure as error:  # removed under us: said below as before
            unreadable = f"unreadable: {error}"
        source: str | None = None
        if path is None and ws.branch and not problem:
            source = gitrepo.branch_head(repo, ws.branch) if repo.is_dir() else None
        mark = unreadable or self._fingerprint(ws, problem, status, source)
        limit = diff_limit_bytes or self.diff_limit_bytes or gitrepo.DIFF_LIMIT
        lock, busy = self._read_lock(repo, task_id, "read the detail of")
        try:
            files: dict[str, str] = {}
            stat: DiffStat | None = None
            diff_files: list[FileStat] = []
            diff, truncated = "", False
            if path is not None:
                files = sor.read_sor_files(path)
            elif source is not None:
                from .landgit import read_blobs  # the kept lookup `_checkout` started

                found = read_blobs(repo, source, sor.SOR_FILES)
                files = {name: found[name] for name in sor.SOR_FILES if name in found}
            checkout = self._checkout_state(task, ws, path, problem, status)
            if busy is None and not problem and ws.base_commit:
                base = ws.base_commit
                try:
                    read: DiffRead | None = None
                    if path is not None:
                        read = gitrepo.kept_diff(
                            (str(path), base, status.digest, limit, file_limit_bytes)
                            if status is not None and status.settled
                            else None,
                            lambda: gitrepo.checkout_diff(
                                path, base, limit=limit, file_limit=file_limit_bytes
                            ),
                        )
                    elif source is not None:
                        stamp = gitrepo.config_stamp(repo)
                        read = gitrepo.kept_diff(
                            (str(repo), base, source, stamp, limit, file_limit_bytes),
                            lambda: gitrepo.read_diff(
                                repo, base, source, limit=limit, file_limit=file_limit_bytes
                            ),
                        )
                    if read is not None:
                        diff_files, diff, truncated = list(read.files), read.text, read.truncated
                        stat = gitrepo.stat_of(diff_files)
                except (gitrepo.GitFailure, BoardError) as error:
                    warnings.append(f"no diff: {error}")
                    stat, diff_files = None, []
            elif busy is not None:
                warnings.append(f"the worktree is busy ({busy.get('purpose')}); diff skipped")
        finally:
            if lock is not None:
                lock.release()
        resume = resume_state_from(files.get)[0] if files else None
        return mark, DetailResult(
            workspace=ws,
            sor_files=files,
            diff_stat=stat,
            diff=diff,
            diff_truncated=truncated,
            live=path is not None,
            busy=busy,
            warnings=warnings,
            checkout=checkout,
            diff_files=diff_files,
            diff_limit_bytes=limit if truncated else None,
            resume=resume,
        )

    # -- landing and catching up with the base (see `landing`, `sync`) -------------------------

    def lander(self, **options: Any) -> "Lander":
        """A `landing.Lander` for this board (options: `on_step`, `max_builds`,
        `queue_timeout_s`, `lease_ms`)."""
        from .landing import Lander

        return Lander(self, **options)

    def land(self, task_id: str, *, actor: str, **options: Any) -> "LandResult":
        """Land the task's reviewed work onto its base branch (`landing.Lander.land`)."""
        return self.lander().land(task_id, actor=actor, **options)

    def abandon_landing(self, task_id: str, *, actor: str, reason: str | None) -> "AbandonResult":
        """An operator's "won't land" for done work (`landing.Lander.abandon`)."""
        return self.lander().abandon(task_id, actor=actor, reason=reason)

    def landing_preview(
        self, task_id: str, *, into: str | None = None, strategy: str = "squash"
    ) -> "LandingPreview":
        """Would the task land now with `strategy`, and how (`landing.LandingPreview`): a few
        git commands, no verification; run it off a UI thread."""
        return self.lander().preview(task_id, into=into, strategy=strategy)

    def landing_choices(self, task_id: str) -> LandingChoices:
        """What a land dialog offers (`results.LandingChoices`): the branches it may land on and
        the verify command it would run. Git only (what lands is read as the preview reads it);
        raises what a landing would for a task that cannot land (`not_landable`...)."""
        from . import gitrepo
        from .layout import is_task_branch

        source = self.lander()._source(task_id, None, shared=True)
        heads = gitrepo.output(source.repo, "for-each-ref", "--format=%(refname)", "refs/heads/")
        names = [ref.removeprefix("refs/heads/") for ref in heads.splitlines() if ref]
        others = sorted(n for n in names if n != source.into and not is_task_branch(n))
        verify = source.verify
        return LandingChoices(
            task_id=task_id,
            base=source.into,
            branches=[source.into, *others],
            verify_command=verify.command if verify is not None else None,
            verify_source=verify.source if verify is not None and verify.command else None,
        )

    def landing_stamp(self, task_id: str) -> str:
        """Changes whenever `landing_preview` may have (the base moved, the worktree changed)."""
        return self.lander().stamp(task_id)

    def sync(
        self,
        task_id: str,
        *,
        actor: str,
        strategy: str = "merge",
        into: str | None = None,
        epoch: int | None = None,
    ) -> "SyncResult":
        """Bring the base branch's tip into the task's worktree (`sync.sync_with_base`)."""
        from .sync import sync_with_base

        return sync_with_base(self, task_id, actor=actor, strategy=strategy, into=into, epoch=epoch)
