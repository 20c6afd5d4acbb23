"""The task drawer's tabs as Rich renderables: plain functions of what the library returned, kept
apart from the widgets so they can be read and tested without a running app.

Agent text is data: every string that came from the board or a worktree goes through
`boardlib.inert` into a `rich.text.Text` (never markup, never a bare `str` cell, which a Rich
table parses as markup). Markdown (a description, `TASK.md`, `task-progress.md`) goes through
`safe_markdown` before Textual's Markdown widget sees it.
"""

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from boardlib import transitions as t
from boardlib.actors import actor_label
from boardlib.attention import landing_by, verifying_since
from boardlib.events import EventKind, read
from boardlib.inert import inert
from boardlib.narration import ROUTINE, narrate, narrate_audit
from boardlib.records import (
    EXECUTION_RUNNING,
    WORKSPACE_ACTIVE,
    AuditEntry,
    Comment,
    Event,
    Execution,
    LandingRun,
    Task,
    TaskView,
)
from boardlib.review import anchor_of, review_comments
from boardlib.worktrees import CheckoutState, DetailResult
from boardlib.worktrees.results import CHECKED_OUT, CLEANED, KEPT, MISSING, PAUSED

from .cards import EXPIRED, SOON, clock_text, lease_state, money
from .task_view import RUN_STYLE, Hanging, describe_verdict, hanging
from .task_view import heading as heading  # re-exported: the drawer panes use them
from .task_view import plain as plain  # one `plain`: agent text as inert `Text`

if TYPE_CHECKING:  # types only: see boardlib/payloads.py
    from boardlib.payloads import CommentAdded, StatusChanged


MARKDOWN_MAX = 64 * 1024  # larger Markdown is shown as text: a widget per block would crawl
TEXT_LINES_MAX = 2000  # lines of a file shown as text
TAIL_FILES = frozenset({"VERIFICATION.md"})  # the newest entries are at the end: show the tail

STATE_STYLE = {
    CHECKED_OUT: "bold green",
    PAUSED: "bold yellow",
    KEPT: "bold cyan",
    CLEANED: "dim",
    MISSING: "bold red",
}


# -- Markdown ------------------------------------------------------------------------------------

_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\n]*)\)")
_AUTOLINK = re.compile(r"<((?:https?|file|ftp|mailto|javascript|data):[^>\s]*)>", re.IGNORECASE)
_HTML = re.compile(r"<(/?[A-Za-z][^>\n]*)>")


def safe_markdown(text: str) -> str:
    """Agent-written Markdown made safe to render: control characters made visible (inert), links
    and images reduced to their words with the target shown as code (a Markdown link would become
    a clickable action), and raw HTML tags shown as text."""
    text = inert(text, multiline=True)

    def link(match: "re.Match[str]") -> str:
        bang, words, target = match.groups()
        what = "image" if bang else "link"
        target = target.replace("`", "'")
        return f"{words} (`{what}: {target}`)" if target else words

    text = _LINK.sub(link, text)
    text = _AUTOLINK.sub(lambda m: f"`{m[1].replace('`', chr(39))}`", text)
    return _HTML.sub(lambda m: f"`<{m[1].replace('`', chr(39))}>`", text)


# -- Overview ------------------------------------------------------------------------------------


def overview_head(view: TaskView, now_ms: int, audit: Sequence[AuditEntry] = ()) -> Group:
    """The Overview above the description: the title, the fields, a human override's mark and
    why the task is blocked."""
    task = view.task
    head: list[RenderableType] = [
        plain(task.title, "bold"),
        facts_table(
            task,
            now_ms,
            removed=removed_by_landing(view),
            verifying=view.verifying_since,
            landing=view.landing,
        ),
    ]
    head += override_lines(audit, now_ms)
    head += wont_land_lines(view, now_ms)
    if task.blocked_reason:
        head += [heading("Blocked because"), hanging(plain(f"  {task.blocked_reason}", "yellow"))]
    return Group(*head)


