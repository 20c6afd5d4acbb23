"""The flow at a glance: `kanban stats`, `GET /api/board/stats` and the TUI's stats screen.

Every figure is one query of the store (`store/stats_sql.py`) over one window, `[now - since,
now)`, read together in one snapshot; this module parses the window and shapes the rows into the
document every surface prints. Definitions (cycle time, review wait, the human's share...):
docs/stats.md
"""

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from .actors import runtime_agent
from .budgets import daily_scopes, daily_standings
from .clock import span
from .errors import invalid_input
from .records import (
    DAY_MS,
    MICROS_PER_USD,
    BudgetStanding,
    Record,
)
from .store.base import Row, Tx
from .store.stats_sql import HOUR_MS, REVIEW_BUCKETS_MS

MINUTE_MS = 60_000
DEFAULT_WINDOW = "24h"
MAX_WINDOW_MS = 400 * DAY_MS
_UNITS = {"m": MINUTE_MS, "h": HOUR_MS, "d": DAY_MS, "w": 7 * DAY_MS}
_DURATION = re.compile(r"(\d{1,6})([mhdw])")


def parse_window(text: Any) -> int:
    """`90m`, `24h`, `7d`, `2w` as milliseconds (up to 400 days)."""
    match = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    window = int(match.group(1)) * _UNITS[match.group(2)] if match else 0
    if not 0 < window <= MAX_WINDOW_MS:
        raise invalid_input(
            f"since must be a duration such as 90m, 24h, 7d or 2w (up to 400d), not {text!r}",
            field="since",
        )
    return window


def _label(ms: int) -> str:
    if ms >= 2 * DAY_MS and ms % DAY_MS == 0:
        return f"{ms // DAY_MS}d"
    if ms >= HOUR_MS and ms % HOUR_MS == 0:
        return f"{ms // HOUR_MS}h"
    return f"{ms // MINUTE_MS}m"


def _bucket_labels() -> list[tuple[str, int, int | None]]:
    edges = REVIEW_BUCKETS_MS
    spans: list[tuple[str, int, int | None]] = [(f"<{_label(edges[0])}", 0, edges[0])]
    spans += [(f"{_label(low)}-{_label(high)}", low, high) for low, high in pairwise(edges)]
    spans.append((f">={_label(edges[-1])}", edges[-1], None))
    return spans


@dataclass(slots=True, eq=False, repr=False)
class Percentiles(Record):
    """A duration's distribution (nearest rank), in milliseconds; None when nothing counted."""

    count: int
    p50_ms: int | None = None
    p90_ms: int | None = None
    max_ms: int | None = None


@dataclass(slots=True, eq=False, repr=False)
class HourCount(Record):
    hour: int  # the hour's start, epoch ms
    done: int


@dataclass(slots=True, eq=False, repr=False)
class Throughput(Record):
    """`per_hour_avg` is `done` over `over_ms`: the window, or the part of it what was counted
    (the board, or the team) has existed when that is shorter (a 10-minute-old board's 300 done
    read as 12.5/h over 24 h)."""

    done: int
    per_hour_avg: float
    per_hour: list[HourCount]
    over_ms: int = 0


def rate_text(doc: dict[str, Any]) -> str:
    """A stats document's average as people read it, saying what it divides by: `12.5/h over
    24h`, or `1,800/h over its 10 min` on a board younger than the window."""
    through = doc["throughput"]
    avg = through["perHourAvg"]
    rate = f"{avg:,.0f}/h" if avg >= 100 else f"{round(avg, 1):g}/h"  # 1,527/h, 12.5/h, 0.2/h
    if 0 < avg < 0.05:  # one done in a day is 0.04/h: `0/h` beside `1 done` read as a fault
        rate = f"{avg:.1g}/h"
    if through["overMs"] < doc["until"] - doc["since"]:
        return f"{rate} over its {span(through['overMs'])}"
    return f"{rate} over {doc['window']}"


@dataclass(slots=True, eq=False, repr=False)
class WaitBucket(Record):
    label: str
    min_ms: int
    max_ms: int | None
    count: int


@dataclass(slots=True, eq=False, repr=False)
class ReviewWait(Record):
    """Time in review of the tasks done in the window that waited for a judge; `human_share` is
    the review time over the cycle time, summed over every task done in the window."""

    count: int
    p50_ms: int | None
    p90_ms: int | None
    max_ms: int | None
    human_share: float | None
    waiting_now: int
    oldest_waiting_ms: int | None
    distribution: list[WaitBucket]


