"""`--format table`: the same documents, drawn for people with rich. Imported only on that path.

Every value comes from the board, so every value is agent text: it goes through
`boardlib.inert` (no escape sequence, control character or bidi override reaches the terminal)
and into a `rich.text.Text` cell, never into markup (a `str` cell would be parsed as markup, and
`rich.markup.escape` leaves control characters alone). Only this module's own words use markup.
"""

import re
import time
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from boardlib import transitions as t
from boardlib.attention import LANDING, VERIFYING, landing_by, verifying_since
from boardlib.budgets import amount, closed_over
from boardlib.inert import inert
from boardlib.narration import narrate
from boardlib.records import (
    BUDGET_USD,
    EXECUTION_FAILED,
    EXECUTION_RUNNING,
    EXECUTION_SUCCEEDED,
    EXECUTION_TIMED_OUT,
    MICROS_PER_USD,
    Event,
)

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


def _time(ms: int, *, seconds: bool = True) -> str:
    return time.strftime(
        "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M", time.localtime(ms / 1000)
    )


# The fields written as several lines; any other cell (a title, a name, an id) is one line, its
# line breaks drawn as ␤, so a title cannot draw a row of its own under the real one.
MULTILINE_KEYS = frozenset(
    {"description", "body", "summary", "notes", "stdoutTail", "stderrTail", "diff"}
)
# Mappings of a file's name to its text (`workspace detail`): each file drawn as its lines under
# its name. As one line, `TASK.md: # TASK-20: ...␤␤desc...` folded into a block nobody could read.
FILE_MAPS = frozenset({"sorFiles"})
TIME_SUFFIXES = ("At", "Until", "Since")  # epoch milliseconds, shown as local times
# the same, in nested values (a verdict's reviews and attempts), and a prune's cut (drawn as
# `beforeMs 1796536448482`)
TIME_KEYS = frozenset({"at", "beforeMs"})
MONEY = ("Usd", "CostMicros")  # dollars, or whole micro-dollars: drawn as `budgets.amount`
INDENT = "  "  # a nested value's lines under its key


def _text(value: Any, style: str = "", *, multiline: bool = False) -> Text:
    return Text(inert(str(value), multiline=multiline), style=style)


PATH_SEPARATORS = "/\\"


class _Path(Text):
    """A path (or any one word with separators: a branch, an owner token) wrapped after its
    separators, not in the middle of a name: a worktree's path broke as `test_/ignored`. A part
    longer than the width is folded as any word is."""

    def _parts(self) -> list[str]:
        parts, start = [], 0
        for at, char in enumerate(self.plain):
            if char in PATH_SEPARATORS:
                parts.append(self.plain[start : at + 1])
                start = at + 1
        return [*parts, self.plain[start:]] if start < len(self.plain) else parts

    def __rich_measure__(self, console: Console, options: Any) -> Any:
        from rich.measure import Measurement

        longest = max((cell_len(part) for part in self._parts()), default=0)
        return Measurement(longest, self.cell_len)

    def __rich_console__(self, console: Console, options: Any) -> Any:
        width, lines = max(1, options.max_width), [""]
        for part in self._parts():
            if lines[-1] and cell_len(lines[-1] + part) > width:
                lines.append("")
            lines[-1] += part
        yield from Text("\n".join(lines), style=self.style, overflow="fold").__rich_console__(
            console, options
        )


def _path_like(text: str) -> bool:
    return any(char in PATH_SEPARATORS for char in text) and not any(c.isspace() for c in text)


def _label(key: str) -> str:
    """A key as a label: an amount kept in micro-dollars is drawn in dollars (`_scalar`), so its
    label does not say micros (`subtreeCostMicros $2.28` read as micros)."""
    return key.removesuffix("Micros") if key.endswith(MONEY[1]) else key


# A flag in words: `landed True` was Python's, read on an operator's terminal.
YES_NO = {True: "yes", False: "no"}


def _scalar(key: str, value: Any, *, seconds: bool = True) -> str | None:
    """A flag, a time or an amount in words, by its key; None for any other value."""
    if isinstance(value, bool):
        return YES_NO[value]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and isinstance(value, int) and (key.endswith(TIME_SUFFIXES) or key in TIME_KEYS):
        return _time(value, seconds=seconds)
    if number and key.endswith(MONEY):
        usd = value / MICROS_PER_USD if key.endswith("Micros") else value
        return amount(usd, BUDGET_USD)  # one rule for every amount
    return None


def _flat(value: Any) -> bool:
    """Whether a value is drawn on one line: anything but a mapping or a list holding either."""
    if isinstance(value, list):
        return not any(isinstance(inner, (dict, list)) for inner in value)
    return not isinstance(value, dict)


def _lines_of(parent: str, key: str, value: Any) -> list[str] | None:
    """A nested text of several lines (a file's, a summary's) as its inert lines, else None."""
    if not isinstance(value, str) or not (parent in FILE_MAPS or key in MULTILINE_KEYS):
        return None
    text = inert(value, multiline=True).rstrip("\n")  # a file's last line break is no line
    return text.split("\n") if "\n" in text or parent in FILE_MAPS else None


