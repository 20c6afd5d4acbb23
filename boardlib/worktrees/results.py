"""What the worktree operations return: frozen records whose `to_json()` is seed 003's response
body for the matching workspace route (minus the HTTP layer's `ok: true`), and `GitFailure`, what
they raise when git itself fails."""

from dataclasses import dataclass, field
from typing import Any

from ..records import Record, Workspace


@dataclass(frozen=True, slots=True)
class DiffStat(Record):
    files_changed: int
    insertions: int
    deletions: int
    dirty: bool


@dataclass(frozen=True, slots=True)
class FileStat(Record):
    """One changed file of a diff-stat, in the unified diff's order. Line counts are None for a
    binary file; `old_path` is set for a rename. `size`: its larger side in bytes, and `omitted`:
    left out of the diff text for being larger than the reader's per-file cap (both only when
    the reader asked for a cap)."""

    path: str
    old_path: str | None = None
    insertions: int | None = None
    deletions: int | None = None
    size: int | None = None
    omitted: bool = False


# What `CheckoutState.state` can be, derived from the workspace row, the folder and the branch.
CHECKED_OUT = "checked_out"  # the folder is there, on the task's branch
PAUSED = "paused"  # workspace active, checkout removed by `pause`, branch kept: resumable
KEPT = "kept"  # checkout removed (garbage-collected or finished), the work kept on its branch
CLEANED = "cleaned"  # checkout and branch removed (an empty diff: nothing to keep)
MISSING = "missing"  # the row says active but neither the folder nor the branch is there
CHECKOUT_STATES = (CHECKED_OUT, PAUSED, KEPT, CLEANED, MISSING)

# The `why` of a landing's `merge_conflict` met replaying the task's commits one by one (strategy
# rebase): the work as one change (squash, merge) may still merge.
REPLAYED = "replayed"

# The `why` of a `conflict` over a workspace recorded outside this process's worktrees folder: it
# was made under another `KANBAN_WORKTREES`, and only a process run with that one may touch it.
OUTSIDE_WORKTREES = "outside_worktrees"

# The `why` of a preview (and a dry run's answer) whose change the base's tip holds already (landed
# another way, cherry-picked): a landing records it as landed in that tip and moves nothing.
ALREADY_ON = "already_on"

# Who may sync handed-in work (`sync` refuses an agent: docs/landing.md), in the words a landing's
# `merge_conflict` and the MCP hints both say, so no surface tells an agent to sync it.
DONE_SYNC = "only an operator may sync done work"
REVIEW_SYNC = "only an operator may sync work in review, or its builder once it is rejected back"


@dataclass(frozen=True, slots=True)
class CheckoutState(Record):
    """What is true of a workspace's checkout right now, whatever its row says: the drawer and
    `detail` show this, so a paused or cleaned worktree never reads as a live one. `uncommitted`
    is git's "dirty" (None when there is no checkout to ask); a diff-stat's `dirty` is the seed's
    "any change against the baseline", committed or not."""

    state: str
    summary: str  # one sentence for a person
    branch: str | None = None
    head: str | None = None  # the branch's commit
    path: str | None = None  # the folder, when checked out
    uncommitted: bool | None = None
    resume_command: str | None = None  # what brings the checkout back, when it can come back


@dataclass(frozen=True, slots=True)
class LandingChoices(Record):
    """What a landing of one task may choose (`Worktrees.landing_choices`): the branches of its
    repository it may land on (`base`, the one its worktree was made from, first; task branches
    left out) and the verify command a landing would run, None when it has none (then only an
    operator lands it, unverified, saying why)."""

    task_id: str
    base: str
    branches: list[str] = field(default_factory=list)
    verify_command: str | None = None
    verify_source: str | None = None  # `handoff` or `init.sh`


@dataclass(frozen=True, slots=True)
class WorktreeInfo(Record):
    task_id: str
    worktree_path: str
    branch: str
    base_commit: str  # the SoR-scaffold baseline commit: diffs are taken against it
    detached: bool = False


@dataclass(frozen=True, slots=True)
class ProvisionResult(Record):
    worktree: WorktreeInfo
    workspace_id: str
    isolation: str = "worktree"
    reused: bool = False  # a live checkout already existed
    reattached: bool = False  # the branch was checked out again (after a pause or a crash)