def overview_rest(view: TaskView, checkout: CheckoutState | None, now_ms: int) -> Group:
    """The Overview below the description: the verdict, both dependency directions, the parent
    chain, the workspace, the runs in a line, the review comments and the comments."""
    rest: list[RenderableType] = [
        heading("Verdict"),
        describe_verdict(view.task.verification, now_ms),
    ]
    rest += [heading("Dependencies"), links_table(view)]
    if view.ancestors:
        chain = " ← ".join(f"{a.id} ({a.status})" for a in view.ancestors)
        rest += [heading("Parent chain"), hanging(plain(f"  {chain}"))]
    rest += [heading("Workspace"), workspace_line(view, checkout)]
    rest += [heading("Runs"), runs_summary(view.executions)]
    rest += review_block(view, now_ms)
    rest += comments_block(view, now_ms)
    rest.append(Text(""))
    return Group(*rest)


def removed_by_landing(view: TaskView) -> str | None:
    """Why the task's branch and worktree are gone, when its landing removed them (its
    workspace archived): found in tmux, the Overview still listed both after the landing."""
    task = view.task
    space = view.workspaces[-1] if view.workspaces else None
    if task.landed_commit is None or space is None or space.status == WORKSPACE_ACTIVE:
        return None
    into = f" on {task.landed_into}" if task.landed_into else ""
    return f"removed: landed as {task.landed_commit[:7]}{into}"


def facts_table(
    task: Task,
    now_ms: int,
    *,
    removed: str | None = None,
    verifying: int | None = None,
    landing: LandingRun | None = None,
) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", justify="right")
    table.add_column()

    def row(name: str, value: object, style: str = "") -> None:
        if value not in (None, "", [], 0) or name in ("priority",):
            table.add_row(Text(name), plain(value, style))

    row("status", t.label(task.status) + (" (dropped)" if task.dropped else ""), "bold")
    if verifying is not None:  # in review for its gate, not a person (`attention.gate_since`)
        row("gate", verifying_since(clock_text(verifying, now_ms)), "magenta")
    if landing is not None:  # another landing would queue behind it (`attention.landings`)
        row("queue", landing_by(landing.lander, clock_text(landing.since, now_ms)), "magenta")
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
    row("waits on", f"{task.unmet_deps} not done" if task.unmet_deps else None, "yellow")
    row("created", clock_text(task.created_at, now_ms))
    row("updated", clock_text(task.updated_at, now_ms))
    if task.completed_at is not None:
        row("completed", clock_text(task.completed_at, now_ms))
    row("cost", money(task.cost_usd) if task.cost_usd else None)
    for name, ref in (("branch", task.branch_ref), ("worktree", task.worktree_ref)):
        if ref and removed:  # the name stays (the commit says where the work went)
            shown = plain(ref)
            shown.append_text(plain(f"  ({removed})", "dim"))
            table.add_row(Text(name), shown)
        else:
            row(name, ref)
    return table


def override_lines(audit: Sequence[AuditEntry], now_ms: int) -> list[RenderableType]:
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
        lines.append(hanging(line))
    return lines


def wont_land_lines(view: TaskView, now_ms: int) -> list[RenderableType]:
    """An operator's standing "won't land" on done work (`TaskView.wont_land`): the task row
    alone says only done, not landed, as for work still waiting to land."""
    decided = view.wont_land
    if decided is None:
        return []
    line = Text("✗ won't land: ", style="bold yellow")
    line.append(
        inert(f"decided by {decided.by} at {clock_text(decided.at, now_ms)}: {decided.reason}")
    )
    if decided.kept:
        line.append(inert(f" ({decided.kept})"), style="dim")
    return [hanging(line)]