def _nested(key: str, value: Any, *, seconds: bool = True) -> list[str]:
    """A nested value as inert lines for people: a mapping as `key: value` lines (empty values
    left out, a nested one indented under its key), a list of plain values joined with commas,
    a list of mappings as `- ` items. `task view --format table` drew a verdict as one long JSON
    blob. Every leaf is one line, so agent text cannot draw a line of its own."""
    if isinstance(value, dict):
        lines = []
        for name, inner in value.items():
            kept = _says_something(str(name), inner)  # `dropped: 0` said nothing here either
            shown = _nested(str(name), inner, seconds=seconds) if kept else []
            if not shown:
                continue
            label = inert(_label(str(name)))  # `subtreeCost: $0.00`, not `...Micros: $0.00`
            text = _lines_of(key, str(name), inner)
            if text:
                lines += [f"{label}:", *(INDENT + line for line in text)]
            elif not _flat(inner):
                lines += [f"{label}:", *(INDENT + line for line in shown)]
            else:
                lines.append(f"{label}: {shown[0]}")
        return lines
    if isinstance(value, list):
        if _flat(value):
            return [", ".join(_nested(key, inner, seconds=seconds)[0] for inner in value)]
        lines = []
        for inner in value:
            first, *rest = _nested(key, inner, seconds=seconds) or [""]
            lines += [f"- {first}", *(INDENT + line for line in rest)]
        return lines
    if value is None:
        return ["none"]
    said = _scalar(key, value, seconds=seconds)
    return [said if said is not None else inert(str(value))]


def _cell(key: str, value: Any, style: str = "", *, seconds: bool = True) -> Text:
    """A value as an inert table cell: times readable (to the minute in a list, where a row has
    several and 80 columns must hold them), nested values as lines (`_nested`); `--format json`
    keeps them as they are."""
    if value is None:
        return Text("")
    if isinstance(value, (dict, list)):
        return Text("\n".join(_nested(key, value, seconds=seconds)), style=style)
    said = _scalar(key, value, seconds=seconds)
    if said is not None:
        return Text(said, style=style)
    cell = _text(value, style, multiline=key in MULTILINE_KEYS)
    return _Path(cell.plain, style=style) if _path_like(cell.plain) else cell


def _title(value: Any) -> Text | None:
    return None if value is None else Text(inert(str(value)), style="bold")


# A task table's columns kept on one line (an id, a status, a time), and the ones given up first,
# in this order, when the terminal is too narrow for them and a readable title.
TASK_WHOLE = frozenset({"id", "status", "priority", "leaseUntil"})
TASK_DROPPED_FIRST = ("leaseUntil", "role", "priority", "assigneeAgentId")
TITLE_MIN = 30


def _room_for(
    shown: list[tuple[str, str]],
    cells: dict[str, list[Text]],
    wide: str,
    minimum: int,
    dropped_first: tuple[str, ...],
    width: int,
) -> list[tuple[str, str]]:
    """The columns of a table whose `wide` column says the most (a title, what happened): while
    it would get fewer than `minimum` cells (or its longest cell, if shorter) in `width`, the
    columns of `dropped_first` are left out, in that order. Columns are two cells apart."""

    def left_for_wide() -> int:
        used = sum(
            max(len(header), *(cell.cell_len for cell in cells[key]))
            for key, header in shown
            if key != wide
        )
        return width - used - 2 * (len(shown) - 1)

    longest = max((cell.cell_len for cell in cells[wide]), default=0)
    for key in dropped_first:
        if left_for_wide() >= min(minimum, longest):
            break
        shown = [column for column in shown if column[0] != key]
    return shown


RULE = "\u2500"
GAP = "   "  # between columns: a pad, rich's SIMPLE_HEAD rule (a space), a pad


