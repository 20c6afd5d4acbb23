"""Judging finished work. Builder is not judge: anyone who held the task since it last left todo
is refused (self_review)."""

import click

from .context import global_options, open_board
from .options import agent_option, task_id_argument
from .output import emit


@click.command("approve")
@task_id_argument
@agent_option
@global_options
def approve(task_id: str, agent: str) -> None:
    """Accept in_review work: done, with a pass verdict."""
    with open_board() as board:
        task = board.approve(task_id, agent)
    emit(task.to_json(), kind="task")


@click.command("reject")
@task_id_argument
@agent_option
@click.option(
    "--reason", "-m", required=True, metavar="TEXT", help="What must change (kept as a comment)."
)
@click.option(
    "--comment",
    "comments",
    type=(str, str),
    multiple=True,
    metavar="FILE:LINE TEXT",
    help="A review comment anchored to a line (repeatable): `--comment app.py:12 'why'`.",
)
@global_options
def reject(task_id: str, agent: str, reason: str, comments: tuple[tuple[str, str], ...]) -> None:
    """Send in_review work back to todo, with a reason.

    Each --comment is kept with it, in the same transaction, anchored to its file and line; the
    next attempt sees them in `task view`, `task workspace resume` and the worktree's REVIEW.md.
    """
    notes = [_anchored(where, body) for where, body in comments]
    with open_board() as board:
        if not notes:
            task = board.reject(task_id, agent, reason)
        else:
            from boardlib.worktrees import Worktrees

            task = Worktrees(board).reject(task_id, agent, reason, comments=notes)
    emit(task.to_json(), kind="task")


def _anchored(where: str, body: str) -> dict[str, object]:
    """`app.py:12` (or `app.py` for the whole file) and the comment, for `Board.reject`."""
    path, colon, line = where.rpartition(":")
    if colon and line.isdigit():
        return {"path": path, "line": int(line), "body": body}
    return {"path": where, "body": body}
