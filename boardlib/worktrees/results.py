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

    def to_json(self) -> dict[str, Any]:
        out = Record.to_json(self)
        for key in ("verified", "verification", "claimEpoch", "head"):
            if out[key] is None:
                del out[key]
        return out


@dataclass(frozen=True, slots=True)
class DetailResult(Record):
    workspace: Workspace
    sor_files: dict[str, str]
    diff_stat: DiffStat | None
    diff: str
    diff_truncated: bool = False
    live: bool = False
    busy: dict[str, Any] | None = None  # who holds the worktree when the diff was skipped
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class GcReport(Record):
    """One garbage-collection pass: workspace ids by what happened to them."""

    stale: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)  # uncommitted work saved to the branch
    removed: list[str] = field(default_factory=list)  # checkouts deleted
    skipped: list[dict[str, str]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)


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