class _Lines:
    """A table of one line a row, drawn as rich's SIMPLE_HEAD table drew it (a blank line, the
    headers, a rule, the rows, a blank line; columns three cells apart) but cut and padded here:
    rich measured and wrapped every cell of 500 tasks for lines that never wrap, 0.3 s of `task
    list`. The `wide` column gets what the others leave, cut with `…`; a column too wide for
    the terminal is cut too (the widest first, never one of `whole`), so a row stays one line.
    `under`: a row's words on a line of their own below it, cut with `…` (a run's summary)."""

    def __init__(
        self,
        shown: list[tuple[str, str]],
        cells: dict[str, list[Text]],
        *,
        wide: str | None,
        whole: frozenset[str] = frozenset(),
        title: Text | None = None,
        under: list[Text | None] | None = None,
    ) -> None:
        self.shown, self.cells, self.wide, self.whole = shown, cells, wide, whole
        self.title, self.under = title, under
        self.count = len(cells[shown[0][0]]) if shown else 0

    def _widths(self, width: int) -> list[int]:
        widths = [
            max(len(header), *(cell.cell_len for cell in self.cells[key]))
            for key, header in self.shown
        ]
        left = width - 2 - len(GAP) * (len(self.shown) - 1) - sum(widths)
        for n, (key, header) in enumerate(self.shown):
            if key == self.wide:  # what the others leave, at least its header
                widths[n] = max(len(header), min(widths[n], widths[n] + left))
        over = 2 + len(GAP) * (len(self.shown) - 1) + sum(widths) - width
        cuttable = [n for n, (key, _) in enumerate(self.shown) if key not in self.whole]
        while over > 0 and cuttable:  # the widest that may be cut, down to its header
            n = max(cuttable, key=lambda at: widths[at] - len(self.shown[at][1]))
            cut = min(over, widths[n] - len(self.shown[n][1]))
            if cut <= 0:
                break
            widths[n] -= cut
            over -= cut
        return widths

    def __rich_console__(self, console: Console, options: Any) -> Any:
        from rich.segment import Segment

        widths = self._widths(options.max_width)
        total = 2 + len(GAP) * (len(widths) - 1) + sum(widths)
        blank, gap, edge = Segment(" " * total), Segment(GAP), Segment(" ")

        styles: dict[Any, Any] = {}

        def line(cells: list[Text]) -> Any:
            yield edge
            for n, cell in enumerate(cells):
                if n:
                    yield gap
                if cell.cell_len > widths[n]:
                    cell = cell.copy()
                    cell.truncate(widths[n], overflow="ellipsis")
                if cell.style not in styles:  # a cell's own style, under its spans' (rich's way)
                    styles[cell.style] = console.get_style(cell.style, default="")
                style = styles[cell.style]
                yield from Segment.apply_style(cell.render(console), style)
                if widths[n] > cell.cell_len:
                    yield Segment(" " * (widths[n] - cell.cell_len), style)
            yield edge
            yield Segment.line()

        if self.title is not None:
            said = self.title.copy()
            said.truncate(max(total, options.max_width), overflow="ellipsis")
            said.pad_right(total - said.cell_len)
            yield from Text().join([said]).render(console)
            yield Segment.line()
        yield from (blank, Segment.line())
        yield from line([Text(header, style="bold") for _, header in self.shown])
        yield from (edge, Segment(RULE * (total - 2)), edge, Segment.line())
        for row in range(self.count):
            yield from line([self.cells[key][row] for key, _ in self.shown])
            words = self.under[row] if self.under else None
            if words is not None:
                shown = words.copy()
                shown.truncate(max(options.max_width - len(UNDER), 1), overflow="ellipsis")
                yield Segment(UNDER)
                yield from Text().join([shown]).render(console)
                yield Segment.line()
        yield from (blank, Segment.line())


UNDER = " " * 4  # a row's words under it, indented past its id's first cells


# A dropped task's mark in a task table's status cell (`task list --dropped` mixes them with the
# rest, and nothing told them apart). Not in the title, which is an agent's words and may say
# anything, `[dropped]` included.
DROPPED_MARK = " (dropped)"


class _Tasks:
    """A task table that gives the title the width: at 80 columns the status broke mid-word
    (`in_progres`/`s`) and a title got ten cells while empty columns kept theirs. Columns empty in
    every row are left out; then, while the title would get fewer than TITLE_MIN cells, the least
    needed columns (`TASK_DROPPED_FIRST`). Each task is one line, its title cut with `…` where
    the width ends: folded, a 300-character title took nine lines and a list of 500 tasks over a
    thousand. The JSON has every field; `task view` shows one task whole. A dropped task says so
    after its status."""

    def __init__(self, tasks: list[dict[str, Any]], title: str | None) -> None:
        self.tasks = tasks
        self.title = title
        self.cells = {
            key: [
                _cell(key, task.get(key), self._style(task, key), seconds=False) for task in tasks
            ]
            for key, _ in TASK_COLUMNS
        }
        for row, task in enumerate(tasks):
            if task.get("dropped"):  # beside the status, where no agent's words are
                self.cells["status"][row].append(DROPPED_MARK, style="dim")

    @staticmethod
    def _style(task: dict[str, Any], key: str) -> str:
        return STATUS_STYLE.get(str(task.get("status")), "") if key == "status" else ""

    def _shown(self, width: int) -> list[tuple[str, str]]:
        shown = [
            (key, header)
            for key, header in TASK_COLUMNS
            if key in ("id", "title")
            or any(_says_something(key, task.get(key)) for task in self.tasks)
        ]
        return _room_for(shown, self.cells, "title", TITLE_MIN, TASK_DROPPED_FIRST, width)

    def __rich_console__(self, console: Console, options: Any) -> Any:
        shown = self._shown(options.max_width)
        yield _Lines(shown, self.cells, wide="title", whole=TASK_WHOLE, title=_title(self.title))


def _tasks_table(tasks: list[dict[str, Any]], title: str | None = None) -> _Tasks:
    return _Tasks(tasks, title)


