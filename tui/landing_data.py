"""What the TUI asks the library about landing, always from a worker thread (the preview: git
only, a few hundred milliseconds at most; its cheap stamp; the landing itself, which blocks for
the branch's queue and the verify command), and the words it shows for them. No git or SQL of
its own; file names and titles are agent text, drawn inert.

Which tasks have a preview worth computing is the registry's `has_work_to_land` (the same test
greys `W`). The API: docs/landing.md, "The library, for a surface that shows landing".
"""

from dataclasses import dataclass

from rich.text import Text

from boardlib import Board, BoardError, Reason
from boardlib.records import Task
from boardlib.worktrees import GitFailure, Worktrees
from boardlib.worktrees.landing import (
    BUILT_AHEAD,
    CLEAN,
    CONFLICTS,
    DROPPED_AHEAD,
    FAILED_AHEAD,
    LANDED,
    VERIFIED_AHEAD,
    AbandonResult,
    LandingPreview,
    LandResult,
    OnStep,
)
from boardlib.worktrees.results import LandingChoices

from .cards import LANDED_MARK, clock_text
from .task_view import plain

SHORT_SHA = 7


def short(sha: str | None) -> str:
    return (sha or "?")[:SHORT_SHA]


@dataclass(frozen=True, slots=True)
class Preview:
    """A preview as read for one task, or why it could not be read (git failed)."""

    task_id: str
    preview: LandingPreview | None
    stamp: str
    problem: str | None = None

    @classmethod
    def unreadable(cls, task_id: str, error: Exception) -> "Preview":
        """No preview: the board could not be read (or a defect, reported beside it)."""
        return cls(task_id, None, "", problem=f"{type(error).__name__}: {error}")


def read_stamp(board: Board, task_id: str) -> str:
    """Changes when the preview may have (`Worktrees.landing_stamp`: one rev-parse, one status)."""
    try:
        return Worktrees(board).landing_stamp(task_id)
    except (BoardError, GitFailure, OSError) as error:
        return f"unreadable: {error}"


def read_preview(
    board: Board, task_id: str, into: str | None = None, strategy: str = "squash"
) -> Preview:
    """The preview of landing onto `into` (None: the worktree's base) with `strategy`."""
    stamp = read_stamp(board, task_id)  # first: a change during the read is seen next poll
    try:
        preview = Worktrees(board).landing_preview(task_id, into=into, strategy=strategy)
    except (BoardError, GitFailure, OSError) as error:
        message = error.message if isinstance(error, BoardError) else str(error)
        return Preview(task_id, None, stamp, problem=message)
    return Preview(task_id, preview, stamp)


@dataclass(frozen=True, slots=True)
class Choices:
    """What the land dialog may offer for one task, or why it could not be read."""

    task_id: str
    choices: LandingChoices | None
    problem: str | None = None

    @classmethod
    def unreadable(cls, task_id: str, error: Exception) -> "Choices":
        """No choices: the board could not be read (or a defect, reported beside it)."""
        return cls(task_id, None, problem=f"{type(error).__name__}: {error}")

    @property
    def unverified(self) -> bool:
        """True when the task has no verify command: it lands only unverified, on an
        operator's word."""
        return self.choices is not None and self.choices.verify_command is None


def read_choices(board: Board, task_id: str) -> Choices:
    try:
        return Choices(task_id, Worktrees(board).landing_choices(task_id))
    except (BoardError, GitFailure, OSError) as error:
        message = error.message if isinstance(error, BoardError) else str(error)
        return Choices(task_id, None, problem=message)


@dataclass(frozen=True, slots=True)
class LandChoice:
    """What the operator chose in the land dialog."""

    strategy: str = "squash"
    into: str | None = None  # None: the worktree's base
    expect_source: str | None = None  # the previewed tree: refused if the work changed since
    unverified_reason: str | None = None  # set: land without a verify command, audited


def land(
    board: Board,
    task_id: str,
    actor: str,
    choice: LandChoice,
    *,
    on_step: OnStep | None = None,
) -> LandResult:
    """Approve and land (in review) or land (done) as `choice` says, exactly the previewed work
    when it names a tree: refused `changed_since_review` if the worktree changed since. Blocks
    for the branch's queue and the verify command: a worker thread only."""
    lander = Worktrees(board).lander(on_step=on_step)
    reason = choice.unverified_reason
    return lander.land(
        task_id,
        actor=actor,
        into=choice.into,
        strategy=choice.strategy,
        expect_source=choice.expect_source,
        allow_unverified=reason is not None,
        unverified_reason=reason,
    )


def abandon(board: Board, task_id: str, actor: str, reason: str) -> AbandonResult:
    """An operator's "won't land" for done work (archived, its branch kept, audited): git and one
    write, a worker thread only."""
    return Worktrees(board).abandon_landing(task_id, actor=actor, reason=reason)


