"""`kanban stats --format table` and `kanban budget show --format table`: the figures drawn for
people with rich (imported only on that path). Agent names and titles go through
`boardlib.inert` into `Text` cells, never into markup."""

from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from boardlib.budgets import amount
from boardlib.clock import span
from boardlib.inert import inert
from boardlib.records import BUDGET_BOARD_DAILY, BUDGET_TASK, DAY_MS
from boardlib.stats import AGENT_HEADINGS, day_label, rate_text

BARS = " ▁▂▃▄▅▆▇█"
WARN_AT = 0.8  # the share of a budget past which it is shown as a warning


def sparkline(values: list[float]) -> str:
    """Values as one line of block characters, scaled to the largest."""
    top = max(values, default=0)
    if top <= 0:
        return BARS[1] * len(values)
    return "".join(BARS[max(1, round(value / top * (len(BARS) - 1)))] for value in values)


def _count(count: int, noun: str) -> str:
    """`1 task`, `2 tasks`, `12,400 tokens`: a figure read as words agrees with its noun."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _ms(value: Any) -> str:
    return "-" if value is None else span(int(value))


def _share(value: Any) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _spend(spent: float, limit: Any, unit: str = "usd") -> Text:
    """`$2.40 / $2.00 spent`: a spent budget says so in words, as a table piped to a file or read
    without colour shows no red (nothing told it apart)."""
    if limit is None:
        return Text(amount(spent, unit))
    shown = f"{amount(spent, unit)} / {amount(limit, unit)}"
    if spent >= limit:
        return Text(f"{shown} spent", style="bold red")
    return Text(shown, style="yellow" if limit and spent >= WARN_AT * limit else "")


def _figures(doc: dict[str, Any]) -> Table:
    table = Table(box=box.SIMPLE, show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    through = doc["throughput"]
    per_hour = [bucket["done"] for bucket in through["perHour"]]
    table.add_row("done", f"{through['done']} ({rate_text(doc)})  {sparkline(per_hour)}")
    cycle, review = doc["cycleTime"], doc["review"]
    table.add_row(
        "cycle claim->done", f"p50 {_ms(cycle['p50Ms'])}  p90 {_ms(cycle['p90Ms'])}  "
        f"({_count(cycle['count'], 'task')})"
    )  # fmt: skip
    table.add_row(
        "waiting in review",
        f"p50 {_ms(review['p50Ms'])}  p90 {_ms(review['p90Ms'])}  human share "
        f"{_share(review['humanShare'])}  now {review['waitingNow']}"
        + (f" (oldest {_ms(review['oldestWaitingMs'])})" if review["oldestWaitingMs"] else ""),
    )
    leases, gate = doc["leases"], doc["gate"]
    table.add_row("leases", f"{leases['expired']} expired, {leases['reclaimed']} reclaimed")
    table.add_row(
        "gate",
        f"{_count(gate['runs'], 'run')}: pass {_share(gate['passRate'])}, "
        f"fail {_share(gate['failRate'])}",
    )
    cost = doc["cost"]
    hourly = [bucket["costUsd"] for bucket in cost["perHour"]]
    table.add_row(
        "cost",
        f"{amount(cost['totalUsd'], 'usd')} over {_count(cost['runs'], 'run')}, "
        f"{_count(cost['tokens'], 'token')}  {sparkline(hourly)}",
    )
    agents = doc["agents"]
    table.add_row("agents", f"{agents['active']} active, {agents['holding']} holding a task")
    return table


def _sessions(count: int) -> str:
    """A folded runtime's row says how many session names it counts (`stats.by_runtime`)."""
    return f" ({count} sessions)" if count > 1 else ""


def _agents(rows: list[dict[str, Any]], now: int) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=Text("agents", style="bold"), title_justify="left")
    for header in AGENT_HEADINGS:
        table.add_column(header, justify="left" if header == "agent" else "right")
    for row in rows:
        seen = row["lastSeen"]
        table.add_row(
            Text(inert(str(row["agent"])) + _sessions(row.get("sessions", 1))),
            str(row["claims"]),
            str(row["runsDone"]),
            str(row["runsFailed"]),
            amount(row["costUsd"], "usd"),
            str(row["holding"]),
            f"{span(now - seen)} ago" if seen is not None else "-",
        )
    return table