def _record_table(record: dict[str, Any], title: str | None = None) -> Table:
    table = Table(box=box.SIMPLE, show_header=False, title=_title(title), title_justify="left")
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in record.items():
        if not _says_something(key, value):
            continue
        cell: Text | Group
        if key == SPENDING_CLOSE and isinstance(value, dict) and "taskId" in record:
            cell = _text(closed_over(value, str(record["taskId"])))  # in words, in dollars
        elif key == "task" and _is_task(value) and len(record) > 1:
            cell = _task_line(value)
        elif isinstance(value, (dict, list)):
            cell = _indented(_nested(key, value))
        else:
            cell = _cell(key, value)
        table.add_row(_text(_label(key)), cell)
    return table


def _indented(lines: list[str]) -> Group:
    """A nested value's lines, each wrapped under its own indent: as one text, a long line went
    on at the cell's edge, under its parent's key (`init.sh`'s comments read as keys)."""
    shown = []
    for line in lines:
        text = line.lstrip(" ")
        shown.append(Padding(Text(text), (0, 0, 0, len(line) - len(text))))
    return Group(*shown)


def _is_task(value: Any) -> bool:
    return isinstance(value, dict) and {"id", "status", "title"} <= value.keys()


def _task_line(task: dict[str, Any]) -> Text:
    """The task a result moved, as one line beside what happened to it: `task land --format
    table` drew its 45 fields first (the verdict nested in it), and the outcome (landed, the
    commit) scrolled off under them. `task view ID` shows the task whole."""
    line = Text.assemble(
        _text(task["id"], "bold"), "  ", _text(task["status"], STATUS_STYLE.get(task["status"], ""))
    )
    return line.append_text(Text("  ")).append_text(_text(task["title"]))


EMPTY: tuple[Any, ...] = (None, "", [], {})
# A close's budget it spent (`ClosedExecution`): its JSON drawn as it stands said `limit: 1.0`
# beside a `$1.25` cost and not that the task is blocked.
SPENDING_CLOSE = "budgetExceeded"
# The board's bookkeeping, not a fact for people: a table leaves it out, the JSON keeps it (`task
# exec list --format table` showed `recoveryTombstone 0`).
INTERNAL_KEYS = frozenset({"recoveryTombstone"})
# Flags a table shows only when set: `dropped 0` on every task said nothing in `task view` and `task
# get`; a dropped task says `dropped 1`. The JSON keeps both.
SHOWN_WHEN_SET = frozenset({"dropped"})


def _says_something(key: str, value: Any) -> bool:
    """Whether a table shows `key`'s `value`: not empty, not bookkeeping, not an unset flag."""
    if value in EMPTY or key in INTERNAL_KEYS:
        return False
    return key not in SHOWN_WHEN_SET or bool(value)


_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _header(key: str) -> str:
    """`lastSeq` -> `last seq`: a header that wraps between words, never inside one."""
    return _HUMP.sub(" ", key).lower()


class _Rows:
    """Rows of any list: a table when its columns fit the terminal, else one block per row
    (its keys down the side), so no column is squeezed to nothing or a header broken inside a
    word (at 80 columns `consumers list` folded its headers and times, and a run table with four
    times kept whole gave status and cost no width at all)."""

    CELL_MAX = 30  # the widest a cell is reckoned when judging whether the table fits

    def __init__(
        self,
        rows: list[dict[str, Any]],
        title: str | None,
        dropped_first: tuple[str, ...] = (),
        whole: frozenset[str] = frozenset(),
    ) -> None:
        self.rows = rows
        self.whole = whole  # columns kept on one line: the others fold first
        self.title = title
        self.dropped_first = dropped_first
        self.columns: list[str] = []
        for row in rows:  # a key empty in every row says nothing in a table (the JSON keeps it)
            self.columns += [k for k in row if k not in self.columns and _says_something(k, row[k])]
        self.every_column = list(self.columns)

    def _fits(self, width: int) -> bool:
        needed = 3 * max(len(self.columns) - 1, 0) + 2  # a gap: padding, rule, padding; 2 edges
        for column in self.columns:
            words = cell_len(_header(_label(column)))  # rich keeps a header whole if it can
            cells = (_cell(column, row.get(column), seconds=False).cell_len for row in self.rows)
            needed += max(words, min(max(cells, default=0), self.CELL_MAX))
        return needed <= width

    def _table(self) -> Table:
        table = Table(
            box=box.SIMPLE_HEAD, title=_title(self.title), title_justify="left", pad_edge=False
        )
        for column in self.columns:
            table.add_column(
                _text(_header(_label(column))), overflow="fold", no_wrap=column in self.whole
            )
        for row in self.rows:
            table.add_row(
                *(_cell(column, row.get(column), seconds=False) for column in self.columns)
            )
        return table

    def __rich_console__(self, console: Console, options: Any) -> Any:
        self.columns = list(self.every_column)
        for key in self.dropped_first:  # the least needed go first, while the rest would not fit
            if self._fits(options.max_width):
                break
            self.columns = [column for column in self.columns if column != key]
        if self._fits(options.max_width):
            yield self._table()
            return
        self.columns = list(self.every_column)  # one block per row: every field, down the side
        if self.title:
            yield _title(self.title)
        first = self.columns[0] if self.columns else None
        for row in self.rows:
            shown = {key: row.get(key) for key in self.columns}
            yield _record_table(shown, title=None if first is None else str(row.get(first)))


