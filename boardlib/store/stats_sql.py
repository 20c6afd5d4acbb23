"""The flow figures' statements (`kanban stats`), shared by both stores: one query per figure,
each over one window of time and served by an index of migration 3, so a figure costs what its
window holds, not what the board holds.

Percentiles are nearest-rank (the smallest value whose rank is at least p% of the count), computed
by a window function inside the query: no row leaves the database but the answer. The rules (what
a window is, how the figures read) live in `boardlib.stats`.
"""

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..records import DAY_MS, RUN_COUNTED_AT
from .literals import (
    DONE,
    IN_PROGRESS,
    IN_REVIEW,
    LEASE_EXPIRED_EVENT,
    RUN_FAILED,
    RUN_SUCCEEDED,
    TASK_CLAIMED_EVENT,
    VERIFICATION_EVENT,
)

if TYPE_CHECKING:  # base.py builds `Tx` on `StatsTx`, so the import goes one way only
    from .base import Row
    from .queries import Params

HOUR_MS = 3_600_000
# The review-wait distribution's upper bucket edges (the last bucket is open): 5 min, 15 min,
# 1 h, 4 h, 1 day.
REVIEW_BUCKETS_MS: tuple[int, ...] = (300_000, 900_000, 3_600_000, 14_400_000, DAY_MS)
TOP_TASKS = 10

_RUN_TOKENS = (
    "(COALESCE(e.input_tokens, 0) + COALESCE(e.output_tokens, 0) + COALESCE(e.cache_read, 0) "
    "+ COALESCE(e.cache_write, 0))"
)
_DONE_IN_WINDOW = (
    f"status = {DONE} AND completed_at >= :since AND completed_at < :until AND dropped = 0"
)
_RUN_AT = f"e.{RUN_COUNTED_AT}"  # a run counts when its cost does: budgets.run_day
_RUNS_IN_WINDOW = f"{_RUN_AT} >= :since AND {_RUN_AT} < :until"
_EVENTS_IN_WINDOW = "created_at >= :since AND created_at < :until"


def _task_of_team(column: str, team: str | None) -> str:
    return (
        f" AND {column} IN (SELECT id FROM tasks WHERE team_id = :team)" if team is not None else ""
    )


def _percentiles(value: str) -> str:
    return (
        "COUNT(*) AS count, "
        f"MIN(CASE WHEN n * 100 >= c * 50 THEN {value} END) AS p50, "
        f"MIN(CASE WHEN n * 100 >= c * 90 THEN {value} END) AS p90, "
        f"MAX({value}) AS max"
    )


class StatsTx(Protocol):
    """The flow figures' part of `base.Tx`: each takes the window `[since, until)` in epoch ms
    and an optional team."""

    def throughput_by_hour(self, since: int, until: int, team: str | None) -> "list[Row]":
        """`hour` (epoch hours) and `done`: tasks that reached done in each hour."""
        ...

    def cycle_times(self, since: int, until: int, team: str | None) -> "Row":
        """Claim -> done of the tasks done in the window: `count`, `p50`, `p90`, `max` (ms)."""
        ...

    def review_waits(self, since: int, until: int, team: str | None) -> "Row":
        """Time in review of the tasks done in the window that waited: `count`, `p50`, `p90`,
        `max`, `b0`..`b5` (the distribution), `waited` and `cycle` (summed ms, for the share)."""
        ...

    def review_queue(self, team: str | None) -> "Row":
        """Tasks in review now: `count` and `oldest` (when the longest wait began)."""
        ...

    def lease_expiries(self, since: int, until: int, team: str | None) -> "Row":
        """`expired` leases in the window and how many of those tasks were `reclaimed` since."""
        ...

    def gate_verdicts(self, since: int, until: int, team: str | None) -> "list[Row]":
        """`verdict` and `count` of the verification verdicts recorded in the window."""
        ...

    def cost_by_agent(self, since: int, until: int, team: str | None) -> "list[Row]":
        """Per agent, the runs closed in the window: `agent_id`, `runs`, `runs_done`, `runs_failed`,
        `cost_usd`, `tokens`, `last_at`."""
        ...

    def cost_by_task(self, since: int, until: int, team: str | None) -> "list[Row]":
        """The costliest tasks of the window with their budgets and subtree spend."""
        ...

    def cost_by_hour(self, since: int, until: int, team: str | None) -> "list[Row]":
        """`hour`, `runs`, `cost_usd`, `tokens` of the runs closed in each hour."""
        ...

    def cost_by_day(self, since: int, until: int, team: str | None) -> "list[Row]":
        """`day`, `runs`, `cost_usd`, `tokens` of the runs closed in each UTC day."""
        ...

    def claims_by_agent(self, since: int, until: int, team: str | None) -> "list[Row]":
        """`agent`, `claims` and `last_at` of the claims in the window."""
        ...

    def holders_now(self, team: str | None) -> "list[Row]":
        """`agent`, `holding` (tasks in progress) and `last_at` (the latest heartbeat)."""
        ...

    def born(self, team: str | None) -> int | None:
        """When the board's (or the team's) first task was created (epoch ms), None when there
        is none."""
        ...


