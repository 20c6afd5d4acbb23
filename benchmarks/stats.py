"""The flow figures (`kanban stats`) on big boards, and what budgets and the stats indexes cost the
write path, each against a baseline measured in the same run.

    python benchmarks/stats.py [--sizes 10000:100000,100000:1000000] [--postgres temp|URL]

For each size (tasks:events) one board is generated with a fixed seed: thirty days of work (70%
of the tasks done, with cycle and review times; one run per claimed task over 40 agents; events
of every kind spread evenly, so the default 24-hour window holds 1/30 of them), written straight
into a migrated board (SQLite: executemany; Postgres: COPY, then ANALYZE). Then, per backend:

- every figure's query (`StatsTx` methods, the 24-hour window), 5 times: median and max ms (in
  progress and in review hold 200 and 400 tasks at any size: those lists are bounded by the
  agents and reviewers, not by the board);
- the whole `Board.stats()` call, and again for a 7-day window;
- the baseline: `SELECT count(*)` over the table each figure reads (tasks, events, runs), the
  same 5 times, and each figure's ratio to it.

Then the write path on a copy of the smallest SQLite board: a run's open + close on a task with
no budget and no parent, against one under a three-deep chain of budgeted ancestors; and
`claim_next` with the stats indexes of migration 3 in place, against the same file without them.
One JSON line per figure, per whole call and per write-path pair (benchmarks/record.py).
"""

import argparse
import json
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Generator
from functools import partial
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: the project on the path)
from record import Run, add_arguments

from boardlib import Board, BoardConfig, ManualClock
from boardlib.records import EXECUTION_SUCCEEDED
from boardlib.store.stats_sql import HOUR_MS

NOW = 1_800_000_000_000
DAY = 86_400_000
HORIZON = 30 * DAY
MIN = 60_000
AGENTS = [f"agent-{n}" for n in range(40)]
TEAMS = [f"team-{n}" for n in range(8)]
REPEAT = 5
FIGURES: dict[str, str] = {  # figure -> the table its baseline counts
    "throughput_by_hour": "tasks",
    "cycle_times": "tasks",
    "review_waits": "tasks",
    "review_queue": "tasks",
    "holders_now": "tasks",
    "lease_expiries": "events",
    "gate_verdicts": "events",
    "claims_by_agent": "events",
    "cost_by_agent": "execution_processes",
    "cost_by_task": "execution_processes",
    "cost_by_hour": "execution_processes",
    "cost_by_day": "execution_processes",
}
STATS_INDEXES = (
    "events_kind",
    "tasks_done",
    "tasks_in_review",
    "executions_completed",
    "tasks_team",
)

TASK_COLUMNS = (
    "seq", "id", "title", "status", "priority", "team_id", "role", "kind", "assignee_agent_id",
    "claimed_by", "holders", "claim_epoch", "lease_until", "last_heartbeat_at", "attempts",
    "unmet_deps", "parent_task_id", "cost_usd", "dropped", "scheduled_by", "created_at",
    "updated_at", "completed_at", "budget_usd", "tokens", "subtree_cost_micros", "subtree_tokens",
    "first_claimed_at", "review_entered_at", "review_wait_ms",
)  # fmt: skip
RUN_COLUMNS = (
    "seq", "id", "task_id", "executor_type", "agent_id", "claim_epoch", "status", "claimed_at",
    "started_at", "completed_at", "input_tokens", "output_tokens", "cost_usd",
    "recovery_tombstone", "created_at",
)  # fmt: skip
EVENT_COLUMNS = ("seq", "task_id", "kind", "actor", "data", "created_at", "ttl_seconds")
EVENT_KINDS = (
    ("lease_renewed", 30), ("status_changed", 25), ("task_claimed", 20), ("progress_logged", 10),
    ("execution_started", 5), ("execution_completed", 5), ("verification_recorded", 3),
    ("lease_expired", 2),
)  # fmt: skip


