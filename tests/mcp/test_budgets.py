"""Budgets through the real `kanban mcp` over stdio, on both backends: a subtask's budget from
`create_subtask`, `start_run` under a spent budget as a tool error that says retrying will not
help (nothing written), the `finish_run` that spends a budget: kept, the task blocked, and a
cost that is no number of dollars (NaN, Infinity) refused in those words."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board
from tests.mcp.conftest import fingerprint, mcp_session, ok, refused, server_parameters, text_of


@pytest.mark.slow
async def spent_with_a_second_run(client: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Claim the $1 task and open two runs; closing the first at $1 spends the budget, and the
    block cancels the second: the task and that second run."""
    task = await ok(client, "claim_next")
    first = await ok(client, "start_run", task_id=task["id"], executor="sh")
    second = await ok(client, "start_run", task_id=task["id"], executor="sh")
    await ok(client, "finish_run", execution_id=first["id"], status="succeeded", cost_usd=1.0)
    return task, second


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


async def test_after_a_budgets_block_no_refusal_sends_the_holder_to_a_refused_call(
    board_path: Path,
) -> None:
    """After the close that spent a task's budget, heartbeat and
    complete_task were a bare `invalid_state`, and closing the other run the block cancelled
    was hinted "start_run opens a new one if you go on working", which start_run then refused
    `budget_exceeded`. The refusals say the budget is spent, the hint names no start_run, and
    nothing is written (the row read back)."""
    with Board(board_path) as board:
        board.create_task("port the parser", budget_usd=1.0)
    async with mcp_session(board_path, "ada") as client:
        task, second = await spent_with_a_second_run(client)
        with Board(board_path, read_only=True) as board:
            row = board.get_task(task["id"])
        before = fingerprint(board_path)
        spent = f"the budget of {task['id']} is spent ($1.00 recorded against $1.00)"
        for tool, extra in (("heartbeat", {}), ("complete_task", {"summary": "done"})):
            error = await refused(client, tool, "invalid_state", task_id=task["id"], **extra)
            assert spent in error["error"] and "stop working on it" in error["error"], error
            assert f"kanban budget set {task['id']} --usd N" in error["error"], error
        late = await refused(client, "finish_run", "not_found", execution_id=second["id"],
                             status="succeeded")  # fmt: skip
        assert (late["status"], late["budgetSpent"]) == ("cancelled", True), late
        assert spent in late["error"], late
        assert "start_run" not in late["hint"] and "claim_next" in late["hint"], late["hint"]
        assert late["hint"].startswith("That run is already closed"), late["hint"]
        assert "if what it cost is still taken: report it once, finish_run" in late["hint"]
        assert fingerprint(board_path) == before
        with Board(board_path, read_only=True) as board:
            assert board.get_task(task["id"]) == row


async def test_a_late_cost_of_a_run_the_block_cancelled_is_counted_once(
    board_path: Path,
) -> None:
    """finish_run on the run the block cancelled, with its cost, was refused `not_found` and the
    money lost. It answers the run, still cancelled, with its cost, counted in the task once; a
    second finish_run is refused and writes nothing."""
    with Board(board_path) as board:
        board.create_task("port the parser", budget_usd=1.0)
    async with mcp_session(board_path, "ada") as client:
        task, second = await spent_with_a_second_run(client)
        late = await ok(client, "finish_run", execution_id=second["id"], status="succeeded",
                        cost_usd=0.75, output_tokens=12)  # fmt: skip
        assert (late["status"], late["costUsd"], late["outputTokens"]) == ("cancelled", 0.75, 12)
        with Board(board_path, read_only=True) as board:
            held = board.get_task(task["id"])
            assert (held.status, held.cost_usd, held.subtree_cost_micros, held.tokens) == (
                "blocked", 1.75, 1_750_000, 12,
            )  # fmt: skip
        before = fingerprint(board_path)
        again = await refused(client, "finish_run", "not_found", execution_id=second["id"],
                              status="succeeded", cost_usd=0.75)  # fmt: skip
        assert again["status"] == "cancelled", again
        assert fingerprint(board_path) == before