def links_table(view: TaskView) -> RenderableType:
    """Both dependency directions, numbered the way the link menu (`o`) offers them."""
    rows = [("waits on", linked) for linked in view.dependencies] + [
        ("blocks", linked) for linked in view.dependents
    ]
    if not rows:
        return Text("  no dependencies either way", style="dim")
    table = Table.grid(padding=(0, 2))
    for relation, linked in rows:
        done = linked.status == t.DONE
        table.add_row(
            Text(f"  {relation}", style="dim"),
            plain(linked.id, "bold"),
            plain(t.label(linked.status), "green" if done else "yellow"),
            plain(linked.title),
        )
    parts: list[RenderableType] = [table]
    if view.task.status in (t.TODO, t.BACKLOG):
        for linked in view.dependencies:
            if linked.status == t.CANCELLED:  # never done: the wait never ends by itself
                parts.append(hanging(never_done(view.task.id, linked.id), indent=2))
    return Group(*parts, Text("  o: go to one of them", style="dim"))


def never_done(task_id: str, blocker: str) -> Text:
    """A pending task waiting on a cancelled one waits for ever (the card said `deps:1 waiting`,
    the drawer `waits on 1 unfinished`): what ends the wait, as `kanban task why` says it."""
    line = plain(f"  ⚠ {blocker} is cancelled and will never be done: ", "bold red")
    line.append_text(
        plain(
            f"remove the link (kanban task deps remove {task_id} --on {blocker}) or cancel what "
            f"waits on it (X on {blocker})"
        )
    )
    return line


def _state_and_summary(state: CheckoutState, *, upper: bool) -> Text:
    """The checkout's state, styled, then its summary; a summary that starts with the state's
    own words (`checked out at ...`, `paused: ...`) goes on from them, not after them again (the
    Overview read `checked out  checked out at ...`)."""
    name = state.state.replace("_", " ")
    style = STATE_STYLE.get(state.state, "bold")
    line = Text(style=style if upper else "")  # the Files tab's whole line in the state's style
    line.append(name.upper() if upper else name, style)
    if state.summary.lower().startswith(name):
        line.append_text(plain(state.summary[len(name) :]))
    else:
        line.append("  ")
        line.append_text(plain(state.summary))
    return line


def workspace_line(view: TaskView, state: CheckoutState | None) -> RenderableType:
    """The workspace in one line: the checkout's true state (checked out, paused, kept on its
    branch, cleaned), never the row's bare `active`."""
    if state is not None:
        line = Text("  ")
        line.append_text(_state_and_summary(state, upper=False))
        line.append("  (2 Files, 3 Diff)", style="dim")
        return hanging(line)
    if not view.workspaces:
        return Text("  no worktree: this task changes no files, or was never provisioned", "dim")
    space = view.workspaces[-1]
    line = plain(f"  {space.id} on {space.branch or '?'}")
    line.append("  (2 Files and 3 Diff read the worktree)", style="dim")
    return hanging(line)


def runs_summary(executions: Sequence[Execution]) -> Text:
    if not executions:
        return Text("  no runs yet", style="dim")
    cost = sum(run.cost_usd or 0 for run in executions)
    line = Text(f"  {len(executions)} run(s), {money(cost)} in total", style="")
    line.append("  (4 Runs)", style="dim")
    return line


def review_block(view: TaskView, now_ms: int) -> list[RenderableType]:
    """The Overview's Review section: each comment anchored to a line, under `file:line`, with
    the line's text as it was (empty when there is none)."""
    anchored = review_comments(view.comments)
    if not anchored:
        return []
    parts: list[RenderableType] = [heading(f"Review ({len(anchored)} on lines)")]
    for comment in anchored:
        found = anchor_of(comment)
        assert found is not None
        line = plain(f"  {found.label}", "bold")
        who = comment.author_agent_id or comment.author_type
        line.append(f"  {clock_text(comment.created_at, now_ms)} ", style="dim")
        line.append_text(plain(who, "cyan"))
        parts.append(line)
        if found.line_text is not None:
            parts.append(Padding(plain(f"│ {found.line_text.strip()}", "dim"), (0, 0, 0, 4)))
        parts.append(Padding(plain(comment.body, multiline=True), (0, 0, 0, 4)))
    parts.append(Text("  3 Diff shows each under its line; the agent reads them in REVIEW.md",
                      style="dim"))  # fmt: skip
    return parts


