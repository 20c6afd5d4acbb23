"""Budgets the board enforces, on both backends: the subtree sum, the refusal at start (nothing
written), the block at the close that spends a budget (the cost kept), daily budgets of the board
and of a team, operators only, the audit trail, and 16 real processes closing runs at once under
one budgeted parent."""

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, BoardConfig, BoardError, ManualClock, Reason
from boardlib import transitions as t
from boardlib.budgets import BLOCKED_PREFIX, amount, to_micros
from boardlib.events import EventKind
from boardlib.narration import narrate
from boardlib.records import (
    BUDGET_USD,
    EXECUTION_FAILED,
    EXECUTION_SUCCEEDED,
    TOKENS_MAX,
    USD_MAX,
    Task,
)
from tests.cli.conftest import unchanged
from tests.racers import racing_context

CTX = racing_context()
RACE_CONFIG = BoardConfig(retry_budget_ms=60_000, retry_max_attempts=100_000)


def running(board: Board, task: Task, agent: str) -> str:
    """Claim `task` as `agent` and open a run on it: the run's id."""
    board.claim(task.id, agent)
    return board.open_execution(task.id, "script", agent=agent).id


def test_the_subtree_spend_is_kept_on_every_ancestor(board: Board) -> None:
    root = board.create_task("root", budget_usd=100)
    mid = board.create_task("mid", parent_task_id=root.id)
    leaf = board.create_task("leaf", parent_task_id=mid.id)
    other = board.create_task("other root")
    for task, cost, tokens in ((leaf, 1.1, 300), (mid, 2.2, 40), (root, 0.7, 5), (other, 9.0, 1)):
        run = running(board, task, "ada")
        board.close_execution(
            run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=cost, input_tokens=tokens,
            output_tokens=1, cache_read=2, cache_write=3,
        )  # fmt: skip
    spent = {task.id: board.get_task(task.id) for task in (root, mid, leaf, other)}
    assert spent[leaf.id].subtree_cost_micros == 1_100_000
    assert spent[mid.id].subtree_cost_micros == 3_300_000
    assert spent[root.id].subtree_cost_micros == 4_000_000  # 1.1 + 2.2 + 0.7, exactly
    assert spent[other.id].subtree_cost_micros == 9_000_000
    assert [spent[x.id].subtree_tokens for x in (leaf, mid, root)] == [306, 352, 363]
    assert [spent[x.id].tokens for x in (leaf, mid, root)] == [306, 46, 11]
    assert spent[mid.id].cost_usd == 2.2  # its own runs, as before


def test_a_start_under_a_spent_budget_is_refused_and_writes_nothing(
    board: Board, board_path: Path
) -> None:
    parent = board.create_task("parent", budget_usd=1)
    first, second = (board.create_task(f"kid {n}", parent_task_id=parent.id) for n in (1, 2))
    run = running(board, first, "ada")
    board.claim(second.id, "bob")
    board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=1.0)  # spent: 1 of 1
    with unchanged(board_path), pytest.raises(BoardError) as refused:
        board.open_execution(second.id, "script", agent="bob")
    assert refused.value.reason is Reason.BUDGET_EXCEEDED
    assert refused.value.details["budget"] == {
        "scope": "task", "unit": "usd", "limit": 1.0, "spent": 1.0, "owner": parent.id,
        "day": None,
    }  # fmt: skip
    assert f"the budget of its ancestor {parent.id} is spent ($1.00 recorded against $1.00)" in (
        refused.value.message
    )
    assert "kanban budget set " + parent.id in refused.value.message
    assert board.get_task(second.id).status == t.IN_PROGRESS  # still held: nothing written


