"""`kanban task exec ...`: the execution ledger. A run opens only on a claimed task, by its
holder, and closes once with its outcome, tokens and cost."""

import click

from boardlib.records import EXECUTION_OUTCOMES

from .amounts import DOLLARS, TOKEN_COUNT
from .context import global_options, open_board
from .options import AGENT, agent_option, epoch_option, task_id_argument
from .output import emit
from .usage import Choice


@click.group("exec")
def exec_group() -> None:
    """Open, close and read the runs of a task."""


@exec_group.command("start")
@task_id_argument
@click.option("--executor", required=True, metavar="TYPE", help="e.g. claude-code, codex, script.")
@click.option(
    "--agent",
    "-a",
    envvar="KANBAN_AGENT",
    type=AGENT,
    metavar="NAME",
    help="The holder (env: KANBAN_AGENT; neither: the task's assignee).",
)
@epoch_option
@click.option("--reason", "-m", metavar="TEXT", help="Why this run.")
@click.option(
    "--before-commit", metavar="SHA", help="The commit the run starts from (its worktree's HEAD)."
)
@global_options
def start(
    task_id: str,
    executor: str,
    agent: str | None,
    epoch: int | None,
    reason: str | None,
    before_commit: str | None,
) -> None:
    """Open a running execution on a task you hold; prints it (its id closes it)."""
    with open_board(reconcile_orphans=False) as board:
        execution = board.open_execution(
            task_id,
            executor,
            agent=agent,
            epoch=epoch,
            run_reason=reason,
            before_commit=before_commit,
        )
    emit(execution.to_json(), kind="record")


@exec_group.command("finish")
@click.argument("execution_id", metavar="EXEC_ID")
@click.option(
    "--status", "-s", required=True, type=Choice(EXECUTION_OUTCOMES), help="How the run ended."
)
@click.option(
    "--cost",
    type=DOLLARS,
    metavar="USD",
    help="What it cost, in dollars (added to the task's cost and the budgets' spend).",
)
@click.option("--input-tokens", type=TOKEN_COUNT, metavar="N", help="Input tokens.")
@click.option(
    "--output-tokens",
    type=TOKEN_COUNT,
    metavar="N",
    help="Output tokens.",
)
@click.option(
    "--cache-read",
    type=TOKEN_COUNT,
    metavar="N",
    help="Cache-read tokens.",
)
@click.option(
    "--cache-write",
    type=TOKEN_COUNT,
    metavar="N",
    help="Cache-write tokens.",
)
@click.option("--summary", "-m", metavar="TEXT", help="What the run did.")
@click.option("--error", metavar="TEXT", help="What went wrong (for a failed run).")
@click.option(
    "--after-commit", metavar="SHA", help="The commit the run left (its worktree's HEAD)."
)
@agent_option
@epoch_option
@global_options
def finish(
    execution_id: str,
    agent: str,
    status: str,
    cost: float | None,
    input_tokens: int | None,
    output_tokens: int | None,
    cache_read: int | None,
    cache_write: int | None,
    summary: str | None,
    error: str | None,
    after_commit: str | None,
    epoch: int | None,
) -> None:
    """Close your running execution once; the task's cost is updated.

    --cost is kept in whole micro-dollars, rounded half up ($0.0000004 is $0). Only the run's
    holder closes it (a closed or unknown run is not_found); a run still open when its task
    leaves in_progress was already closed as cancelled: its cost, reported here, is counted once.
    """
    with open_board(reconcile_orphans=False) as board:
        execution = board.close_execution(
            execution_id,
            status,
            agent=agent,
            epoch=epoch,
            summary=summary,
            error=error,
            after_commit=after_commit,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read=cache_read,
            cache_write=cache_write,
            cost_usd=cost,
        )
    emit(execution.to_json(), kind="record")


@exec_group.command("list")
@task_id_argument
@global_options
def list_executions(task_id: str) -> None:
    """A task's executions, oldest first."""
    with open_board(create=False) as board:
        executions = board.executions(task_id)
    emit([execution.to_json() for execution in executions], kind="executions")


@exec_group.command("show")
@click.argument("execution_id", metavar="EXEC_ID")
@global_options
def show(execution_id: str) -> None:
    """One execution."""
    with open_board(create=False) as board:
        execution = board.get_execution(execution_id)
    emit(execution.to_json(), kind="record")