def comments_block(view: TaskView, now_ms: int) -> list[RenderableType]:
    parts: list[RenderableType] = [heading(f"Comments ({len(view.comments)})")]
    if not view.comments:
        parts.append(Text("  none", style="dim"))
    for comment in view.comments:
        who = actor_label(comment.author_agent_id, comment.author_type)
        line = Text(f"  {clock_text(comment.created_at, now_ms)} ", style="dim")
        line.append_text(plain(who, "bold cyan" if comment.author_type == "user" else "bold"))
        parts.append(line)
        parts.append(Padding(plain(comment.body, multiline=True), (0, 0, 0, 4)))
    return parts


# -- Runs ----------------------------------------------------------------------------------------


def _duration(run: Execution) -> str:
    if run.started_at is None or run.completed_at is None:
        return run.status if run.status == EXECUTION_RUNNING else ""  # the word itself
    seconds = max(0, run.completed_at - run.started_at) / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


RUN_COLUMNS = (
    ("executor", "left"),
    ("status", "left"),
    ("started", "left"),
    ("took", "right"),
    ("tokens in/out", "right"),
    ("cost", "right"),
)
NOTE_INDENT = 3  # a run's note: two cells in from its executor (the table pads one)


def runs_table(executions: Sequence[Execution], now_ms: int) -> RenderableType:
    """The execution ledger, newest first: executor, status, started, duration, tokens, cost, and
    the summary or error on its own lines under the run's row, the pane's whole width (in the
    executor column a lapsed lease's note was wrapped to six lines and cut); then the task's
    total cost. Each run is a one-row table with the same column widths, so the rows align."""
    if not executions:
        return Text("No runs recorded for this task.", style="dim")
    ordered = sorted(executions, key=lambda run: (run.started_at or run.created_at, run.id))
    rows: list[tuple[list[Text], Text]] = []
    for run in reversed(ordered):
        executor = plain(run.executor_type, "bold")
        if run.agent_id:
            executor.append(" · ")
            executor.append_text(plain(run.agent_id))
        tokens = (
            f"{run.input_tokens or 0:,}/{run.output_tokens or 0:,}"
            if run.input_tokens or run.output_tokens
            else ""
        )
        cells = [
            executor,
            plain(t.label(run.status), RUN_STYLE.get(run.status, "")),
            Text(clock_text(run.started_at, now_ms) if run.started_at else ""),
            Text(_duration(run)),
            Text(tokens),
            Text(money(run.cost_usd) if run.cost_usd else ""),
        ]
        note = plain(run.error or run.summary or "", "red" if run.error else "dim", multiline=True)
        if run.recovery_tombstone:
            note = Text("(timed out by reconciliation) ", style="yellow") + note
        rows.append((cells, note))
    widths = [
        max(len(name), *(cells[n].cell_len for cells, _ in rows))
        for n, (name, _) in enumerate(RUN_COLUMNS)
    ]
    parts: list[RenderableType] = []
    for index, (cells, note) in enumerate(rows):
        table = Table(
            box=None, padding=(0, 1), header_style="bold", expand=True, show_header=index == 0
        )
        for n, (name, justify) in enumerate(RUN_COLUMNS):
            if n == 0:  # the executor takes what the figures leave, wrapped if it must
                table.add_column(name, justify=justify, ratio=1, min_width=1)  # type: ignore[arg-type]
            else:
                table.add_column(name, justify=justify, width=widths[n], no_wrap=True)  # type: ignore[arg-type]
        table.add_row(*cells)
        parts.append(table)
        if note.plain:
            parts.append(Padding(note, (0, 0, 0, NOTE_INDENT)))
    total = sum(run.cost_usd or 0 for run in executions)
    tokens_in = sum(run.input_tokens or 0 for run in executions)
    tokens_out = sum(run.output_tokens or 0 for run in executions)
    footer = Text(
        f"\n{len(executions)} run(s); total cost {money(total)}; "
        f"tokens {tokens_in:,} in / {tokens_out:,} out",
        style="bold",
    )
    return Group(*parts, footer)


