"""A board with a day of flow behind it, for the stats screen's screenshots and tests: tasks
claimed, run, reviewed (some rejected) and done through the last 24 hours by a few agents, a lease
that lapsed, gate verdicts, and two budgets: a parent whose subtree has spent $4.20 of $5 (a card
in the warning colour) and a task its run pushed past $1 (blocked by its budget). Deterministic:
a fixed clock and a seeded generator, so every figure on screen is the same each run."""

import json
import random
from pathlib import Path

from boardlib import Board, ManualClock
from boardlib.records import EXECUTION_FAILED, EXECUTION_SUCCEEDED

MINUTE = 60_000
HOUR = 60 * MINUTE
AGENTS = ("agent-ada", "agent-grace", "agent-linus", "agent-barbara")
REVIEWERS = ("agent-rita", "operator:ana")
TITLES = (
    "Parse plan files", "Token auth", "Retry budget", "Lease sweep", "Audit table", "Diff view",
    "SSE feed", "Claim index", "Docs: quick start", "Postgres store", "Gate runner", "Worktree GC",
)  # fmt: skip
PASS = json.dumps({"status": "pass", "attempts": [], "updatedAt": 1})
FAIL = json.dumps({"status": "fail", "attempts": [], "updatedAt": 1})


def build_stats_board(path: Path, clock: ManualClock) -> dict[str, str]:
    """Play a day ending at the clock's current time; returns the budgeted tasks' ids."""
    end = clock.now_ms()
    pick = random.Random(27)
    ids: dict[str, str] = {}
    with Board(path, clock=clock) as board:
        board.set_daily_budget(usd=60, reason="the board's ceiling", actor="operator:ana")
        for n in range(36):
            clock.set(end - 23 * HOUR + n * 38 * MINUTE + pick.randrange(0, 10) * MINUTE)
            agent = AGENTS[n % len(AGENTS)]
            task = board.create_task(f"{TITLES[n % len(TITLES)]} #{n + 1}", role="builder")
            board.claim(task.id, agent, lease_ms=2 * HOUR, runtime="claude-code")
            run = board.open_execution(task.id, "claude-code", agent=agent)
            clock.advance(ms=pick.randrange(4, 30) * MINUTE)
            failed = n % 9 == 4
            board.close_execution(
                run.id, EXECUTION_FAILED if failed else EXECUTION_SUCCEEDED, agent=agent,
                cost_usd=round(pick.uniform(0.05, 0.9), 2),
                input_tokens=pick.randrange(5_000, 90_000),
                output_tokens=pick.randrange(500, 9_000),
            )  # fmt: skip
            if n % 11 == 6:  # this one's holder goes quiet: its lease lapses
                board.extend_lease(task.id, agent, minutes=1)
                clock.advance(minutes=2)
                board.reconcile_stale_tasks()
                continue
            board.complete(task.id, agent)
            clock.advance(ms=pick.choice((3, 8, 12, 25, 45, 70, 150)) * MINUTE)
            board.record_verification(task.id, FAIL if n % 7 == 3 else PASS)
            reviewer = REVIEWERS[n % len(REVIEWERS)]
            if n % 7 == 3:
                board.reject(task.id, reviewer, "the gate failed: see the verdict")
            elif clock.now_ms() < end - 30 * MINUTE:
                board.approve(task.id, reviewer)
        clock.set(end - 3 * HOUR)
        parent = board.create_task("Port the parser to Rust", budget_usd=5, role="builder")
        ids["parent"] = parent.id
        for key, title, cost, agent in (
            ("lexer", "Rust lexer", 2.50, "agent-grace"),
            ("ast", "Rust AST", 1.70, "agent-linus"),
        ):
            kid = board.create_task(title, parent_task_id=parent.id, role="builder")
            ids[key] = kid.id
            board.claim(kid.id, agent, lease_ms=4 * HOUR, runtime="codex")
            run = board.open_execution(kid.id, "codex", agent=agent)
            clock.advance(minutes=40)
            board.close_execution(run.id, EXECUTION_SUCCEEDED, agent=agent, cost_usd=cost,
                                  input_tokens=120_000, output_tokens=8_000)  # fmt: skip
        board.complete(ids["lexer"], "agent-grace")
        clock.advance(minutes=20)
        board.approve(ids["lexer"], "agent-rita")
        board.claim(parent.id, "agent-ada", lease_ms=4 * HOUR, runtime="claude-code")
        spent = board.create_task("Refactor the lexer", budget_usd=1, role="builder")
        ids["spent"] = spent.id
        board.claim(spent.id, "agent-barbara", lease_ms=4 * HOUR, runtime="script")
        run = board.open_execution(spent.id, "script", agent="agent-barbara")
        clock.advance(minutes=25)
        board.close_execution(run.id, EXECUTION_SUCCEEDED, agent="agent-barbara", cost_usd=1.35)
        clock.set(end)
    return ids