async def test_a_closed_runs_hint_says_whether_its_cost_is_counted(board_path: Path) -> None:
    """finish_run on a run the board closed (its task cancelled) without a cost was hinted "stays
    as it closed; start_run opens a new one", though the board takes that cost once; and after
    that one report, a second was hinted the same, as if the money were lost. The first hint
    sends the agent to report the cost, the second says it was counted; neither writes."""
    with Board(board_path) as board:
        board.create_task("port the parser")
    async with mcp_session(board_path, "ada") as client:
        task = await ok(client, "claim_next")
        run = await ok(client, "start_run", task_id=task["id"], executor="sh")
        with Board(board_path) as board:
            board.cancel(task["id"], reason="not needed")
        before = fingerprint(board_path)
        pending = await refused(client, "finish_run", "not_found", execution_id=run["id"],
                                status="succeeded")  # fmt: skip
        assert (pending["status"], pending["costPending"]) == ("cancelled", True), pending
        assert "not counted yet: call finish_run on it again with cost_usd" in pending["hint"]
        assert "start_run" not in pending["hint"], pending["hint"]
        assert fingerprint(board_path) == before
        counted = await ok(client, "finish_run", execution_id=run["id"], status="succeeded",
                           cost_usd=0.4)  # fmt: skip
        assert (counted["status"], counted["costUsd"]) == ("cancelled", 0.4), counted
        before = fingerprint(board_path)
        again = await refused(client, "finish_run", "not_found", execution_id=run["id"],
                              status="succeeded", cost_usd=0.4)  # fmt: skip
        assert "costPending" not in again, again
        assert "what it cost was counted when first reported, once" in again["hint"], again
        assert fingerprint(board_path) == before
        with Board(board_path, read_only=True) as board:
            assert board.get_task(task["id"]).cost_usd == 0.4


async def test_a_whole_number_of_tokens_is_taken_as_http_and_the_cli_take_it(
    board_path: Path,
) -> None:
    """`budget_tokens: 1000.0` is 1000 and `1000.5` is refused, as HTTP's `budgetTokens` and
    the CLI's `--tokens` (the CLI refused `1e3`)."""
    Board(board_path).close()
    async with mcp_session(board_path, "ada") as client:
        task = await ok(client, "create_task", title="counted", budget_tokens=1000.0)
        assert task["budgetTokens"] == 1000
        before = fingerprint(board_path)
        error = await refused(client, "create_task", "invalid_input", title="x",
                              budget_tokens=1000.5)  # fmt: skip
        assert "budget_tokens must be a whole number" in error["error"]
        assert fingerprint(board_path) == before


def raw_calls(db: Path, agent: str, calls: list[str]) -> list[dict[str, Any]]:
    """Each `tools/call` params, as JSON text, sent to a real `kanban mcp` as written, one at a
    time: the SDK's client sends NaN and Infinity as null, and a client that writes them as
    JavaScript literals (Python's `json.dumps` does) reaches the server as they are."""
    params = server_parameters(db, agent)
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        *(
            f'{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{call}}}'
            for n, call in enumerate(calls, 1)
        ),
    ]
    argv = [params.command, *params.args]
    pipe = subprocess.PIPE
    server = subprocess.Popen(argv, env=params.env, text=True, stdin=pipe, stdout=pipe)
    assert server.stdin is not None and server.stdout is not None
    answers = []
    try:
        for line in lines:
            server.stdin.write(line + "\n")
            server.stdin.flush()
            if '"id"' in line:  # a request: wait for its answer before the next
                answers.append(json.loads(server.stdout.readline()))
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    return [answer["result"] for answer in answers[1:]]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_cost_that_is_no_number_is_refused_as_one(board_path: Path, literal: str) -> None:
    """A NaN cost was refused as `cost_usd must be at most 1000000000` (a NaN budget likewise,
    and a NaN lease `must be greater than 0`), which sends an agent to lower a number it never
    had; HTTP and the CLI say it is not a finite number."""
    with Board(board_path) as board:
        task = board.create_task("priced")
        board.claim(task.id, "ada")
        run = board.open_execution(task.id, "sh", agent="ada")
    before = fingerprint(board_path)
    answers = raw_calls(board_path, "ada", [
        f'{{"name":"finish_run","arguments":{{"execution_id":"{run.id}","status":"succeeded",'
        f'"cost_usd":{literal}}}}}',
        f'{{"name":"create_task","arguments":{{"title":"x","budget_usd":{literal}}}}}',
        f'{{"name":"extend_lease","arguments":{{"task_id":"{task.id}","minutes":{literal}}}}}',
    ])  # fmt: skip
    problems = [answer["structuredContent"] for answer in answers]
    assert all(answer["isError"] for answer in answers), answers
    assert [(doc["reason"], doc["error"]) for doc in problems] == [
        ("invalid_input", "cost_usd must be a finite number"),
        ("invalid_input", "budget_usd must be a finite number"),
        ("invalid_input", "minutes must be a finite number"),
    ]
    assert fingerprint(board_path) == before
    with Board(board_path, read_only=True) as board:
        assert board.get_execution(run.id).status == "running"
