"""Creating tasks and the operator's verbs: edits, the generic gated move, cancel, drop/restore,
comments. Every rule (the transition table, the done-gate, caps) is the board's."""

import click

from boardlib import transitions
from boardlib.actors import AUTHOR_USER, OPERATOR, author_type_of
from boardlib.records import ANCHOR_SIDES

from .amounts import DOLLARS, TOKEN_COUNT
from .context import global_options, open_board
from .creating import creating_as
from .options import (
    AGENT,
    WholeNumber,
    actor_option,
    complete_task_id,
    epoch_option,
    split_ids,
    task_id_argument,
)
from .output import emit
from .usage import Choice


@click.command("dispatch")
@click.argument("title_argument", required=False, metavar="[TITLE]")
@click.option("--title", "-t", metavar="TEXT", help="The title (or give it as TITLE).")
@click.option("--description", "-d", metavar="TEXT", help="What to do and how to know it is done.")
@click.option("--role", "-r", metavar="ROLE", help="Which agents may claim it (none: any).")
@click.option(
    "--priority",
    "-p",
    type=WholeNumber(),
    default=0,
    show_default=True,
    metavar="N",
    help="Higher first.",
)
@click.option(
    "--depends-on",
    multiple=True,
    metavar="ID,ID",
    help="Tasks that must be done first (comma-separated, repeatable).",
)
@click.option(
    "--parent", metavar="ID", shell_complete=complete_task_id, help="Parent task (delegation)."
)
@click.option("--team", metavar="ID", help="Team id.")
@click.option(
    "--kind",
    default="code",
    show_default=True,
    metavar="KIND",
    help="What the work is: code (and any other kind) gets a worktree when provisioned; "
    "research and review get none.",
)
@click.option(
    "--status",
    "-s",
    type=Choice(sorted(transitions.CREATABLE, key=transitions.STATUSES.index)),
    default=transitions.TODO,
    show_default=True,
    help="todo is claimable at once; backlog waits for triage.",
)
@click.option(
    "--agent",
    "-a",
    envvar="KANBAN_AGENT",
    type=AGENT,
    metavar="NAME",
    help="File it as this agent: the board's caps on depth, children and root rate apply "
    "(env: KANBAN_AGENT).",
)
@click.option(
    "--budget-usd",
    type=DOLLARS,
    metavar="N",
    help="A dollar budget over the task and its subtasks.",
)
@click.option("--budget-tokens", type=TOKEN_COUNT, metavar="N", help="A token budget, likewise.")
@global_options
def dispatch(
    title_argument: str | None,
    title: str | None,
    description: str | None,
    role: str | None,
    priority: int,
    depends_on: tuple[str, ...],
    parent: str | None,
    team: str | None,
    kind: str,
    status: str,
    agent: str | None,
    budget_usd: float | None,
    budget_tokens: int | None,
) -> None:
    """Create a task and print it.

    It starts in todo (claimable) or, with --status backlog, in triage.
    """
    if (title is None) == (title_argument is None):
        raise click.UsageError(
            "Missing the title: give it as TITLE or --title / -t."
            if title is None
            else "The title is given twice: as TITLE and as --title; give one.",
            click.get_current_context(),
        )
    title = title if title is not None else title_argument
    assert title is not None
    with open_board(create=True) as board, creating_as(agent, board.config, parameter="agent"):
        task = board.create_task(
            title,
            description=description,
            role=role,
            priority=priority,
            depends_on=split_ids(depends_on),
            parent_task_id=parent,
            team_id=team,
            kind=kind,
            status=status,
            scheduled_by="agent" if agent else "manual",
            actor=OPERATOR if agent is None else agent,  # "" is refused, never the operator
            budget_usd=budget_usd,
            budget_tokens=budget_tokens,
        )
    emit(task.to_json(), kind="task")


@click.command("edit")
@task_id_argument
@click.option("--title", "-t", metavar="TEXT", help="A new title.")
@click.option("--description", "-d", metavar="TEXT", help="A new description ('' clears it).")
@click.option(
    "--priority", "-p", type=WholeNumber(), metavar="N", help="A new priority (higher first)."
)
@click.option("--role", "-r", metavar="ROLE", help="Which agents may claim it ('' clears it).")
@click.option("--team", metavar="ID", help="Team id ('' clears it).")
@click.option(
    "--kind",
    metavar="KIND",
    help="What the work is (code, research, review...): whether it gets a worktree.",
)
@actor_option
@global_options
def edit(
    task_id: str,
    title: str | None,
    description: str | None,
    priority: int | None,
    role: str | None,
    team: str | None,
    kind: str | None,
    actor: str,
) -> None:
    """Edit fields of a task, all at once or none."""
    with open_board() as board:
        task = board.update_task(
            task_id,
            title=title,
            description=description,
            priority=priority,
            role=role,
            team_id=team,
            kind=kind,
            actor=actor,
        )
    emit(task.to_json(), kind="task")


