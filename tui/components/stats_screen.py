"""`S`: the flow at a glance. Throughput and cost per hour as sparklines, the cycle and review
times, the review-wait distribution, leases and the gate, today's daily budget and the tasks
nearest their budgets (the top of `kanban budget show`'s report), and a table of agents.

Live like the board: the reader thread computes the figures (`Board.stats`) on its own connection
when the board changes and posts them (`live.StatsUpdate`), so an idle board repaints nothing.
Times are wall-clock (`14:35:07`), never "3 min ago"; the one change time alone makes, the window
sliding past an hour, is a timer set to that hour. Everything an agent wrote (its name, a title)
is drawn inert, as `Text`, never markup. Read-only mode shows it too: it only reads.
"""

from functools import partial
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Sparkline, Static

from boardlib.budgets import amount, nearest, nearest_teams
from boardlib.clock import span
from boardlib.inert import inert
from boardlib.records import BUDGET_BOARD_DAILY, BudgetReport, BudgetStanding
from boardlib.stats import AGENT_HEADINGS, RUNS_DONE, RUNS_FAILED, Stats, rate_text
from boardlib.store.stats_sql import HOUR_MS

from .. import registry
from ..cards import BUDGET_WARN_AT, clock_text
from ..keymap import first_key, operator_keymap
from . import tcss
from .footer import HintFooter

if TYPE_CHECKING:
    from ..app import KanbanApp

WINDOWS = ("24h", "7d", "1h")  # `w` cycles through them
BARS = " ▁▂▃▄▅▆▇█"
AGENT_COLUMNS = AGENT_HEADINGS
# At a narrow width these go first (least telling first); the agent's name is never dropped.
DROPPABLE = ("last seen", "holding", "claims", RUNS_FAILED, RUNS_DONE, "cost")
CELL_PADDING = 2  # DataTable's cell padding, one space each side
NAME_KEPT = 24  # cells of an agent's name kept before any figure is dropped for it
BUDGET_TASKS_SHOWN = 3  # the tasks nearest their budgets, under today's daily budget
TITLE_KEPT = 32  # cells of a task's title beside its budget
# What Enter in the agents table is told (it said nothing): a row opens nothing, and a window no
# agent was seen in has no row.
ROW_OPENS_NOTHING = "Enter: an agent's row opens nothing."
NO_AGENT_ROWS = "Enter: no agent was seen in the last {window}, so the table has no row."


def agent_layout(widths: dict[str, int], room: int) -> dict[str, int]:
    """The columns to show and the width of each within `room` cells: every column at its
    content's width while they fit; when they do not, a long name is cut to `NAME_KEPT` first
    (one 80-character name took every figure off an 80-column screen), then the least
    important columns are dropped so the name keeps that much, cut only when it alone is
    wider."""
    shown = dict(widths)
    others = sum(w + CELL_PADDING for c, w in shown.items() if c != "agent")
    if shown["agent"] + CELL_PADDING + others > room:
        shown["agent"] = max(min(shown["agent"], NAME_KEPT), room - others - CELL_PADDING)
    for column in DROPPABLE:
        if sum(w + CELL_PADDING for w in shown.values()) <= room:
            break
        del shown[column]
    others = sum(w + CELL_PADDING for c, w in shown.items() if c != "agent")
    shown["agent"] = max(1, min(shown["agent"], room - others - CELL_PADDING))
    return shown


def _ms(value: int | None) -> str:
    return "-" if value is None else span(value)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def distribution_line(buckets: list[dict[str, Any]]) -> Text:
    """The review-wait buckets as one line: each label, a bar scaled to the fullest, its count."""
    top = max((bucket["count"] for bucket in buckets), default=0)
    line = Text()
    for bucket in buckets:
        count = bucket["count"]
        level = round(count / top * (len(BARS) - 1)) if top else 0
        bar = BARS[max(level, 1)] if count else BARS[1]
        line.append(f"{bucket['label']} ", style="dim")
        line.append(bar, style="bold")
        line.append(f"{count}  ")
    return line


def budget_state(standing: BudgetStanding) -> Text:
    """`$4.20 / $5.00` and how far it is, said plainly: `over budget` (red) once spent, the
    share in the warning colour from `BUDGET_WARN_AT`, else muted."""
    figures = f"{amount(standing.spent, standing.unit)} / {amount(standing.limit, standing.unit)}"
    if standing.exhausted:
        return Text.assemble((figures, "bold red"), "  ", ("over budget", "bold red"))
    tone = "yellow" if standing.fraction >= BUDGET_WARN_AT else "dim"
    return Text.assemble(figures, "  ", (f"{standing.fraction * 100:.0f}%", tone))


