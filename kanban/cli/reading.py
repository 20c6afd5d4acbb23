"""Reading the board: one task, its neighbourhood, lists, search, and why it is (not) claimable."""

import click

from boardlib import transitions

from .context import global_options, open_board
from .options import role_option, task_id_argument
from .output import emit
from .usage import Choice


@click.command("view")
@task_id_argument
@global_options
def view(task_id: str) -> None:
    """A task with comments, parents, dependencies, runs.

    Also its dependents and workspaces, all read in one snapshot.
    """
    with open_board(create=False) as board:
        doc = board.view(task_id).to_json()
    emit(doc, kind="view")


@click.command("get")
@task_id_argument
@global_options
def get(task_id: str) -> None:
    """Just the task."""
    with open_board(create=False) as board:
        task = board.get_task(task_id)
    emit(task.to_json(), kind="task")


@click.command("list")
@click.option("--status", "-s", type=Choice(transitions.STATUSES))
@role_option
@click.option("--assignee", metavar="NAME")
@click.option("--team", metavar="ID")
@click.option("--ready", is_flag=True, help="Only claimable tasks, in claim order.")
@click.option("--dropped", is_flag=True, help="Include dropped tasks.")
@click.option("--limit", type=click.IntRange(min=1), metavar="N")
@global_options
def list_tasks(
    status: str | None,
    role: str | None,
    assignee: str | None,
    team: str | None,
    ready: bool,
    dropped: bool,
    limit: int | None,
) -> None:
    """List tasks, newest change first.

    With --ready: only claimable tasks, in the order claim-next takes them.
    """
    with open_board(create=False) as board:
        tasks = board.list_tasks(
            status=status,
            role=role,
            assignee=assignee,
            team_id=team,
            ready=ready,
            include_dropped=dropped,
            limit=limit,
        )
    emit([task.to_json() for task in tasks], kind="tasks")


@click.command("search")
@click.argument("text")
@click.option("--dropped", is_flag=True, help="Include dropped tasks.")
@click.option("--limit", type=click.IntRange(min=1), default=200, show_default=True, metavar="N")
@global_options
def search(text: str, dropped: bool, limit: int) -> None:
    """Find tasks by id, title or description."""
    with open_board(create=False) as board:
        tasks = board.search(text, include_dropped=dropped, limit=limit)
    emit([task.to_json() for task in tasks], kind="tasks")


@click.command("why")
@task_id_argument
@role_option
@global_options
def why(task_id: str, role: str | None) -> None:
    """Why a task is or is not claimable right now.

    Unfinished dependencies (with status and holder), the lease, the role, the status.
    """
    with open_board(create=False) as board:
        doc = board.explain(task_id, role=role).to_json()
    emit(doc, kind="explain")
