"""Budgets and the flow figures over HTTP, on both backends: the create body's budget, a start
under a spent budget as 409 `budget_exceeded` in the seed's envelope (nothing written), the close
that spends one (200, `budgetExceeded`, the task blocked, read back), the operators' PUTs (an
agent token is 403 `operator_only`), and `GET /api/board/stats`."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Kanban
from tests.http.conftest import Api, bearer, serving, token_book


@pytest.fixture
def api(tmp_path: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path, tokens=token_book()) as opened:
        yield opened


def call(api: Api, method: str, path: str, who: str, body: Any = None) -> Any:
    return api.client.request(method, path, json=body, headers=bearer(who))


def a_run(api: Api, budget: float) -> tuple[str, str]:
    created = call(api, "POST", "/api/board", "ops", {"title": "priced", "budgetUsd": budget})
    assert created.status_code == 200, created.text
    task_id = created.json()["task"]["id"]
    assert created.json()["task"]["budgetUsd"] == budget
    claimed = call(api, "POST", f"/api/board/{task_id}/claim", "alice",
                   {"assigneeAgentId": "alice"})  # fmt: skip
    assert claimed.status_code == 200, claimed.text
    opened = call(api, "POST", f"/api/board/{task_id}/executions", "alice", {"executorType": "sh"})
    assert opened.status_code == 200, opened.text
    return task_id, opened.json()["execution"]["id"]


def test_the_spending_close_and_the_refused_start(api: Api) -> None:
    task_id, run_id = a_run(api, 2.0)
    closed = call(api, "PATCH", f"/api/board/executions/{run_id}", "alice",
                  {"status": "succeeded", "costUsd": 2.5, "outputTokens": 10})  # fmt: skip
    assert closed.status_code == 200, closed.text
    run = closed.json()["execution"]
    assert run["costUsd"] == 2.5 and run["budgetExceeded"]["limit"] == 2.0
    stored = api.stored(task_id)
    assert (stored.status, stored.subtree_cost_micros, stored.lease_until) == (
        "blocked", 2_500_000, None,
    )  # fmt: skip
    before = api.fingerprint()
    again = call(api, "POST", f"/api/board/{task_id}/executions", "alice", {"executorType": "sh"})
    assert again.status_code == 409, again.text
    body = again.json()
    assert (body["reason"], body["budget"]["spent"], body["id"]) == ("budget_exceeded", 2.5,
                                                                      task_id)  # fmt: skip
    assert body["error"].startswith(f"cannot start a run on {task_id}: the budget of {task_id}")
    assert "retry-after" not in again.headers
    assert api.fingerprint() == before


def test_a_run_the_board_closed_keeps_the_seed_s_404_and_nothing_is_written(api: Api) -> None:
    """Seed 003: a PATCH of a run no longer running is 404, nothing closed and no event, even
    with what the run cost (the CLI and MCP count such a late cost: tests/cli, tests/mcp).
    The refusal does not offer to count it, which this route would not do."""
    task_id, first = a_run(api, 1.0)
    second = call(api, "POST", f"/api/board/{task_id}/executions", "alice", {"executorType": "sh"})
    second_id = second.json()["execution"]["id"]
    call(api, "PATCH", f"/api/board/executions/{first}", "alice",
         {"status": "succeeded", "costUsd": 1.0})  # fmt: skip
    before = api.fingerprint()
    late = call(api, "PATCH", f"/api/board/executions/{second_id}", "alice",
                {"status": "succeeded", "costUsd": 0.25, "inputTokens": 9})  # fmt: skip
    assert late.status_code == 404, late.text
    assert late.json()["error"] == "execution not found"
    assert "counted" not in late.text
    assert api.fingerprint() == before
    assert api.stored(task_id).cost_usd == 1.0


def test_heartbeat_and_complete_on_a_task_its_budget_blocked_say_the_budget(api: Api) -> None:
    """The holder's heartbeat and complete on a task its spent
    budget blocked were a bare `invalid_state`. Still 409 `invalid_state` in the seed's
    envelope (its `message`), saying which budget is spent, that the holder stops and the
    operator's command; the row reads back as it was."""
    task_id, run_id = a_run(api, 1.0)
    call(api, "PATCH", f"/api/board/executions/{run_id}", "alice",
         {"status": "succeeded", "costUsd": 1.5})  # fmt: skip
    before, fingerprint = api.stored(task_id), api.fingerprint()
    for verb in ("heartbeat", "complete"):
        refused = call(api, "POST", f"/api/board/{task_id}/{verb}", "alice", {"agent": "alice"})
        assert refused.status_code == 409, refused.text
        body = refused.json()
        assert (body["reason"], body["current"], body["budget"]["spent"]) == (
            "invalid_state", "blocked", 1.5,
        ), body  # fmt: skip
        assert body["message"].startswith(
            f"cannot {verb}: {task_id} is blocked, as the budget of {task_id} is spent ($1.50 "
            "recorded against $1.00); stop working on it"
        ), body
        assert body["message"].endswith(f"kanban budget set {task_id} --usd N --reason WHY"), body
    assert api.stored(task_id) == before and api.fingerprint() == fingerprint


