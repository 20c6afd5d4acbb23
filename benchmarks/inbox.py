"""What `Board.inbox()` costs as the board grows: the same 100 items needing a person (50 in
review, 50 blocked) and 20 tasks in progress, on boards of 1,000, 10,000 and 100,000 tasks (the
rest todo and done). Beside it, in the same run and on the same file: one task read by id (the
floor of any read) and every task read (what finding the inbox by scanning would cost).

    python benchmarks/inbox.py [--sizes 1000,10000,100000] [--repeat 30] [--db URL] [--save]

With `--db postgresql://...` each board is a fresh schema on that server (`inbox_bench_<size>`),
ANALYZEd once built (as a board is after autovacuum) and dropped afterwards.
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import record
from postgres_url import postgres_url, with_schema

from boardlib import Board
from boardlib import transitions as t

ATTENTION = 100
RUNNING = 20


def schema_name(size: int) -> str:
    return f"inbox_bench_{size}"


def fresh_schema(url: str, size: int) -> str:
    import psycopg

    name = schema_name(size)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        conn.execute(f"CREATE SCHEMA {name}")
    return with_schema(url, name)


def settle(url: str, size: int) -> None:
    """ANALYZE the built board, so the planner sees its real size (autovacuum would, later)."""
    import psycopg

    with psycopg.connect(with_schema(url, schema_name(size)), autocommit=True) as conn:
        conn.execute("ANALYZE")


def drop_schema(url: str, size: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema_name(size)} CASCADE")


def build(path: Path | str, size: int) -> None:
    """`size` tasks written in one transaction: ATTENTION in review or blocked, RUNNING in
    progress (leases live), the rest todo and done."""
    with Board(path) as board:
        now = board.now()

        def work(tx: Any) -> None:
            for n in range(size):
                values: dict[str, Any] = {
                    "title": f"task {n}",
                    "status": t.DONE if n % 2 else t.TODO,
                    "created_at": now - n,
                    "updated_at": now - n,
                    "status_since": now - n,
                }
                if n < ATTENTION:
                    values["status"] = t.IN_REVIEW if n % 2 else t.BLOCKED
                    values["blocked_reason"] = None if n % 2 else "waiting on a person"
                    values["holders"] = ["builder"]
                elif n < ATTENTION + RUNNING:
                    values |= {
                        "status": t.IN_PROGRESS,
                        "assignee_agent_id": f"agent-{n}",
                        "lease_until": now + 600_000,
                        "last_heartbeat_at": now,
                    }
                values["id"] = f"TASK-{n + 1}"
                tx.insert_task(values)

        board.store.write(work)


def timed(call: Any, repeat: int) -> float:
    """The median of `repeat` calls, in milliseconds."""
    spans = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        spans.append((time.perf_counter() - start) * 1000)
    return statistics.median(spans)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--db", type=postgres_url, help="a PostgreSQL server (default: SQLite)")
    record.add_arguments(parser)
    args = parser.parse_args(argv)
    sizes = [int(part) for part in args.sizes.split(",")]
    name = "inbox_postgres" if args.db else "inbox"
    with record.Run(name, args) as bench, tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            path: Path | str = (
                fresh_schema(args.db, size) if args.db else Path(folder) / f"board-{size}.db"
            )
            try:
                build(path, size)
                if args.db:
                    settle(args.db, size)
                with Board(path, read_only=True) as board:
                    items = board.inbox().count
                    assert items == ATTENTION, items
                    inbox_ms = timed(board.inbox, args.repeat)
                    one_ms = timed(lambda b=board: b.get_task("TASK-1"), args.repeat)
                    every_ms = timed(board.all_tasks, max(3, args.repeat // 10))
            finally:
                if args.db:
                    drop_schema(args.db, size)
            bench.emit(
                {
                    "tasks": size,
                    "items": items,
                    "inbox_ms": round(inbox_ms, 3),
                    "one_task_ms": round(one_ms, 3),
                    "every_task_ms": round(every_ms, 2),
                    "inbox_per_item_us": round(inbox_ms * 1000 / items, 1),
                    "inbox_vs_scan": round(inbox_ms / every_ms, 4),
                    "backend": "postgres" if args.db else "sqlite",
                }
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
