"""The budgets' statements (migration 3), shared by both stores: the running spend of every
subtree, kept on each task, and the daily spend of the board and of each team.

A run's close adds its cost to the task and to every ancestor in the same write transaction (one
`UPDATE` over the parent chain), and to today's row of the board and of the task's team (one
upsert each). Every write that changes spend runs serialised (SQLite's write lock, the Postgres
board's advisory lock), so these totals equal the ledger's sum at every commit. Amounts are whole
micro-dollars, so the sum does not depend on the order closes land in. The rules live in
`boardlib.budgets`; these are single statements.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..records import BOARD_SCOPE

if TYPE_CHECKING:  # base.py builds `Tx` on `BudgetTx`, so the import goes one way only
    from .base import Row
    from .queries import Params

# The task and its ancestors, nearest first; the depth bound keeps a corrupt chain finite.
_CHAIN = """
    WITH RECURSIVE chain(id, depth) AS (
        SELECT CAST(:id AS TEXT), 0
        UNION
        SELECT t.parent_task_id, chain.depth + 1 FROM chain JOIN tasks t ON t.id = chain.id
        WHERE t.parent_task_id IS NOT NULL AND chain.depth < 1000
    )
"""
_BUDGET_COLUMNS = "t.id, t.budget_usd, t.budget_tokens, t.subtree_cost_micros, t.subtree_tokens"
# How much of a task's budget is spent (a zero budget counts as spent).
_USD_SHARE = "COALESCE(t.subtree_cost_micros / 1e6 / NULLIF(t.budget_usd, 0), 0)"
_TOKEN_SHARE = "COALESCE(t.subtree_tokens * 1.0 / NULLIF(t.budget_tokens, 0), 0)"


class BudgetTx(Protocol):
    """The budgets' part of `base.Tx`."""

    def budget_chain(self, task_id: str) -> "list[Row]":
        """The task and each of its ancestors that carries a budget, nearest first: `id`,
        `budget_usd`, `budget_tokens`, `subtree_cost_micros`, `subtree_tokens`."""
        ...

    def add_subtree_spend(self, task_id: str, micros: int, tokens: int) -> None:
        """Add a closed run's spend to its task and to every ancestor."""
        ...

    def add_daily_spend(self, scopes: Sequence[str], day: int, micros: int, tokens: int) -> None:
        """Add a closed run's spend to the day's row of each scope (`board`, `team:<id>`)."""
        ...

    def daily_standings(self, scopes: Sequence[str], day: int) -> "list[Row]":
        """The daily budgets set for these scopes, with the day's spend: `scope`, `daily_usd`,
        `daily_tokens`, `cost_micros`, `tokens`."""
        ...

    def daily_budget(self, scope: str) -> "Row | None": ...

    def put_daily_budget(
        self, scope: str, usd: float | None, tokens: int | None, now: int, actor: str
    ) -> "Row | None":
        """Set a scope's daily budget (both limits None: remove it, returning None)."""
        ...

    def daily_budgets(self, day: int) -> "list[Row]":
        """Every daily budget with the day's spend, the board's first."""
        ...

    def budgeted_tasks(self) -> "list[Row]":
        """Every task that carries a budget, the most spent (as a share of the budget) first:
        `kanban budget show` says every budget, so no limit here cuts the list short."""
        ...


class BudgetStatements(ABC):
    """`BudgetTx` in SQL both stores run as written (see `queries.SharedTx` for the seam)."""

    @abstractmethod
    def _fetchall(self, query: str, params: "Params" = ()) -> "list[Row]": ...

    @abstractmethod
    def _fetchone(self, query: str, params: "Params" = ()) -> "Row | None": ...

    @abstractmethod
    def _execute(self, query: str, params: "Params" = ()) -> int: ...

    def budget_chain(self, task_id: str) -> "list[Row]":
        return self._fetchall(
            f"{_CHAIN} SELECT {_BUDGET_COLUMNS} FROM chain JOIN tasks t ON t.id = chain.id "
            "WHERE t.budget_usd IS NOT NULL OR t.budget_tokens IS NOT NULL ORDER BY chain.depth",
            {"id": task_id},
        )

    def add_subtree_spend(self, task_id: str, micros: int, tokens: int) -> None:
        self._execute(
            f"{_CHAIN} UPDATE tasks SET subtree_cost_micros = subtree_cost_micros + :micros, "
            "subtree_tokens = subtree_tokens + :tokens WHERE id IN (SELECT id FROM chain)",
            {"id": task_id, "micros": micros, "tokens": tokens},
        )

    def add_daily_spend(self, scopes: Sequence[str], day: int, micros: int, tokens: int) -> None:
        for scope in scopes:
            self._execute(
                "INSERT INTO daily_spend (scope, day, cost_micros, tokens) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (scope, day) DO UPDATE SET "
                "cost_micros = daily_spend.cost_micros + excluded.cost_micros, "
                "tokens = daily_spend.tokens + excluded.tokens",
                (scope, day, micros, tokens),
            )

    def daily_standings(self, scopes: Sequence[str], day: int) -> "list[Row]":
        if not scopes:
            return []
        params: dict[str, Any] = {f"s{n}": scope for n, scope in enumerate(scopes)}
        marks = ", ".join(f":s{n}" for n in range(len(scopes)))
        return self._fetchall(
            "SELECT b.scope, b.daily_usd, b.daily_tokens, COALESCE(s.cost_micros, 0) AS "
            "cost_micros, COALESCE(s.tokens, 0) AS tokens FROM budgets b "
            "LEFT JOIN daily_spend s ON s.scope = b.scope AND s.day = :day "
            f"WHERE b.scope IN ({marks}) ORDER BY b.scope",
            {**params, "day": day},
        )

    def daily_budget(self, scope: str) -> "Row | None":
        return self._fetchone("SELECT * FROM budgets WHERE scope = ?", (scope,))

    def put_daily_budget(
        self, scope: str, usd: float | None, tokens: int | None, now: int, actor: str
    ) -> "Row | None":
        if usd is None and tokens is None:
            self._execute("DELETE FROM budgets WHERE scope = ?", (scope,))
            return None
        return self._fetchone(
            "INSERT INTO budgets (scope, daily_usd, daily_tokens, updated_at, updated_by) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope) DO UPDATE SET "
            "daily_usd = excluded.daily_usd, daily_tokens = excluded.daily_tokens, "
            "updated_at = excluded.updated_at, updated_by = excluded.updated_by RETURNING *",
            (scope, usd, tokens, now, actor),
        )

    def daily_budgets(self, day: int) -> "list[Row]":
        return self._fetchall(
            "SELECT b.*, COALESCE(s.cost_micros, 0) AS cost_micros, COALESCE(s.tokens, 0) AS "
            "tokens FROM budgets b LEFT JOIN daily_spend s ON s.scope = b.scope AND s.day = ? "
            f"ORDER BY CASE WHEN b.scope = '{BOARD_SCOPE}' THEN 0 ELSE 1 END, b.scope",
            (day,),
        )

    def budgeted_tasks(self) -> "list[Row]":
        return self._fetchall(
            f"SELECT {_BUDGET_COLUMNS}, t.title, t.status FROM tasks t "
            "WHERE t.budget_usd IS NOT NULL OR t.budget_tokens IS NOT NULL "
            f"ORDER BY CASE WHEN {_USD_SHARE} > {_TOKEN_SHARE} THEN {_USD_SHARE} "
            f"ELSE {_TOKEN_SHARE} END DESC, t.seq"
        )
