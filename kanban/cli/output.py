"""Printing results: one JSON document on stdout (camelCase, as the records serialise), or a rich
table for people with `--format table`. rich is imported only on that path."""

import contextlib
import json
import sys
from typing import Any

from .context import settings

DocKind = str  # a hint for the table renderer: "task", "tasks", "view", "events", ...


# Fields the board stores as JSON text (seed 003's `verification: string`); the CLI prints them as
# JSON objects, in every document, so `jq .verification.status` works on `task get` as it does on
# `workspace complete`.
VERDICT_FIELDS = frozenset({"verification", "verdictOverridden"})


def _verdicts_as_objects(doc: Any) -> Any:
    if isinstance(doc, list):
        return [_verdicts_as_objects(item) for item in doc]
    if not isinstance(doc, dict):
        return doc
    out = {}
    for key, value in doc.items():
        if key in VERDICT_FIELDS and isinstance(value, str):
            with contextlib.suppress(ValueError):  # not JSON after all: shown as stored
                value = json.loads(value)
        else:
            value = _verdicts_as_objects(value)
        out[key] = value
    return out


def _dumps(doc: Any, *, pretty: bool) -> str:
    encoding = (sys.stdout.encoding or "").lower().replace("-", "")
    return json.dumps(
        _verdicts_as_objects(doc),
        ensure_ascii=encoding != "utf8",
        indent=2 if pretty else None,
        separators=None if pretty else (",", ":"),
    )


def emit(doc: Any, *, kind: DocKind = "record") -> None:
    """Print one result. JSON is compact on one line, indented when stdout is a terminal."""
    if settings().format == "table":
        from .table import render

        render(doc, kind)
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
