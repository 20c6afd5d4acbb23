"""A task's pieces as inert Rich renderables, shared by the drawer (`drawer_render` composes its
tabs from them), the landing dialog and the actions: agent text as `Text`, a heading, a verdict,
a line wrapped under its own words.

Agent text is data: every string from the database goes through `boardlib.inert` and into a
`rich.text.Text` (never markup, never a plain `str` cell, which a Rich table would parse as
markup), so `[@click=...]` in an executor name is drawn as those characters and runs nothing.

The verdict is parsed with the board's own model (`boardlib.models.parse_verdict`), so debt notes,
gate attempts and reviews render as what they are (a criterion, a severity, a justification), never
as an object dumped into text.
"""

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from boardlib.inert import inert
from boardlib.records import (
    EXECUTION_CANCELLED,
    EXECUTION_FAILED,
    EXECUTION_SUCCEEDED,
    EXECUTION_TIMED_OUT,
)

from .cards import clock_text

SEVERITY_STYLE = {"low": "dim", "medium": "yellow", "high": "bold red"}
VERDICT_STYLE = {"pass": "bold green", "fail": "bold red", "completed_with_debt": "bold yellow"}
RUN_STYLE = {  # how each outcome of a run is shown
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


def hanging(text: Text, *, indent: int = 0) -> RenderableType:
    """`text` wrapped under its own words: its leading spaces, and a mark before the words (`✓ `,
    `⋯ `), are a column of their own, so a wrapped line starts under the text, not at the
    pane's edge; `indent` cells further in where entries at one indent follow each other (a
    verdict's attempts), so a wrapped line does not read as the next entry."""
    words = text.plain.lstrip(" ")
    lead = len(text.plain) - len(words)
    if len(words) > 2 and words[1] == " " and not words[0].isalnum() and words[0] not in "`'\"([":
        lead += 2  # a mark
    if lead == 0:
        return text
    return Hanging([(text[:lead], text[lead:])], gap=0, indent=indent)


class Hanging:
    """Rows of a lead (a time, an indent) and words that wrap under the words, `gap` cells
    between the two. Segments of its own: a table grid drew the same 3-4 times slower, and a
    long task's History is hundreds of rows."""

    def __init__(self, rows: "list[tuple[Text, Text]]", *, gap: int, indent: int = 0) -> None:
        self.rows = rows
        self.width = max((cell_len(lead.plain) for lead, _ in rows), default=0) + gap
        self.indent = indent  # a wrapped line's cells further in than its first

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        room = max(1, options.max_width - self.width - self.indent)
        pad = Segment(" " * (self.width + self.indent))
        for lead, words in self.rows:
            first = [*_spanned(lead).render(console), Segment(" " * (self.width - lead.cell_len))]
            for n, line in enumerate(words.wrap(console, room) if words.plain else [words]):
                yield from first if n == 0 else (pad,)
                yield from _spanned(line).render(console)
                yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((words.cell_len for _, words in self.rows), default=0)
        return Measurement(self.width + 1, min(options.max_width, self.width + widest))


def _spanned(text: Text) -> Text:
    """`text` with its own style as a span: `Text.render` draws a text without spans unstyled."""
    return Text(end="").append_text(text)


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
        parts.append(hanging(_judged_by(source, author, verdict.verify_from), indent=2))
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
                text.append(f"\n  {inert(row)}", style="dim")  # under the wrapped words
        parts.append(hanging(text, indent=2))
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
        parts.append(hanging(text, indent=2))
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