# -- History -------------------------------------------------------------------------------------


def history_block(
    events: Sequence[Event],
    audit: Sequence[AuditEntry],
    now_ms: int,
    *,
    comments: Sequence[Comment] = (),
) -> RenderableType:
    """The History tab: a line a thing done, its words wrapped under its words, not under its
    time."""
    rows = history_lines(events, audit, now_ms, comments=comments)
    if not rows:
        return Text("Nothing recorded yet.", "dim")
    return Hanging(rows, gap=2)


def history_lines(
    events: Sequence[Event],
    audit: Sequence[AuditEntry],
    now_ms: int,
    *,
    comments: Sequence[Comment] = (),
) -> list[tuple[Text, Text]]:
    """Everything done to the task, newest first, in words. The audit table says what the events
    say less well (the gate's summary of a run, a human override with the verdict it overrode),
    so those rows replace their events; runs of routine heartbeats fold into one line; a comment
    shows its first line. Each is its time and its words."""
    entries: list[tuple[int, int, Text]] = []
    bodies = {comment.id: comment.body for comment in comments}
    overrides = {(row.created_at, row.actor) for row in audit if row.action == "human_override"}
    for row in audit:
        style = "bold magenta" if row.action == "human_override" else "cyan"
        entries.append((row.created_at, 1, plain(narrate_audit(row), style)))
    routine: list[Event] = []

    def fold() -> None:
        if not routine:
            return
        first, last = routine[0], routine[-1]
        if len(routine) == 1:
            words = narrate(first)
        else:
            words = (
                f"{actor_label(first.actor)} renewed the lease {len(routine)} times "
                f"({clock_text(first.created_at, now_ms)} to {clock_text(last.created_at, now_ms)})"
            )
        entries.append((last.created_at, 0, plain(words, "dim")))
        routine.clear()

    for event in events:
        if event.kind in ROUTINE:
            if routine and routine[-1].actor != event.actor:
                fold()
            routine.append(event)
            continue
        fold()
        if event.kind == EventKind.VERIFICATION_RECORDED:
            continue  # the gate's audit row says it with the command and the outcome
        if event.kind == EventKind.STATUS_CHANGED and (event.created_at, event.actor) in overrides:
            continue  # the audit row names the verdict overridden
        words = plain(narrate(event), _event_style(event))
        body = None
        if event.kind == EventKind.COMMENT_ADDED:
            added: CommentAdded = read(event.data)
            body = bodies.get(str(added.get("comment_id")))
        if body:
            first = body.strip().splitlines()[0] if body.strip() else ""
            words.append_text(
                plain(f": {first[:120]}" + ("…" if len(first) > 120 else ""), "italic")
            )
        entries.append((event.created_at, 0, words))
    fold()
    # Newest first; within one millisecond, the later record first (the list is in record order).
    order = sorted(
        range(len(entries)), key=lambda i: (entries[i][0], entries[i][1], i), reverse=True
    )
    return [(Text(clock_text(at, now_ms), style="dim"), words) for at, _, words in
            (entries[i] for i in order)]  # fmt: skip


