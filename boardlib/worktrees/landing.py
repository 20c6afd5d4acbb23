"""Landing a task's reviewed work onto its base branch: built in memory, verified on the merged
tree in a scratch checkout, moved onto the branch with a fenced compare-and-swap, one landing
at a time per branch (the queue of `boardlib.landings`).

    trees.landing_preview("TASK-7")          # cheap: lands cleanly / conflicts / base moved
    trees.land("TASK-7", actor="operator")   # approve-and-land (in_review) or land (done)

What lands is the task's own change, as the drawer's diff shows it, with every system-of-record
file as the base had it. A landing killed at any step is either on the branch with its intent on
the board (the next lander records it) or not on the branch at all (the next lander clears it).
The steps, the recovery and the API for other surfaces: docs/landing.md.
"""

import contextlib
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import transitions as t
from ..actors import SYSTEM, is_operator
from ..config import LAND_QUEUE_TIMEOUT
from ..errors import BoardError, Reason, invalid_input
from ..events import EventKind, read
from ..inert import inert
from ..landings import (
    LandQueue,
    check_abandonable,
    check_landable,
    check_reviewed,
    holder_token,
    not_landable,
)
from ..records import LAND_STRATEGIES, QueueEntry, Record, Task, Workspace
from ..shell import shell_command
from . import gitrepo, landgit, sor
from .gate import (
    EMPTY_DIFF_REMOVED,
    VerifyCommand,
    find_verify_command_from,
    run_verify_command,
    stop_orphaned_verify,
)
from .layout import branch_name, branch_slot, elsewhere, slot_board
from .lock import WorktreeLock
from .results import ALREADY_ON, DONE_SYNC, REPLAYED, REVIEW_SYNC, GitFailure, name_files

if TYPE_CHECKING:
    from .manager import Worktrees

DEFAULT_STRATEGY = "squash"
MAX_BUILDS = 3  # builds on a moving base before `base_moved`
SCRATCH_SLOTS = 8  # scratch checkouts per repository (one per landing verifying at once)
# Of them, the last ones are all a landing verifying ahead may take: the others stay for turns
# (and dry runs), so guesses on one branch never leave the turn of another without a checkout.
AHEAD_SLOTS = SCRATCH_SLOTS // 2
VERIFY_AHEAD_DEPTH = 3  # landings waiting behind the turn that verify ahead, nearest first
DEFAULT_QUEUE_TIMEOUT_S = 3600.0
TURN_POLL_S = 0.005  # a waiter asks whether the board changed this often (a few µs)
TURN_REREAD_S = 0.25  # SQLite: and reads its queue at least this often (one indexed read)
TURN_POLL_MAX_S = 0.02  # another store: reads its queue this often
TITLE_LIMIT = 200
TAIL_CHARS = 2000
FENCE_PREFIX = "refs/kanban/landing/"
BEHIND_PREFIX = "refs/kanban/behind/"  # + board key + /heads/ + branch: see `behind_ref`

# The steps of a landing, in order: `on_step` hears each (the chaos test kills a lander there).
STEPS = (
    "joined", "turn", "built", "verified", "intent", "updated", "brought_along", "recorded",
    "archived",
)  # fmt: skip
# The steps of a landing that waits behind another, heard while it waits (`_verify_ahead`).
BUILT_AHEAD, VERIFIED_AHEAD = "built_ahead", "verified_ahead"
AHEAD_STEPS = (BUILT_AHEAD, VERIFIED_AHEAD)
# What a guess told by those became before the turn, when it changed: its verify command failed
# there, or it no longer holds (the landing ahead names another commit, or none: refused, moved).
FAILED_AHEAD, DROPPED_AHEAD = "failed_ahead", "dropped_ahead"

OnStep = Callable[[str, dict[str, Any]], None]


def _short(sha: str | None) -> str:
    return (sha or "?")[:7]


def one_line(text: str | None, limit: int = TITLE_LIMIT) -> str:
    """Agent text for a commit message: inert (no control character survives), one line, at most
    `limit` characters."""
    line = " ".join(inert(text or "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


# -- what a landing reports ---------------------------------------------------------------------

CLEAN = "clean"
CONFLICTS = "conflicts"
LANDED = "landed"
UNAVAILABLE = "unavailable"
PREVIEW_STATES = (CLEAN, CONFLICTS, LANDED, UNAVAILABLE)
# what a refusal names when another git command holds a checkout's index
INDEX_LOCK = ".git/index.lock"


@dataclass(frozen=True, slots=True)
class LandingPreview(Record):
    """Whether a task would land, computed in memory from git alone (no verification, nothing
    written but git objects): what the drawer shows before an operator approves.

    `state`: `clean` (lands cleanly onto `into`@`base_tip`), `conflicts` (`conflicts` lists the
    files), `landed` (already, as `landed_commit`) or `unavailable` (`why` says: no worktree,
    nothing to land, not reviewed, no base branch...). `behind` counts the base's commits since
    the worktree was made. `summary` is the sentence to show. `source_tree` is the tree that
    would land: hand it to `land(expect_source=...)` to land exactly what was previewed. `stamp`
    changes when the base tip or the worktree does (`Worktrees.landing_stamp` is the cheap
    poll)."""

    task_id: str
    state: str
    summary: str
    into: str | None = None
    base_tip: str | None = None
    provisioned_from: str | None = None
    behind: int = 0
    conflicts: list[str] = field(default_factory=list)
    source_tree: str | None = None
    merged_tree: str | None = None
    why: str | None = None
    landed_commit: str | None = None
    stamp: str = ""
    elapsed_ms: int = 0
    strategy: str = "squash"  # the landing previewed: a replay can conflict where a squash merges
    landing: str | None = None  # a landing of it under way: who, its queue entry, waiting/active
    refused: str | None = None  # its last landing's refusal, while it stands: reason: message


@dataclass(frozen=True, slots=True)
class LandResult(Record):
    """What a landing did (or, with `dry_run`, would do)."""

    task: Task
    landed: bool
    dry_run: bool
    into: str
    strategy: str | None  # None: already on the base, so no strategy was applied
    commit: str | None = None  # on the branch (or, dry run, the commit that would be)
    base_before: str | None = None
    tree: str | None = None
    files: list[str] = field(default_factory=list)  # paths the landing changes on the branch
    builds: int = 0  # 1, or more when the base moved meanwhile
    verification: dict[str, Any] | None = None
    # its verify command ran while it waited in the queue, on the commit the landing ahead of it
    # put on the branch: its turn only checked the checkouts and moved the branch
    verified_ahead: bool = False
    unverified: bool = False  # an operator landed it without a verify command (audited)
    checkouts: list[str] = field(default_factory=list)  # checkouts of the base fast-forwarded
    archived: bool = False  # worktree removed and task branch deleted
    recovered: bool = False  # an earlier, interrupted landing of this task was found landed
    already_on: bool = False  # the base's tip held the change already: recorded there, not moved
    entry: str | None = None  # the queue entry (LAND-n)
    waited_ms: int = 0  # in the branch's queue
    elapsed_ms: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AbandonResult(Record):
    """An operator's "won't land" decision: the task as it is (its status kept), its worktree
    archived and the branch that keeps its work (`commit` its tip; `committed` when the
    uncommitted part was committed there first), never deleted."""

    task: Task
    reason: str
    branch: str | None = None
    commit: str | None = None
    committed: bool = False
    archived: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Source:
    """What would land, read under the task's worktree lock."""

    task: Task
    ws: Workspace
    repo: Path
    branch: str  # the task branch
    live: Path | None  # the checkout, when there is one
    head: str  # the task branch's commit
    snapshot: str  # the tree of the work (its bookkeeping files as the index or branch has them)
    provisioned: str  # the commit the worktree was made from
    tree: str  # what lands: `snapshot` with the bookkeeping files as `provisioned` has them
    into: str  # the base branch
    verify: VerifyCommand | None = None
    change: str | None = None  # `tree` as a commit on `provisioned`: the side every merge takes

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.into}"


@dataclass(slots=True)
class _Built:
    commit: str
    tree: str
    base: str  # the tip it was built on


@dataclass(slots=True)
class _Ahead:
    """What a waiting landing made on the commit the landing ahead of it would land: `built` and
    its `verification`, or the verify command's `refusal` there (the turn's answer when the tip is
    `base`: the same command on the same tree). None for all when the build failed or no scratch
    checkout was free: the turn then builds and verifies as usual."""

    base: str
    built: _Built | None = None
    verification: dict[str, Any] | None = None
    refusal: BoardError | None = None
    dropped: bool = False  # told `dropped_ahead`: the landing ahead no longer names `base`

    @property
    def standing(self) -> str | None:
        """The step that says what this guess holds, None when it holds nothing."""
        if self.built is None:
            return None
        return FAILED_AHEAD if self.refusal is not None else VERIFIED_AHEAD


class _Heartbeat:
    """Renews a queue entry's lease every third of it, in a daemon thread, until stopped; `lost`
    is set when a renewal finds the lease already run out (the lander must then stop)."""

    def __init__(self, queue: LandQueue, entry: QueueEntry) -> None:
        self.queue = queue
        self.entry = entry
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kanban-land-lease", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        interval = self.queue.lease_ms / 3000
        while not self._stop.wait(interval):
            try:
                renewed = self.queue.renew(self.entry)
            except Exception:  # a busy board: the next renewal tries again
                continue
            if renewed is None:
                self.lost.set()
                return
            self.entry = renewed

    def stop(self) -> None:
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)


# The failures of an approve-and-land that leave a system comment on the task saying why (it
# stays in review); every other refusal writes nothing at all.
EXPLAINED = frozenset({Reason.MERGE_CONFLICT, Reason.VERIFICATION_FAILED, Reason.BASE_MOVED})


def _explanation(error: BoardError) -> str:
    comment = f"Approve and land did not land: {error.message}"
    tail = error.details.get("stderr_tail") or error.details.get("stdout_tail")
    if tail:
        comment += f"\n\nOutput (tail):\n~~~~\n{str(tail)[-1500:].rstrip()}\n~~~~"
    return comment


def _acquired(lock: WorktreeLock) -> bool:
    """Whether `lock` (no waiting) was taken; False when busy, any other refusal raised."""
    try:
        lock.acquire()
    except BoardError as error:
        if error.reason != Reason.BUSY:
            raise
        return False
    return True


