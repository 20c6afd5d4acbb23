"""Printing results: one JSON document on stdout (camelCase, as the records serialise), or a rich
table for people with `--format table`. rich is imported only on that path."""

import json
import sys
from typing import TYPE_CHECKING, Any

from boardlib.inert import inert
from kanban.documents import one_line, verdicts_as_objects

from .context import settings

if TYPE_CHECKING:
    from boardlib.errors import BoardError

DocKind = str  # a hint for the table renderer: "task", "tasks", "view", "events", ...


def _dumps(doc: Any, *, pretty: bool) -> str:
    encoding = (sys.stdout.encoding or "").lower().replace("-", "")
    text = json.dumps(
        verdicts_as_objects(doc),
        ensure_ascii=encoding != "utf8",
        indent=2 if pretty else None,
        separators=None if pretty else (",", ":"),
    )
    return one_line(text)


def emit(doc: Any, *, kind: DocKind = "record") -> None:
    """Print one result. JSON is compact on one line, indented when stdout is a terminal."""
    if settings().format == "table":
        from .table import render

        render(verdicts_as_objects(doc), kind)  # a verdict is drawn as the JSON has it
        return
    sys.stdout.write(_dumps(doc, pretty=sys.stdout.isatty()) + "\n")


def emit_line(doc: Any, *, kind: DocKind = "event") -> None:
    """One item of a stream (`events --follow`): always one line, flushed at once."""
    if settings().format == "table":
        from .table import render_line

        sys.stdout.write(render_line(doc, kind) + "\n")
    else:
        sys.stdout.write(_dumps(doc, pretty=False) + "\n")
    sys.stdout.flush()


def error_line(doc: dict[str, Any]) -> None:
    """A refusal or failure: one JSON line on stderr, whatever the output format."""
    sys.stderr.write(_dumps(doc, pretty=False) + "\n")
    sys.stderr.flush()


def outage_notice(error: "BoardError | None") -> None:
    """What a follower (`events --follow`, `watch`) says on stderr when the database goes away
    and when it is back: it waits, it does not stop."""
    if error is None:
        line = "kanban: the board's database is reachable again; following on"
    else:
        line = f"kanban: {one_line(error.message)} ({error.reason.value}); waiting for it"
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def resume_notice(words: str) -> None:
    """What `watch` and `events --consumer` say on stderr when `--since` met a consumer that
    exists (`boardlib.watch.resumed_words`): the restart goes on from its cursor."""
    sys.stderr.write(f"kanban: {inert(words)}\n")
    sys.stderr.flush()