def generate(
    tasks: int, events: int, teams: list[str] = TEAMS
) -> tuple[list[tuple[Any, ...]], ...]:
    """The rows of one board: tasks, runs, events (the same for every backend), its tasks spread
    over `teams` and none."""
    pick = random.Random(tasks * 31 + events)
    # In progress and in review are bounded by the agents and the reviewers, not by the board:
    # 200 and 400 of them whatever its size (the rest is done, todo, blocked or cancelled).
    statuses = ["done"] * 76 + ["todo"] * 15 + ["blocked"] * 4 + ["cancelled"] * 5
    busy = {pick.randrange(1, tasks + 1): "in_progress" for _ in range(200)}
    busy |= {pick.randrange(1, tasks + 1): "in_review" for _ in range(400)}
    task_rows: list[tuple[Any, ...]] = []
    run_rows: list[tuple[Any, ...]] = []
    for seq in range(1, tasks + 1):
        status = busy.get(seq) or pick.choice(statuses)
        created = NOW - pick.randrange(HORIZON)
        agent = pick.choice(AGENTS)
        claimed = status not in ("todo", "cancelled")
        first = created + pick.randrange(1, 60) * MIN if claimed else None
        review = pick.randrange(1, 120) * MIN if status == "done" and pick.random() < 0.8 else 0
        done_at = min(first + pick.randrange(5, 240) * MIN + review, NOW) if first and (
            status == "done"
        ) else None  # fmt: skip
        cost = round(pick.uniform(0.01, 2.0), 4) if claimed else 0.0
        tokens = pick.randrange(1_000, 200_000) if claimed else 0
        parent = f"TASK-{pick.randrange(1, seq)}" if seq > 10 and pick.random() < 0.1 else None
        task_rows.append((
            seq, f"TASK-{seq}", f"generated task {seq}", status, pick.randrange(0, 4),
            pick.choice([*teams, None]), "builder", "code",
            agent if status == "in_progress" else None, agent if claimed else None,
            json.dumps([agent] if claimed else []), 1 if claimed else 0,
            NOW + 10 * MIN if status == "in_progress" else None,
            NOW - pick.randrange(1, 5) * MIN if status == "in_progress" else None,
            1 if claimed else 0, 0, parent, cost, 0, "manual", created,
            done_at or first or created, done_at, 50.0 if seq % 50 == 0 else None, tokens,
            int(cost * 1_000_000 + 0.5), tokens, first,
            NOW - pick.randrange(1, 600) * MIN if status == "in_review" else None, review,
        ))  # fmt: skip
        if claimed:
            running = status == "in_progress"
            finished = None if running else (done_at or min(first + 30 * MIN, NOW))  # type: ignore[operator]
            run_rows.append((
                len(run_rows) + 1, f"EXEC-{len(run_rows) + 1}", f"TASK-{seq}", "claude-code",
                agent, 1, "running" if running else pick.choice(["succeeded"] * 9 + ["failed"]),
                first, first, finished, tokens - tokens // 10, tokens // 10,
                None if running else cost, 0, first,
            ))  # fmt: skip
    kinds = [kind for kind, weight in EVENT_KINDS for _ in range(weight)]
    stamps = sorted(NOW - pick.randrange(HORIZON) for _ in range(events))
    event_rows = []
    for seq, at in enumerate(stamps, start=1):
        kind = pick.choice(kinds)
        data = '{"status":"%s"}' % ("pass" if pick.random() < 0.8 else "fail") if (
            kind == "verification_recorded"
        ) else "{}"  # fmt: skip
        event_rows.append(
            (seq, f"TASK-{pick.randrange(1, tasks + 1)}", kind, pick.choice(AGENTS), data, at, None)
        )
    return task_rows, run_rows, event_rows


def fill_sqlite(path: Path, rows: tuple[list[tuple[Any, ...]], ...]) -> None:
    Board(path, reconcile_orphans=False).close()  # the migrated, empty board
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA synchronous=OFF")
    for table, columns, batch in zip(
        ("tasks", "execution_processes", "events"),
        (TASK_COLUMNS, RUN_COLUMNS, EVENT_COLUMNS),
        rows,
        strict=True,
    ):
        marks = ", ".join("?" * len(columns))
        conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", batch)
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def fill_postgres(url: str, rows: tuple[list[tuple[Any, ...]], ...]) -> None:
    import psycopg

    Board(url, reconcile_orphans=False).close()
    with psycopg.connect(url, autocommit=True) as conn:
        for table, columns, batch in zip(
            ("tasks", "execution_processes", "events"),
            (TASK_COLUMNS, RUN_COLUMNS, EVENT_COLUMNS),
            rows,
            strict=True,
        ):
            with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in batch:
                    copy.write_row(row)
        conn.execute("SELECT setval('event_seq', (SELECT MAX(seq) FROM events))")
        conn.execute("UPDATE event_horizon SET safe_seq = (SELECT MAX(seq) FROM events)")
        conn.execute("ANALYZE")


