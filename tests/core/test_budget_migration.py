"""A board made by a kanban before budgets (the released schema: migrations 1 and 2) is upgraded
in place, on both backends: its ledger's spend is summed up every parent chain, its tokens
counted, its first claims found in the event log and its daily spend rebuilt, so the budgets and
figures of the upgraded board are true of the work done before it."""

from pathlib import Path

import psycopg

from boardlib import Board
from boardlib.records import DAY_MS
from boardlib.store import postgres_schema, schema
from tests.backends import conninfo, is_postgres

T0 = 1_800_000_000_000
# Written as the released schema stores them: a parent, two children, a grandchild, a loner.
TASKS = [
    ("TASK-1", None, "web", "in_progress", 1),
    ("TASK-2", "TASK-1", "web", "done", 1),
    ("TASK-3", "TASK-1", None, "in_review", 1),
    ("TASK-4", "TASK-2", "api", "done", 2),
    ("TASK-5", None, None, "todo", 0),
]
RUNS = [  # task, cost, input, output, cache read, completed (day offset)
    ("TASK-2", 1.1, 100, 10, None, 0),
    ("TASK-4", 0.25, 5, None, 7, 0),
    ("TASK-4", 2.0, None, None, None, 1),
    ("TASK-3", 0.3, 1, 1, 1, 1),
]


BEFORE_BUDGETS = 2  # the migrations released before budgets (main's 1 and 2)


def make_released_board(location: Path) -> None:
    if is_postgres(location):
        with psycopg.connect(conninfo(location), autocommit=True) as conn:
            conn.execute(postgres_schema.META_DDL)
            conn.execute(
                "INSERT INTO board_meta (id, schema_version) VALUES (1, %s)", (BEFORE_BUDGETS,)
            )
            for migration in postgres_schema.MIGRATIONS[:BEFORE_BUDGETS]:
                for statement in migration:
                    conn.execute(statement)  # type: ignore[arg-type]
            fill(conn.execute, "%s")
            conn.execute("SELECT setval('event_seq', 3)")  # as the board's own inserts leave it
            conn.execute("SELECT setval('audit_seq_seq', 1, false)")
        return
    import sqlite3

    conn = sqlite3.connect(location)
    for migration in schema.MIGRATIONS[:BEFORE_BUDGETS]:
        for statement in migration:
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version={BEFORE_BUDGETS}")
    fill(conn.execute, "?")
    conn.commit()
    conn.close()


def fill(execute: object, mark: str) -> None:
    run = execute  # type: ignore[assignment]
    for seq, (task_id, parent, team, status, attempts) in enumerate(TASKS, start=1):
        run(  # type: ignore[operator]
            "INSERT INTO tasks (seq, id, title, status, team_id, parent_task_id, attempts, "
            f"created_at, updated_at) VALUES ({', '.join([mark] * 9)})",
            (seq, task_id, task_id, status, team, parent, attempts, T0, T0 + 5),
        )
    for seq, (task_id, cost, tokens_in, tokens_out, cache, day) in enumerate(RUNS, start=1):
        done = T0 + day * DAY_MS + 60_000
        run(  # type: ignore[operator]
            "INSERT INTO execution_processes (seq, id, task_id, executor_type, status, "
            "claimed_at, completed_at, cost_usd, input_tokens, output_tokens, cache_read, "
            f"created_at) VALUES ({', '.join([mark] * 12)})",
            (seq, f"EXEC-{seq}", task_id, "sh", "succeeded", T0 + seq, done, cost, tokens_in,
             tokens_out, cache, T0),
        )  # fmt: skip
    for seq, (task_id, at) in enumerate([("TASK-2", T0 + 30), ("TASK-2", T0 + 90),
                                         ("TASK-4", T0 + 40)], start=1):  # fmt: skip
        run(  # type: ignore[operator]
            f"INSERT INTO events (seq, task_id, kind, data, created_at) VALUES "
            f"({mark}, {mark}, {mark}, {mark}, {mark})",
            (seq, task_id, "task_claimed", "{}", at),
        )


def test_an_older_board_is_upgraded_with_its_spend(board_path: Path) -> None:
    make_released_board(board_path)
    with Board(board_path) as board:
        # budgets (3) and every migration after it (plan keys, the inbox...), in one upgrade
        assert board.store.migrations_applied == len(schema.MIGRATIONS) - BEFORE_BUDGETS >= 1
        assert all(task.plan_key is None for task in board.all_tasks())
        tasks = {task.id: task for task in board.all_tasks()}
        assert {k: t.subtree_cost_micros for k, t in tasks.items()} == {
            "TASK-1": 3_650_000, "TASK-2": 3_350_000, "TASK-3": 300_000, "TASK-4": 2_250_000,
            "TASK-5": 0,
        }  # fmt: skip
        assert {k: t.tokens for k, t in tasks.items()} == {
            "TASK-1": 0, "TASK-2": 110, "TASK-3": 3, "TASK-4": 12, "TASK-5": 0,
        }  # fmt: skip
        assert tasks["TASK-1"].subtree_tokens == 125
        # the first claim from the log, else from the ledger, else unknown
        assert tasks["TASK-2"].first_claimed_at == T0 + 30
        assert tasks["TASK-4"].first_claimed_at == T0 + 40
        assert tasks["TASK-3"].first_claimed_at == T0 + 4  # its run's claim
        assert tasks["TASK-1"].first_claimed_at is None and tasks["TASK-5"].first_claimed_at is None
        assert tasks["TASK-3"].review_entered_at == T0 + 5  # in review since its last change
        spend = "SELECT scope, day, cost_micros, tokens FROM daily_spend ORDER BY scope, day"
        rows = board.store.read(lambda tx: tx._fetchall(spend))  # type: ignore[attr-defined]
        day = T0 // DAY_MS
        assert [tuple(row) for row in rows] == [
            ("board", day, 1_350_000, 122), ("board", day + 1, 2_300_000, 3),
            ("team:api", day, 250_000, 12), ("team:api", day + 1, 2_000_000, 0),
            ("team:web", day, 1_100_000, 110),
        ]  # fmt: skip
        assert board.check().ok
        board.set_budget("TASK-1", usd=3.5, reason="a cap after the upgrade")
        assert board.budgets_of("TASK-4")[0].exhausted  # $3.65 of $3.50 already
