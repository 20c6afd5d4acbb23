"""The drawer's contents: one `TaskView` (task, comments, both dependency directions, executions,
verdict, lease) as Rich renderables.

Agent text is data: every string from the database goes through `boardlib.inert` and into a
`rich.text.Text` (never markup, never a plain `str` cell, which a Rich table would parse as
markup), so `[@click=...]` in an executor name is drawn as those characters and runs nothing.

The verdict is parsed with the board's own model (`boardlib.models.parse_verdict`), so debt notes,
gate attempts and reviews render as what they are (a criterion, a severity, a justification), never
as an object dumped into text.
"""

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from boardlib import transitions as t
from boardlib.actors import actor_label
from boardlib.events import EventKind
from boardlib.inert import inert
from boardlib.narration import ROUTINE, narrate
from boardlib.records import (
    EXECUTION_CANCELLED,
    EXECUTION_FAILED,
    EXECUTION_SUCCEEDED,
    EXECUTION_TIMED_OUT,
    AuditEntry,
    Event,
    Execution,
    LinkedTask,
    Task,
    TaskView,
)

from .cards import EXPIRED, SOON, clock_text, lease_state, money

SEVERITY_STYLE = {"low": "dim", "medium": "yellow", "high": "bold red"}
VERDICT_STYLE = {"pass": "bold green", "fail": "bold red", "completed_with_debt": "bold yellow"}
RUN_STYLE = {  # how each outcome of a run is shown, in the task view and the drawer alike
    EXECUTION_SUCCEEDED: "green",
    EXECUTION_FAILED: "red",
    EXECUTION_TIMED_OUT: "yellow",
    EXECUTION_CANCELLED: "dim",
}


def heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold underline")


def plain(text: object, style: str = "", *, multiline: bool = False) -> Text:
    """Agent text (or anything from the database) as inert `Text`."""
    return Text(inert("" if text is None else str(text), multiline=multiline), style=style)


def describe_verdict(verification: str | None, now_ms: int) -> RenderableType:
    """A verdict as text: status, whether it may reach done, gate attempts, debt notes, reviews."""
    if not verification:
        return Text("No verdict recorded.", style="dim")
    from boardlib.models import parse_verdict  # pydantic only when a verdict is shown

    try:
        verdict = parse_verdict(verification)
    except ValueError as error:
        return plain(f"Unreadable verdict ({error.__class__.__name__}): {verification[:200]}")
    parts: list[RenderableType] = []
    line = Text()
    line.append(inert(verdict.status.upper()), style=VERDICT_STYLE.get(verdict.status, "bold"))
    promotable = "may reach done" if verdict.promotable else "blocks done (override required)"
    line.append(f"  {promotable}  ·  updated {clock_text(verdict.updated_at, now_ms)}", "dim")
    parts.append(line)
    if verdict.command_source is not None:
        source, author = verdict.command_source, verdict.command_author
        parts.append(_judged_by(source, author, verdict.verify_from))
    for attempt in verdict.attempts:
        text = Text(f"  attempt {attempt.attempt} at {clock_text(attempt.at, now_ms)}: ")
        text.append(inert(attempt.status), style=VERDICT_STYLE.get(attempt.status, ""))
        gate = attempt.deterministic
        if gate is not None:
            ran = f"  `{inert(gate.command)}` exit {gate.exit_code}"
            ran += " (timed out)" if gate.timed_out else ""
            text.append(ran, style="dim")
            tail = (gate.stderr_tail or gate.stdout_tail).strip().splitlines()[-3:]
            for row in tail:
                text.append(f"\n      {inert(row)}", style="dim")
        parts.append(text)
    if verdict.debt_notes:
        notes = Table(box=None, padding=(0, 1), show_header=True, header_style="bold")
        notes.add_column("severity")
        notes.add_column("criterion")
        notes.add_column("justification", ratio=1)
        for note in verdict.debt_notes:
            notes.add_row(
                plain(note.severity, SEVERITY_STYLE.get(note.severity, "")),
                plain(note.criterion),
                plain(note.justification, multiline=True),
            )
        parts.append(Text("  debt notes:", style="bold yellow"))
        parts.append(Padding(notes, (0, 0, 0, 2)))
    for review in verdict.reviews:
        text = plain(f"  {review.decision} by {review.reviewer} at {clock_text(review.at, now_ms)}")
        if review.reason:
            text.append(f": {inert(review.reason)}", style="italic")
        parts.append(text)
    return Group(*parts)