def _days(days: list[dict[str, Any]]) -> Table:
    """The window's runs by UTC day: a day the window starts or ends in counts only its part of
    it, so no daily limit is set beside them (`_daily_budgets` says that)."""
    title = Text("cost per day, in the window", style="bold")
    table = Table(box=box.SIMPLE_HEAD, title=title)
    for header in ("day (UTC)", "runs", "cost", "tokens"):
        table.add_column(header, justify="right")
    for day in days:
        table.add_row(
            day_label(day["start"]),
            str(day["runs"]),
            amount(day["costUsd"], "usd"),
            amount(day["tokens"], "tokens"),
        )
    return table


def _owner(row: dict[str, Any]) -> str:
    return "board" if row["scope"] == BUDGET_BOARD_DAILY else f"team {row['owner']}"


def _daily_budgets(rows: list[dict[str, Any]]) -> Table:
    """Today's daily budgets against the whole UTC day's spend (`dailyBudgets`), whatever the
    window: with `--since 1h` the window's share of today beside the day's limit undercounted."""
    today = day_label(int(rows[0]["day"]) * DAY_MS)
    title = Text("daily budget, all of today", style="bold")
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
    for header in ("budget of", f"spent {today} UTC, whole day / limit"):
        table.add_column(header)
    for row in rows:
        table.add_row(Text(inert(_owner(row))), _spend(row["spent"], row["limit"], row["unit"]))
    return table


def _title(title: str) -> Text:
    """A title in a row: one line, cut with `…` where the width ends, in the one column left to
    give way (the others are kept whole). Folded, a 300-character title took nine lines."""
    return Text(inert(title), no_wrap=True, overflow="ellipsis")


def _tasks(rows: list[dict[str, Any]]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=Text("costliest tasks", style="bold"))
    for header in ("task", "title", "cost", "subtree / budget"):
        table.add_column(header, overflow="fold", no_wrap=header != "title")
    for row in rows:
        table.add_row(
            Text(inert(row["taskId"])),
            _title(row["title"]),
            amount(row["costUsd"], "usd"),
            _spend(row["subtreeCostUsd"], row["budgetUsd"]),
        )
    return table


def render_stats(console: Console, doc: dict[str, Any]) -> None:
    team = f" of team {inert(doc['teamId'])}" if doc.get("teamId") else ""
    console.print(Text(f"the last {doc['window']}{team}", style="bold"))
    parts: list[Any] = [_figures(doc)]
    if doc["agents"]["table"]:
        parts.append(_agents(doc["agents"]["table"], doc["until"]))
    parts.append(_days(doc["cost"]["perDay"]))
    if doc["cost"]["dailyBudgets"]:
        parts.append(_daily_budgets(doc["cost"]["dailyBudgets"]))
    if doc["cost"]["perTask"]:
        parts.append(_tasks(doc["cost"]["perTask"]))
    console.print(Group(*parts))


def _standings(rows: list[dict[str, Any]], title: str, report: dict[str, Any]) -> Table:
    """Budgets and their spend, a task's with its title and status (the report's `titles`,
    `statuses`): an id alone did not say which task, nor that a spent one is blocked."""
    table = Table(box=box.SIMPLE_HEAD, title=Text(title, style="bold"), title_justify="left")
    named = "titles" in report and any(row["scope"] == BUDGET_TASK for row in rows)
    for header in ("budget of", "title", "status") if named else ("budget of",):
        table.add_column(header, overflow="fold", no_wrap=named and header != "title")
    table.add_column("spent / limit", no_wrap=named)
    for row in rows:
        owner = str(row["owner"]) if row["scope"] == BUDGET_TASK else _owner(row)
        cells = [Text(inert(owner))]
        if named:
            titles, statuses = report["titles"], report["statuses"]
            cells += [_title(str(titles.get(owner, ""))), Text(inert(str(statuses.get(owner, ""))))]
        table.add_row(*cells, _spend(row["spent"], row["limit"], row["unit"]))
    return table


def render_budgets(console: Console, doc: Any) -> None:
    if isinstance(doc, list):
        console.print(_standings(doc, "budgets over the task", {}) if doc else "[dim]no budget[/]")
        return
    today = f"daily, {day_label(doc['day'] * DAY_MS)} UTC"
    for rows, title, none in (
        (doc["daily"], today, "no daily budget (kanban budget set --daily-usd N)"),
        (doc["tasks"], "tasks", "no task has a budget"),
    ):
        console.print(_standings(rows, title, doc) if rows else Text(f"{title}: {none}"))
