"""`kanban task workspace ...`: a file-mutating task's own git worktree, its system-of-record
files, the clock-out handoff, and completion through the verification gate.

Each command prints the JSON of seed 003's workspace routes (without their HTTP `ok` flag);
the git modules load only here, never on the claim path. A git command that fails is exit 1 with
`{"error": ..., "reason": "git_failed"}`; refusals from the board are exit 2 as everywhere else.
"""

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, BinaryIO

import click

from .context import global_options, open_board
from .options import AGENT, Number, actor_option, epoch_option, task_id_argument
from .output import emit

if TYPE_CHECKING:
    from boardlib.worktrees import Worktrees


@contextmanager
def open_worktrees(*, create: bool | None = None) -> "Iterator[Worktrees]":
    from boardlib.worktrees import Worktrees

    with open_board(create=create) as board:
        yield Worktrees(board)


@click.group("workspace")
def workspace() -> None:
    """Per-task git worktrees: provision, handoff, resume, pause, complete, sync, detail, gc."""


@workspace.command("provision")
@task_id_argument
@click.option(
    "--repo",
    "repo_path",
    required=True,
    type=str,  # as typed: a Path would make "" the current folder; the board checks the text
    metavar="PATH",
    help="The git repository to branch from.",
)
@click.option("--base-ref", metavar="REF", help="Branch point (default HEAD).")
@click.option("--base-sha", metavar="SHA", help="Pin the branch point to a commit.")
@click.option(
    "--kind", metavar="KIND", help="Task kind (default: the task's); research/review refuse."
)
@actor_option
@epoch_option
@global_options
def provision(
    task_id: str,
    repo_path: str,
    base_ref: str | None,
    base_sha: str | None,
    kind: str | None,
    actor: str,
    epoch: int | None,
) -> None:
    """Create (or reuse) the task's worktree and branch outside the repo, with the SoR scaffold."""
    if base_ref is not None and base_sha is not None:
        raise click.UsageError("give --base-ref or --base-sha, not both")
    with open_worktrees() as trees:
        result = trees.provision(
            task_id,
            repo_path,
            base_sha=base_sha,
            base_ref=base_ref if base_ref is not None else "HEAD",
            kind=kind,
            actor=actor,
            epoch=epoch,
        )
    emit(result.to_json())


@workspace.command("resume")
@task_id_argument
@global_options
def resume(task_id: str) -> None:
    """The cold-resume read: the workspace and the state rebuilt from its files alone."""
    with open_worktrees(create=False) as trees:
        emit(trees.resume(task_id).to_json())


@workspace.command("handoff")
@task_id_argument
@click.option(
    "--file",
    "source",
    type=click.File("rb"),
    metavar="FILE",
    help="AGENT_HANDOFF JSON to write ('-' reads stdin).",
)
@click.option(
    "--template",
    is_flag=True,
    help="Print a valid AGENT_HANDOFF.json skeleton for the task instead of writing one.",
)
@click.option(
    "--agent",
    "-a",
    envvar="KANBAN_AGENT",
    type=AGENT,
    metavar="NAME",
    help="Who hands off (env: KANBAN_AGENT).",
)
@epoch_option
@global_options
def handoff(
    task_id: str, source: BinaryIO | None, template: bool, agent: str | None, epoch: int | None
) -> None:
    """Validate and write AGENT_HANDOFF.json into the task's worktree (--file), or print a
    skeleton to fill in (--template). The schema: handoffFrom and runtime (required),
    completedSubtasks, brokenOrUnverified, nextBestStep, whyBlocked, commands {init, verify,
    start}, evidence {testResults, lintResults}, warnings, nativeSessionId, roomCursor
    {roomId, lastSeenSeq}, timestamp (ISO-8601, stamped when left out)."""
    if template == (source is not None):
        raise click.UsageError("give --file FILE to write a handoff, or --template to print one")
    with open_worktrees() as trees:
        if template:  # indented even in a pipe: it is written to a file and edited by hand
            sys.stdout.write(json.dumps(trees.handoff_template(task_id, agent=agent), indent=2))
            sys.stdout.write("\n")
            return
        assert source is not None
        emit(trees.write_handoff(task_id, source.read(), actor=agent, epoch=epoch).to_json())


@workspace.command("pause")
@task_id_argument
@actor_option
@epoch_option
@global_options
def pause(task_id: str, actor: str, epoch: int | None) -> None:
    """Commit uncommitted work on the branch and remove the checkout; the branch stays."""
    with open_worktrees() as trees:
        emit(trees.pause(task_id, actor=actor, epoch=epoch).to_json())


@workspace.command("complete")
@task_id_argument
@click.option(
    "--agent",
    "-a",
    envvar="KANBAN_AGENT",
    type=AGENT,
    metavar="NAME",
    help="The builder (env: KANBAN_AGENT; neither: the task's assignee).",
)
@epoch_option
@click.option("--summary", "-m", metavar="TEXT", help="What was done (kept as a comment).")
@click.option(
    "--verify-timeout",
    type=Number(min=0, min_open=True),
    metavar="SECONDS",
    help="Limit for the verify command (default 600 s, env KANBAN_VERIFY_TIMEOUT_S).",
)
@global_options
def complete(
    task_id: str,
    agent: str | None,
    epoch: int | None,
    summary: str | None,
    verify_timeout: float | None,
) -> None:
    """Diff against the baseline; empty -> done and cleaned up; otherwise the verification gate
    decides (pass -> done, fail -> back to the builder or blocked, debt -> blocked)."""
    with open_worktrees() as trees:
        builder = agent or trees.board.get_task(task_id).assignee_agent_id
        if builder is None:
            raise click.UsageError(f"{task_id} has no assignee: say who built it with --agent")
        result = trees.complete(
            task_id, builder, epoch=epoch, summary=summary, verify_timeout_s=verify_timeout
        )
    emit(result.to_json())


@workspace.command("sync")
@task_id_argument
@click.option(
    "--strategy",
    type=click.Choice(["merge", "rebase"]),
    default="merge",
    show_default=True,
    help="Merge the base's tip into the task branch, or rebase the branch onto it.",
)
@click.option("--into", metavar="BRANCH", help="The base to catch up with (default: the task's).")
@actor_option
@epoch_option
@global_options
def sync(task_id: str, strategy: str, into: str | None, actor: str, epoch: int | None) -> None:
    """Bring the base branch's tip into the task's worktree. Conflicts are left there to resolve
    (merge_conflict names the files); complete again once they are."""
    with open_worktrees() as trees:
        result = trees.sync(task_id, actor=actor, strategy=strategy, into=into, epoch=epoch)
        emit(result.to_json())


@workspace.command("detail")
@task_id_argument
@global_options
def detail(task_id: str) -> None:
    """The SoR files, and the diff and diff-stat against the baseline (SoR files excluded)."""
    with open_worktrees(create=False) as trees:
        emit(trees.detail(task_id).to_json())


@workspace.command("gc")
@global_options
def gc() -> None:
    """One garbage-collection pass: stale worktrees committed to their branch and pruned."""
    from boardlib.worktrees import collect_garbage

    with open_board() as board:
        report = collect_garbage(board)
    emit(report.to_json())