@dataclass(frozen=True, slots=True)
class HandoffResult(Record):
    handoff: dict[str, Any]
    path: str


@dataclass(frozen=True, slots=True)
class ResumeResult(Record):
    workspace: Workspace
    resume: dict[str, Any] | None  # None when the worktree is paused away
    handoff: dict[str, Any] | None
    live: bool
    warnings: list[str] = field(default_factory=list)
    review: list[dict[str, Any]] = field(default_factory=list)  # anchored review comments
    host: str | None = None  # the machine its checkout is on, when not this one (not live here)


@dataclass(frozen=True, slots=True)
class PauseInfo(Record):
    committed: bool
    head: str | None


@dataclass(frozen=True, slots=True)
class PauseResult(Record):
    pause: PauseInfo
    action: str = "pause"


@dataclass(frozen=True, slots=True)
class CompleteInfo(Record):
    dirty: bool
    diff_stat: DiffStat
    cleaned: bool  # the empty-diff worktree and branch were removed


@dataclass(frozen=True, slots=True)
class CompleteResult(Record):
    complete: CompleteInfo
    task_status: str
    verified: str | None = None  # present only when a verdict applies (dirty diff)
    verification: dict[str, Any] | None = None  # the full typed verdict
    gate_ran: bool = False
    claim_epoch: int | None = None  # the builder's new epoch when the task came back to them
    head: str | None = None  # the commit the gate judged
    action: str = "complete"
    reattached: bool = False  # a paused worktree was checked out again first
    note: str | None = None  # a repeat on a blocked task: that nothing ran, and what moves it

    def to_json(self) -> dict[str, Any]:
        out = Record.to_json(self)
        for key in ("verified", "verification", "claimEpoch", "head", "note"):
            if out[key] is None:
                del out[key]
        if not out["reattached"]:
            del out["reattached"]
        return out


@dataclass(frozen=True, slots=True)
class DetailResult(Record):
    """Seed 003's detail body (`workspace`, `sorFiles`, `diffStat`, `diff`) and what a reviewer
    needs beside it: the true checkout state, every changed file with its counts (`diffFiles`:
    when `diffTruncated`, the files missing from `diff` are the ones that were cut), and the
    cold-resume state rebuilt from the SoR files (from the branch when paused)."""

    workspace: Workspace
    sor_files: dict[str, str]
    diff_stat: DiffStat | None
    diff: str
    diff_truncated: bool = False
    live: bool = False
    busy: dict[str, Any] | None = None  # who holds the worktree when the diff was skipped
    warnings: list[str] = field(default_factory=list)
    checkout: CheckoutState | None = None
    diff_files: list[FileStat] = field(default_factory=list)
    diff_limit_bytes: int | None = None  # the cap `diff` was cut at, when it was
    resume: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class GcReport(Record):
    """One garbage-collection pass: workspace ids by what happened to them."""

    stale: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)  # uncommitted work saved to the branch
    removed: list[str] = field(default_factory=list)  # checkouts deleted
    skipped: list[dict[str, str]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    # another machine's worktrees, not judged here (its own janitor does): workspaceId and host
    elsewhere: list[dict[str, str]] = field(default_factory=list)


def name_files(files: list[str], most: int = 5) -> str:
    """`a.py, b.py and 3 more`: the files a refusal names, kept to a line."""
    more = len(files) - most
    return ", ".join(files[:most]) + (f" and {more} more" if more > 0 else "")


class GitFailure(Exception):
    """A git command the board relied on failed (not a rule refusal: an environment problem, e.g.
    a corrupt repository or a full disk). Whatever the operation created was rolled back."""

    def __init__(self, args: list[str], status: int | None, stderr: str) -> None:
        self.command = ["git", *args]
        self.status = status
        self.stderr = stderr.strip()
        super().__init__(f"git {' '.join(args[:3])} failed ({status}): {self.stderr[-500:]}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": str(self),
            "reason": "git_failed",
            "command": self.command,
            "status": self.status,
            "stderr": self.stderr[-2000:],
        }