# How long a landing waits for another board's landing to bring a checkout of the base along.
SETTLE_S = 2.0
LANDED_MOVE = "kanban: land "  # the reflog message of a landing's move of the branch, + task id


def legacy_fence_ref(into: str) -> str:
    """Where a landing fenced `into` before each board had its own fence (`fence_ref`): one a
    lander killed then left is cleared by the recovery of its row, never to stay forever."""
    return f"{FENCE_PREFIX}heads/{into}"


def fence_ref(into: str, board: str) -> str:
    """The fence of the landing turn on `into` in `board`'s queue (a board key): each board its
    own, as each board queues its own landings; across boards the compare-and-swap on the branch
    is what keeps a landing from moving it past another's commit."""
    return f"{FENCE_PREFIX}{board}/heads/{into}"


def behind_ref(into: str, board: str) -> str:
    """Set to the branch's old tip in the very transaction a landing of `board` moves `into`
    while a checkout of it is to be brought along, deleted once it was: while it stands, a
    checkout holding exactly that commit is one the landing left behind (its lander killed),
    not a person's edit, and any landing, of either board, may bring it along."""
    return f"{BEHIND_PREFIX}{board}/heads/{into}"


class Lander:
    """Lands tasks of one board (`Worktrees.land`, `Worktrees.landing_preview` build one).
    `on_step(step, info)` is told each of `STEPS` as it is reached."""

    def __init__(
        self,
        trees: "Worktrees",
        *,
        on_step: OnStep | None = None,
        max_builds: int = MAX_BUILDS,
        queue_timeout_s: float | None = None,
        lease_ms: int | None = None,
    ) -> None:
        self.trees = trees
        self.board = trees.board
        self.queue = LandQueue(trees.board, lease_ms=lease_ms)
        self.on_step = on_step
        self.max_builds = max_builds
        if queue_timeout_s is None:
            queue_timeout_s = LAND_QUEUE_TIMEOUT.read(DEFAULT_QUEUE_TIMEOUT_S)
        self.queue_timeout_s = queue_timeout_s

    def _step(self, step: str, **info: Any) -> None:
        if self.on_step is not None:
            self.on_step(step, info)

    # -- reading what would land ----------------------------------------------------------------

    @staticmethod
    def _check_strategy(strategy: Any) -> str:
        if strategy not in LAND_STRATEGIES:
            raise invalid_input(
                f"strategy must be one of {', '.join(LAND_STRATEGIES)}", field="strategy"
            )
        return str(strategy)

    def _check_into(self, repo: Path, into: Any, task_branch: str) -> str:
        _, name = self.trees._check_base(None, into, field="into")
        name = name.removeprefix("refs/heads/")
        if name == "HEAD" or not gitrepo.ref_name_is_valid(repo, f"refs/heads/{name}"):
            raise invalid_input(f"into is not a branch name: {name}", field="into")
        if name == task_branch:
            raise invalid_input("into names the task's own branch", field="into")
        if landgit.branch_tip(repo, name) is None:
            raise invalid_input(f"into: there is no branch {name} in {repo}", field="into")
        return name

    def _base_branch(self, ws: Workspace, repo: Path, into: Any, task_branch: str) -> str:
        """The branch to land on: `into`, else the branch the worktree was made from."""
        if into is not None:
            return self._check_into(repo, into, task_branch)
        name = ws.base_ref or self._base_from_scaffold(repo, ws)
        if name is None:
            raise not_landable(
                f"cannot land {ws.task_id}: its worktree was not made from a branch (a commit or "
                "a detached HEAD); name the branch to land on (into)",
                "no_base_branch",
                id=ws.task_id,
            )
        if landgit.branch_tip(repo, name) is None:
            raise not_landable(
                f"cannot land {ws.task_id}: its base branch {name} is gone; name another (into)",
                "no_base_branch",
                id=ws.task_id,
                into=name,
            )
        return name

    @staticmethod
    def _base_from_scaffold(repo: Path, ws: Workspace) -> str | None:
        """For worktrees made before the board kept `base_ref`: the branch TASK.md names."""
        if not ws.base_commit:
            return None
        text = gitrepo.read_blob(repo, ws.base_commit, sor.TASK_MD) or ""
        for line in text.splitlines():
            if line.startswith("- Branched from: ") and line.endswith(")"):
                label = line.rpartition("(")[2][:-1]
                if label not in ("HEAD", "pinned sha") and landgit.branch_tip(repo, label):
                    return label
        return None

    def _source(
        self,
        task_id: str,
        into: Any,
        *,
        shared: bool,
        with_verify: bool = True,
    ) -> _Source:
        """What would land, read under the task's lock (shared for a preview). Refusals here
        (`not_landable`, `invalid_input`, `conflict`) have written nothing."""
        trees = self.trees
        task, ws = self._workspace_of(task_id)
        self._check_here(ws)
        repo = Path(ws.repo_path)
        if not os.path.lexists(repo / ".git"):  # a look, not a git run: a landing runs few
            raise not_landable(
                f"cannot land {task_id}: its repository {repo} is gone", "no_worktree", id=task_id
            )
        lock = trees._lock(repo, task_id, "read what lands of" if shared else "land", shared=shared)
        with lock:
            task, ws = self._workspace_of(task_id)
            self._check_here(ws)
            branch = ws.branch or branch_name(task_id)
            path, problem = trees._checkout(ws)
            if problem:
                raise trees._untrusted(ws, problem)
            live = path if ws.status == "active" else None
            if live is not None:
                trees._check_resolved(live, ws, "land")
                head, current = landgit.head_and_branch(live, repo)
                trees._check_branch_name(ws, "land", current)
                assert head is not None
                snapshot = landgit.work_snapshot(live, repo)
            else:
                found = landgit.branch_tip(repo, branch)
                if found is None and self._completed_empty(ws):
                    raise not_landable(
                        f"cannot land {task_id}: its complete found no change, so its worktree "
                        f"and branch {branch} were removed; there is nothing to land",
                        "empty",
                        id=task_id,
                    )
                if found is None:
                    raise not_landable(
                        f"cannot land {task_id}: its worktree and branch {branch} are gone",
                        "no_worktree",
                        id=task_id,
                    )
                head, snapshot = found, landgit.tree_of(repo, found)
            assert ws.base_commit is not None
            provisioned = landgit.parent_of(repo, ws.base_commit)
            if provisioned is None:
                raise not_landable(
                    f"cannot land {task_id}: its baseline {ws.base_commit[:12]} has no parent",
                    "no_base_branch",
                    id=task_id,
                )
            into_name = self._base_branch(ws, repo, into, branch)
            tree = landgit.without_bookkeeping(repo, snapshot, provisioned)
            verify = None
            if with_verify:
                verify = self._verify_command(task, ws, repo, live, head)
        if tree == landgit.tree_of(repo, provisioned):
            raise not_landable(
                f"cannot land {task_id}: its worktree holds no change (bookkeeping files aside)",
                "empty",
                id=task_id,
            )
        stray = landgit.undeclared_gitlinks(repo, landgit.tree_of(repo, provisioned), tree)
        if stray:
            raise not_landable(
                f"cannot land {task_id}: {name_files(stray)} in its worktree "
                f"{'is a git repository' if len(stray) == 1 else 'are git repositories'} of "
                "its own, not a submodule: it would land as a pointer to a commit the base "
                "does not have, and its files would be lost with the worktree; remove its "
                "`.git` to land the files, or add it with `git submodule add`",
                "embedded_repository",
                id=task_id,
                files=stray,
            )
        held = landgit.submodules_held_only_in(live, repo, landgit.tree_of(repo, provisioned), tree)
        if held:
            raise not_landable(
                f"cannot land {task_id}: it points {name_files(held)} at "
                f"{'a commit' if len(held) == 1 else 'commits'} only its worktree holds, lost "
                "with the worktree once landed; push the submodule's commit to its remote, or "
                f"fetch it into your checkout's submodule (git -C {repo / held[0]} fetch "
                f"{(live or repo) / held[0]} HEAD), then land again",
                "submodule_commit_unpublished",
                id=task_id,
                files=held,
            )
        return _Source(task, ws, repo, branch, live, head, snapshot, provisioned, tree, into_name,
                       verify)  # fmt: skip

    @staticmethod
    def _check_here(ws: Workspace) -> None:
        """Refuse (`not_landable`, why `elsewhere`, naming the machine) a landing whose work is
        on another machine: its live checkout may hold what is not committed, and landing its
        branch from here would delete that branch under it; a finished one's repository is not
        on this disk (not "gone")."""
        host = elsewhere(ws)
        if host is None:
            return
        where = "worktree" if ws.status == "active" else f"repository {ws.repo_path}"
        raise not_landable(
            f"cannot land {ws.task_id} here: its {where} is on machine {host}, not on this one; "
            "land it from there",
            "elsewhere",
            id=ws.task_id,
            host=host,
        )

    def _completed_empty(self, ws: Workspace) -> bool:
        """Whether `ws` was archived by an empty complete (its record may be pruned: then no)."""
        if ws.status != "archived":
            return False
        return any(
            event.kind == EventKind.WORKSPACE_UPDATED
            and read(event.data).get("workspace_id") == ws.id
            and read(event.data).get("reason") == EMPTY_DIFF_REMOVED
            for event in self.board.recent_events(task_id=ws.task_id, limit=20)
        )

    def _workspace_of(self, task_id: str) -> tuple[Task, Workspace]:
        try:
            return self.trees._workspace(task_id)
        except BoardError as error:
            if error.reason != Reason.NOT_FOUND or self.board.find_task(task_id) is None:
                raise
            raise not_landable(
                f"cannot land {task_id}: it has no worktree (nothing was provisioned for it)",
                "no_worktree",
                id=task_id,
            ) from None

    def _verify_command(
        self, task: Task, ws: Workspace, repo: Path, live: Path | None, head: str
    ) -> VerifyCommand:
        """The task's verify command, found as the gate finds it (the handoff's, else init.sh's;
        under `KANBAN_VERIFY_FROM=operator` only the one fixed at provision time), read from the
        checkout, or from the branch when the checkout is gone."""

        def read(name: str) -> str | None:
            if live is not None:
                return sor.read_sor_file(live, name)
            return landgit.read_blob(repo, head, name)

        provisioned = (
            landgit.read_blob(repo, ws.base_commit, sor.INIT_SH) if ws.base_commit else None
        )
        return find_verify_command_from(
            read,
            verify_from=self.board.config.verify_from,
            provisioned=provisioned,
            builder=task.builder,
        )

    # -- the preview ----------------------------------------------------------------------------

    def preview(
        self, task_id: str, *, into: str | None = None, strategy: str = "squash"
    ) -> LandingPreview:
        """Would `task_id` land now with `strategy`, and how? Never raises for a task that
        cannot land: the preview says why (`unavailable`); only an unknown task is `not_found`
        (and a strategy that is none, `invalid_input`). A few git commands, no verification
        (see `LandingPreview`); `rebase` replays the commits as the landing would."""
        started = time.monotonic()
        strategy = self._check_strategy(strategy)
        task = self.board.get_task(task_id)

        def done(**values: Any) -> LandingPreview:
            entry, refusal = (
                self.queue.under_way_and_refused(task_id)
                if values["state"] != LANDED
                else (None, None)
            )
            if entry is not None and not entry.dead(self.board.now()):
                values["landing"] = (
                    f"being landed by {one_line(entry.lander, 80)} ({entry.id}, {entry.state})"
                )
                values["summary"] += f"; {values['landing']}"
            if refusal is not None:  # merging cleanly is not landing: say what refused it
                values["refused"] = (
                    f"{refusal['refusal_reason']}: {one_line(refusal['refusal_message'], 300)}"
                )
                values["summary"] += f"; its last landing was refused ({refusal['refusal_reason']})"
            elapsed = int((time.monotonic() - started) * 1000)
            return LandingPreview(task_id=task_id, elapsed_ms=elapsed, strategy=strategy, **values)

        if task.landed_commit is not None:
            summary = f"landed as {_short(task.landed_commit)} on {task.landed_into}"
            return done(
                state=LANDED,
                summary=summary,
                into=task.landed_into,
                landed_commit=task.landed_commit,
                stamp=f"landed:{task.landed_commit}",
            )
        try:
            check_reviewed(task)  # a cancelled, dropped or unfinished task lands nowhere
            source = self._source(task_id, into, shared=True, with_verify=False)
        except BoardError as error:
            why = str(error.details.get("why") or error.reason.value)
            return done(state=UNAVAILABLE, summary=error.message, why=why)
        repo, into_name = source.repo, source.into
        tip = landgit.rev(repo, source.ref)
        if tip is None:  # deleted since `_source` found it: as if it had been gone then
            summary = f"cannot land {task_id}: its base branch {into_name} is gone; name another"
            return done(state=UNAVAILABLE, why="no_base_branch", summary=summary, into=into_name)
        behind = (
            0 if tip == source.provisioned else landgit.count_commits(repo, source.provisioned, tip)
        )
        moved = ""
        if behind:
            moved = f"; {into_name} has moved {behind} commit{'s' if behind != 1 else ''} since "
            moved += "the worktree was made"
        stamp = f"{tip}:{source.tree}"
        common = dict(into=into_name, base_tip=tip, provisioned_from=source.provisioned,
                      behind=behind, source_tree=source.tree, stamp=stamp)  # fmt: skip
        # A replay can conflict even onto the tip the work was made on (or synced with: the
        # commits saved before a sync's merge are replayed without it), so rebase always replays.
        if tip == source.provisioned and strategy != "rebase":
            return done(state=CLEAN, summary=f"lands cleanly onto {into_name}@{_short(tip)}",
                        merged_tree=source.tree, **common)  # fmt: skip
        theirs = landgit.fixed(
            (str(repo), "preview side", source.tree, source.provisioned),
            lambda: landgit.commit_tree(
                repo, source.tree, (source.provisioned,), f"kanban: preview of {task_id}\n"
            ),
        )  # the same commit while the work is the same, so the merge below is asked once
        try:
            merged = landgit.merge(repo, tip, theirs)
        except landgit.UnrelatedHistories:
            summary = f"{into_name} shares no history with the worktree"
            return done(state=UNAVAILABLE, why="unrelated", summary=summary, **common)
        if merged.tree is None:
            files = merged.conflicts
            shown = name_files(files)
            return done(state=CONFLICTS, summary=f"conflicts with {into_name} in {shown}{moved}",
                        conflicts=files, **common)  # fmt: skip
        if merged.tree == landgit.tree_of(repo, tip):  # whatever the strategy: nothing would move
            summary = (
                f"its change is already on {into_name}@{_short(tip)}: landing records it as "
                f"landed there, and {into_name} does not move"
            )
            return done(state=CLEAN, why=ALREADY_ON, merged_tree=merged.tree, summary=summary,
                        **common)  # fmt: skip
        summary = f"lands cleanly onto {into_name}@{_short(tip)}{moved}"
        if strategy != "rebase":
            return done(state=CLEAN, merged_tree=merged.tree, summary=summary, **common)
        try:  # the work merges as one change; replayed commit by commit it may not
            replayed = self._replay(source, tip)
        except BoardError as error:
            if error.reason != Reason.MERGE_CONFLICT:
                why = str(error.details.get("why") or error.reason.value)
                return done(state=UNAVAILABLE, summary=error.message, why=why, **common)
            files = list(error.details.get("files") or [])
            summary = (
                f"conflicts with {into_name} in {name_files(files)} when its commits are "
                f"replayed (squash or merge lands the work as one change){moved}"
            )
            return done(state=CONFLICTS, summary=summary, conflicts=files, **common)
        return done(state=CLEAN, merged_tree=replayed.tree, summary=summary, **common)

    def stamp(self, task_id: str) -> str:
        """A cheap token that changes when the preview may have: the base tip, the worktree
        (`Worktrees.fingerprint`) and whether the task landed. One `rev-parse` and one
        `git status`."""
        task = self.board.get_task(task_id)
        if task.landed_commit is not None:
            return f"landed:{task.landed_commit}"
        try:
            _, ws = self.trees._workspace(task_id)
        except BoardError:
            return "none"
        repo = Path(ws.repo_path)
        name = ws.base_ref or (self._base_from_scaffold(repo, ws) if repo.is_dir() else None)
        tip = landgit.rev(repo, f"refs/heads/{name}") if name and repo.is_dir() else None
        return f"{tip}:{self.trees.fingerprint(task_id)}"

    # -- building -------------------------------------------------------------------------------

    def _messages(self, source: _Source, actor: str) -> tuple[str, str]:
        """The squash commit's message (title and id first) and a merge commit's."""
        task = source.task
        title = one_line(task.title) or "(untitled)"
        builder = one_line(task.builder or "an agent", 80)
        lander = one_line(actor, 80)
        body = (
            f"Work of {builder} on {task.id}, landed by {lander} with kanban from branch "
            f"{source.branch}.\n\nKanban-Task: {task.id}\nKanban-Board: {self.trees.board_key}\n"
        )
        return f"{title} ({task.id})\n\n{body}", f"Merge {task.id}: {title}\n\n{body}"

    def _conflict(self, source: _Source, tip: str, files: list[str], step: str) -> BoardError:
        """`merge_conflict` in words every surface can show: handed-in work says who may sync
        it (the same words as the MCP hint), how is each surface's hint (the MCP tools, the
        CLI's commands), decided by the task's `status`; a replay's conflict (`why`: `replayed`)
        has the strategies that land the work as one change. Before, the refusal quoted `kanban task
        workspace sync` to an MCP reviewer, on done work an agent may not sync, and then said a sync
        lets the files be resolved without saying whose."""
        shown = name_files(files, 10)
        sync = "a sync of the worktree with the base lets them be resolved"
        who_syncs = {t.DONE: DONE_SYNC, t.IN_REVIEW: REVIEW_SYNC}.get(source.task.status)
        if who_syncs is not None:  # handed in: the lander may not sync it (an agent never does)
            sync = f"{sync}, and {who_syncs}"
        # A replay can conflict where the work as a whole merges (found in tmux: the preview
        # said "lands cleanly", the sync it advised was done already): say the other way.
        advice = (
            f"squash or merge lands the work as one change, which may merge where a replay "
            f"does not; or {sync}"
            if step
            else sync
        )
        return BoardError(
            Reason.MERGE_CONFLICT,
            f"cannot land {source.task.id}: it conflicts with {source.into}@{_short(tip)} in "
            f"{shown or '(unknown files)'}{step}; {advice}",
            id=source.task.id,
            status=source.task.status,  # who resolves it depends on it (the MCP hint's choice)
            why=REPLAYED if step else None,  # a replay's: squash or merge may land it as it is
            files=files,
            into=source.into,
            base_tip=tip,
        )

    def _build(
        self, source: _Source, tip: str, strategy: str, actor: str, tip_tree: str | None = None
    ) -> _Built:
        """The commit that would carry the work on `tip`, made in memory. A change the tip holds
        already raises `_already_on`, whatever the strategy: a replay that conflicts on the way
        to a tree the tip has would move nothing either."""
        if strategy == "rebase":
            try:
                return self._replay(source, tip)
            except BoardError as error:
                if error.details.get("why") != REPLAYED or not self._holds_change(
                    source, tip, tip_tree or landgit.tree_of(source.repo, tip)
                ):
                    raise
                raise self._already_on(source, tip) from None
        return self._commit(source, tip, self._merged_tree(source, tip, tip_tree), strategy, actor)

    def _merged_tree(self, source: _Source, tip: str, tip_tree: str | None = None) -> str:
        """The tree a squash or merge landing puts on `tip`, refused when the work conflicts
        there or is already there. No commit is made: the check before queueing needs none."""
        repo = source.repo
        if tip == source.provisioned:
            tree = source.tree
        else:
            if source.change is None:
                source.change = landgit.commit_tree(
                    repo,
                    source.tree,
                    (source.provisioned,),
                    f"kanban: the change of {source.task.id}\n",
                )
            theirs = source.change
            try:
                merged = landgit.merge(repo, tip, theirs)
            except landgit.UnrelatedHistories:
                raise not_landable(
                    f"cannot land {source.task.id}: {source.into} shares no history with it",
                    "unrelated",
                    id=source.task.id,
                ) from None
            if merged.tree is None:
                raise self._conflict(source, tip, merged.conflicts, "")
            tree = merged.tree
        if tree == (tip_tree or landgit.tree_of(repo, tip)):
            raise self._already_on(source, tip)
        return tree

    def _commit(self, source: _Source, tip: str, tree: str, strategy: str, actor: str) -> _Built:
        """`tree` (`_merged_tree` on `tip`) as the commit a squash or merge landing makes."""
        repo = source.repo
        squash_message, merge_message = self._messages(source, actor)
        if strategy == "merge":
            side = landgit.commit_tree(repo, source.tree, (source.provisioned,), squash_message)
            commit = landgit.commit_tree(repo, tree, (tip, side), merge_message)
        else:
            commit = landgit.commit_tree(repo, tree, (tip,), squash_message)
        return _Built(commit, tree, tip)

    def _replay(self, source: _Source, tip: str) -> _Built:
        """`rebase`: each commit of the task branch (merges left out, bookkeeping files as the
        base has them), then the uncommitted part of the worktree, replayed onto `tip` one
        three-way merge at a time. Authors and messages are kept; a commit that changes nothing
        any more is dropped."""
        repo, base = source.repo, source.provisioned
        assert source.ws.base_commit is not None
        steps: list[tuple[str, str, landgit.Author | None, str]] = []
        author: landgit.Author | None
        for commit in landgit.commits_between(repo, source.head, source.ws.base_commit, tip):
            parent = landgit.parent_of(repo, commit)
            before = landgit.without_bookkeeping(repo, landgit.tree_of(repo, parent or base), base)
            after = landgit.without_bookkeeping(repo, landgit.tree_of(repo, commit), base)
            author, message = landgit.commit_info(repo, commit)
            steps.append((before, after, author, message))
        committed = landgit.without_bookkeeping(repo, landgit.tree_of(repo, source.head), base)
        if source.tree != committed:
            message = f"{one_line(source.task.title)} ({source.task.id}): uncommitted work\n"
            steps.append((committed, source.tree, None, message))
        current, tree = tip, landgit.tree_of(repo, tip)
        for index, (before, after, author, message) in enumerate(steps, start=1):
            merged = landgit.merge_at(repo, before, tree, after, label=f"{source.task.id} {index}")
            if merged.tree is None:
                raise self._conflict(
                    source, tip, merged.conflicts, f" (replaying commit {index} of {len(steps)})"
                )
            if merged.tree == tree:
                continue
            current = landgit.commit_tree(repo, merged.tree, (current,), message, author=author)
            tree = merged.tree
        if current == tip:
            raise self._already_on(source, tip)
        return _Built(current, tree, tip)

    @staticmethod
    def _already_on(source: _Source, tip: str) -> BoardError:
        """The change is on `tip` already: not a refusal of `land`, which records the task as
        landed there (`_record_already_on`); raised from a build so every path finds it."""
        return not_landable(
            f"{source.task.id}'s change is already on {source.into}@{_short(tip)}",
            ALREADY_ON,
            id=source.task.id,
            base_tip=tip,
        )

    # -- the checkouts of the base --------------------------------------------------------------

    def _check_checkouts(self, source: _Source, base: str, tree: str) -> list[Path]:
        """The checkouts of the base branch, refusing (`base_checked_out_dirty`, nothing touched)
        when one has a local change, or when bringing it along from `base` to a commit of `tree`
        would fail for any other reason (an untracked file in the way, an edit `git status`
        hides, a held index): the same fast-forward, as a dry run (to the tree: git's dry run
        needs no commit, so the check before queueing makes none)."""

        def dirty(checkout: Path, why: str, files: list[str]) -> BoardError:
            return BoardError(
                Reason.BASE_CHECKED_OUT_DIRTY,
                f"cannot land {source.task.id}: {why}",
                id=source.task.id,
                path=str(checkout),
                files=files,
                into=source.into,
            )

        operations, checkouts = landgit.operations_and_checkouts(source.repo, source.into)
        for checkout, operation in operations:
            raise dirty(
                checkout,
                f"a {operation} of {source.into} is under way at {checkout}; finish or abort it "
                "first (moving the branch now would break it)",
                [],
            )
        for checkout in checkouts:
            if landgit.index_locked(checkout):
                raise dirty(
                    checkout,
                    f"{source.into} is checked out at {checkout}, and another git command holds "
                    "its index (.git/index.lock): wait for it to finish, or, if no git command "
                    "runs there, remove the lock a crashed one left, then land again",
                    [INDEX_LOCK],
                )
            changed = landgit.local_changes(checkout)
            if changed:
                what, files = f"uncommitted changes ({name_files(changed)})", changed
            else:
                refusal = landgit.fast_forward_refusal(checkout, base, tree)
                if refusal is None:
                    continue
                files, words = refusal
                shown = f" ({name_files(files)})" if files else ""
                if words is None:  # git would replace them silently: the landing will not
                    raise dirty(
                        checkout,
                        f"{source.into} is checked out at {checkout} with files git does not "
                        f"track (ignored ones included) where the landing adds files or "
                        f"folders{shown}; landing would overwrite or delete them, so it stops: "
                        "move or delete them, then land again",
                        files,
                    )
                what = f"files git refuses to overwrite{shown}: {one_line(words, 300)}"
            raise dirty(
                checkout,
                f"{source.into} is checked out at {checkout} with {what}; commit, stash or move "
                "them first",
                files,
            )
        return checkouts

    def _check_checkouts_early(self, source: _Source, base: str, tree: str) -> None:
        """`_check_checkouts` before taking a place in the queue. A checkout of the base looks
        changed for a moment while another landing moves it along (between its branch move and
        its fast-forward), so a changed checkout is only refused here when no landing of the
        branch holds its turn and it is still changed once that is known; otherwise the turn
        checks again, with nobody else moving it."""
        try:
            self._check_checkouts(source, base, tree)
        except BoardError as error:
            if error.reason != Reason.BASE_CHECKED_OUT_DIRTY:
                raise
            queue = self.queue.entries(str(source.repo), source.ref)
            if any(entry.state == "active" for entry in queue):
                return
            if self._brought_along_meanwhile(source, error):
                return
            self._check_checkouts(source, base, tree)

    def _brought_along_meanwhile(self, source: _Source, error: BoardError) -> bool:
        """Whether a checkout of the base refused as changed is only behind: a landing (of another
        board on the repository, which queues its own) moved the branch and is bringing that
        checkout along, which holds exactly the branch's previous commit, nothing of the user's.
        Then this waits for it to catch up (a moment; at most `SETTLE_S`) and answers True, and
        the caller checks again. Told by that landing's mark (`behind_ref`), not by the branch's
        reflog, which a repository may not keep (`core.logAllRefUpdates`, a bare one). With no
        mark standing, a landing that cleared its mark since the checkout was read has brought it
        along: True when nothing looks changed any more (the caller's check has the last word)."""
        if error.reason != Reason.BASE_CHECKED_OUT_DIRTY or "path" not in error.details:
            return False
        checkout = Path(error.details["path"])
        marked = [old for _, old in _behind_marks(source.repo, source.into)]
        if not marked:
            return not landgit.index_locked(checkout) and not landgit.local_changes(checkout)
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            # a held index is the fast-forward under way; the previous commit, not yet begun
            if not landgit.index_locked(checkout) and not any(
                self._holds_exactly(checkout, old) for old in marked
            ):
                return not landgit.local_changes(checkout)  # caught up; else a change of the user's
            time.sleep(0.02)
        self._bring_along_left(source, checkout)
        return True  # the caller checks again: caught up, or refused

    def _bring_along_left(self, source: _Source, checkout: Path) -> None:
        """A checkout still holding exactly the old tip a landing marked (`behind_ref`) once that
        landing had time to bring it along: its lander was killed in between. Bring it along as
        that board's recovery would (only where git overwrites nothing, ignored files included),
        and clear the mark. Without a mark, exactly the old tip may be a person's revert of the
        landing: left alone."""
        repo, tip = source.repo, landgit.rev(source.repo, source.ref)
        for ref, old in _behind_marks(repo, source.into):
            if tip is None or old == tip or not self._holds_exactly(checkout, old):
                continue
            if landgit.index_locked(checkout) or landgit.fast_forward_refusal(checkout, old, tip):
                return
            try:
                landgit.fast_forward_checkout(checkout, old, tip)
            except GitFailure:
                return  # changed meanwhile: the caller's check refuses, naming the files
            self._brought(repo, source.into, old, ref)
            return

    @staticmethod
    def _holds_exactly(checkout: Path, commit: str) -> bool:
        """Whether a checkout's files and index are `commit`'s tracked files, nothing else."""
        return all(
            gitrepo.run(
                checkout, "--no-optional-locks", "diff", "--quiet", *cached,
                "--ignore-submodules=all", commit, "--", check=False,
            )[0] == 0
            for cached in ((), ("--cached",))
        )  # fmt: skip

    # -- verification ---------------------------------------------------------------------------

    def _scratch_lock(self, repo: Path, slot: int) -> WorktreeLock:
        return WorktreeLock(
            self.trees.layout.repo_dir(repo) / ".locks" / f"land-{slot}.lock",
            purpose=f"verify a landing in scratch {slot}",
            timeout_s=0,
            subject=f"scratch checkout {slot}",
        )

    def _scratch(self, repo: Path, *, ahead: bool = False) -> tuple[WorktreeLock, Path]:
        """A free scratch checkout of the repository, locked (`flock`: a dead lander's lock goes
        with it, and a verify command still running from one keeps it, so nobody else uses it;
        what a dead lander's command left running is stopped and its checkout taken). `ahead`: for
        a guess, one of the last `AHEAD_SLOTS` only."""
        layout = self.trees.layout
        first = SCRATCH_SLOTS - AHEAD_SLOTS if ahead else 0
        for slot in range(first, SCRATCH_SLOTS):
            lock = self._scratch_lock(repo, slot)
            path = layout.repo_dir(repo) / ".land" / str(slot)
            if _acquired(lock) or (stop_orphaned_verify(path) and _acquired(lock)):
                return lock, path
        raise BoardError(
            Reason.BUSY,
            f"every scratch checkout of {repo} is busy verifying; try again shortly",
            slots=SCRATCH_SLOTS,
        )

    def _tidy(self, repo: Path, used: list[Path]) -> None:
        """Clean the scratch checkouts this landing verified in, once its turn is given back (so
        the next landing's turn does not wait for it). One another lander took meanwhile is left
        to it: its marker makes that lander clean it first. Failures are left to the next user."""
        for path in used:
            if not path.name.isdigit():
                continue
            lock = self._scratch_lock(repo, int(path.name))
            try:
                lock.acquire()
            except BoardError:
                continue
            try:
                if landgit.scratch_marker(path).exists() and (path / ".git").is_dir():
                    landgit.clean_scratch(path)
            except (GitFailure, OSError):
                pass
            finally:
                lock.release()
        used.clear()

    def _verify(
        self, source: _Source, built: _Built, used: list[Path], *, ahead: bool = False
    ) -> dict[str, Any] | None:
        """Run the verify command on the built commit in a scratch checkout; refuse
        (`verification_failed`) when it fails. None when landing without one (the override).
        The scratch checkout used goes into `used`: `_tidy` cleans it later. `ahead`: a guess
        while waiting, in a checkout turns leave free (`AHEAD_SLOTS`), cleaned before it is given
        up (the landing is waiting anyway): the next guess there, often another lander's, finds
        it clean, instead of cleaning it and listing its index (`ls-files`: another process's
        checkout) in a git run of its own."""
        found = source.verify
        if found is None or found.command is None:
            return None
        repo = source.repo
        lock, path = self._scratch(repo, ahead=ahead)
        try:
            try:
                landgit.prepare_scratch(repo, path, built.commit)
            except GitFailure:  # a scratch checkout git no longer knows: made again
                with self.trees._repo_lock(repo, f"make a scratch checkout for {source.task.id}"):
                    if not self.trees.layout.contains(path) or path.parent.name != ".land":
                        raise
                    shutil.rmtree(path, ignore_errors=True)
                    landgit.scratch_marker(path).unlink(missing_ok=True)
                    landgit.prepare_scratch(repo, path, built.commit)
            landgit.mark_scratch(path)
            used.append(path)
            result = run_verify_command(
                found.command,
                path,
                timeout_s=self.trees.verify_timeout_s,
                env={
                    "KANBAN_TASK_ID": source.task.id,
                    "KANBAN_WORKTREE": str(path),
                    "KANBAN_LANDING": "1",
                    "KANBAN_LAND_INTO": source.into,
                    "KANBAN_LAND_BASE": built.base,
                    "KANBAN_LAND_COMMIT": built.commit,
                    "KANBAN_REPO": str(repo),
                },
                pass_fds=(lock.fd,) if lock.fd is not None else (),
            )
        finally:
            if ahead and landgit.scratch_marker(path).exists():
                with contextlib.suppress(GitFailure, OSError):  # else left to its next user
                    landgit.clean_scratch(path)
            lock.release()
        report = {
            "command": found.command,
            "commandSource": found.source,
            "commandAuthor": found.author,
            "exitCode": result.exit_code,
            "durationMs": result.duration_ms,
            "timedOut": result.timed_out,
            "commit": built.commit,
        }
        if not result.passed:
            ending = "timed out" if result.timed_out else f"exited {result.exit_code}"
            raise BoardError(
                Reason.VERIFICATION_FAILED,
                f"cannot land {source.task.id}: `{found.command}` {ending} on the merged tree "
                f"({source.into}@{_short(built.base)} + the task's change)",
                id=source.task.id,
                status=source.task.status,
                command=found.command,
                command_source=found.source,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                duration_ms=result.duration_ms,
                commit=built.commit,
                into=source.into,
                base_tip=built.base,
                stdout_tail=result.stdout_tail[-TAIL_CHARS:],
                stderr_tail=result.stderr_tail[-TAIL_CHARS:],
            )
        return report

    # -- landing --------------------------------------------------------------------------------

    def land(
        self,
        task_id: str,
        *,
        actor: str,
        into: str | None = None,
        strategy: str = DEFAULT_STRATEGY,
        dry_run: bool = False,
        keep: bool = False,
        allow_unverified: bool = False,
        epoch: int | None = None,
        expect_source: str | None = None,
        unverified_reason: str | None = None,
    ) -> LandResult:
        """Land `task_id`'s work onto its base branch (or `into`) as `actor`: approve-and-land
        from in_review (done only if it lands), land from done (the status stays). See the module
        docstring for the steps and `LandResult` for the answer. Refusals are typed and write
        nothing; when an approve-and-land fails past its checks (conflict, verification, the
        base), the task stays in review with a system comment saying why.

        `allow_unverified` (operators only): land without a verify command, audited (with the
        operator's `unverified_reason`, when given).
        `expect_source`: the `source_tree` of the preview the decision was made on; the landing
        is refused (`not_landable`, why `changed_since_review`) if the work changed since.
        `dry_run`: everything but the board and the branch: built and verified, reported."""
        started = time.monotonic()
        from ..validation import name as valid_name
        from ..validation import text as valid_text

        actor = valid_name(actor, "actor")
        strategy = self._check_strategy(strategy)
        unverified_reason = valid_text(
            unverified_reason, "unverifiedReason", limit=500, required=False
        )
        if unverified_reason and not allow_unverified:
            raise invalid_input(
                "a reason for landing unverified (--reason, unverifiedReason) goes with "
                "--allow-unverified (allowUnverified), which only an operator gives",
                field="unverifiedReason",
            )
        task = self.board.get_task(task_id)
        approve = check_landable(task, actor, epoch=epoch)
        try:
            return self._land_checked(
                task_id, actor, approve, into=into, strategy=strategy, dry_run=dry_run, keep=keep,
                allow_unverified=allow_unverified, epoch=epoch, expect_source=expect_source,
                started=started, reason=unverified_reason,
            )  # fmt: skip
        except BoardError as error:
            if not dry_run:  # a refusal a person must resolve stands in the inbox
                with contextlib.suppress(BoardError):  # the refusal is the answer either way
                    self.queue.record_refusal(task_id, error, actor)
            raise

    def _land_checked(
        self,
        task_id: str,
        actor: str,
        approve: bool,
        *,
        into: str | None,
        strategy: str,
        dry_run: bool,
        keep: bool,
        allow_unverified: bool,
        epoch: int | None,
        expect_source: str | None,
        started: float,
        reason: str | None = None,
    ) -> LandResult:
        if allow_unverified and not is_operator(actor):
            raise BoardError(
                Reason.OPERATOR_ONLY,
                f"cannot land {task_id} without verification as {actor}: only an operator "
                "overrides the verify command (--allow-unverified, allowUnverified); ask a person",
                actor=actor,
                field="allowUnverified",
            )
        source = self._source(task_id, into, shared=False)
        if expect_source is not None and not (
            len(expect_source) >= 7 and source.tree.startswith(expect_source.lower())
        ):
            raise not_landable(
                f"cannot land {task_id}: its work changed since it was reviewed (the tree that "
                f"would land is {source.tree[:12]}, not {expect_source[:12]}); review it again",
                "changed_since_review",
                id=task_id,
                source_tree=source.tree,
            )
        unverified = None
        if source.verify is None or source.verify.command is None:
            found = landgit.tip_and_tree(source.repo, source.ref)
            if found is not None and self._holds_change(source, *found):
                # nothing would move (landed another way): no verify command to ask for
                return self._record_already_on(
                    source, found[0], strategy, actor, approve, epoch, keep, dry_run, started
                )
            if not allow_unverified:
                raise BoardError(
                    Reason.VERIFICATION_REQUIRED,
                    f"cannot land {task_id}: it has no verify command (the handoff's "
                    "commands.verify or init.sh's VERIFY_CMD), and the branch only takes "
                    "verified trees; an operator may land it unverified, saying why: "
                    f"`{unverified_command(task_id)}` (over HTTP allowUnverified)",
                    id=task_id,
                    warnings=source.verify.warnings if source.verify else None,
                )
            unverified = "no verify command"
            if reason:
                unverified += f"; why: {one_line(reason, 500)}"
        try:
            if dry_run:
                return self._dry_run(source, strategy, actor, started)
            return self._land(source, strategy, actor, approve, epoch, keep, unverified, started)
        except BoardError as error:  # the base took the same change meanwhile
            tip = error.details.get("base_tip")
            if error.details.get("why") != ALREADY_ON or not isinstance(tip, str):
                raise
            return self._record_already_on(
                source, tip, strategy, actor, approve, epoch, keep, dry_run, started
            )

    def _holds_change(self, source: _Source, tip: str, tip_tree: str) -> bool:
        """Whether `tip` holds the task's change already: the work merged as one change onto it
        leaves its tree as it is. A change only partly there merges as usual (not this); a
        conflict is the landing's to report. Decided on the whole change whatever the strategy:
        a replay that conflicts on the way to a tree the base has already moves nothing either."""
        if tip == source.provisioned:
            return False  # `_source` refused a worktree holding no change
        try:
            self._merged_tree(source, tip, tip_tree)
        except BoardError as error:
            return error.details.get("why") == ALREADY_ON
        return False

    def _record_already_on(
        self,
        source: _Source,
        tip: str,
        strategy: str,
        actor: str,
        approve: bool,
        epoch: int | None,
        keep: bool,
        dry_run: bool,
        started: float,
    ) -> LandResult:
        """The change is on `tip` already: record the task as landed in `tip` (one `task_landed`
        event saying so, `already_on`; approved too from in_review) and archive its worktree as
        a landing does. Nothing moves, so nothing is verified. A dry run says so, writing
        nothing."""
        repo, warnings = source.repo, list[str]()
        tree = landgit.tree_of(repo, tip)
        task, archived = source.task, False
        if not dry_run:
            task = self.queue.record_landed(
                task.id, commit=tip, into=source.into, strategy=strategy, actor=actor,
                approve=approve, old_tip=tip, epoch=epoch, already_on=True,
            )  # fmt: skip
            self._step("recorded", commit=tip)
            if not keep:
                archived = self._archive(source, _Built(tip, tree, tip), actor, warnings)
            self._step("archived", archived=archived)
        return LandResult(
            task=self.board.get_task(task.id) if archived else task, landed=not dry_run,
            dry_run=dry_run, into=source.into, strategy=None, commit=tip, base_before=tip,
            tree=tree, archived=archived, already_on=True, warnings=warnings,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )  # fmt: skip

    def _dry_run(self, source: _Source, strategy: str, actor: str, started: float) -> LandResult:
        tip = landgit.rev(source.repo, source.ref)
        assert tip is not None
        built = self._build(source, tip, strategy, actor)
        self._check_checkouts(source, built.base, built.tree)
        used: list[Path] = []
        try:
            verification = self._verify(source, built, used)
        finally:
            self._tidy(source.repo, used)
        return LandResult(
            task=source.task,
            landed=False,
            dry_run=True,
            into=source.into,
            strategy=strategy,
            commit=built.commit,
            base_before=tip,
            tree=built.tree,
            files=landgit.changed_paths(source.repo, tip, built.tree),
            builds=1,
            verification=verification,
            unverified=verification is None,
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )

    def _join(self, source: _Source, holder: str, strategy: str, fence: str,
              options: dict[str, Any]) -> QueueEntry | Task:  # fmt: skip
        """A place in the branch's queue; a dead landing of the same task is recovered first
        (and when it had landed, the recorded task is returned instead)."""
        repo_path = str(source.repo)
        for _ in range(3):
            try:
                return self.queue.join(
                    source.task.id, repo_path=repo_path, ref=source.ref, lander=options["actor"],
                    holder=holder, strategy=strategy, fence=fence, options=options,
                )  # fmt: skip
            except BoardError as error:
                if error.reason != Reason.CONFLICT:
                    raise
                found = self.queue.entry_of_task(source.task.id)
                if found is None:
                    continue
                if not found.dead(self.board.now()):
                    raise
                recovered = self.recover_entry(found, by=options["actor"])
                if recovered is not None:
                    return recovered
        raise BoardError(Reason.BUSY, f"could not queue the landing of {source.task.id}")

    def _wait_for_turn(
        self,
        entry: QueueEntry,
        beat: _Heartbeat,
        meanwhile: Callable[[list[QueueEntry]], None] | None = None,
    ) -> QueueEntry:
        """Wait until `entry` is first in its queue and take the turn. On SQLite the queue is
        read again when the file changed (`PRAGMA data_version`, a few µs, asked every
        `TURN_POLL_S`) and at least every `TURN_REREAD_S` (a lander ahead may have died without
        a write); elsewhere every `TURN_POLL_MAX_S`. `meanwhile` hears each queue read while
        others are ahead (`_verify_ahead`)."""
        deadline = time.monotonic() + self.queue_timeout_s
        token, read_at = None, 0.0
        reread_s = TURN_REREAD_S if self.board.store.backend == "sqlite" else TURN_POLL_MAX_S
        while True:
            if beat.lost.is_set():
                raise BoardError(Reason.BUSY, f"{entry.id} lost its place in the landing queue")
            now_token = self.board.change_token()
            if now_token == token and time.monotonic() - read_at < reread_s:
                time.sleep(TURN_POLL_S)
                continue
            token, read_at = now_token, time.monotonic()
            queue = self.queue.entries(entry.repo_path, entry.ref)
            if not any(item.id == entry.id for item in queue):
                raise BoardError(Reason.BUSY, f"{entry.id} lost its place in the landing queue")
            head = queue[0]
            if head.id == entry.id:
                turn = self.queue.take_turn(beat.entry)
                if turn is not None:
                    beat.entry = turn
                    return turn
            elif head.dead(self.board.now()):
                self.recover_entry(head, by=entry.lander)
                continue
            elif meanwhile is not None:
                meanwhile(queue)
            if time.monotonic() > deadline:
                ahead = sum(1 for item in queue if item.seq < entry.seq)
                raise BoardError(
                    Reason.BUSY,
                    f"the landing queue of {entry.ref.removeprefix('refs/heads/')} stayed busy for "
                    f"{self.queue_timeout_s:g} s ({ahead} ahead of {entry.task_id}); try again",
                    ahead=ahead,
                )
            time.sleep(TURN_POLL_S)

    def _land(
        self,
        source: _Source,
        strategy: str,
        actor: str,
        approve: bool,
        epoch: int | None,
        keep: bool,
        unverified: str | None,
        started: float,
    ) -> LandResult:
        repo, task_id = source.repo, source.task.id
        earlier = self.queue.entry_of_task(task_id)
        if earlier is not None and earlier.dead(self.board.now()):
            # an earlier landing of this task died: settle it first (it may have landed)
            recovered = self.recover_entry(earlier, by=actor)
            if recovered is not None:
                return self._finish_recovered(source, recovered, strategy, keep, started)
        holder = holder_token()
        fence = landgit.commit_tree(
            repo, source.tree, (source.provisioned,),
            f"kanban: the change of {task_id}, landing\n\nKanban-Landing: {holder}\n",
        )  # fmt: skip
        source.change = fence  # unique to this landing, and the side each build merges
        options = {"actor": actor, "epoch": epoch, "keep": keep, "unverified": unverified}
        # Refuse what is refused on the current tip before taking a place in the queue, so
        # those refusals write nothing to the board (an approve-and-land that conflicts says why
        # on the task, its one write). The turn builds again if the tip moves meanwhile.
        found = landgit.tip_and_tree(repo, source.ref)
        assert found is not None
        early_base, early = found[0], None
        try:
            if strategy == "rebase":  # a replay is commits all the way
                early = self._build(source, early_base, strategy, actor, found[1])
                early_tree = early.tree
            else:  # its commit is made only if the turn finds the branch still there (a git run)
                early_tree = self._merged_tree(source, early_base, found[1])
            self._check_checkouts_early(source, early_base, early_tree)
        except BoardError as error:
            if approve and error.reason in EXPLAINED:
                self.queue.explain(task_id, _explanation(error))
            raise
        joined = self._join(source, holder, strategy, fence, options)
        if isinstance(joined, Task):
            return self._finish_recovered(source, joined, strategy, keep, started)
        entry = joined
        queued = time.monotonic()
        self._step("joined", entry=entry.id)
        beat = _Heartbeat(self.queue, entry)
        moved = False
        built: _Built | None = None
        attempt, waited_ms = 0, 0
        verification: dict[str, Any] | None = None
        verified_ahead = False
        checkouts: list[Path] = []
        brought: list[Path] = []
        warnings: list[str] = []
        used: list[Path] = []  # scratch checkouts to clean once the turn is given back
        ahead: list[_Ahead] = []  # what was made while waiting, on the commit ahead (the last)

        def meanwhile(queue: list[QueueEntry]) -> None:
            made = self._verify_ahead(source, strategy, actor, beat, queue, ahead, used)
            if made is not None:
                ahead[:] = [made]

        try:
            entry = self._wait_for_turn(entry, beat, meanwhile)
            waited_ms = int((time.monotonic() - queued) * 1000)
            self._step("turn", entry=entry.id)
            if landgit.rev(repo, self._fence_ref(source.into)) != fence:  # not handed over already
                landgit.update_refs(repo, [f"update {self._fence_ref(source.into)} {fence}"],
                                    f"kanban: {entry.id} takes the landing turn")  # fmt: skip
            for attempt in range(1, self.max_builds + 1):
                found = landgit.tip_and_tree(repo, source.ref)
                if found is None:
                    raise not_landable(
                        f"cannot land {task_id}: the branch {source.into} is gone",
                        "no_base_branch",
                        id=task_id,
                    )
                tip = found[0]
                made = ahead[0] if ahead else None
                from_ahead = made is not None and made.built is not None and made.built.base == tip
                if made is not None and made.built is not None and from_ahead:
                    if made.refusal is not None:
                        raise made.refusal  # the same verify command on the same tree, failed
                    built, verification = made.built, made.verification  # verified while waiting
                elif tip != early_base:
                    built = self._build(source, tip, strategy, actor, found[1])
                elif built is None or built.base != tip:  # the branch came back to it (a reset)
                    if early is None:
                        early = self._commit(source, tip, early_tree, strategy, actor)
                    built = early
                verifying = self._needs_verifying(source, built, verification)
                verified_ahead = from_ahead and not verifying and verification is not None
                # for any landing behind it, to verify on meanwhile (a build made while waiting
                # was said then); a landing with no verify command to run says so too
                if verifying or not from_ahead:
                    self.queue.publish_built(beat.entry, tip, built.commit)
                self._step("built", commit=built.commit, base=tip, attempt=attempt)
                if verifying:
                    verification = self._verify(source, built, used)
                # The checkouts of the base are checked once the verify command is done, right
                # before the branch moves: a verify command can take minutes, and the user goes
                # on working meanwhile (checked while it ran too, a checkout changed and put back
                # would refuse nothing more: what counts is the checkout the branch moves under).
                try:
                    checkouts = self._check_checkouts(source, built.base, built.tree)
                except BoardError as error:
                    if not self._brought_along_meanwhile(source, error):
                        raise
                    if landgit.rev(repo, source.ref) != tip:
                        continue  # built on a tip that is gone: build again on the new one
                    checkouts = self._check_checkouts(source, built.base, built.tree)
                self._step("verified", commit=built.commit, attempt=attempt)
                if (
                    beat.lost.is_set()
                    or self.queue.record_intent(beat.entry, tip, built.commit) is None
                ):
                    raise BoardError(Reason.BUSY, f"{entry.id} lost the landing turn; try again")
                self._step("intent", commit=built.commit, base=tip)
                successor = self._next_fence(beat.entry)
                behind = [f"update {self._behind_ref(source.into)} {tip}"] if checkouts else []
                applied, complaint = landgit.update_refs(
                    repo,
                    [
                        f"update {source.ref} {built.commit} {tip}",
                        f"update {self._fence_ref(source.into)} {successor} {fence}"
                        if successor
                        else f"delete {self._fence_ref(source.into)} {fence}",
                        *behind,
                    ],
                    f"{LANDED_MOVE}{task_id} ({strategy}) by {one_line(actor, 80)}",
                )
                if applied:
                    moved = True
                    break
                now_tip = landgit.rev(repo, source.ref)
                if landgit.rev(repo, self._fence_ref(source.into)) != fence:
                    if beat.lost.is_set() or self.queue.renew(beat.entry) is None:
                        raise BoardError(
                            Reason.BUSY, f"{entry.id} lost the landing turn; try again"
                        )
                    landgit.update_refs(
                        repo,
                        [f"update {self._fence_ref(source.into)} {fence}"],
                        f"kanban: {entry.id} fences the landing turn again",
                    )
                elif now_tip == tip:
                    if ".lock" not in complaint:
                        raise GitFailure(["update-ref", "--stdin"], 128, complaint)
                    time.sleep(0.05)  # someone's git held the branch's lock file: try again
            if not moved:
                assert built is not None
                raise BoardError(
                    Reason.BASE_MOVED,
                    f"cannot land {task_id}: {source.into} moved during each of "
                    f"{self.max_builds} builds and verifications; try again",
                    id=task_id,
                    into=source.into,
                    builds=self.max_builds,
                )
            assert built is not None
            self._step("updated", commit=built.commit)
            brought = self._bring_along(source, built, checkouts, warnings)
            if checkouts:
                self._brought(repo, source.into, built.base, self._behind_ref(source.into))
            self._step("brought_along", checkouts=[str(path) for path in brought])
            task = self.queue.record_landed(
                task_id, commit=built.commit, into=source.into, strategy=strategy, actor=actor,
                approve=approve, old_tip=built.base, epoch=epoch, entry=beat.entry,
                unverified=unverified,
            )  # fmt: skip
            self._step("recorded", commit=built.commit)
        except BaseException as error:
            beat.stop()
            if not moved:
                self._leave(beat.entry, source, fence, error)
            elif built is not None:
                # on the branch already: the board must say so, whatever failed after the move
                self.queue.record_landed(
                    task_id, commit=built.commit, into=source.into, strategy=strategy,
                    actor=actor, approve=approve, old_tip=built.base, epoch=epoch,
                    entry=beat.entry, unverified=unverified,
                )  # fmt: skip
            self._tidy(repo, used)
            raise
        beat.stop()
        self._tidy(repo, used)
        archived = False
        if not keep:
            archived = self._archive(source, built, actor, warnings)
        self._step("archived", archived=archived)
        return LandResult(
            task=self.board.get_task(task_id) if archived else task,
            landed=True,
            dry_run=False,
            into=source.into,
            strategy=strategy,
            commit=built.commit,
            base_before=built.base,
            tree=built.tree,
            files=landgit.changed_paths(repo, built.base, built.tree),
            builds=attempt,
            verification=verification,
            verified_ahead=verified_ahead,
            unverified=unverified is not None,
            checkouts=[str(path) for path in brought],
            archived=archived,
            entry=entry.id,
            waited_ms=waited_ms,
            elapsed_ms=int((time.monotonic() - started) * 1000),
            warnings=warnings,
        )

    @staticmethod
    def _needs_verifying(
        source: _Source, built: _Built, verification: dict[str, Any] | None
    ) -> bool:
        """Whether `built` still needs its verify command run (there is one, and it has not run
        on this very commit: a build on the same tip is the same commit)."""
        if source.verify is None or source.verify.command is None:
            return False
        return verification is None or verification.get("commit") != built.commit

    def _verify_ahead(
        self,
        source: _Source,
        strategy: str,
        actor: str,
        beat: _Heartbeat,
        queue: list[QueueEntry],
        ahead: list[_Ahead],
        used: list[Path],
    ) -> _Ahead | None:
        """While this landing waits: build its change on the commit the landing just ahead of it
        would land (that one says so as soon as it is built) and verify it there, as a
        speculative merge queue does. When that landing lands, the branch's tip is that commit,
        and this turn only checks the checkouts and moves the branch: the landings of a queue
        verify side by side instead of one after another. A guess the tip proves wrong costs
        only the work (the turn builds and verifies again), and nothing is written but this
        row's own build, for the landing behind it. Only the `VERIFY_AHEAD_DEPTH` landings nearest
        the turn do this, so at most that many verify commands more run at once, in the scratch
        checkouts turns leave free (`AHEAD_SLOTS`). None when there is nothing new to guess on."""
        mine = beat.entry
        before = [item for item in queue if item.seq < mine.seq]
        if len(before) > VERIFY_AHEAD_DEPTH:
            return None  # a guess on so many others landing first: left to when it is nearer
        base = before[-1].built_commit if before else None
        guess = ahead[0] if ahead else None
        if (
            guess is not None
            and guess.standing is not None
            and (guess.base == base) == guess.dropped
        ):
            # the guess stopped holding (or holds again): whoever shows the steps must not go on
            # saying what no longer is until the turn
            guess.dropped = not guess.dropped
            self._step(DROPPED_AHEAD if guess.dropped else guess.standing, base=guess.base)
        if base is None or (guess is not None and guess.base == base):
            return None
        made = _Ahead(base)
        try:
            built = self._build(source, base, strategy, actor)
        except (BoardError, GitFailure):
            # a conflict or nothing to land there: the turn says so on the real tip; an earlier
            # guess of this landing is no one's to build on any more
            if ahead and ahead[0].built is not None:  # its build is published
                self.queue.publish_built(mine, base, None)
            return made
        self.queue.publish_built(mine, base, built.commit)
        self._step(BUILT_AHEAD, commit=built.commit, base=base)
        made.built = built
        try:
            made.verification = self._verify(source, built, used, ahead=True)
        except (BoardError, GitFailure) as error:
            self.queue.publish_built(mine, base, None)  # it would not land: nothing to build on
            if isinstance(error, BoardError) and error.reason == Reason.VERIFICATION_FAILED:
                made.refusal = error
                self._step(FAILED_AHEAD, commit=built.commit, base=base)
            else:
                made.built = None  # no scratch checkout free, say: the turn verifies
                self._step(DROPPED_AHEAD, base=base)
            return made
        self._step(VERIFIED_AHEAD, commit=built.commit, base=base)
        return made

    def _next_fence(self, entry: QueueEntry) -> str | None:
        """The fence of the landing waiting next in `entry`'s queue: the compare-and-swap that
        moves the branch hands the fence to it in the same git transaction, so its turn starts
        fenced without a git run of its own. A landing that never takes that turn (it left, it
        died) is harmless: the fence only ever lets its own holder move the branch, and the next
        turn fences again."""
        for other in self.queue.entries(entry.repo_path, entry.ref):
            if other.seq > entry.seq and other.state == "waiting":
                return other.fence if landgit.is_sha(other.fence) else None
        return None

    def _leave(self, entry: QueueEntry, source: _Source, fence: str, error: BaseException) -> None:
        """Give the turn back after a landing that did not move the branch: the fence goes, the
        row goes, and an approve-and-land says why on the task."""
        comment = None
        if isinstance(error, BoardError) and error.reason in EXPLAINED:
            comment = _explanation(error)
        try:
            landgit.update_refs(
                source.repo, [f"delete {self._fence_ref(source.into)} {fence}"],
                f"kanban: {entry.id} gives the landing turn back",
            )  # fmt: skip
            self.queue.leave(entry, comment=comment)
        except Exception:  # the next lander of this branch recovers a row left behind
            pass

    def _bring_along(
        self, source: _Source, built: _Built, checkouts: list[Path], warnings: list[str]
    ) -> list[Path]:
        """Fast-forward every clean checkout of the base to the landed commit. One that changed
        in the moment between its last check and the move is left as it is, with a warning (git
        refused to overwrite anything)."""
        brought = []
        submodules = landgit.moved_submodules(source.repo, built.base, built.tree)
        for checkout in checkouts:
            try:
                landgit.fast_forward_checkout(checkout, built.base, built.commit)
                brought.append(checkout)
            except GitFailure as error:
                warnings.append(
                    f"{checkout} has {source.into} checked out and changed just as it landed; "
                    f"it was not brought along ({error.stderr[-200:]}); run `git status` there"
                )
                continue
            for path, old, new in submodules:  # the fast-forward moved only their pointers
                left = landgit.bring_submodule_along(checkout, path, old, new)
                if left is not None:
                    warnings.append(
                        f"{checkout}: submodule {left}; run "
                        f"`{shell_command('git', 'submodule', 'update', path)}` there"
                    )
        return brought

    def _archive(self, source: _Source, built: _Built, actor: str, warnings: list[str]) -> bool:
        """Remove the landed worktree and delete the task branch, unless either changed since
        the work was read (then both are kept, with a warning)."""
        trees, repo, task_id = self.trees, source.repo, source.task.id
        try:
            with trees._lock(repo, task_id, "archive after landing"):
                _, ws = trees._workspace(task_id)
                # its branch was read as this board's and still holds what landed (checked below)
                path, problem = trees._checkout(ws, ours=True)
                if problem:
                    warnings.append(problem)
                    return False
                if ws.status == "active" and path is not None:
                    now = landgit.without_bookkeeping(
                        repo, landgit.work_snapshot(path, repo), source.provisioned
                    )
                    if now != source.tree or landgit.head_and_branch(path, repo)[0] != source.head:
                        warnings.append(
                            f"the worktree of {task_id} changed after its work was read; kept"
                        )
                        return False
                elif landgit.branch_tip(repo, source.branch) not in (None, source.head):
                    warnings.append(f"the branch of {task_id} moved after its work was read; kept")
                    return False
                with trees._repo_lock(repo, f"archive {task_id} after landing"):
                    if path is not None:
                        # renamed away and forgotten by git under the lock; deleted after it
                        trash = self._trash(repo) / f"{task_id}-{uuid.uuid4().hex[:12]}"
                        landgit.remove_checkout(repo, path, trash=trash)
                        trees.layout.remove_tree(repo, task_id, slot_board(task_id, ws.branch))
                    elif ws.status == "active":
                        gitrepo.prune(repo)  # deleted by hand: git still lists it, prunable
                    head = landgit.branch_tip(repo, source.branch)
                    doomed = [] if head is None else [f"delete refs/heads/{source.branch} {head}"]
                    kept_alive = landgit.baseline_ref(branch_slot(task_id, ws.branch))
                    synced = landgit.rev(repo, kept_alive)
                    if synced is not None:
                        doomed.append(f"delete {kept_alive} {synced}")
                    if doomed:
                        landgit.update_refs(
                            repo, doomed, f"kanban: {task_id} landed as {built.commit[:12]}"
                        )
                trees.board.update_workspace(
                    ws.id, status="archived", actor=actor,
                    reason=f"landed as {built.commit[:12]} on {source.into}",
                )  # fmt: skip
        except (BoardError, GitFailure, OSError, RuntimeError) as error:
            warnings.append(f"the worktree of {task_id} was not archived: {error}")
            return False
        finally:
            # Deleting a checkout of 500 files took 13 ms of a 100 ms landing: done in a thread
            # after the answer. Not a daemon, so a CLI process finishes it before it exits; one
            # killed first leaves its trash to the next landing of the repository.
            try:
                threading.Thread(
                    target=self._empty_trash, args=(repo,), name="kanban-land-trash"
                ).start()
            except RuntimeError:  # no new thread (the interpreter is shutting down): here, then
                self._empty_trash(repo)
        return True

    def abandon(self, task_id: str, *, actor: str, reason: str | None) -> AbandonResult:
        """An operator's "won't land" for done work that never will (its verify command fails on
        the merged tree, say): the worktree's uncommitted part committed to the task branch, the
        checkout removed, the branch kept (the work is not lost: `git diff main...BRANCH`, or a
        later `land` from it), the workspace archived with the reason, the standing refusal
        cleared and the decision audited (`land_abandoned`), so the inbox no longer lists it. The
        base is never touched. Refusals (`operator_only`, `invalid_state`, `not_landable`,
        `conflict`) write nothing."""
        from ..validation import name as valid_name
        from ..validation import text as valid_text

        actor = valid_name(actor, "actor")
        said = valid_text(reason, "reason", limit=500, required=True)
        assert said is not None
        check_abandonable(self.board.get_task(task_id), actor)
        _, ws = self._workspace_of(task_id)
        self._check_here(ws)
        trees, repo = self.trees, Path(ws.repo_path)
        committed, archived, warnings = False, False, list[str]()
        branch = ws.branch or branch_name(task_id)
        alive = os.path.lexists(repo / ".git")
        with trees._lock(repo, task_id, "abandon the landing of"):
            task, ws = self._workspace_of(task_id)
            check_abandonable(task, actor)
            entry = self.queue.entry_of_task(task_id)
            if entry is not None and not entry.dead(self.board.now()):
                raise BoardError(
                    Reason.CONFLICT,
                    f"{task_id} is being landed by {entry.lander} ({entry.id}); decide once "
                    "that landing ends",
                    id=task_id,
                )
            path, problem = trees._checkout(ws, ours=True) if alive else (None, None)
            if problem:
                raise BoardError(Reason.CONFLICT, problem, id=task_id)
            live = ws.status == "active" and path is not None
            if live:
                assert path is not None
                if gitrepo.current_branch(path) != branch:
                    raise BoardError(
                        Reason.CONFLICT,
                        f"cannot archive the worktree of {task_id}: it is not on {branch}",
                        id=task_id,
                    )
                message = f"kanban: {task_id} work kept, won't land: {one_line(said, 200)}"
                committed = gitrepo.commit_all(path, message) is not None
            kept = landgit.branch_tip(repo, branch) if alive else None
            # The board's word first (it refuses a landing that joined the queue meanwhile),
            # then the checkout: never an active workspace whose checkout is gone.
            task = self.queue.record_abandoned(
                task_id, actor=actor, reason=said, workspace_id=ws.id, kept=kept
            )
            try:
                if live:
                    assert path is not None
                    with trees._repo_lock(repo, f"archive {task_id}, which won't land"):
                        trash = self._trash(repo) / f"{task_id}-{uuid.uuid4().hex[:12]}"
                        landgit.remove_checkout(repo, path, trash=trash)
                        trees.layout.remove_tree(repo, task_id, slot_board(task_id, ws.branch))
                    archived = True
                elif ws.status == "active" and alive:
                    gitrepo.prune(repo)  # deleted by hand: git still lists it, prunable
            except (BoardError, GitFailure, OSError) as error:
                warnings.append(  # archived already: no janitor looks at it again
                    f"the checkout {path} of {task_id} was not removed ({error}); its work is "
                    f"kept on {branch}: `git -C {repo} worktree remove --force {path}`"
                )
        if archived:
            self._empty_trash(repo)
        return AbandonResult(
            task=task, reason=said, branch=branch if kept else None, commit=kept,
            committed=committed, archived=archived, warnings=warnings,
        )  # fmt: skip

    def _trash(self, repo: Path) -> Path:
        return self.trees.layout.repo_dir(repo) / ".trash"

    def _empty_trash(self, repo: Path) -> None:
        """Delete the checkouts archived landings renamed away (this one's, and any a lander
        killed before deleting its own left), holding no lock: deleting 500 files takes long.
        Two at once (two landers of one repository) share the work: each skips what is gone."""
        trash = self._trash(repo)
        try:
            if not trash.is_dir() or not self.trees.layout.contains(trash) or trash.is_symlink():
                return
            for entry in trash.iterdir():
                if entry.is_symlink():
                    entry.unlink(missing_ok=True)
                else:
                    shutil.rmtree(entry, ignore_errors=True)
        except OSError:  # in a thread, after the answer: what is left waits for the next one
            pass

    def _finish_recovered(
        self, source: _Source, task: Task, strategy: str, keep: bool, started: float
    ) -> LandResult:
        """An earlier landing of this task had reached the branch before it died: now recorded."""
        warnings: list[str] = []
        commit = task.landed_commit
        assert commit is not None
        built = _Built(commit, landgit.tree_of(source.repo, commit), "")
        archived = False if keep else self._archive(source, built, task.landed_by or "", warnings)
        return LandResult(
            task=self.board.get_task(task.id),
            landed=True,
            dry_run=False,
            into=task.landed_into or source.into,
            strategy=task.landed_strategy or strategy,
            commit=commit,
            archived=archived,
            recovered=True,
            elapsed_ms=int((time.monotonic() - started) * 1000),
            warnings=warnings,
        )

    def _fence_ref(self, into: str) -> str:
        return fence_ref(into, self.trees.board_key)

    def _behind_ref(self, into: str) -> str:
        return behind_ref(into, self.trees.board_key)

    @staticmethod
    def _brought(repo: Path, into: str, old: str, ref: str | None = None) -> None:
        """The checkouts of `into` left at `old` are along now (or were changed by a person,
        who keeps them): clear the mark saying so (`behind_ref`; `ref`, else every board's
        that names `old`), never one a later landing set."""
        refs = [ref] if ref else [name for name, value in _behind_marks(repo, into) if value == old]
        if refs:
            landgit.update_refs(
                repo, [f"delete {name} {old}" for name in refs],
                f"kanban: the checkouts of {into} are brought along",
            )  # fmt: skip

    # -- recovery -------------------------------------------------------------------------------

    def recover_entry(self, dead: QueueEntry, *, by: str) -> Task | None:
        """Settle the row of a landing whose lander is gone: a row with an intent whose commit
        is on the branch is recorded (the task now says it landed, and that `by` completed it;
        returned), any other is cleared (nothing landed). The branch is fenced first, so a
        lander that only stalled cannot move it afterwards."""
        repo = Path(dead.repo_path)
        into = dead.ref.removeprefix("refs/heads/")
        tip = landgit.rev(repo, dead.ref) if repo.is_dir() else None
        if dead.state == "active" and tip is not None:
            landgit.update_refs(
                repo, [f"update {self._fence_ref(into)} {tip} {dead.fence}"],
                f"kanban: fence out the dead landing {dead.id}",
            )  # fmt: skip
            if landgit.rev(repo, legacy_fence_ref(into)) == dead.fence:  # killed before an upgrade
                landgit.update_refs(
                    repo, [f"delete {legacy_fence_ref(into)} {dead.fence}"],
                    f"kanban: clear the dead landing {dead.id}'s fence",
                )  # fmt: skip
        if dead.new_commit and tip is not None and landgit.is_ancestor(repo, dead.new_commit, tip):
            if dead.old_tip and tip == dead.new_commit:
                self._recover_checkouts(repo, into, dead.old_tip, dead.new_commit)
            if dead.old_tip:
                self._brought(repo, into, dead.old_tip, self._behind_ref(into))
            options = dead.options
            return self.queue.record_landed(
                dead.task_id, commit=dead.new_commit, into=into, strategy=dead.strategy,
                actor=dead.lander, approve=dead.from_status == t.IN_REVIEW, old_tip=dead.old_tip,
                epoch=options.get("epoch"), entry=dead, unverified=options.get("unverified"),
                recovered_by=by,
            )  # fmt: skip
        comment = None
        if dead.state == "active":
            comment = (
                f"The landing of {dead.task_id} by {dead.lander} ({dead.id}) was interrupted "
                f"before it reached {into}; nothing landed. Land it again."
            )
        self.queue.leave(dead, comment=comment, settling=True)
        return None

    @staticmethod
    def _recover_checkouts(repo: Path, into: str, old: str, new: str) -> None:
        """A checkout of the base that a dead lander moved the branch under but did not bring
        along (its index still holds the old tip's tree and its files the index's): bring it."""
        old_tree = landgit.tree_of(repo, old)
        for checkout in landgit.checkouts_of(repo, into):
            try:
                if landgit.index_tree(checkout) == old_tree and not landgit.unstaged_changes(
                    checkout
                ):
                    landgit.fast_forward_checkout(checkout, old, new)
            except GitFailure:
                continue

    def recover(self, *, by: str = SYSTEM) -> list[str]:
        """Settle every dead landing on the board (the ids of the rows settled): what the next
        lander of each branch would do, for a lease releaser or an operator (`by`)."""
        settled = []
        now = self.board.now()
        for entry in self.queue.all_entries():
            if entry.dead(now):
                self.recover_entry(entry, by=by)
                settled.append(entry.id)
        return settled


def _behind_marks(repo: Path, into: str) -> list[tuple[str, str]]:
    """Every board's `behind_ref` of `into` (name, old tip): a landing that moved it has not
    yet brought its checkouts along."""
    _, out, _ = gitrepo.run(
        repo, "for-each-ref", "--format=%(refname) %(objectname)", BEHIND_PREFIX, check=False
    )
    marks = (line.split(" ") for line in out.decode(errors="replace").splitlines())
    return [
        (name, value) for name, value in marks
        if name.removeprefix(BEHIND_PREFIX).partition("/")[2] == f"heads/{into}"
    ]  # fmt: skip


def unverified_command(task_id: str) -> str:
    """The operator's override of a missing verify command, as a refusal tells it."""
    return shell_command("kanban", "task", "land", task_id, "--allow-unverified", "--reason", "WHY")
