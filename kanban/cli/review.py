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
    "--reason", required=True, metavar="TEXT", help="What must change (kept as a comment)."
)
@global_options
def reject(task_id: str, agent: str, reason: str) -> None:
    """Send in_review work back to todo, with a reason."""
    with open_board() as board:
        task = board.reject(task_id, agent, reason)
    emit(task.to_json(), kind="task")