@dataclass(slots=True, eq=False, repr=False)
class Leases(Record):
    expired: int
    reclaimed: int


@dataclass(slots=True, eq=False, repr=False)
class Gate(Record):
    runs: int
    passed: int
    failed: int
    with_debt: int
    pass_rate: float | None
    fail_rate: float | None


@dataclass(slots=True, eq=False, repr=False)
class CostBucket(Record):
    start: int  # the hour's or day's start, epoch ms
    runs: int
    cost_usd: float  # the runs closed in the part of the bucket inside the window
    tokens: int
    # today's only: the daily budget now set for the window's scope (an earlier day's limit is
    # not kept, so the day is not measured against today's). The whole day's limit, never
    # prorated to the window: `--since 1h` sets an hour's spend beside a day's limit.
    budget_usd: float | None = None  # released name, kept: the same as day_budget_usd
    budget_tokens: int | None = None  # released name, kept: the same as day_budget_tokens
    day_budget_usd: float | None = None
    day_budget_tokens: int | None = None
    # the part of the bucket inside the window, epoch ms, end exclusive: what cost_usd and
    # tokens count (the whole hour or day but at the window's two ends)
    counted_since: int = 0
    counted_until: int = 0


@dataclass(slots=True, eq=False, repr=False)
class AgentCost(Record):
    agent: str | None
    runs: int
    cost_usd: float
    tokens: int


@dataclass(slots=True, eq=False, repr=False)
class TaskCost(Record):
    task_id: str
    title: str
    cost_usd: float  # the task's own runs closed in the window
    tokens: int
    budget_usd: float | None
    budget_tokens: int | None
    subtree_cost_usd: float  # everything recorded against the task's budget, ever
    subtree_tokens: int


@dataclass(slots=True, eq=False, repr=False)
class Costs(Record):
    total_usd: float
    tokens: int
    runs: int
    per_hour: list[CostBucket]
    per_day: list[CostBucket]
    per_agent: list[AgentCost]
    per_task: list[TaskCost]
    # today's daily budgets of the window's scope (the team's with --team, else the board's),
    # against the whole day's spend whatever the window
    daily_budgets: list[BudgetStanding] = field(default_factory=list)


# The agents table's headings, for every surface that draws it (`kanban stats --format table`,
# the TUI's stats screen): `AgentRow` counts runs, so its figures say so. A bare "done" beside
# the tasks done read as tasks, and an agent whose task was rejected and redone showed 2.
RUNS_DONE = "runs done"
RUNS_FAILED = "runs failed"
AGENT_HEADINGS = ("agent", "claims", RUNS_DONE, RUNS_FAILED, "cost", "holding", "last seen")


@dataclass(slots=True, eq=False, repr=False)
class AgentRow(Record):
    """One agent's window: claims, its runs by outcome and their cost, what it holds now, and
    when it was last seen (its latest claim, run close or heartbeat)."""

    agent: str
    claims: int = 0
    runs_done: int = 0  # runs that succeeded
    runs_failed: int = 0  # runs that failed or timed out
    cost_usd: float = 0.0
    holding: int = 0
    last_seen: int | None = None
    sessions: int = 1  # the names this row counts: a runtime's sessions, folded (`by_runtime`)


@dataclass(slots=True, eq=False, repr=False)
class Agents(Record):
    active: int  # agents that claimed, closed a run or held a task in the window
    holding: int  # agents holding a task now
    table: list[AgentRow] = field(default_factory=list)


@dataclass(slots=True, eq=False, repr=False)
class Stats(Record):
    since: int
    until: int
    window: str
    team_id: str | None
    throughput: Throughput
    cycle_time: Percentiles
    review: ReviewWait
    leases: Leases
    gate: Gate
    cost: Costs
    agents: Agents


def _usd(value: Any) -> float:
    return round(float(value or 0), 6)


def _percentiles(row: Row) -> Percentiles:
    count = int(row["count"] or 0)
    if not count:
        return Percentiles(count=0)
    return Percentiles(
        count=count, p50_ms=int(row["p50"]), p90_ms=int(row["p90"]), max_ms=int(row["max"])
    )