def test_the_close_that_spends_a_budget_keeps_the_cost_and_blocks_the_task(
    board: Board, clock: ManualClock
) -> None:
    task = board.create_task("pricey", budget_usd=5, budget_tokens=10_000)
    run = running(board, task, "ada")
    seq = board.last_event_seq()
    clock.advance(minutes=3)
    closed = board.close_execution(run, EXECUTION_FAILED, agent="ada", cost_usd=5.3)
    assert closed.cost_usd == 5.3 and closed.status == EXECUTION_FAILED
    assert closed.budget_exceeded is not None
    assert (closed.budget_exceeded.unit, closed.budget_exceeded.spent) == ("usd", 5.3)
    assert closed.to_json()["budgetExceeded"]["owner"] == task.id
    stored = board.get_task(task.id)
    assert (stored.status, stored.lease_until, stored.cost_usd) == (t.BLOCKED, None, 5.3)
    assert stored.blocked_reason is not None and stored.blocked_reason.startswith(BLOCKED_PREFIX)
    assert "$5.30 recorded against $5.00" in stored.blocked_reason
    assert board.get_execution(run).cost_usd == 5.3  # the ledger row is whole
    events = board.events(since=seq)
    assert [e.kind for e in events] == [EventKind.EXECUTION_COMPLETED, EventKind.STATUS_CHANGED]
    assert events[1].data["verb"] == "budget" and events[1].data["to"] == t.BLOCKED
    with pytest.raises(BoardError) as refused:  # the holder's next verb: the task is not theirs
        board.open_execution(task.id, "script", agent="ada")
    assert refused.value.reason is Reason.BUDGET_EXCEEDED  # says why, not "blocked"


def test_a_cost_is_kept_in_whole_micro_dollars_once_accepted(board: Board) -> None:
    """The run rows kept costs finer than a micro-dollar while the budgets rounded each run, so runs
    of $0.999999, $0.0000004 and $0.0000005 showed the task at costUsd 0.9999998999999999 yet
    blocked at "$1.00 recorded against $1.00". A cost is rounded once, half up, when accepted; the
    task's cost is the exact sum of its runs."""
    task = board.create_task("fine-grained", budget_usd=1)
    board.claim(task.id, "ada")
    kept = []
    for cost in (0.999999, 0.0000004, 0.0000005):
        run = board.open_execution(task.id, "script", agent="ada").id
        kept.append(board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=cost))
    assert [run.cost_usd for run in kept] == [0.999999, 0.0, 0.000001]
    assert [run.cost_usd for run in board.executions(task.id)] == [0.999999, 0.0, 0.000001]
    stored = board.get_task(task.id)
    assert (stored.cost_usd, stored.subtree_cost_micros) == (1.0, 1_000_000)
    assert stored.status == t.BLOCKED and "$1.00 recorded against $1.00" in (
        stored.blocked_reason or ""
    )
    other = board.create_task("no drift")
    board.claim(other.id, "bob")
    for cost in (0.1, 0.2):
        run = board.open_execution(other.id, "script", agent="bob").id
        board.close_execution(run, EXECUTION_SUCCEEDED, agent="bob", cost_usd=cost)
    assert board.get_task(other.id).cost_usd == 0.3  # not 0.30000000000000004


def test_a_close_within_budget_changes_nothing_else(board: Board) -> None:
    task = board.create_task("cheap", budget_usd=5)
    run = running(board, task, "ada")
    closed = board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=3.99)
    assert closed.budget_exceeded is None and "budgetExceeded" not in closed.to_json()
    assert board.get_task(task.id).status == t.IN_PROGRESS


def test_a_token_budget_is_enforced_like_dollars(board: Board) -> None:
    task = board.create_task("chatty", budget_tokens=1_000)
    run = running(board, task, "ada")
    closed = board.close_execution(
        run, EXECUTION_SUCCEEDED, agent="ada", input_tokens=600, output_tokens=300, cache_read=100
    )
    assert closed.budget_exceeded is not None and closed.budget_exceeded.unit == "tokens"
    assert "1,000 tokens recorded against 1,000 tokens" in (board.get_task(task.id).blocked_reason)


def test_raising_a_budget_is_audited_and_lets_the_task_be_unblocked(board: Board) -> None:
    task = board.create_task("pricey", budget_usd=2)
    run = running(board, task, "ada")
    board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=2.5)
    with pytest.raises(BoardError) as refused:
        board.unblock(task.id)
    assert refused.value.reason is Reason.BUDGET_EXCEEDED
    with pytest.raises(BoardError):
        board.move(task.id, t.TODO, reason="try anyway")
    with pytest.raises(BoardError) as agent:
        board.set_budget(task.id, usd=50, reason="I need more", actor="ada")
    assert agent.value.reason is Reason.OPERATOR_ONLY
    assert board.get_task(task.id).budget_usd == 2.0
    raised = board.set_budget(task.id, usd=3, reason="one more pass", actor="operator:maria")
    assert raised.budget_usd == 3.0
    (entry,) = [a for a in board.audit(task.id) if a.action == "budget_changed"]
    assert entry.actor == "operator:maria"
    assert json.loads(entry.detail or "") == {
        "scope": "task", "unit": "usd", "from": 2.0, "to": 3.0, "reason": "one more pass",
    }  # fmt: skip
    (changed,) = [e for e in board.events(task_id=task.id) if e.kind == "budget_changed"]
    assert (changed.actor, changed.data["from"], changed.data["to"]) == ("operator:maria", 2.0, 3.0)
    assert board.unblock(task.id, note="raised").status == t.TODO
    board.claim(task.id, "ada")
    board.open_execution(task.id, "script", agent="ada")  # $2.50 of $3: starts again