def timed(call: Callable[[], Any], repeat: int = REPEAT) -> tuple[float, float]:
    """Median and max wall milliseconds of `repeat` calls (after one warm-up)."""
    call()
    spans = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        spans.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(spans), 3), round(max(spans), 3)


def measure(
    location: Any, backend: str, tasks: int, events: int, emit: Callable[[dict[str, Any]], Any]
) -> None:
    clock = ManualClock(NOW)
    with Board(location, clock=clock, read_only=True, reconcile_orphans=False) as board:
        since, until = NOW - DAY + 1, NOW + 1

        def count(table: str) -> Any:
            # the store's own helper: the floor of any read, in its own words
            return board.store.read(lambda tx: tx._fetchone(f"SELECT count(*) FROM {table}"))  # type: ignore[attr-defined]

        counts = {
            table: timed(partial(count, table))[0]
            for table in ("tasks", "events", "execution_processes")
        }
        base = {"backend": backend, "tasks": tasks, "events": events, "window": "24h"}
        for figure, table in FIGURES.items():

            def query(figure: str = figure) -> Any:
                method = getattr_figure(figure)
                return board.store.read(lambda tx: method(tx, since, until))

            median, worst = timed(query)
            ratio = round(median / counts[table], 3) if counts[table] else None
            emit({**base, "figure": figure, "ms": median, "max_ms": worst,
                  "baseline": f"count(*) {table}", "baseline_ms": counts[table],
                  "ratio": ratio})  # fmt: skip
        for window in ("24h", "7d"):
            median, worst = timed(partial(board.stats, since=window))
            baseline = sum(counts.values())
            emit({**base, "window": window, "figure": "stats (all figures)", "ms": median,
                  "max_ms": worst, "baseline": "count(*) of the three tables",
                  "baseline_ms": round(baseline, 3),
                  "ratio": round(median / baseline, 3) if baseline else None,
                  "within_300ms": median <= 300})  # fmt: skip


def getattr_figure(figure: str) -> Callable[[Any, int, int], Any]:
    if figure in ("review_queue", "holders_now"):
        return lambda tx, since, until: getattr(tx, figure)(None)
    return lambda tx, since, until: getattr(tx, figure)(since, until, None)