def _judged_by(source: str, author: str | None, verify_from: str | None) -> Text:
    """Where the gate's command came from: the operator sees when a builder chose its own judge."""
    text = Text("  judged by the verify command from ", style="dim")
    text.append("the handoff" if source == "handoff" else "init.sh (fixed at provision)")
    if author:
        text.append(", written by ")
        text.append(inert(author), style="bold")
    if source == "handoff":
        text.append("  (the builder chose its own judge)", style="yellow")
    if verify_from == "operator":
        text.append("  · policy: only the operator's command promotes", style="dim")
    return text


def _facts(task: Task, now_ms: int) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", justify="right")
    table.add_column()

    def row(name: str, value: object, style: str = "") -> None:
        if value not in (None, "", [], 0) or name in ("priority",):
            table.add_row(Text(name), plain(value, style))

    row("status", t.label(task.status) + (" (dropped)" if task.dropped else ""), "bold")
    row("priority", task.priority)
    row("role", task.role)
    row("team", task.team_id)
    row("kind", task.kind)
    who = task.assignee_agent_id
    if who and task.assignee_runtime:
        who += f" · {task.assignee_runtime}"
    row("assignee", who)
    attempt_claimer = task.attempt_claimer  # the card names the same one (`tui.cards`)
    row("claimed by", attempt_claimer)
    if task.claimed_by != attempt_claimer:  # the review rule still bars the first claimer
        row("first claimed by", task.claimed_by)
    row("holders", ", ".join(task.holders))
    row("attempts", task.attempts)
    row("claim epoch", task.claim_epoch)
    if task.lease_until is not None:
        state = lease_state(task, now_ms)
        style = "bold red" if state == EXPIRED else "bold yellow" if state == SOON else ""
        suffix = " (expired)" if state == EXPIRED else " (about to expire)" if state == SOON else ""
        row("lease until", clock_text(task.lease_until, now_ms) + suffix, style)
    if task.last_heartbeat_at is not None:
        row("heartbeat", clock_text(task.last_heartbeat_at, now_ms))
    row("waits on", f"{task.unmet_deps} unfinished" if task.unmet_deps else None, "yellow")
    row("created", clock_text(task.created_at, now_ms))
    row("updated", clock_text(task.updated_at, now_ms))
    if task.completed_at is not None:
        row("completed", clock_text(task.completed_at, now_ms))
    row("cost", money(task.cost_usd) if task.cost_usd else None)
    row("branch", task.branch_ref)
    row("worktree", task.worktree_ref)
    return table


def _links(tasks: list[LinkedTask], empty: str) -> RenderableType:
    if not tasks:
        return Text(f"  {empty}", style="dim")
    table = Table.grid(padding=(0, 2))
    for linked in tasks:
        done = linked.status == t.DONE
        table.add_row(
            plain(f"  {linked.id}", "bold"),
            plain(t.label(linked.status), "green" if done else "yellow"),
            plain(linked.title),
            plain(linked.assignee_agent_id, "dim"),
        )
    return table