def _event_style(event: Event) -> str:
    if event.kind == EventKind.LEASE_EXPIRED:
        return "yellow"
    if event.kind == EventKind.TASK_LANDED:
        return "bold green"
    if event.kind == EventKind.STATUS_CHANGED:
        changed: StatusChanged = read(event.data)
        verb = changed.get("verb")
        if verb == "reject":
            return "red"
        if verb == "approve" or changed.get("to") == t.DONE:
            return "green"
        return "bold"
    return ""


# -- Files ---------------------------------------------------------------------------------------


def checkout_block(detail: DetailResult) -> RenderableType:
    """The checkout's true state; for a paused worktree, what the cold-resume read rebuilt."""
    parts: list[RenderableType] = []
    state = detail.checkout
    if state is not None:
        parts.append(_state_and_summary(state, upper=True))
    for warning in detail.warnings:
        parts.append(plain(f"! {warning}", "yellow"))
    if state is not None and state.state == PAUSED and detail.resume:
        parts.append(heading("What a cold resume rebuilds from the branch"))
        parts.append(resume_block(detail.resume))
    return Group(*parts)


def resume_block(resume: dict[str, Any]) -> RenderableType:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", justify="right")
    table.add_column()
    table.add_row("from", Text("AGENT_HANDOFF.json" if resume.get("hasHandoff") else
                               "task-progress.md and init.sh"))  # fmt: skip
    table.add_row("next", plain(resume.get("next") or "(not said)", "bold"))
    if resume.get("whyBlocked"):
        table.add_row("blocked", plain(resume["whyBlocked"], "yellow", multiline=True))
    for name in ("done", "broken"):
        items = resume.get(name) or []
        if items:
            table.add_row(name, plain("\n".join(f"• {item}" for item in items), multiline=True))
    commands = resume.get("commands") or {}
    if commands.get("verify"):
        table.add_row("verify", plain(commands["verify"]))
    for warning in resume.get("warnings") or []:
        table.add_row("warning", plain(warning, "yellow"))
    return table


def handoff_callout(text: str) -> RenderableType | None:
    """The handoff's next step and blockers, called out above the files."""
    try:
        handoff = json.loads(text)
    except ValueError:
        return plain("AGENT_HANDOFF.json is not valid JSON", "bold red")
    if not isinstance(handoff, dict):
        return None
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", justify="right")
    table.add_column()
    who = plain(f"{handoff.get('handoffFrom') or '?'} ({handoff.get('runtime') or '?'})")
    if handoff.get("timestamp"):
        who.append(f" at {inert(str(handoff['timestamp']))}", style="dim")
    table.add_row("handoff from", who)
    table.add_row("next step", plain(handoff.get("nextBestStep") or "(none given)", "bold green"))
    blocked = handoff.get("whyBlocked")
    if blocked:
        table.add_row("blocked", plain(blocked, "bold yellow", multiline=True))
    broken = handoff.get("brokenOrUnverified") or []
    if isinstance(broken, list) and broken:
        table.add_row(
            "broken",
            plain("\n".join(f"• {item}" for item in broken), "yellow", multiline=True),
        )
    return table


def pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def text_file(name: str, text: str, lexer: str) -> RenderableType:
    """A file as highlighted text (Rich's `Syntax`: a lexer, never markup), inert first; long files
    are cut to their head, or their tail for a journal whose newest entries are last."""
    lines = inert(text, multiline=True).splitlines()
    note = None
    if len(lines) > TEXT_LINES_MAX:
        cut = len(lines) - TEXT_LINES_MAX
        if name in TAIL_FILES:
            lines = lines[-TEXT_LINES_MAX:]
            note = Text(f"(the first {cut} lines are not shown)", style="dim")
        else:
            lines = lines[:TEXT_LINES_MAX]
            note = Text(f"(the last {cut} lines are not shown)", style="dim")
    syntax = Syntax("\n".join(lines), lexer, theme="ansi_dark", word_wrap=True,
                    background_color="default")  # fmt: skip
    if note is None:
        return syntax
    return Group(note, syntax) if name in TAIL_FILES else Group(syntax, note)
