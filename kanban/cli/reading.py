"""Reading the board: one task, its neighbourhood, lists, search, and why it is (not) claimable."""

from typing import Any

import click

from boardlib import transitions
from boardlib.paging import PAGE_DEFAULT

from .context import global_options, open_board
from .options import WholeNumber, role_option, task_id_argument
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
@click.option(
    "--status", "-s", type=Choice(transitions.STATUSES), help="Only tasks in this status."
)
@role_option
@click.option("--assignee", metavar="NAME", help="Only tasks this agent holds.")
@click.option("--team", metavar="ID", help="Only this team's tasks.")
@click.option("--ready", is_flag=True, help="Only claimable tasks, in claim order.")
@click.option(
    "--dropped",
    is_flag=True,
    help="Include dropped tasks (JSON: `dropped` 1; the table says `(dropped)` after the status).",
)
@click.option(
    "--limit",
    type=WholeNumber(min=1),
    metavar="N",
    help="A page of N tasks, newest created first: prints {tasks, nextCursor}.",
)
@click.option(
    "--cursor",
    metavar="CURSOR",
    help="The page after this one (a page's nextCursor); pages of 100 unless --limit.",
)
@global_options
def list_tasks(
    status: str | None,
    role: str | None,
    assignee: str | None,
    team: str | None,
    ready: bool,
    dropped: bool,
    limit: int | None,
    cursor: str | None,
) -> None:
    """List tasks, newest change first.

    With --ready: only claimable tasks, in the order claim-next takes them (with --role, the
    tasks for no role as well). With --limit or
    --cursor: one page in creation order, newest first, and the cursor of the next page (null
    after the last); a walk of pages sees every task exactly once while agents work.
    """
    filters: dict[str, Any] = {
        "status": status, "role": role, "assignee": assignee, "team_id": team,
        "ready": ready, "include_dropped": dropped,
    }  # fmt: skip
    with open_board(create=False) as board:
        if limit is None and cursor is None:
            tasks = board.list_tasks(**filters)
            emit([task.to_json() for task in tasks], kind="tasks")
            return
        page = board.task_page(**filters, cursor=cursor, limit=limit or PAGE_DEFAULT)
    emit(
        {"tasks": [task.to_json() for task in page.tasks], "nextCursor": page.next_cursor},
        kind="task_page",
    )


@click.command("search")
@click.argument("text")
@click.option(
    "--dropped",
    is_flag=True,
    help="Include dropped tasks (JSON: `dropped` 1; the table says `(dropped)` after the status).",
)
@click.option(
    "--limit",
    type=WholeNumber(min=1),
    default=200,
    show_default=True,
    metavar="N",
    help="At most N tasks.",
)
@global_options
def search(text: str, dropped: bool, limit: int) -> None:
    """Find tasks by id, title or description."""
    with open_board(create=False) as board:
        tasks = board.search(text, include_dropped=dropped, limit=limit)
    emit([task.to_json() for task in tasks], kind="tasks")


@click.command("why")
@task_id_argument
@click.option(
    "--role",
    "-r",
    metavar="ROLE",
    help="Judge it as a claimant of this role would (as claim-next --role).",
)
@global_options
def why(task_id: str, role: str | None) -> None:
    """Why a task is or is not claimable right now.

    Unfinished dependencies (with status and holder), the lease, the role, the status.
    Asking writes nothing: a lapsed lease is reported, not released.
    """
    with open_board(read_only=True) as board:  # no recovery pass: it would release the lease
        doc = board.explain(task_id, role=role).to_json()
    emit(doc, kind="explain")