def _executions(executions: list[Execution], now_ms: int) -> RenderableType:
    if not executions:
        return Text("  none yet", style="dim")
    table = Table(box=None, padding=(0, 1), header_style="bold")
    for name in ("id", "agent", "runtime", "status", "started", "tokens in/out", "cost", "note"):
        table.add_column(name)
    for run in executions:
        tokens = (
            f"{run.input_tokens or 0}/{run.output_tokens or 0}"
            if run.input_tokens or run.output_tokens
            else ""
        )
        style = RUN_STYLE.get(run.status, "")
        note = run.error or run.summary or ""
        if run.recovery_tombstone:
            note = f"(recovered) {note}"
        table.add_row(
            plain(run.id),
            plain(run.agent_id),
            plain(run.executor_type),
            plain(t.label(run.status), style),
            Text(clock_text(run.started_at, now_ms) if run.started_at else ""),
            Text(tokens),
            Text(money(run.cost_usd) if run.cost_usd else ""),
            plain(note[:160]),
        )
    return table


HISTORY_LINES = 15


def _overrides(audit: list[AuditEntry], now_ms: int) -> list[RenderableType]:
    lines: list[RenderableType] = []
    for entry in audit:
        if entry.action != "human_override":
            continue
        line = Text("⚑ human override: ", style="bold yellow")
        line.append(
            inert(
                f"{entry.actor} moved it from {entry.from_status or '?'} to "
                f"{entry.to_status or '?'} over the verdict at "
                f"{clock_text(entry.created_at, now_ms)}"
            )
        )
        lines.append(line)
    return lines


def _history(events: list[Event], now_ms: int) -> RenderableType:
    shown = [event for event in events if event.kind not in ROUTINE][:HISTORY_LINES]
    if not shown:
        return Text("  nothing recorded", style="dim")
    lines = []
    for event in shown:
        line = Text(f"  {clock_text(event.created_at, now_ms)}  ", style="dim")
        line.append(
            inert(narrate(event)), style="red" if event.kind == EventKind.LEASE_EXPIRED else ""
        )
        lines.append(line)
    return Group(*lines)


def render_task_view(
    view: TaskView,
    now_ms: int,
    *,
    audit: list[AuditEntry] | None = None,
    history: list[Event] | None = None,
) -> RenderableType:
    """The drawer's body. `audit` marks a human override; `history` (newest first) is the
    task's recent events in words."""
    task = view.task
    parts: list[RenderableType] = [
        plain(task.title, "bold"),
        *_overrides(audit or [], now_ms),
        _facts(task, now_ms),
    ]
    if task.blocked_reason:
        parts += [heading("Blocked because"), plain(f"  {task.blocked_reason}", "yellow")]
    if task.description:
        description = plain(task.description, multiline=True)
        parts += [heading("Description"), Padding(description, (0, 0, 0, 2))]
    parts += [heading("Verdict"), describe_verdict(task.verification, now_ms)]
    parts += [heading("Waits on"), _links(view.dependencies, "nothing")]
    parts += [heading("Blocks"), _links(view.dependents, "nothing waits on this task")]
    if view.ancestors:
        chain = " ← ".join(f"{a.id} ({a.status})" for a in view.ancestors)
        parts += [heading("Parent chain"), plain(f"  {chain}")]
    parts += [heading(f"Executions ({len(view.executions)})"), _executions(view.executions, now_ms)]
    if view.workspaces:
        parts.append(heading("Workspaces"))
        for space in view.workspaces:
            parts.append(
                plain(
                    f"  {space.id} {space.status} {space.branch or ''} {space.worktree_path or ''}"
                )
            )
    if history is not None:
        parts += [heading("History (newest first)"), _history(history, now_ms)]
    parts.append(heading(f"Comments ({len(view.comments)})"))
    if not view.comments:
        parts.append(Text("  none", style="dim"))
    for comment in view.comments:
        who = actor_label(comment.author_agent_id, comment.author_type)
        line = Text(f"  {clock_text(comment.created_at, now_ms)} ", style="dim")
        line.append(inert(who), style="bold cyan" if comment.author_type == "user" else "bold")
        parts.append(line)
        parts.append(Padding(plain(comment.body, multiline=True), (0, 0, 0, 4)))
    return Group(*parts)
