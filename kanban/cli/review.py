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


# Where each of reject's texts lands, and what a `--comment TEXT` meant as the reason is told:
# `--comment` takes two values, so it took the next option as its text (`--comment 'no tests'
# -m x` left `x` over and said --reason was missing) or said only "requires 2 arguments".
COMMENT_IS_ANCHORED = (
    "--comment takes FILE[:LINE] and TEXT, a review comment on a line of the work; what must "
    "change goes in --reason/-m TEXT (kept as the task's comment `rejected: TEXT`)"
)


class _RejectCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.BadOptionUsage as error:
            if error.option_name == "--comment":  # one value: the text, meant as the reason
                raise click.UsageError(COMMENT_IS_ANCHORED, ctx) from error
            raise


def _anchored_comments(
    ctx: click.Context, _param: click.Parameter, value: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """A comment whose text is one of this command's options took that option as its text."""
    names = {name for param in ctx.command.params for name in getattr(param, "opts", ())}
    if any(body in names or where in names for where, body in value):
        raise click.UsageError(COMMENT_IS_ANCHORED, ctx)
    return value


@click.command("reject", cls=_RejectCommand)
@task_id_argument
@agent_option
@click.option(
    "--reason",
    "-m",
    required=True,
    metavar="TEXT",
    help="What must change: kept as the task's comment (`rejected: TEXT`) and as the reason in "
    "its history.",
)
@click.option(
    "--comment",
    "comments",
    type=(str, str),
    multiple=True,
    metavar="FILE[:LINE] TEXT",
    callback=_anchored_comments,
    help="A review comment anchored to a file's line (repeatable): `--comment app.py:12 'why'`. "
    "Kept with the reason, not as it; the worktree's REVIEW.md lists them.",
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