def write_path(template: Path, folder: Path, emit: Callable[[dict[str, Any]], Any]) -> None:
    """Budgets on the close path, and the stats indexes on the claim path, each against a twin,
    measured in alternating rounds (the median round) so the load on a shared machine falls on
    both alike."""
    config = BoardConfig(lease_ms=3_600_000)
    rounds, per_round = 7, 60
    path = folder / "write.db"
    shutil.copy(template, path)
    with Board(path, clock=ManualClock(NOW), config=config) as board:
        count = rounds * per_round + per_round  # one round's worth to warm up
        plain = [board.create_task(f"plain {n}").id for n in range(count)]
        top = board.create_task("budgeted root", budget_usd=1e6)
        mid = board.create_task("budgeted mid", parent_task_id=top.id, budget_usd=1e6)
        low = board.create_task("budgeted low", parent_task_id=mid.id, budget_tokens=10**12)
        under = [board.create_task(f"under {n}", parent_task_id=low.id).id for n in range(count)]
        for task_id in (*plain, *under):
            board.claim(task_id, "agent-bench")

        def cycle(task_ids: list[str]) -> float:
            start = time.perf_counter()
            for task_id in task_ids:
                run = board.open_execution(task_id, "bench", agent="agent-bench")
                board.close_execution(run.id, EXECUTION_SUCCEEDED, agent="agent-bench",
                                      cost_usd=0.01, input_tokens=100)  # fmt: skip
            return (time.perf_counter() - start) * 1e6 / len(task_ids)

        bare_rounds, budget_rounds = [], []
        for n in range(rounds + 1):
            chunk = slice(n * per_round, (n + 1) * per_round)
            bare, budgeted = cycle(plain[chunk]), cycle(under[chunk])
            if n:  # the first round warms both up
                bare_rounds.append(bare)
                budget_rounds.append(budgeted)
    bare, budgeted = statistics.median(bare_rounds), statistics.median(budget_rounds)
    emit({"backend": "sqlite", "figure": "run open+close (us)", "us": round(budgeted, 1),
          "baseline": "the same with no budget and no parent", "baseline_us": round(bare, 1),
          "ratio": round(budgeted / bare, 3), "runs": rounds * per_round})  # fmt: skip
    boards = {}
    for label, drop in (("with", False), ("without", True)):
        copy = folder / f"claims-{label}.db"
        shutil.copy(template, copy)
        if drop:
            conn = sqlite3.connect(copy)
            for index in STATS_INDEXES:
                conn.execute(f"DROP INDEX {index}")
            conn.commit()
            conn.close()
        board = Board(copy, clock=ManualClock(NOW + HOUR_MS), config=config)
        for n in range(rounds * 200 + 200):
            board.create_task(f"claimable {n}")
        boards[label] = board
    spans: dict[str, list[float]] = {"with": [], "without": []}
    for n in range(rounds + 1):
        for label, board in boards.items():
            start = time.perf_counter()
            for _ in range(200):
                assert board.claim_next("agent-bench") is not None
            if n:
                spans[label].append((time.perf_counter() - start) * 1e6 / 200)
    for board in boards.values():
        board.close()
    with_, without = statistics.median(spans["with"]), statistics.median(spans["without"])
    emit({"backend": "sqlite", "figure": "claim_next (us)", "us": round(with_, 1),
          "baseline": "the same file without the stats indexes", "baseline_us": round(without, 1),
          "ratio": round(with_ / without, 3), "claims": rounds * 200})  # fmt: skip


def postgres_urls(spec: str) -> Generator[str, None, None]:
    """Throwaway schemas on `spec` (a URL, or `temp`: a cluster started for this run)."""
    import psycopg

    cluster = None
    if spec == "temp":
        from tests.pg_cluster import find_binaries, start_cluster

        binaries = find_binaries()
        assert binaries is not None, "no PostgreSQL binaries"
        cluster = start_cluster(binaries)
        spec = cluster.url
    try:
        n = 0
        while True:
            n += 1
            schema = f"kanban_stats_bench_{n}"
            with psycopg.connect(spec, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
                conn.execute(f"CREATE SCHEMA {schema}")
            try:
                yield f"{spec}?options=-csearch_path%3D{schema}"
            finally:
                with psycopg.connect(spec, autocommit=True) as conn:
                    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    finally:
        if cluster is not None:
            cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000:100000,100000:1000000", help="tasks:events,...")
    parser.add_argument("--postgres", metavar="temp|URL", help="also on Postgres")
    add_arguments(parser)
    args = parser.parse_args()
    sizes = [tuple(int(part) for part in size.split(":")) for size in args.sizes.split(",")]
    with Run("stats", args) as bench, tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        schemas = postgres_urls(args.postgres) if args.postgres else None
        templates = []
        for tasks, events in sizes:
            started = time.perf_counter()
            rows = generate(tasks, events)
            path = work / f"board-{tasks}-{events}.db"
            fill_sqlite(path, rows)
            templates.append(path)
            bench.emit({"backend": "sqlite", "tasks": tasks, "events": events,
                        "figure": "generate and load (s)",
                        "s": round(time.perf_counter() - started, 1)})  # fmt: skip
            measure(path, "sqlite", tasks, events, bench.emit)
            if schemas is not None:
                url = next(schemas)
                started = time.perf_counter()
                fill_postgres(url, rows)
                bench.emit({"backend": "postgres", "tasks": tasks, "events": events,
                            "figure": "load and analyze (s)",
                            "s": round(time.perf_counter() - started, 1)})  # fmt: skip
                measure(url, "postgres", tasks, events, bench.emit)
            del rows
        write_path(templates[0], work, bench.emit)
        if schemas is not None:
            schemas.close()


if __name__ == "__main__":
    main()