def test_a_budget_change_is_told_in_words_with_its_amounts(board: Board) -> None:
    """The History tab and `kanban events --format table` narrate each event: a budget change
    says which budget (a team's is not "the board"), from what to what, and why."""
    task = board.create_task("t", budget_usd=2)
    board.set_budget(task.id, usd=3, tokens=5000, reason="one more pass")
    board.set_budget(task.id, usd=None, reason="lifted")
    board.set_daily_budget(team_id="web", usd=10, reason="web's share")
    board.set_daily_budget(usd=40, reason="the ceiling")
    board.set_daily_budget(usd=25, reason="tighter")
    said = [narrate(e) for e in board.events() if e.kind == EventKind.BUDGET_CHANGED]
    assert said == [
        "operator raised the budget of TASK-1 from $2.00 to $3.00: one more pass",
        "operator set the token budget of TASK-1 to 5,000 tokens: one more pass",
        "operator removed the budget of TASK-1 ($3.00): lifted",
        "operator set team web's daily budget to $10.00: web's share",
        "operator set the board's daily budget to $40.00: the ceiling",
        "operator lowered the board's daily budget from $40.00 to $25.00: tighter",
    ]


def test_removing_and_lowering_budgets(board: Board) -> None:
    task = board.create_task("t", budget_usd=2, budget_tokens=10)
    lowered = board.set_budget(task.id, usd=1, tokens=None, reason="tighter")
    assert (lowered.budget_usd, lowered.budget_tokens) == (1.0, None)
    same = board.set_budget(task.id, usd=1, reason="no change")
    assert same == lowered  # nothing moved: no audit row, no event
    assert len([a for a in board.audit(task.id) if a.action == "budget_changed"]) == 2
    for bad in ({"usd": -1}, {"usd": "5"}, {"tokens": 1.5}, {}):
        with pytest.raises(BoardError) as refused:
            board.set_budget(task.id, reason="x", **bad)
        assert refused.value.reason is Reason.INVALID_INPUT
    with pytest.raises(BoardError):
        board.create_task("bad", budget_usd=float("nan"))
    # `--tokens 1e16` was told "a whole number of tokens from 0", not its ceiling
    for limits, ceiling in (
        ({"usd": USD_MAX * 10}, USD_MAX),
        ({"tokens": TOKENS_MAX + 1}, TOKENS_MAX),
    ):
        with pytest.raises(BoardError) as too_big:
            board.set_budget(task.id, reason="x", **limits)
        assert too_big.value.message.endswith(f"from 0 to {ceiling:g}")


def test_daily_budgets_of_the_board_and_of_a_team(board: Board, clock: ManualClock) -> None:
    web = board.create_task("web work", team_id="web")
    api = board.create_task("api work", team_id="api")
    board.set_daily_budget(team_id="web", usd=1, reason="web's share")
    board.set_daily_budget(usd=3, reason="the board's ceiling")
    run = running(board, web, "ada")
    closed = board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=1.2)
    assert closed.budget_exceeded is not None and closed.budget_exceeded.scope == "team_daily"
    assert closed.budget_exceeded.owner == "web"
    run = running(board, api, "bob")  # another team: only the board's budget applies
    closed = board.close_execution(run, EXECUTION_SUCCEEDED, agent="bob", cost_usd=1.0)
    assert closed.budget_exceeded is None
    third = board.create_task("more api", team_id="api")
    board.claim(third.id, "cy")
    board.open_execution(third.id, "script", agent="cy")  # $2.20 of the board's $3
    board.close_execution(
        board.executions(third.id)[0].id, EXECUTION_SUCCEEDED, agent="cy", cost_usd=0.8
    )
    fourth = board.create_task("no team")
    board.claim(fourth.id, "dee")
    with pytest.raises(BoardError) as refused:
        board.open_execution(fourth.id, "script", agent="dee")
    assert refused.value.details["budget"]["scope"] == "board_daily"
    assert "the board's daily budget is spent ($3.00 recorded against $3.00)" in (
        refused.value.message
    )
    assert "next UTC day" in refused.value.message
    report = board.budget_report()
    assert [(s.scope, s.owner, s.spent) for s in report.daily] == [
        ("board_daily", None, 3.0), ("team_daily", "web", 1.2),
    ]  # fmt: skip
    clock.advance(ms=86_400_000)  # the next UTC day: the daily budgets start again
    running(board, board.create_task("tomorrow"), "dee")
    assert board.set_daily_budget(usd=None, reason="lifted") is None
    assert [s.scope for s in board.budget_report().daily] == ["team_daily"]


