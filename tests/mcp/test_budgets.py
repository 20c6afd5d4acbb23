"""Budgets through the real `kanban mcp` over stdio, on both backends: a subtask's budget from
`create_subtask`, `start_run` under a spent budget as a tool error that says retrying will not
help (nothing written), and the `finish_run` that spends a budget: kept, the task blocked."""

from pathlib import Path

import pytest

from boardlib import Board
from tests.mcp.conftest import fingerprint, mcp_session, ok, refused, text_of


@pytest.mark.slow
async def test_a_spent_budget_stops_the_runs_of_an_mcp_agent(board_path: Path) -> None:
    with Board(board_path) as board:
        parent = board.create_task("port the parser", budget_usd=1.5)
    async with mcp_session(board_path, "ada") as client:
        sub = await ok(client, "create_subtask", parent_task_id=parent.id, title="lexer",
                       budget_tokens=5000)  # fmt: skip
        assert (sub["parentTaskId"], sub["budgetTokens"]) == (parent.id, 5000)
        claimed = await ok(client, "claim_next")
        run = await ok(client, "start_run", task_id=claimed["id"], executor="claude-code")
        closed = await ok(client, "finish_run", execution_id=run["id"], status="succeeded",
                          cost_usd=1.6, input_tokens=1200, output_tokens=300)  # fmt: skip
        assert closed["costUsd"] == 1.6 and closed["budgetExceeded"]["owner"] in (
            parent.id, sub["id"],
        )  # fmt: skip
        with Board(board_path, read_only=True) as board:
            held = board.get_task(claimed["id"])
            assert (held.status, held.tokens, held.lease_until) == ("blocked", 1500, None)
        before = fingerprint(board_path)
        error = await refused(client, "start_run", "budget_exceeded", task_id=claimed["id"],
                              executor="claude-code")  # fmt: skip
        assert "Retrying will not help" in error["hint"] and "block_task" in error["hint"]
        assert error["budget"]["scope"] == "task"
        assert fingerprint(board_path) == before
        result = await client.call_tool(
            "create_task", {"title": "x", "budget_usd": -1}
        )  # refused by the schema, before the board
        assert result.is_error and "budget_usd" in text_of(result)


async def test_a_whole_number_of_tokens_is_taken_as_http_and_the_cli_take_it(
    board_path: Path,
) -> None:
    """`budget_tokens: 1000.0` is 1000 and `1000.5` is refused, as HTTP's `budgetTokens` and
    the CLI's `--tokens` (found by an exploring helper: the CLI refused `1e3`)."""
    Board(board_path).close()
    async with mcp_session(board_path, "ada") as client:
        task = await ok(client, "create_task", title="counted", budget_tokens=1000.0)
        assert task["budgetTokens"] == 1000
        before = fingerprint(board_path)
        error = await refused(client, "create_task", "invalid_input", title="x",
                              budget_tokens=1000.5)  # fmt: skip
        assert "budget_tokens must be a whole number" in error["error"]
        assert fingerprint(board_path) == before