def budgets_text(stats: Stats, report: BudgetReport | None) -> Text:
    """Today's daily budget of the window's scope (the whole day's spend) and, over the whole
    board, the teams' most spent (`budgets.nearest_teams`: a spent one was missing), then the tasks
    nearest their budgets as the board's budget report ranks them (`budgets.nearest`): a parent
    whose children spent its budget is there, runs of its own or not. Titles and team names are
    agent text: drawn inert."""
    text = Text.assemble(("budget ", "bold"))
    daily = list(stats.cost.daily_budgets)
    if report is not None and not stats.team_id:  # the board's window: the teams' too
        daily += nearest_teams(report, BUDGET_TASKS_SHOWN)
    if not daily:
        text.append("no daily budget", style="dim")
    for n, standing in enumerate(daily):
        whose = "board" if standing.scope == BUDGET_BOARD_DAILY else f"team {standing.owner}"
        text.append("\n       " if n else "")
        text.append(f"{inert(whose)} today ")
        text.append_text(budget_state(standing))
    if report is None:
        return text
    for standing in nearest(report, BUDGET_TASKS_SHOWN):
        task_id = str(standing.owner)
        title = inert(report.titles.get(task_id, ""))
        if len(title) > TITLE_KEPT:
            title = title[: TITLE_KEPT - 1] + "…"
        text.append("\n       ")
        text.append(task_id, style="bold")
        text.append(f" {title}  ")
        text.append_text(budget_state(standing))
    return text


class AgentsTable(DataTable[Any]):
    """The agents table. Enter with no row selects nothing and Textual's table posts nothing:
    this one says it was pressed (`NoRow`)."""

    class NoRow(Message):
        """Enter was pressed on the table with no row."""

    def action_select_cursor(self) -> None:
        if not self.row_count:
            self.post_message(self.NoRow())
        super().action_select_cursor()