def _hours(since: int, until: int) -> range:
    return range(since // HOUR_MS, (until - 1) // HOUR_MS + 1)


def _throughput(rows: list[Row], since: int, until: int, born: int | None) -> Throughput:
    """The average divides by the part of the window what was counted has existed (from the
    first task's creation, the team's first with a team), at least a minute: dividing a young
    board's (or team's) work by the whole window, or by the older board's age, understated its
    rate by the window over its age."""
    counts = {int(row["hour"]): int(row["done"]) for row in rows}
    hours = _hours(since, until)
    per_hour = [HourCount(hour=hour * HOUR_MS, done=counts.get(hour, 0)) for hour in hours]
    done = sum(counts.values())
    over = until - (since if born is None else max(since, min(born, until - MINUTE_MS)))
    return Throughput(
        done=done,
        per_hour_avg=round(done * HOUR_MS / over, 3),
        per_hour=per_hour,
        over_ms=over,
    )


def _review(row: Row, queue: Row, now: int) -> ReviewWait:
    spread = _percentiles(row)
    labels = _bucket_labels()
    distribution = [
        WaitBucket(label=label, min_ms=low, max_ms=high, count=int(row[f"b{n}"] or 0))
        for n, (label, low, high) in enumerate(labels)
    ]
    cycle = int(row["cycle"] or 0)
    oldest = queue["oldest"]
    return ReviewWait(
        count=spread.count,
        p50_ms=spread.p50_ms,
        p90_ms=spread.p90_ms,
        max_ms=spread.max_ms,
        human_share=round(int(row["waited"] or 0) / cycle, 4) if cycle > 0 else None,
        waiting_now=int(queue["count"] or 0),
        oldest_waiting_ms=now - int(oldest) if oldest is not None else None,
        distribution=distribution,
    )


def _gate(rows: list[Row]) -> Gate:
    counts = {row["verdict"]: int(row["count"]) for row in rows}
    runs = sum(counts.values())
    passed, failed = counts.get("pass", 0), counts.get("fail", 0)
    return Gate(
        runs=runs,
        passed=passed,
        failed=failed,
        with_debt=counts.get("completed_with_debt", 0),
        pass_rate=round(passed / runs, 4) if runs else None,
        fail_rate=round(failed / runs, 4) if runs else None,
    )


def _costs(
    tx: Tx, since: int, until: int, team: str | None, day: int, agent_rows: list[Row]
) -> Costs:
    by_hour = {int(row["hour"]): row for row in tx.cost_by_hour(since, until, team)}
    by_day = {int(row["day"]): row for row in tx.cost_by_day(since, until, team)}
    scope = daily_scopes(team)[-1]  # the team's budget with --team, else the board's
    limits = {row["scope"]: row for row in tx.daily_standings([scope], day)}.get(scope)

    def bucket(row: Row | None, start: int, span: int, today: bool) -> CostBucket:
        usd = limits["daily_usd"] if today and limits else None
        tokens = limits["daily_tokens"] if today and limits else None
        return CostBucket(
            start=start,
            runs=int(row["runs"]) if row else 0,
            cost_usd=_usd(row["cost_usd"]) if row else 0.0,
            tokens=int(row["tokens"] or 0) if row else 0,
            budget_usd=usd,
            budget_tokens=tokens,
            day_budget_usd=usd,
            day_budget_tokens=tokens,
            counted_since=max(start, since),
            counted_until=min(start + span, until),
        )

    days = range(since // DAY_MS, (until - 1) // DAY_MS + 1)
    per_agent = [
        AgentCost(
            agent=row["agent_id"],
            runs=int(row["runs"]),
            cost_usd=_usd(row["cost_usd"]),
            tokens=int(row["tokens"] or 0),
        )
        for row in agent_rows
    ]
    per_task = [
        TaskCost(
            task_id=row["task_id"],
            title=row["title"],
            cost_usd=_usd(row["cost_usd"]),
            tokens=int(row["tokens"] or 0),
            budget_usd=row["budget_usd"],
            budget_tokens=row["budget_tokens"],
            subtree_cost_usd=row["subtree_cost_micros"] / MICROS_PER_USD,
            subtree_tokens=int(row["subtree_tokens"]),
        )
        for row in tx.cost_by_task(since, until, team)
    ]
    return Costs(
        total_usd=_usd(sum(float(row["cost_usd"] or 0) for row in by_hour.values())),
        tokens=sum(int(row["tokens"] or 0) for row in by_hour.values()),
        runs=sum(int(row["runs"]) for row in by_hour.values()),
        per_hour=[
            bucket(by_hour.get(h), h * HOUR_MS, HOUR_MS, False) for h in _hours(since, until)
        ],
        per_day=[bucket(by_day.get(d), d * DAY_MS, DAY_MS, d == day) for d in days],
        per_agent=per_agent,
        per_task=per_task,
        daily_budgets=daily_standings([limits] if limits else [], day),
    )


def _agents(tx: Tx, since: int, until: int, team: str | None, agent_rows: list[Row]) -> Agents:
    table: dict[str, AgentRow] = {}

    def row_of(name: str) -> AgentRow:
        return table.setdefault(name, AgentRow(agent=name))

    def seen(agent: AgentRow, at: Any) -> None:
        if at is not None and (agent.last_seen is None or int(at) > agent.last_seen):
            agent.last_seen = int(at)

    for row in tx.claims_by_agent(since, until, team):
        if row["agent"] is not None:
            agent = row_of(row["agent"])
            agent.claims = int(row["claims"])
            seen(agent, row["last_at"])
    for row in agent_rows:
        if row["agent_id"] is not None:
            agent = row_of(row["agent_id"])
            agent.runs_done, agent.runs_failed = int(row["runs_done"]), int(row["runs_failed"])
            agent.cost_usd = _usd(row["cost_usd"])
            seen(agent, row["last_at"])
    holders = tx.holders_now(team)
    for row in holders:
        agent = row_of(row["agent"])
        agent.holding = int(row["holding"])
        seen(agent, row["last_at"])
    rows = sorted(table.values(), key=lambda a: (-(a.last_seen or 0), a.agent))
    return Agents(active=len(rows), holding=len(holders), table=rows)


def compute(tx: Tx, *, now: int, window_ms: int, team: str | None) -> Stats:
    """Every figure over the window that ends now (`now` included), one query each, in the
    caller's snapshot."""
    since, until = now - window_ms + 1, now + 1
    day = now // DAY_MS
    agent_rows = tx.cost_by_agent(since, until, team)  # the cost figure and the agents' table
    return Stats(
        since=since,
        until=until,
        window=_label(window_ms),
        team_id=team,
        throughput=_throughput(
            tx.throughput_by_hour(since, until, team), since, until, tx.born(team)
        ),
        cycle_time=_percentiles(tx.cycle_times(since, until, team)),
        review=_review(tx.review_waits(since, until, team), tx.review_queue(team), now),
        leases=Leases(**{k: int(v or 0) for k, v in _pairs(tx.lease_expiries(since, until, team))}),
        gate=_gate(tx.gate_verdicts(since, until, team)),
        cost=_costs(tx, since, until, team, day, agent_rows),
        agents=_agents(tx, since, until, team, agent_rows),
    )


def by_runtime(stats: Stats) -> Stats:
    """`stats` with the agents' rows (`agents.table`, `cost.perAgent`) of each runtime's sessions
    (`NAME-PID`, `kanban init --per-session`) folded into one row under NAME
    (`actors.runtime_agent`), summed, last seen at the latest; `sessions` says how many names a
    row counts. A session name lasts as long as its runtime runs, so per session a week's
    table held a row per restart."""
    folded: dict[str, AgentRow] = {}
    for row in stats.agents.table:
        name = runtime_agent(row.agent)
        into = folded.get(name)
        if into is None:
            folded[name] = replace(row, agent=name)
            continue
        into.claims += row.claims
        into.runs_done += row.runs_done
        into.runs_failed += row.runs_failed
        into.cost_usd = _usd(into.cost_usd + row.cost_usd)
        into.holding += row.holding
        into.sessions += row.sessions
        if row.last_seen is not None and (into.last_seen or 0) < row.last_seen:
            into.last_seen = row.last_seen
    rows = sorted(folded.values(), key=lambda a: (-(a.last_seen or 0), a.agent))
    stats.agents = Agents(
        active=len(rows), holding=sum(1 for row in rows if row.holding), table=rows
    )
    costs: dict[str | None, AgentCost] = {}
    for cost in stats.cost.per_agent:
        key = None if cost.agent is None else runtime_agent(cost.agent)
        into_cost = costs.setdefault(key, AgentCost(agent=key, runs=0, cost_usd=0.0, tokens=0))
        into_cost.runs += cost.runs
        into_cost.cost_usd = _usd(into_cost.cost_usd + cost.cost_usd)
        into_cost.tokens += cost.tokens
    stats.cost.per_agent = sorted(costs.values(), key=lambda c: (-c.cost_usd, c.agent or ""))
    return stats


def _pairs(row: Row) -> list[tuple[str, Any]]:
    return list(zip(row.keys(), row, strict=True))


def day_label(day_start_ms: int) -> str:
    """A UTC day as people read it: `2027-01-15`."""
    return datetime.fromtimestamp(day_start_ms / 1000, UTC).strftime("%Y-%m-%d")