RUN_COLUMNS = (
    ("id", "ID"),
    ("status", "Status"),
    ("agentId", "Agent"),
    ("executorType", "Executor"),
    ("startedAt", "Started"),
    ("tokens", "Tokens"),
    ("costUsd", "Cost"),
)
RUN_STYLE = {
    EXECUTION_RUNNING: "yellow",
    EXECUTION_SUCCEEDED: "green",
    EXECUTION_FAILED: "red",
    EXECUTION_TIMED_OUT: "red",
}
# What a run table gives up first where its line would not fit; its id and status stay.
RUN_DROPPED_FIRST = ("executorType", "tokens", "startedAt", "agentId", "costUsd")
RUN_WHOLE = frozenset({"id", "status", "startedAt", "costUsd"})
# The words under a run, the first it has: what went wrong, what it did, why it ran.
RUN_WORDS = ("error", "summary", "runReason")


def _run_words(run: dict[str, Any]) -> Text | None:
    for key in RUN_WORDS:
        if run.get(key):
            return Text.assemble((f"{_header(key)}: ", "dim"), inert(str(run[key])))
    return None


def _runs_table(runs: list[dict[str, Any]], title: str | None = None) -> "_Runs":
    return _Runs(runs, title)


class _Runs:
    """A task's runs, a line each (its id, status, agent, executor, start, tokens in and out,
    cost) and its words on the line under it, cut with `…`: drawn as any list, a run was a block
    of 13 to 20 lines at 80 columns. `exec show ID` and the JSON have every field."""

    def __init__(self, runs: list[dict[str, Any]], title: str | None) -> None:
        self.title = title
        self.cells: dict[str, list[Text]] = {key: [] for key, _ in RUN_COLUMNS}
        for run in runs:
            run = {**run, "startedAt": run.get("startedAt") or run.get("createdAt")}
            counts = [run.get(key) for key in ("inputTokens", "outputTokens")]
            run["tokens"] = sum(n for n in counts if n) if any(counts) else None
            for key, _ in RUN_COLUMNS:
                style = RUN_STYLE.get(str(run.get("status")), "") if key == "status" else ""
                self.cells[key].append(_cell(key, run.get(key), style, seconds=False))
        self.under = [_run_words(run) for run in runs]

    def __rich_console__(self, console: Console, options: Any) -> Any:
        shown = [
            (key, header)
            for key, header in RUN_COLUMNS
            if key in ("id", "status") or any(cell.cell_len for cell in self.cells[key])
        ]
        for key in RUN_DROPPED_FIRST:  # the least needed go first, while the line is too wide
            widths = (
                max(len(header), *(cell.cell_len for cell in self.cells[name]))
                for name, header in shown
            )
            if 2 + len(GAP) * (len(shown) - 1) + sum(widths) <= options.max_width:
                break
            shown = [column for column in shown if column[0] != key]
        title = _title(self.title)
        yield _Lines(shown, self.cells, wide=None, whole=RUN_WHOLE, title=title, under=self.under)


def _rows_table(rows: list[dict[str, Any]], title: str | None = None) -> _Rows:
    return _Rows(rows, title)


# What `consumers list` gives up first when its table would not fit: a held consumer with an owner
# fell to one block per row at 120 columns, though its name, cursor, failures, hold and owner fit;
# the error and the times are in the JSON.
CONSUMER_DROPPED_FIRST = ("lastError", "createdAt", "updatedAt", "ownerUntil", "failingSeq")
CONSUMER_WHOLE = frozenset({"name", "owner"})  # on one line: what rows are told apart by


def _consumer_row(row: dict[str, Any]) -> dict[str, Any]:
    """The owner as `pid 1234 here` (`processes.token_words`), not its whole token."""
    from boardlib.processes import token_words

    owner = row.get("owner")
    return {**row, "owner": token_words(owner)} if isinstance(owner, str) else row


def _event(doc: dict[str, Any]) -> Event:
    return Event(
        seq=int(doc.get("seq") or 0),
        kind=str(doc.get("kind") or ""),
        created_at=int(doc.get("createdAt") or 0),
        task_id=doc.get("taskId"),
        actor=doc.get("actor"),
        data=doc.get("data") or {},
    )


EVENT_COLUMNS = (
    ("seq", "Seq"),
    ("createdAt", "Time"),
    ("kind", "Kind"),
    ("taskId", "Task"),
    ("what", "What happened"),
)
# What the log gives up first when the words would be too narrow: the kind (the words say it),
# then the task (the words name it), then the seq (the JSON has it for a cursor). At 80 columns
# the words keep the seq and the time beside them.
EVENT_DROPPED_FIRST = ("kind", "taskId", "seq")
WHAT_MIN = 48