class StatsScreen(Screen[None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.STATS)
    AUTO_FOCUS = "DataTable"

    def __init__(self, window: str = WINDOWS[0]) -> None:
        super().__init__()
        self.window = window
        self.stats: Stats | None = None
        self.budgets: BudgetReport | None = None
        self._slide: Timer | None = None

    @property
    def kanban(self) -> "KanbanApp":
        return cast("KanbanApp", self.app)

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="stats-title")
        with Horizontal(classes="spark-row"):
            yield Static("done/h", classes="spark-label")
            yield Sparkline([0], id="throughput", summary_function=max)
            yield Static("", id="throughput-value", classes="spark-value")
        with Horizontal(classes="spark-row"):
            yield Static("cost/h", classes="spark-label")
            yield Sparkline([0], id="cost", summary_function=max)
            yield Static("", id="cost-value", classes="spark-value")
        with Vertical(id="figures"):
            yield Static("", id="times")
            yield Static("", id="review")
            yield Static("", id="health")
            yield Static("", id="budgets")
        yield AgentsTable(id="agents", cursor_type="row", zebra_stripes=True)
        yield HintFooter()

    def on_mount(self) -> None:
        self.kanban.reader.watch_stats(self.window)

    def on_unmount(self) -> None:
        if self._slide is not None:
            self._slide.stop()
        self.kanban.reader.watch_stats(None)

    def _title(self) -> Text:
        title = Text("Flow", style="bold")
        title.append(f" · the last {self.window}", style="")
        if self.stats is not None:
            title.append(
                f" · {clock_text(self.stats.until - 1, self.kanban.now_ms())}", style="dim"
            )
        else:
            title.append(" · reading…", style="dim")
        if self.kanban.read_only:
            title.append(" · read-only", style="dim")
        return title

    def show(
        self, stats: Stats | None, error: str | None = None, budgets: BudgetReport | None = None
    ) -> None:
        """Draw the figures and the budget report the reader read (or why it could not)."""
        if error is not None:
            self.query_one("#times", Static).update(Text(inert(error), style="bold red"))
            return
        if stats is None or stats.window != self.window:
            return  # the figures of the window before `w`, read before it was pressed
        self.stats, self.budgets = stats, budgets
        doc = stats.to_json()
        with self.app.batch_update():
            self.query_one("#stats-title", Static).update(self._title())
            through, cost = doc["throughput"], doc["cost"]
            self.query_one("#throughput", Sparkline).data = [
                bucket["done"] for bucket in through["perHour"]
            ] or [0]
            self.query_one("#throughput-value", Static).update(
                f"{through['done']} done\n{rate_text(doc)}"
            )
            self.query_one("#cost", Sparkline).data = [
                bucket["costUsd"] for bucket in cost["perHour"]
            ] or [0]
            self.query_one("#cost-value", Static).update(
                f"{amount(cost['totalUsd'], 'usd')} · {cost['runs']} runs"
            )
            cycle, review = doc["cycleTime"], doc["review"]
            leases, gate, agents = doc["leases"], doc["gate"], doc["agents"]
            waiting = f"{review['waitingNow']} waiting"
            if review["oldestWaitingMs"] is not None:
                waiting += f" ({span(review['oldestWaitingMs'])})"
            self.query_one("#times", Static).update(
                Text.assemble(
                    ("cycle  ", "bold"),
                    f"p50 {_ms(cycle['p50Ms'])} · p90 {_ms(cycle['p90Ms'])} · "
                    f"{cycle['count']} done\n",
                    ("review ", "bold"),
                    f"p50 {_ms(review['p50Ms'])} · p90 {_ms(review['p90Ms'])} · human "
                    f"{_share(review['humanShare'])} · {waiting}",
                )
            )
            self.query_one("#review", Static).update(
                Text.assemble(("wait   ", "bold"), distribution_line(review["distribution"]))
            )
            self.query_one("#health", Static).update(
                Text.assemble(
                    ("leases ", "bold"),
                    f"{leases['expired']} expired, {leases['reclaimed']} reclaimed · ",
                    ("gate ", "bold"),
                    f"pass {_share(gate['passRate'])} of {gate['runs']} · ",
                    ("agents ", "bold"),
                    f"{agents['active']} seen, {agents['holding']} holding",
                )
            )
            self.query_one("#budgets", Static).update(budgets_text(stats, budgets))
            self._fill_agents(agents["table"], stats.until)
        self._schedule_slide(stats.until)

    def on_resize(self) -> None:
        if self.stats is not None:
            self._fill_agents(self.stats.to_json()["agents"]["table"], self.stats.until)

    def _fill_agents(self, rows: list[dict[str, Any]], until: int) -> None:
        """The agents table with explicit column widths (measured here, not on the table's next
        idle: a table painted before then showed names cut to the header's width, `agent`)."""
        table = self.query_one(DataTable)
        cells = [self._agent_cells(row, until) for row in rows]
        widths = {
            column: max([len(column), *(line[i].cell_len for line in cells)])
            for i, column in enumerate(AGENT_COLUMNS)
        }
        room = table.size.width or max(self.app.size.width - 2, 20)  # its margin: 1 each side
        shown = agent_layout(widths, room - table.scrollbar_size_vertical)
        keep = [i for i, column in enumerate(AGENT_COLUMNS) if column in shown]
        table.clear(columns=True)
        for column in AGENT_COLUMNS:
            if column in shown:
                table.add_column(column, width=shown[column], key=column)
        for row, line in zip(rows, cells, strict=True):
            table.add_row(*(line[i] for i in keep), key=str(row["agent"]))

    @staticmethod
    def _agent_cells(row: dict[str, Any], until: int) -> list[Text]:
        seen = row["lastSeen"]
        return [
            Text(inert(str(row["agent"]))),
            Text(str(row["claims"]), justify="right"),
            Text(str(row["runsDone"]), justify="right"),
            Text(
                str(row["runsFailed"]),
                justify="right",
                style="red" if row["runsFailed"] else "",
            ),
            Text(amount(row["costUsd"], "usd"), justify="right"),
            Text(str(row["holding"]), justify="right"),
            Text(clock_text(seen, until) if seen is not None else "-"),
        ]

    def _schedule_slide(self, until: int) -> None:
        """The window slides past an hour at a known moment: recompute then, and only then."""
        if self._slide is not None:
            self._slide.stop()
        next_hour = (until // HOUR_MS + 1) * HOUR_MS
        delay = max((next_hour - self.kanban.now_ms()) / 1000, 1.0)
        self._slide = self.set_timer(delay, self.kanban.reader.poke_stats)

    def keys_hint(self) -> str:
        """What a key the stats screen has no use for is told (the app says it,
        `_key_without_use`): `h` and `G` did nothing, in silence."""
        return f"not a stats key. {self._keys_line()}"

    def _keys_line(self) -> str:
        first = partial(first_key, remapped=operator_keymap(self.app))
        return (
            f"Here {first('stats.window')} changes the window, {first('stats.refresh')} reads "
            f"the figures again, up/down move in the agents, {first('stats.close')} goes back, "
            f"{first('app.help')} lists every key."
        )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on an agent's row opens nothing: it says so (it was silent)."""
        event.stop()
        self.notify(f"{ROW_OPENS_NOTHING} {self._keys_line()}", severity="warning", timeout=4)

    def on_agents_table_no_row(self, event: AgentsTable.NoRow) -> None:
        """Enter on the empty table: it says why there is no row (it was silent)."""
        event.stop()
        why = NO_AGENT_ROWS.format(window=self.window)
        self.notify(f"{why} {self._keys_line()}", severity="warning", timeout=4)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_window(self) -> None:
        self.window = WINDOWS[(WINDOWS.index(self.window) + 1) % len(WINDOWS)]
        self.stats = None  # the title says "reading…" until the window's figures come
        self.query_one("#stats-title", Static).update(self._title())
        self.kanban.reader.watch_stats(self.window)

    def action_refresh(self) -> None:
        self.kanban.reader.poke_stats()