def test_budgets_are_the_operators(api: Api) -> None:
    task_id, run_id = a_run(api, 1.0)
    call(api, "PATCH", f"/api/board/executions/{run_id}", "alice",
         {"status": "failed", "costUsd": 1.0})  # fmt: skip
    before = api.fingerprint()
    for path, body in (
        (f"/api/board/{task_id}/budget", {"budgetUsd": 9, "reason": "mine"}),
        ("/api/board/budgets/daily", {"dailyUsd": 9, "reason": "mine"}),
    ):
        refused = call(api, "PUT", path, "alice", body)
        assert refused.status_code == 403, refused.text
        assert refused.json()["reason"] == "operator_only"
    assert api.fingerprint() == before
    bad = call(api, "PUT", f"/api/board/{task_id}/budget", "ops", {"reason": "nothing named"})
    assert bad.status_code == 400 and api.fingerprint() == before
    raised = call(api, "PUT", f"/api/board/{task_id}/budget", "ops",
                  {"budgetUsd": 3, "reason": "one more pass"})  # fmt: skip
    assert raised.status_code == 200 and raised.json()["task"]["budgetUsd"] == 3.0
    removed = call(api, "PUT", f"/api/board/{task_id}/budget", "ops",
                   {"budgetTokens": None, "reason": "no token cap"})  # fmt: skip
    assert removed.json()["task"]["budgetUsd"] == 3.0  # left out: kept
    with api.reader() as other:
        audit = [a for a in other.audit(task_id) if a.action == "budget_changed"]
        assert [(a.actor, a.detail is not None) for a in audit] == [("operator:ops", True)]
    daily = call(api, "PUT", "/api/board/budgets/daily", "ops",
                 {"teamId": "web", "dailyTokens": 5000, "reason": "web's share"})  # fmt: skip
    assert daily.status_code == 200
    report = call(api, "GET", "/api/board/budgets", "alice").json()["budgets"]
    assert [(s["scope"], s["owner"], s["limit"]) for s in report["daily"]] == [
        ("team_daily", "web", 5000),
    ]  # fmt: skip
    standings = call(api, "GET", f"/api/board/{task_id}/budget", "alice").json()["budgets"]
    assert [(s["scope"], s["spent"], s["limit"]) for s in standings] == [("task", 1.0, 3.0)]


def test_a_daily_budget_put_answers_what_the_cli_prints(api: Api) -> None:
    """`kanban budget set --daily-usd` printed the daily budget, the same change over HTTP answered
    only the report of every budget. The PUT's `dailyBudget` is the CLI's document (the report is
    kept beside it), set and removed alike."""
    kanban = Kanban(api.path, init=False)
    for limit in ("4", "none"):
        usd = None if limit == "none" else float(limit)
        put = call(api, "PUT", "/api/board/budgets/daily", "ops",
                   {"teamId": "web", "dailyUsd": usd, "reason": "web's share"})  # fmt: skip
        assert put.status_code == 200, put.text
        answer = put.json()
        assert [s["owner"] for s in answer["budgets"]["daily"]] == (["web"] if usd else [])
        # the same values again: nothing changes, and the CLI prints the budget as it stands
        printed = kanban.ok("budget", "set", "--team", "web", "--daily-usd", limit, "-m", "same")
        assert answer["dailyBudget"] == printed
        assert (printed["teamId"], printed["dailyUsd"]) == ("web", usd)
    assert printed["updatedBy"] is None  # removed: no stamp, every field null


def test_the_budgets_route_lists_every_budgeted_task(api: Api) -> None:
    """`GET /api/board/budgets` listed at most 50 budgeted tasks, silently; it lists every one, as
    `kanban budget show` does."""
    with Kanban(api.path, init=False).board() as board:
        ids = [board.create_task(f"priced {n}", budget_tokens=100 + n).id for n in range(60)]
    report = call(api, "GET", "/api/board/budgets", "alice").json()["budgets"]
    assert sorted(s["owner"] for s in report["tasks"]) == sorted(ids)