class _Events:
    """The log in words (`boardlib.narration`), with the fields a script would grep beside. The
    words get the width: at 80 columns "What happened" had 26 cells, each event folded over three
    lines, while the kind and the task said again what the words say. The other columns are kept
    whole; the least needed go first (`EVENT_DROPPED_FIRST`) while the words would get fewer than
    WHAT_MIN cells."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.cells: dict[str, list[Text]] = {
            "seq": [Text(str(doc.get("seq", ""))) for doc in events],
            "createdAt": [
                Text(_time(doc["createdAt"]) if doc.get("createdAt") else "") for doc in events
            ],
            "kind": [_text(doc.get("kind") or "", "dim") for doc in events],
            "taskId": [_text(doc.get("taskId") or "-") for doc in events],
            "what": [_text(narrate(_event(doc))) for doc in events],
        }
        self.count = len(events)

    def __rich_console__(self, console: Console, options: Any) -> Any:
        shown = _room_for(
            list(EVENT_COLUMNS), self.cells, "what", WHAT_MIN, EVENT_DROPPED_FIRST,
            options.max_width,
        )  # fmt: skip
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for key, header in shown:
            table.add_column(header, overflow="fold", no_wrap=key != "what")
        for row in range(self.count):
            table.add_row(*(self.cells[key][row] for key, _ in shown))
        yield table


def _events_table(events: list[dict[str, Any]]) -> _Events:
    return _Events(events)


def _why(item: dict[str, Any]) -> str:
    """An item's why without the words its kind says already (`attention.short_why`): the table
    shows the kind beside it."""
    from boardlib.attention import short_why

    return short_why(str(item["kind"]), str(item["why"]))


class _Inbox:
    """Oldest first: how long each has waited, the task and its title, its kind, why, and the
    key action. A table while Why gets `WHY_MIN` cells; narrower, each item on a line (its title
    last, cut with `…` where the terminal ends) and its why on one line under it, cut with `…`
    (at 80 columns Why got 26 cells and a budget's item took 7 lines; then 3, a blank between
    items), and an item's command (a spent budget's raise) whole on the line under that, as the
    cut took it. Without the title an operator read `TASK-3 review approve` and looked it up."""

    HEADERS = ("Waiting", "Task", "Title", "Kind", "Why", "Action")
    WHY, TITLE = 4, 2
    WHY_MIN = 60
    TITLE_MAX, TITLE_MIN = 30, 16  # a title column's cells: the why says more

    def __init__(self, doc: dict[str, Any]) -> None:
        from boardlib.clock import span

        self.title = Text(f"{doc['count']} need you", style="bold")
        self.rows: list[tuple[Text, ...]] = []
        self.commands: list[Text | None] = []  # a spent budget's raise: its own line at 80
        for item in doc["items"]:
            command = item.get("command")
            self.commands.append(_text(command, "cyan") if command else None)
            waited = max(0, int(doc["now"]) - int(item["since"]))
            task = item.get("taskId") or item.get("consumer") or ""
            self.rows.append((
                Text(span(waited) if waited >= 1000 else "now"),
                _text(task, "bold"),
                _text(item.get("title") or ""),
                _text(item["kind"]),
                _text(_why(item)),
                _text(item["action"], "cyan"),
            ))  # fmt: skip

    def _widths(self) -> list[int]:
        widths = [
            max([len(header), *(row[n].cell_len for row in self.rows)])
            for n, header in enumerate(self.HEADERS)
        ]
        widths[self.TITLE] = min(widths[self.TITLE], self.TITLE_MAX)
        return widths

    def __rich_console__(self, console: Console, options: Any) -> Any:
        widths = self._widths()
        # what Why leaves the title once Why has its due: a column's 2 pads and the rule after
        # it, Why's and the edges (2 a column, and no rule, folded `from bob` at 80 columns)
        beside = sum(width + 3 for n, width in enumerate(widths) if n != self.WHY) + 4
        titled = options.max_width - beside + widths[self.TITLE]
        titled -= min(self.WHY_MIN, widths[self.WHY])
        if titled >= min(self.TITLE_MIN, widths[self.TITLE]):
            table = Table(box=box.SIMPLE_HEAD, title=self.title)
            for n, header in enumerate(self.HEADERS):
                if n == self.TITLE:
                    cut = max(min(titled, widths[n]), len(header))
                    table.add_column(header, overflow="ellipsis", no_wrap=True, max_width=cut)
                else:
                    table.add_column(header, overflow="fold")
            for row in self.rows:
                table.add_row(*row)
            yield table
            return
        yield self.title
        # Why goes under each item; the title last, in what the others leave
        shown = [n for n in range(len(self.HEADERS)) if n not in (self.WHY, self.TITLE)]
        left = options.max_width - 2 - sum(widths[n] + 2 for n in shown)

        def line(*cells: Text) -> Padding:
            grid = Table.grid(padding=(0, 2, 0, 0))
            for n in shown:
                grid.add_column(width=widths[n], no_wrap=True)
            grid.add_column(max_width=max(left, 1), no_wrap=True, overflow="ellipsis")
            grid.add_row(*cells)
            return Padding(grid, (0, 0, 0, 2))

        yield line(*(Text(self.HEADERS[n], style="bold") for n in [*shown, self.TITLE]))
        for row, command in zip(self.rows, self.commands, strict=True):
            yield line(*(row[n] for n in [*shown, self.TITLE]))
            why = row[self.WHY].copy()  # one line, cut: `task why ID` and the JSON say it whole
            why.truncate(max(options.max_width - 4, 1), overflow="ellipsis")
            yield Padding(why, (0, 0, 0, 4))
            if command is not None:  # the why's end, cut above: what the operator runs, whole
                yield Padding(command, (0, 0, 0, 4))


class _Comments:
    """A task's comments as a thread: who, when and where (a review comment's file and line) on
    one line, the words under it. As rows they were a block of six lines each at 80 columns (the
    task's id again, `authorType`), a review read as a form."""

    def __init__(self, comments: list[dict[str, Any]]) -> None:
        self.comments = comments

    def __rich_console__(self, console: Console, options: Any) -> Any:
        yield Text("comments", style="bold")
        for comment in self.comments:
            who = comment.get("authorAgentId") or (
                "operator" if comment.get("authorType") == "user" else comment.get("authorType")
            )
            head = Text.assemble(
                "  ", _text(comment.get("id") or "", "bold"), "  ", _text(who or "", "cyan")
            )
            if comment.get("createdAt"):
                head.append("  " + _time(int(comment["createdAt"])), style="dim")
            if comment.get("path"):
                where = str(comment["path"]) + (
                    f":{comment['line']}" if comment.get("line") else ""
                )
                head.append_text(Text("  ")).append_text(_text(where, "magenta"))
                if comment.get("side") and comment["side"] != "new":
                    head.append_text(_text(f" ({comment['side']})", "dim"))
            yield head
            yield Padding(_text(comment.get("body") or "", multiline=True), (0, 0, 1, 6))


def render(doc: Any, kind: str) -> None:
    console = Console()
    if kind == "idle":
        console.print("[bold]nothing claimable[/]")
        if doc.get("heldByYou"):
            yours = ", ".join(str(task_id) for task_id in doc["heldByYou"])
            console.print(Text.assemble("  - you still hold ", inert(yours), ": go on with it"))
        for reason in (doc.get("explain") or {}).get("reasons", []):
            console.print(Text.assemble("  - ", inert(str(reason))))
    elif kind == "preview":
        chosen = doc.get("wouldClaim")
        console.print(
            Text.assemble("would claim ", inert(str(chosen["id"])), ": ", inert(chosen["title"]))
            if chosen
            else "[bold]nothing claimable[/]"
        )
        for reason in doc.get("reasons", []):
            console.print(Text.assemble("  - ", inert(str(reason))))
    elif kind == "tasks":
        console.print(_tasks_table(doc) if doc else "[dim]no tasks[/]")
    elif kind == "task_page":
        console.print(_tasks_table(doc["tasks"]) if doc["tasks"] else "[dim]no tasks[/]")
        if doc["nextCursor"] is not None:
            console.print(Text.assemble("next page: --cursor ", inert(str(doc["nextCursor"]))))
    elif kind == "executions":
        console.print(_runs_table(doc) if doc else "[dim]no runs[/]")
    elif kind == "events":
        console.print(_events_table(doc) if doc else "[dim]no events[/]")
    elif kind == "view":
        console.print(_record_table(doc["task"], title=str(doc["task"]["id"])))
        if doc.get("verifyingSince") is not None:
            console.print(Text(verifying_since(_time(int(doc["verifyingSince"]))), style="magenta"))
        if doc.get("landing") is not None:
            landing = doc["landing"]
            said = landing_by(inert(str(landing["lander"])), _time(int(landing["since"])))
            console.print(Text(said, style="magenta"))
        if doc.get("wontLand"):  # an operator's decision, kept in the audit, not the task row
            console.print(_record_table(doc["wontLand"], title="won't land"))
        for section in ("ancestors", "dependencies", "dependents"):
            if doc.get(section):
                console.print(_rows_table(doc[section], title=section))
        if doc.get("comments"):
            console.print(_Comments(doc["comments"]))
        if doc.get("executions"):
            console.print(_runs_table(doc["executions"], title="executions"))
        if doc.get("workspaces"):
            console.print(_rows_table(doc["workspaces"], title="workspaces"))
    elif kind == "deps":
        for section in ("dependencies", "dependents"):
            console.print(
                _rows_table(doc[section], title=section)
                if doc[section]
                else Text(f"no {section}", style="dim")
            )
    elif kind == "reconcile":
        released = doc["released"]  # none: said, not a blank line above the counts
        console.print(
            _tasks_table(released, title="released") if released else "no lease to release"
        )
        console.print(
            f"timed-out executions: {len(doc['timedOutExecutions'])}, "
            f"purged events: {doc['purgedEvents']}"
        )
    elif kind == "plan":
        verdict = "[green]ok[/]" if doc["ok"] else f"[red]{len(doc['problems'])} problem(s)[/]"
        console.print(f"{doc['tasks']} task(s): {verdict}")
        for problem in doc["problems"]:
            console.print(_bullet(inert(str(problem["kind"])), ": ", inert(problem["message"])))
        for link in doc.get("unplannedLinks", []):
            console.print(_bullet("unplanned link: ", inert(link["message"])))
    elif kind == "stats":
        from .stats_table import render_stats

        render_stats(console, doc)
    elif kind in ("budgets", "budget-report"):
        from .stats_table import render_budgets

        render_budgets(console, doc)
    elif kind == "inbox":
        console.print(_Inbox(doc) if doc["items"] else "[dim]nothing needs you[/]")
        if doc.get("verifying"):
            console.print(_in_flight_line(doc["verifying"], VERIFYING))
        if doc.get("landing"):
            console.print(_in_flight_line(doc["landing"], LANDING))
    elif kind == "plan-applied":
        console.print(Text.assemble("plan ", inert(str(doc["plan"])), ": ", inert(doc["summary"])))
        if doc["tasks"]:
            console.print(_tasks_table(doc["tasks"], title=f"created {doc['count']} task(s)"))
        for change in doc["updated"]:
            console.print(_bullet("changed: ", inert(change["message"])))
    elif kind == "land":
        console.print(Text(inert(land_headline(doc)), style="bold"))
        rest = {key: value for key, value in doc.items() if key not in LAND_SAID}
        console.print(_record_table({k: v for k, v in rest.items() if v is not False}))
    elif kind == "consumers":
        rows = [_consumer_row(row) for row in doc]
        shown = _Rows(rows, None, CONSUMER_DROPPED_FIRST, CONSUMER_WHOLE)
        console.print(shown if doc else "[dim]no consumers[/]")
    elif isinstance(doc, list):
        console.print(_rows_table(doc) if doc else "[dim]nothing[/]")
    elif isinstance(doc, dict):
        console.print(_record_table(doc))
    else:
        console.print(_text(doc))


def _in_flight_line(runs: list[dict[str, Any]], word: str) -> Text:
    """`1 task verifying: TASK-4`: left out of the inbox while their gate judges them
    (`attention.gate_since`) or, `1 task landing`, a landing of them is under way
    (`attention.landings`), so an empty inbox does not read as nothing in flight."""
    count = len(runs)
    ids = ", ".join(str(run["taskId"]) for run in runs)
    return Text.assemble(f"{count} task{'' if count == 1 else 's'} {word}: ", inert(ids))


# A landing's flags its headline says (`land_headline`): a dry run began `landed False`. Its
# other flags are drawn only when set (`archived no` on a dry run said nothing).
LAND_SAID = frozenset({"landed", "dryRun", "alreadyOn"})


def land_headline(doc: dict[str, Any]) -> str:
    """What a landing did, or a dry run found, first: `would land on main@abc1234 (squash, 1
    file, verified)`, `landed on main as def5678`. A dry run that would be refused is refused:
    its one JSON line on stderr says why, and at a terminal a line on stdout too
    (`land.refused_line`)."""
    into, commit = str(doc.get("into")), str(doc.get("commit") or "?")[:7]
    if doc.get("alreadyOn"):
        held = f"{into}@{commit} has its change already"
        if doc.get("dryRun"):
            return f"would be recorded landed: {held}; nothing moves"
        return f"recorded landed: {held}; nothing moved"
    if not doc.get("dryRun"):
        return f"landed on {into} as {commit}" + (" (unverified)" if doc.get("unverified") else "")
    files = len(doc.get("files") or ())
    checked = "unverified: no verify command" if doc.get("unverified") else "verified"
    tip = str(doc.get("baseBefore") or "?")[:7]
    return (
        f"would land on {into}@{tip} ({doc.get('strategy')}, {files} file"
        f"{'' if files == 1 else 's'}, {checked}); nothing was changed"
    )


def _bullet(*parts: str) -> Table:
    """` - text`, its wrapped lines under the text, not at the edge (a plan's problems read as one
    ragged block at 80 columns)."""
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("  - ", Text.assemble(*parts))
    return grid


def render_line(doc: dict[str, Any], kind: str) -> str:
    """One streamed event as a plain, inert line: seq, time, kind, task, what happened."""
    return inert(
        "  ".join(
            [
                str(doc.get("seq", "")),
                _time(doc["createdAt"]) if doc.get("createdAt") else "",
                str(doc.get("kind", "")),
                str(doc.get("taskId") or "-"),
                narrate(_event(doc)),
            ]
        )
    )
