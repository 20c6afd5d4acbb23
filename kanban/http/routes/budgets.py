"""The flow figures and the budgets: `GET /api/board/stats` (what `kanban stats` prints),
`GET /api/board/budgets`, and the operators' `PUT`s that set a task's budget or a daily one
(an agent token is refused `operator_only`: agents never raise budgets). Registered before the
task routes, whose `/{task_id}` would otherwise take `stats` for a task id."""

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from boardlib.budgets import daily_answer
from boardlib.stats import DEFAULT_WINDOW

from ..bodies import DailyBudgetBody, Name, TaskBudgetBody
from ..deps import Who
from ..envelopes import INVALID_QUERY, envelope, error_responses
from ..replies import (
    BudgetsReply,
    DailyBudgetReply,
    StandingsReply,
    StatsReply,
    TaskReply,
    reply,
)

router = APIRouter(prefix="/api/board", tags=["stats"])


@router.get(
    "/stats",
    response_model=None,
    responses={200: {"model": StatsReply}, **error_responses("plain")},
    summary="The flow figures of a window that ends now (throughput, cycle, review, cost...)",
)
@envelope("plain", invalid=INVALID_QUERY)
def stats(
    who: Who,
    since: Annotated[
        str, Query(max_length=16, description="The window: 90m, 24h, 7d, 2w (up to 400d).")
    ] = DEFAULT_WINDOW,
    team_id: Annotated[Name | None, Query(alias="teamId")] = None,
) -> JSONResponse:
    figures = who.board.stats(since=since, team_id=team_id)
    return reply({"ok": True, "stats": figures.to_json()})


@router.get(
    "/budgets",
    response_model=None,
    responses={200: {"model": BudgetsReply}, **error_responses("plain")},
    summary="Every daily budget with today's spend, and the budgeted tasks",
)
@envelope("plain")
def budgets(who: Who) -> JSONResponse:
    return reply({"ok": True, "budgets": who.board.budget_report().to_json()})


@router.put(
    "/budgets/daily",
    response_model=None,
    responses={200: {"model": DailyBudgetReply}, **error_responses("plain", 403)},
    summary="Set or remove the board's daily budget, or a team's (operators only, audited)",
)
@envelope("plain")
def set_daily_budget(body: DailyBudgetBody, who: Who) -> JSONResponse:
    """`dailyBudget` is what `kanban budget set --daily-*` prints; `budgets`, every budget."""
    stored = who.board.set_daily_budget(
        team_id=body.team_id,
        usd=body.given("daily_usd"),
        tokens=body.given("daily_tokens"),
        reason=body.reason,
        actor=who.actor,
    )
    return reply(
        {
            "ok": True,
            "dailyBudget": daily_answer(stored, body.team_id).to_json(),
            "budgets": who.board.budget_report().to_json(),
        }
    )


@router.get(
    "/{task_id}/budget",
    response_model=None,
    responses={200: {"model": StandingsReply}, **error_responses("plain", 404)},
    summary="The budgets over a task (its own, its ancestors', its team's, the board's)",
)
@envelope("plain", not_found="task not found")
def task_budgets(task_id: str, who: Who) -> JSONResponse:
    standings = who.board.budgets_of(task_id)
    return reply({"ok": True, "budgets": [standing.to_json() for standing in standings]})


@router.put(
    "/{task_id}/budget",
    response_model=None,
    responses={200: {"model": TaskReply}, **error_responses("plain", 403, 404)},
    summary="Set, raise or remove a task's budget (operators only, audited in its history)",
)
@envelope("plain", not_found="task not found")
def set_task_budget(task_id: str, body: TaskBudgetBody, who: Who) -> JSONResponse:
    task = who.board.set_budget(
        task_id,
        usd=body.given("budget_usd"),
        tokens=body.given("budget_tokens"),
        reason=body.reason,
        actor=who.actor,
    )
    return reply({"ok": True, "task": task.to_json()})