def test_a_limit_over_http_is_kept_in_whole_micro_dollars(api: Api) -> None:
    """A limit below the micro-dollar the board counts in is rounded as a cost is (the CLI's rule;
    the same on every surface)."""
    task_id, _run = a_run(api, 1.0)
    task = call(api, "PUT", f"/api/board/{task_id}/budget", "ops",
                {"budgetUsd": 5.0000004, "reason": "a fraction"})  # fmt: skip
    assert task.json()["task"]["budgetUsd"] == 5.0
    daily = call(api, "PUT", "/api/board/budgets/daily", "ops",
                 {"dailyUsd": 1e-7, "reason": "a trace"})  # fmt: skip
    assert daily.status_code == 200, daily.text
    report = call(api, "GET", "/api/board/budgets", "alice").json()["budgets"]
    assert [(s["scope"], s["limit"]) for s in report["daily"]] == [("board_daily", 0.0)]
    other = call(api, "POST", "/api/board", "ops", {"title": "under the daily $0"}).json()
    other_id = other["task"]["id"]
    call(api, "POST", f"/api/board/{other_id}/claim", "alice", {"assigneeAgentId": "alice"})
    start = call(api, "POST", f"/api/board/{other_id}/executions", "alice", {"executorType": "sh"})
    assert start.status_code == 409 and start.json()["reason"] == "budget_exceeded", start.text


def test_a_whole_number_of_tokens_is_taken_as_the_cli_and_mcp_take_it(api: Api) -> None:
    """`budgetTokens: 1e3` is 1000 (a JSON number with no fraction), `1000.5` is a 400: the
    CLI's `--tokens 1e3` and MCP's `budget_tokens` follow the same rule."""
    task_id, _run = a_run(api, 1.0)
    for written in (1e3, 1000.0):
        put = call(api, "PUT", f"/api/board/{task_id}/budget", "ops",
                   {"budgetTokens": written, "reason": "counted"})  # fmt: skip
        assert put.status_code == 200 and put.json()["task"]["budgetTokens"] == 1000, put.text
    before = api.fingerprint()
    bad = call(api, "PUT", f"/api/board/{task_id}/budget", "ops",
               {"budgetTokens": 1000.5, "reason": "a fraction"})  # fmt: skip
    assert bad.status_code == 400 and api.fingerprint() == before


def test_the_stats_route_answers_what_the_board_computes(api: Api) -> None:
    task_id, run_id = a_run(api, 10.0)
    call(api, "PATCH", f"/api/board/executions/{run_id}", "alice",
         {"status": "succeeded", "costUsd": 0.4})  # fmt: skip
    answer = call(api, "GET", "/api/board/stats?since=2h", "bob")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"ok": True, "stats": api.board.stats(since="2h").to_json()}
    figures = answer.json()["stats"]
    assert figures["cost"]["totalUsd"] == 0.4 and figures["agents"]["holding"] == 1
    team = call(api, "GET", "/api/board/stats?teamId=web", "bob").json()["stats"]
    assert team["teamId"] == "web" and team["cost"]["runs"] == 0
    bad = call(api, "GET", "/api/board/stats?since=3y", "bob")
    assert bad.status_code == 400 and bad.json()["reason"] == "invalid_input"
    assert call(api, "GET", f"/api/board/{task_id}", "bob").status_code == 200  # still a task


def test_an_amount_written_as_a_string_is_refused(api: Api) -> None:
    """Checked when the CLI stopped reading `1_000` and full-width digits as numbers: a body's
    amount is a JSON number, so such strings (and any string) are 400 here, nothing written."""
    task_id, run_id = a_run(api, 5.0)
    before = api.fingerprint()
    for value in ("1_000", "\uff11\uff10", "10"):
        for method, path, who, body in (
            ("POST", "/api/board", "ops", {"title": "t", "budgetUsd": value}),
            ("POST", "/api/board", "ops", {"title": "t", "budgetTokens": value}),
            ("POST", "/api/board", "ops", {"title": "t", "priority": value}),
            ("PUT", f"/api/board/{task_id}/budget", "ops", {"budgetUsd": value, "reason": "r"}),
            ("PUT", "/api/board/budgets/daily", "ops", {"dailyTokens": value, "reason": "r"}),
            ("PATCH", f"/api/board/executions/{run_id}", "alice",
             {"status": "succeeded", "costUsd": value}),
            ("PATCH", f"/api/board/executions/{run_id}", "alice",
             {"status": "succeeded", "inputTokens": value}),
        ):  # fmt: skip
            refused = call(api, method, path, who, body)
            assert refused.status_code == 400, (body, refused.text)
    assert api.fingerprint() == before