class StatsStatements(ABC):
    """`StatsTx` in SQL both stores run as written; `JSON_TEXT` (a text field of a JSON column)
    and `TEAM_TERM` (a team's column kept off its index, where the store needs it said) are the
    dialect pieces."""

    JSON_TEXT: ClassVar[str]  # "... {column} ... {key} ...": the field as text
    TEAM_TERM: ClassVar[str] = "{column}"  # the column as a team filter compares it

    def _team(self, column: str, team: str | None) -> str:
        """The team filter of a figure read from one of the tasks' window indexes, or nothing (two
        statement texts, never a NULL test on a parameter, which Postgres cannot type)."""
        if team is None:
            return ""
        return f" AND {self.TEAM_TERM.format(column=column)} = :team"

    @abstractmethod
    def _fetchall(self, query: str, params: "Params" = ()) -> "list[Row]": ...

    @abstractmethod
    def _fetchone(self, query: str, params: "Params" = ()) -> "Row | None": ...

    def _one_row(self, query: str, params: dict[str, Any]) -> "Row":
        row = self._fetchone(query, params)
        assert row is not None  # an aggregate without GROUP BY returns one row
        return row

    @staticmethod
    def _window(since: int, until: int, team: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {"since": since, "until": until}
        if team is not None:
            params["team"] = team
        return params

    def throughput_by_hour(self, since: int, until: int, team: str | None) -> "list[Row]":
        return self._fetchall(
            f"SELECT completed_at / {HOUR_MS} AS hour, COUNT(*) AS done FROM tasks "
            f"WHERE {_DONE_IN_WINDOW}{self._team('team_id', team)} "
            f"GROUP BY completed_at / {HOUR_MS} ORDER BY hour",
            self._window(since, until, team),
        )

    def cycle_times(self, since: int, until: int, team: str | None) -> "Row":
        return self._one_row(
            "WITH r AS (SELECT completed_at - first_claimed_at AS v, "
            "ROW_NUMBER() OVER (ORDER BY completed_at - first_claimed_at) AS n, "
            f"COUNT(*) OVER () AS c FROM tasks WHERE {_DONE_IN_WINDOW}"
            f"{self._team('team_id', team)} AND first_claimed_at IS NOT NULL) "
            f"SELECT {_percentiles('v')} FROM r",
            self._window(since, until, team),
        )

    def review_waits(self, since: int, until: int, team: str | None) -> "Row":
        edges = REVIEW_BUCKETS_MS
        buckets = ", ".join(
            f"SUM(CASE WHEN w >= {low} AND w < {high} THEN 1 ELSE 0 END) AS b{n}"
            for n, (low, high) in enumerate(zip((0, *edges), edges, strict=False))
        )
        buckets += f", SUM(CASE WHEN w >= {edges[-1]} THEN 1 ELSE 0 END) AS b{len(edges)}"
        return self._one_row(
            "WITH d AS (SELECT review_wait_ms AS w, completed_at - first_claimed_at AS cyc "
            f"FROM tasks WHERE {_DONE_IN_WINDOW}{self._team('team_id', team)}), "
            "r AS (SELECT w, ROW_NUMBER() OVER (ORDER BY w) AS n, COUNT(*) OVER () AS c "
            "FROM d WHERE w > 0) "
            f"SELECT {_percentiles('w')}, {buckets}, "
            "(SELECT SUM(w) FROM d WHERE cyc IS NOT NULL) AS waited, "
            "(SELECT SUM(cyc) FROM d WHERE cyc IS NOT NULL) AS cycle FROM r",
            self._window(since, until, team),
        )

    def review_queue(self, team: str | None) -> "Row":
        return self._one_row(
            "SELECT COUNT(*) AS count, MIN(review_entered_at) AS oldest FROM tasks "
            f"WHERE status = {IN_REVIEW} AND dropped = 0{self._team('team_id', team)}",
            {"team": team} if team is not None else {},
        )

    def lease_expiries(self, since: int, until: int, team: str | None) -> "Row":
        return self._one_row(
            "SELECT COUNT(*) AS expired, COALESCE(SUM(CASE WHEN EXISTS (SELECT 1 FROM events c "
            f"WHERE c.task_id = e.task_id AND c.kind = {TASK_CLAIMED_EVENT} AND c.seq > e.seq) "
            "THEN 1 ELSE 0 END), 0) AS reclaimed FROM events e "
            f"WHERE e.kind = {LEASE_EXPIRED_EVENT} AND e.created_at >= :since "
            f"AND e.created_at < :until{_task_of_team('e.task_id', team)}",
            self._window(since, until, team),
        )

    def gate_verdicts(self, since: int, until: int, team: str | None) -> "list[Row]":
        verdict = self.JSON_TEXT.format(column="data", key="status")
        return self._fetchall(
            f"SELECT {verdict} AS verdict, COUNT(*) AS count FROM events "
            f"WHERE kind = {VERIFICATION_EVENT} AND {_EVENTS_IN_WINDOW}"
            f"{_task_of_team('task_id', team)} GROUP BY {verdict} ORDER BY verdict",
            self._window(since, until, team),
        )

    def _runs_from(self, team: str | None) -> str:
        # Not `_team`: the team's tasks (`tasks_team`), then their runs, cost far less than
        # every run of the window joined to its task.
        if team is None:
            return f"FROM execution_processes e WHERE {_RUNS_IN_WINDOW}"
        return (
            "FROM execution_processes e JOIN tasks t ON t.id = e.task_id "
            f"WHERE {_RUNS_IN_WINDOW} AND t.team_id = :team"
        )

    def cost_by_agent(self, since: int, until: int, team: str | None) -> "list[Row]":
        return self._fetchall(
            "SELECT e.agent_id, COUNT(*) AS runs, "
            f"SUM(CASE WHEN e.status = {RUN_SUCCEEDED} THEN 1 ELSE 0 END) AS runs_done, "
            f"SUM(CASE WHEN e.status IN ({RUN_FAILED}) THEN 1 ELSE 0 END) AS runs_failed, "
            f"SUM(COALESCE(e.cost_usd, 0)) AS cost_usd, SUM({_RUN_TOKENS}) AS tokens, "
            f"MAX(e.completed_at) AS last_at {self._runs_from(team)} "
            "GROUP BY e.agent_id ORDER BY cost_usd DESC, e.agent_id",
            self._window(since, until, team),
        )

    def cost_by_task(self, since: int, until: int, team: str | None) -> "list[Row]":
        # The ten costliest first, from the covering index alone; only those ten read their task.
        return self._fetchall(
            "WITH top AS (SELECT e.task_id, SUM(COALESCE(e.cost_usd, 0)) AS cost_usd, "
            f"SUM({_RUN_TOKENS}) AS tokens FROM execution_processes e WHERE {_RUNS_IN_WINDOW}"
            f"{_task_of_team('e.task_id', team)} GROUP BY e.task_id "
            f"ORDER BY cost_usd DESC, e.task_id LIMIT {TOP_TASKS}) "
            "SELECT top.task_id, t.title, top.cost_usd, top.tokens, t.budget_usd, "
            "t.budget_tokens, t.subtree_cost_micros, t.subtree_tokens "
            "FROM top JOIN tasks t ON t.id = top.task_id ORDER BY top.cost_usd DESC, top.task_id",
            self._window(since, until, team),
        )

    def _cost_by(self, size_ms: int, name: str, since: int, until: int, team: str | None) -> Any:
        return self._fetchall(
            f"SELECT {_RUN_AT} / {size_ms} AS {name}, COUNT(*) AS runs, "
            f"SUM(COALESCE(e.cost_usd, 0)) AS cost_usd, SUM({_RUN_TOKENS}) AS tokens "
            f"{self._runs_from(team)} GROUP BY {_RUN_AT} / {size_ms} ORDER BY {name}",
            self._window(since, until, team),
        )

    def cost_by_hour(self, since: int, until: int, team: str | None) -> "list[Row]":
        rows: list[Row] = self._cost_by(HOUR_MS, "hour", since, until, team)
        return rows

    def cost_by_day(self, since: int, until: int, team: str | None) -> "list[Row]":
        rows: list[Row] = self._cost_by(DAY_MS, "day", since, until, team)
        return rows

    def claims_by_agent(self, since: int, until: int, team: str | None) -> "list[Row]":
        return self._fetchall(
            "SELECT actor AS agent, COUNT(*) AS claims, MAX(created_at) AS last_at FROM events "
            f"WHERE kind = {TASK_CLAIMED_EVENT} AND {_EVENTS_IN_WINDOW}"
            f"{_task_of_team('task_id', team)} GROUP BY actor ORDER BY actor",
            self._window(since, until, team),
        )

    def holders_now(self, team: str | None) -> "list[Row]":
        return self._fetchall(
            "SELECT assignee_agent_id AS agent, COUNT(*) AS holding, "
            f"MAX(last_heartbeat_at) AS last_at FROM tasks WHERE status = {IN_PROGRESS} "
            f"AND assignee_agent_id IS NOT NULL{self._team('team_id', team)} "
            "GROUP BY assignee_agent_id ORDER BY assignee_agent_id",
            {"team": team} if team is not None else {},
        )

    def born(self, team: str | None) -> int | None:
        # The board's first task is a root task (a subtask's parent is older): `tasks_root_created`
        # answers MIN from its first entry. A team's may be a subtask: its tasks, by `tasks_team`.
        # Events are not asked: archiving prunes the oldest.
        if team is None:
            query = "SELECT MIN(created_at) AS born FROM tasks WHERE parent_task_id IS NULL"
        else:
            query = "SELECT MIN(created_at) AS born FROM tasks WHERE team_id = :team"
        row = self._one_row(query, {"team": team} if team is not None else {})
        return None if row["born"] is None else int(row["born"])