def abandoned_message(result: AbandonResult) -> str:
    kept = f"; its work stays on {result.branch}" if result.branch else ""
    return f"{result.task.id} won't land: out of the inbox{kept}"


# -- the words -------------------------------------------------------------------------------

STEP_WORDS = {  # what a landing is doing after each step (`Lander(on_step=...)`)
    "joined": "waiting for its turn in the branch's queue",
    BUILT_AHEAD: "verifying on the landing ahead of it while it waits",
    VERIFIED_AHEAD: "verified on the landing ahead; waiting for its turn",
    FAILED_AHEAD: "its verify command failed on the landing ahead; waiting for its turn",
    DROPPED_AHEAD: "waiting for its turn (the landing ahead no longer lands what it verified on)",
    "turn": "building the result on the base's tip",
    "built": "verifying the merged tree",
    "verified": "verified; moving the branch",
    "intent": "moving the branch",
    "updated": "bringing the checkouts of the base along",
    "brought_along": "recording the landing",
    "recorded": "archiving the worktree",
    "archived": "done",
}
TAIL_LINES = 3  # of a failed verify command's output, in its notification
CONFLICT_FILES = 12  # conflicting files named in a refusal's notification
STRATEGY_WORDS = {  # what each strategy puts on the branch (docs/landing.md)
    "squash": "one commit, titled with the task and its id",
    "rebase": "the task's commits replayed, authors and messages kept",
    "merge": "a merge commit whose second parent is the task's change",
}


def landed_words(task: Task, now_ms: int) -> Text:
    """`⤓ landed as abc1234 on main by operator:ada at 14:35:07 (squash)`."""
    line = Text(f"{LANDED_MARK} landed as ", "bold green")
    line.append(short(task.landed_commit), "bold")
    line.append_text(plain(f" on {task.landed_into or '?'}", "bold green"))
    if task.landed_by:
        line.append_text(plain(f" by {task.landed_by}"))
    if task.landed_at is not None:
        line.append(f" at {clock_text(task.landed_at, now_ms)}")
    if task.landed_strategy:
        line.append_text(plain(f" ({task.landed_strategy})", "dim"))
    return line


def landing_words(shown: Preview | None) -> Text:
    """The preview in one line (file names are agent text: inert)."""
    if shown is None:
        return Text("  checking whether it lands…", "dim")
    preview = shown.preview
    if preview is None:
        return plain(f"  cannot preview the landing: {shown.problem}", "yellow")
    if preview.state == CLEAN:
        line = Text("  ✓ ", "bold green")
        line.append_text(plain(preview.summary, "green"))
        return line
    if preview.state == CONFLICTS:
        line = Text("  ✗ ", "bold red")
        line.append_text(plain(preview.summary, "red"))
        return line
    if preview.state == LANDED:
        return plain(f"  {preview.summary}", "green")
    said = preview.summary  # the board's own sentence may say "cannot land" already
    return plain(f"  {said}" if said.startswith("cannot land") else f"  cannot land: {said}",
                 "yellow")  # fmt: skip


def landed_message(result: LandResult, *, approved: bool = False) -> str:
    """The notification after a landing: `approved` when the landing approved it too (a done
    task's landing is only a landing; its status after says nothing of that)."""
    done = "approved and landed" if approved else "landed"
    if result.task.landed_commit is None:  # a landing that did not land (never expected)
        return f"{result.task.id}: nothing landed"
    said = f"{result.task.id} {done} on {result.into} as {short(result.commit)}"
    if result.already_on:
        said += f" (its change was already on {result.into}: nothing moved)"
    if result.verification is None and result.unverified:
        said += " (unverified, audited)"
    for warning in result.warnings:
        said += f"\n{warning}"
    return said


def refusal_message(error: BoardError) -> str:
    """A landing refusal in words: the board's message, and for a failed verification the tail
    of the command's output (the rest is the task's system comment)."""
    said = error.message
    if error.reason == Reason.VERIFICATION_FAILED:
        tail = str(error.details.get("stderr_tail") or error.details.get("stdout_tail") or "")
        lines = [line for line in tail.strip().splitlines() if line.strip()][-TAIL_LINES:]
        if lines:
            said += "\n" + "\n".join(lines)
    elif error.reason == Reason.MERGE_CONFLICT:
        files = [str(name) for name in error.details.get("files") or ()]
        if len(files) > 5:  # the message names five
            said += "\n" + "\n".join(files[:CONFLICT_FILES])
            if len(files) > CONFLICT_FILES:
                said += f"\n… and {len(files) - CONFLICT_FILES} more"
    elif error.reason == Reason.VERIFICATION_REQUIRED and "verify command" in error.message:
        said += "\nAsk again (W): the dialog offers to land it unverified, with your reason."
    return said
