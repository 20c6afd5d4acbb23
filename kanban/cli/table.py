"""`--format table`: the same documents, drawn for people with rich. Imported only on that path."""

import json
import time
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from boardlib import transitions as t

TASK_COLUMNS = (
    ("id", "ID"),
    ("status", "Status"),
    ("priority", "Pri"),
    ("role", "Role"),
    ("assigneeAgentId", "Assignee"),
    ("leaseUntil", "Lease until"),
    ("title", "Title"),
)

STATUS_STYLE = {
    t.BACKLOG: "dim",
    t.TODO: "cyan",
    t.IN_PROGRESS: "yellow",
    t.IN_REVIEW: "magenta",
    t.BLOCKED: "red",
    t.DONE: "green",
    t.CANCELLED: "dim strike",
}


def _time(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


def _cell(key: str, value: Any) -> str:
    """A value as (escaped) table text: times readable, nested values as JSON."""
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and key.endswith(("At", "Until")):
        return _time(value)
    if isinstance(value, (dict, list)):
        return escape(json.dumps(value, ensure_ascii=False))
    return escape(str(value))


def _tasks_table(tasks: list[dict[str, Any]], title: str | None = None) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
    for _, header in TASK_COLUMNS:
        table.add_column(header, overflow="fold")
    for task in tasks:
        cells = [_cell(key, task.get(key)) for key, _ in TASK_COLUMNS]
        style = STATUS_STYLE.get(str(task.get("status")), "")
        cells[1] = f"[{style}]{cells[1]}[/]" if style else cells[1]
        table.add_row(*cells)
    return table


def _record_table(record: dict[str, Any], title: str | None = None) -> Table:
    table = Table(box=box.SIMPLE, show_header=False, title=title, title_justify="left")
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in record.items():
        if value not in (None, [], {}, ""):
            table.add_row(key, _cell(key, value))
    return table


def _rows_table(rows: list[dict[str, Any]], title: str | None = None) -> Table:
    columns: list[str] = []
    for row in rows:
        columns += [key for key in row if key not in columns]
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(_cell(column, row.get(column)) for column in columns))
    return table


def render(doc: Any, kind: str) -> None:
    console = Console()
    if kind == "idle":
        console.print("[bold]nothing claimable[/]")
        for reason in (doc.get("explain") or {}).get("reasons", []):
            console.print(f"  - {escape(reason)}")
    elif kind == "tasks":
        console.print(_tasks_table(doc) if doc else "[dim]no tasks[/]")
    elif kind == "view":
        console.print(_record_table(doc["task"], title=escape(str(doc["task"]["id"]))))
        for section in ("ancestors", "dependencies", "dependents"):
            if doc.get(section):
                console.print(_rows_table(doc[section], title=section))
        for section in ("comments", "executions", "workspaces"):
            if doc.get(section):
                console.print(_rows_table(doc[section], title=section))
    elif kind == "deps":
        for section in ("dependencies", "dependents"):
            console.print(_rows_table(doc[section], title=section) if doc[section] else "")
    elif kind == "reconcile":
        console.print(_tasks_table(doc["released"], title="released") if doc["released"] else "")
        console.print(
            f"timed-out executions: {len(doc['timedOutExecutions'])}, "
            f"purged events: {doc['purgedEvents']}"
        )
    elif kind == "plan":
        verdict = "[green]ok[/]" if doc["ok"] else f"[red]{len(doc['problems'])} problem(s)[/]"
        console.print(f"{doc['tasks']} task(s): {verdict}")
        for problem in doc["problems"]:
            console.print(f"  - {escape(problem['kind'])}: {escape(problem['message'])}")
    elif kind == "plan-applied":
        console.print(_tasks_table(doc["tasks"], title=f"created {doc['count']} task(s)"))
    elif isinstance(doc, list):
        console.print(_rows_table(doc) if doc else "[dim]nothing[/]")
    elif isinstance(doc, dict):
        console.print(_record_table(doc))
    else:
        console.print(str(doc))


def render_line(doc: dict[str, Any], kind: str) -> str:
    """One streamed event as a plain line: seq, time, kind, task, actor, data."""
    data = json.dumps(doc.get("data") or {}, ensure_ascii=False, separators=(",", ":"))
    return "  ".join(
        [
            str(doc.get("seq", "")),
            _time(doc["createdAt"]) if doc.get("createdAt") else "",
            str(doc.get("kind", "")),
            str(doc.get("taskId") or "-"),
            str(doc.get("actor") or "-"),
            data,
        ]
    )
