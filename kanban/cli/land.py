"""`kanban task land ID`: land a reviewed task's work onto the branch its worktree was made from.

From in_review it approves and lands as one decision (done only if it lands); from done it lands
work approved earlier. The change is built in memory, verified on the merged tree in a scratch
checkout, and moved onto the branch with a compare-and-swap, one landing at a time per branch
(`boardlib.worktrees.landing`). Prints the landing's JSON; a refusal is one JSON line on stderr
and exit 2 (not_landable, merge_conflict, verification_failed, base_moved,
base_checked_out_dirty, self_review...), a git failure exit 1 (`git_failed`). `--abandon --reason`
is an operator's "won't land" for done work that never will: archived, its branch kept, audited.
A refused `--dry-run` at a terminal also says why in words on stdout (`refused_line`).
"""

import sys

import click

from boardlib.errors import BoardError, invalid_input
from boardlib.inert import inert
from boardlib.records import LAND_STRATEGIES

from .context import global_options
from .options import actor_option, epoch_option, task_id_argument
from .output import emit
from .usage import Choice
from .workspace import open_worktrees


@click.command("land")
@task_id_argument
@click.option("--into", metavar="BRANCH", help="Land on this branch (default: the task's base).")
@click.option(
    "--strategy",
    type=Choice(LAND_STRATEGIES),
    default="squash",
    show_default=True,
    help="squash: one commit titled with the task; rebase: its commits replayed; merge: a merge "
    "commit.",
)
@click.option("--dry-run", is_flag=True, help="Build and verify, report, change nothing.")
@click.option("--keep", is_flag=True, help="Keep the task's worktree and branch after landing.")
@click.option(
    "--allow-unverified",
    is_flag=True,
    help="Operators only: land a task that has no verify command (audited).",
)
@click.option(
    "--reason",
    "-m",
    "unverified_reason",
    metavar="TEXT",
    help="With --allow-unverified: why it lands unverified; with --abandon: why it won't land "
    "(in the audit and the history).",
)
@click.option(
    "--abandon",
    is_flag=True,
    help="Operators only: done work that will never land leaves the inbox: its worktree "
    "archived, its branch kept, the decision audited (needs --reason).",
)
@click.option(
    "--expect-source",
    metavar="TREE",
    help="Refuse unless what lands is this tree (a preview's sourceTree: what was reviewed).",
)
@click.option(
    "--preview",
    is_flag=True,
    help="Only say whether it would land cleanly now with --strategy (no verification; changes "
    "nothing).",
)
@actor_option
@epoch_option
@global_options
def land(
    task_id: str,
    into: str | None,
    strategy: str,
    dry_run: bool,
    keep: bool,
    allow_unverified: bool,
    unverified_reason: str | None,
    expect_source: str | None,
    preview: bool,
    abandon: bool,
    actor: str,
    epoch: int | None,
) -> None:
    """Approve and land (in_review) or land (done) the task's work onto its base branch:
    verified on the merged tree, never touching uncommitted changes, never force-moving a
    branch, never landing bookkeeping files."""
    if abandon and (preview or dry_run or keep or allow_unverified or expect_source or into):
        raise invalid_input(
            "--abandon takes only --reason (and --agent): it decides the work won't land",
            field="abandon",
        )
    with open_worktrees() as trees:
        if abandon:
            decided = trees.abandon_landing(task_id, actor=actor, reason=unverified_reason)
            emit(decided.to_json())
            return
        if preview:
            emit(trees.landing_preview(task_id, into=into, strategy=strategy).to_json())
            return
        try:
            result = trees.land(
                task_id,
                actor=actor,
                into=into,
                strategy=strategy,
                dry_run=dry_run,
                keep=keep,
                allow_unverified=allow_unverified,
                unverified_reason=unverified_reason,
                epoch=epoch,
                expect_source=expect_source,
            )
        except BoardError as error:
            if dry_run and sys.stdout.isatty():
                click.echo(refused_line(task_id, error))
            raise
    emit(result.to_json(), kind="land")


def refused_line(task_id: str, error: BoardError) -> str:
    """A refused dry run in words, for a person at a terminal: the refusal is one JSON line on
    stderr (unchanged, for scripts), and a person read nothing else. Written on stdout, where a
    dry run that would land says so, so stderr stays the one line; a pipe gets none of it."""
    why = error.message.removeprefix(f"cannot land {task_id}: ")  # the line names it already
    said = inert(f"{task_id} would not land: {why}")
    return f"{said} ({error.reason.value}); nothing was changed"