def test_an_agent_does_not_take_its_task_from_under_a_team_budget(
    board: Board, board_path: Path
) -> None:
    """Under web's spent daily budget an agent's start was refused, then its `kanban task edit
    --team ''` moved the task out of web and the run started. Leaving a budgeted team is an
    operator's change; joining one, or leaving a team with none, is not."""
    board.set_daily_budget(team_id="web", usd=1, reason="web's share")
    spent = board.create_task("web work", team_id="web")
    board.close_execution(running(board, spent, "ada"), EXECUTION_SUCCEEDED, agent="ada",
                          cost_usd=1)  # fmt: skip
    task = board.create_task("more web work", team_id="web")
    board.claim(task.id, "bob")
    for team in ("", "api"):
        with unchanged(board_path), pytest.raises(BoardError) as refused:
            board.update_task(task.id, team_id=team, actor="bob")
        assert refused.value.reason is Reason.OPERATOR_ONLY
        assert refused.value.details["field"] == "teamId"
    with pytest.raises(BoardError) as still:
        board.open_execution(task.id, "script", agent="bob")
    assert still.value.reason is Reason.BUDGET_EXCEEDED
    assert (
        board.update_task(task.id, team_id="web", title="same team", actor="bob").team_id == "web"
    )
    loose = board.create_task("no budget", team_id="api")
    board.claim(loose.id, "cy")
    assert board.update_task(loose.id, team_id="web", actor="cy").team_id == "web"  # joins one
    assert board.update_task(task.id, team_id="api", actor="operator:ana").team_id == "api"


def test_the_raise_command_quotes_an_agents_team_id(board: Board, tmp_path: Path) -> None:
    """A team id is an agent's word: the refusal's and the block's `kanban budget set` quote it,
    so pasting the command runs `kanban` with it as one argument, never a second command (`--team
    web; touch /tmp/x` was printed as is)."""
    team = f"web; touch {tmp_path / 'x'}"
    task = board.create_task("web work", team_id=team)
    board.set_daily_budget(team_id=team, usd=1, reason="web's share")
    run = running(board, task, "ada")
    board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=1.5)
    words = ["kanban", "budget", "set", "--team", team, "--daily-usd", "N", "--reason", "WHY"]
    reason = board.get_task(task.id).blocked_reason or ""
    hint = reason.split("`")[1]
    assert shlex.split(hint) == words
    later = board.create_task("more web work", team_id=team)
    board.claim(later.id, "bob")
    with pytest.raises(BoardError) as refused:
        board.open_execution(later.id, "script", agent="bob")
    assert refused.value.message.endswith(": " + hint)


def test_every_budget_over_a_task_is_listed_nearest_first(board: Board) -> None:
    root = board.create_task("root", budget_usd=10)
    kid = board.create_task("kid", parent_task_id=root.id, budget_tokens=500, team_id="web")
    board.set_daily_budget(usd=50, tokens=1_000_000, reason="ceiling")
    board.set_daily_budget(team_id="web", usd=5, reason="share")
    standings = board.budgets_of(kid.id)
    assert [(s.scope, s.unit, s.owner) for s in standings] == [
        ("task", "tokens", kid.id), ("task", "usd", root.id), ("team_daily", "usd", "web"),
        ("board_daily", "usd", None), ("board_daily", "tokens", None),
    ]  # fmt: skip


def test_budgets_come_with_a_plan_and_an_agents_create(board: Board) -> None:
    from boardlib.board import PlanItem

    made = board.create_plan(
        [PlanItem(key="a", title="a", budget_usd=2.5), PlanItem(key="b", title="b", parent="a")]
    )
    assert made["a"].budget_usd == 2.5 and made["b"].budget_usd is None
    sub = board.create_task("sub", parent_task_id=made["a"].id, budget_tokens=9, actor="ada")
    assert sub.budget_tokens == 9  # an agent may set a limit on what it creates