@click.command("move")
@task_id_argument
@click.option(
    "--to", "to_status", required=True, type=Choice(transitions.STATUSES), help="The new status."
)
@click.option(
    "--human-override",
    is_flag=True,
    help="Move to done over a failing verdict (audited).",
)
@click.option("--reason", "-m", metavar="TEXT", help="Why (kept in the event; the block reason).")
@actor_option
@epoch_option
@global_options
def move(
    task_id: str,
    to_status: str,
    human_override: bool,
    reason: str | None,
    actor: str,
    epoch: int | None,
) -> None:
    """Move a task to another status (table-checked).

    The operator's tool: only the legal moves of the seven-status table, and a move to
    done over a failing verdict needs --human-override (audited). As an agent (--agent or
    KANBAN_AGENT) you move only a task you hold, never into done (self_review, not_assignee).
    """
    with open_board() as board:
        task = board.move(
            task_id,
            to_status,
            actor=actor,
            human_override=human_override,
            reason=reason,
            epoch=epoch,
        )
    emit(task.to_json(), kind="task")


@click.command("unblock")
@task_id_argument
@click.option("--note", "-m", metavar="TEXT", help="What changed (kept as a comment).")
@actor_option
@global_options
def unblock(task_id: str, note: str | None, actor: str) -> None:
    """blocked -> todo, ready for a fresh claim."""
    with open_board() as board:
        task = board.unblock(task_id, note=note, actor=actor)
    emit(task.to_json(), kind="task")


@click.command("reclaim")
@task_id_argument
@actor_option
@global_options
def reclaim(task_id: str, actor: str) -> None:
    """Release a task whose lease ran out, now: back to todo for another claim."""
    with open_board(reconcile_orphans=False) as board:
        task = board.reclaim(task_id, actor=actor)
    emit(task.to_json(), kind="task")


@click.command("cancel")
@task_id_argument
@click.option("--reason", "-m", metavar="TEXT", help="Why (kept in the event).")
@actor_option
@global_options
def cancel(task_id: str, reason: str | None, actor: str) -> None:
    """Cancel a task (terminal)."""
    with open_board() as board:
        task = board.cancel(task_id, actor=actor, reason=reason)
    emit(task.to_json(), kind="task")


@click.command("cancel-dependents")
@task_id_argument
@actor_option
@global_options
def cancel_dependents(task_id: str, actor: str) -> None:
    """Cancel the pending tasks that wait on ID.

    Todo/backlog tasks that transitively depend on ID. Prints the cancelled tasks;
    claimed, done or cancelled dependents are left alone.
    """
    with open_board() as board:
        cancelled = board.cancel_dependents(task_id, actor=actor)
    emit([task.to_json() for task in cancelled], kind="tasks")


@click.command("drop")
@task_id_argument
@actor_option
@global_options
def drop(task_id: str, actor: str) -> None:
    """Soft-delete: hidden and unclaimable until restored."""
    with open_board() as board:
        task = board.drop(task_id, actor=actor)
    emit(task.to_json(), kind="task")


@click.command("restore")
@task_id_argument
@actor_option
@global_options
def restore(task_id: str, actor: str) -> None:
    """Undo a drop."""
    with open_board() as board:
        task = board.restore(task_id, actor=actor)
    emit(task.to_json(), kind="task")


@click.command("comment")
@task_id_argument
@click.option("--body", "-m", required=True, metavar="TEXT", help="The comment's text.")
@click.option(
    "--agent",
    "-a",
    envvar="KANBAN_AGENT",
    type=AGENT,
    metavar="NAME",
    help="The author: an agent's name, or operator:NAME to write as a person (env: "
    "KANBAN_AGENT; none: the operator).",
)
@click.option("--path", metavar="FILE", help="A review comment: the file it is about.")
@click.option("--line", type=WholeNumber(), metavar="N", help="The line of --path it is about.")
@click.option(
    "--side",
    type=Choice(ANCHOR_SIDES),
    help="The diff side of --line: new (default) or old (a removed line).",
)
@click.option("--line-text", metavar="TEXT", help="The line's text, to find it after edits.")
@global_options
def comment(
    task_id: str,
    body: str,
    agent: str | None,
    path: str | None,
    line: int | None,
    side: str | None,
    line_text: str | None,
) -> None:
    """Add a comment: the operator's, or an agent's with --agent.

    With --path (and --line) it is a review comment anchored to that line of the task's diff:
    the agent sees it in `task view`, `task workspace resume` and its worktree's REVIEW.md.
    """
    author_type = author_type_of(agent) if agent else AUTHOR_USER
    if path is None and line is None and side is None and line_text is None:
        with open_board() as board:
            note = board.add_comment(task_id, body, author_agent_id=agent, author_type=author_type)
        emit(note.to_json(), kind="record")
        return
    from boardlib.worktrees import Worktrees

    with open_board() as board:
        note = Worktrees(board).add_comment(
            task_id, body, author_agent_id=agent, author_type=author_type,
            path=path, line=line, side=side, line_text=line_text,
        )  # fmt: skip
    emit(note.to_json(), kind="record")