# -- sixteen processes under one budget ---------------------------------------------------------


def _spend_until_stopped(
    path: str, task_id: str, agent: str, cost: float, barrier: Any, results: Any
) -> None:
    """Open and close runs on the agent's own task until a start is refused or a close blocks."""
    outcome = {"agent": agent, "closed": [], "end": None}
    with Board(path, config=RACE_CONFIG, reconcile_orphans=False) as board:
        barrier.wait()
        while outcome["end"] is None:
            try:
                run = board.open_execution(task_id, "script", agent=agent)
            except BoardError as error:
                outcome["end"] = error.reason.value
                break
            closed = board.close_execution(run.id, EXECUTION_SUCCEEDED, agent=agent, cost_usd=cost)
            outcome["closed"].append(run.id)
            if closed.budget_exceeded is not None:
                outcome["end"] = "blocked"
    results.put(outcome)


@pytest.mark.slow
def test_sixteen_processes_closing_runs_under_one_budget(board_path: Path) -> None:
    budget = 6.0
    with Board(board_path) as board:
        parent = board.create_task("parent", budget_usd=budget)
        kids = [board.create_task(f"kid {n}", parent_task_id=parent.id) for n in range(16)]
        for n, kid in enumerate(kids):
            board.claim(kid.id, f"agent-{n}")
    results = CTX.Queue()
    barrier = CTX.Barrier(16)
    workers = [
        CTX.Process(
            target=_spend_until_stopped,
            args=(str(board_path), kid.id, f"agent-{n}", 0.1 + n * 0.013, barrier, results),
        )
        for n, kid in enumerate(kids)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=300) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert {o["end"] for o in outcomes} <= {"blocked", Reason.BUDGET_EXCEEDED.value}
    with Board(board_path, read_only=True) as board:
        runs = [run for kid in kids for run in board.executions(kid.id)]
        closed = {run_id for o in outcomes for run_id in o["closed"]}
        assert {run.id for run in runs} == closed  # every run that started was closed, once
        assert all(run.status == EXECUTION_SUCCEEDED and run.cost_usd for run in runs)
        total = board.get_task(parent.id).subtree_cost_micros
        assert total == sum(to_micros(run.cost_usd or 0) for run in runs)  # the ledger's sum
        assert total >= to_micros(budget)
        for kid in kids:
            stored = board.get_task(kid.id)
            assert stored.subtree_cost_micros == sum(
                to_micros(run.cost_usd or 0) for run in runs if run.task_id == kid.id
            )
        # Replay the log in commit order: no run started once the budget was spent.
        cost = {run.id: to_micros(run.cost_usd or 0) for run in runs}
        spent, starts = 0, 0
        for event in board.events(limit=100_000):
            if event.kind == EventKind.EXECUTION_STARTED:
                assert spent < to_micros(budget), f"{event.data} started at {spent}"
                starts += 1
            elif event.kind == EventKind.EXECUTION_COMPLETED:
                spent += cost[event.data["executionId"]]
        assert starts == len(runs) and spent == total
        blocked = [k for k in kids if board.get_task(k.id).status == t.BLOCKED]
        assert len(blocked) == sum(1 for o in outcomes if o["end"] == "blocked") > 0


@pytest.mark.parametrize(
    ("usd", "shown"),
    [(0, "$0.00"), (0.01, "$0.01"), (5.3, "$5.30"), (1234.5, "$1,234.50"), (0.004, "$0.004"),
     (0.0051, "$0.0051"), (0.00004, "$0.00004"), (0.000001, "$0.000001"), (2.275, "$2.28"),
     (0.375, "$0.38"), (0.0099995, "$0.01"), (0.0000004, "$0.00")],
)  # fmt: skip
def test_an_amount_is_drawn_from_whole_micro_dollars_half_up(usd: float, shown: str) -> None:
    """A $0.00004 budget read `$0.0000` in `budget show` and `$0.00` on the card, and $2.275 read
    `$2.27` beside $0.375 as `$0.38`. The board counts whole micro-dollars, so a cent is shown to
    the micro-dollar, and every amount rounds half up."""
    assert amount(usd, BUDGET_USD) == shown
