"""What one new PostgreSQL board costs: `kanban db init` on a server, and every `[postgres]` test.

    python benchmarks/new_board.py [--boards 40] [--db URL]

On a throwaway cluster started for the run (tests/pg_cluster.py), or the server behind `--db` (its
CPU is counted only when it runs on this machine), each of `--boards` boards is made as a test makes
its own: a fresh schema (`CREATE SCHEMA`, here on a connection of its own), then
`Board(url)` and `close()`, then one more open and close of the made board. Per phase, per board:
client CPU (this process), server CPU (the cluster's processes, the backends that exited
included: benchmarks/claim_postgres.py), wall time; and once more with `log_statement=all` on the
board's connections, the round trips (statements the server logged: one per simple query, however
many statements it holds, or per extended-protocol execute) and the connections opened.

The baseline, measured in the same run on the same server: the board made the stepwise way, one
statement a round trip, each migration's version bumped on its own (`step_by_step` below: what
opening did before the schema went in one execute).
Add `--folder /tmp` for the cluster on disk rather than where the tests keep theirs.
"""

import argparse
import re
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import script_path  # noqa: F401  (first: the project on the path)
from claim_postgres import postmaster_pid, server_cpu_s, with_schema
from record import Run, add_arguments

from boardlib import Board, BoardConfig, ManualClock
from boardlib.store import postgres_schema

LOGGED = re.compile(r"\[(\d+)\] LOG:  (?:statement|execute [^:]*):")


def step_by_step(url: str) -> None:
    """The baseline: the board's schema one statement a round trip, in one transaction."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("BEGIN")
        conn.execute(postgres_schema.META_DDL)
        conn.execute("INSERT INTO board_meta (id, schema_version) VALUES (1, 0)")
        for version, migration in enumerate(postgres_schema.MIGRATIONS, start=1):
            for statement in migration:
                conn.execute(statement)
            conn.execute("UPDATE board_meta SET schema_version = %s", (version,))
        conn.execute("COMMIT")


def open_and_close(url: str) -> None:
    Board(url, clock=ManualClock(start_ms=1_800_000_000_000), config=BoardConfig()).close()


class Schemas:
    """Fresh schema names on one server, each made as tests/conftest.py makes a test's board."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.count = 0

    def make(self, *, logged: bool = False) -> str:
        self.count += 1
        name = f"kanban_new_board_bench_{self.count}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
            conn.execute(f"CREATE SCHEMA {name}")
        board = with_schema(self.url, name)
        return board + "%20-clog_statement%3Dall" if logged else board

    def drop_all(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            for n in range(1, self.count + 1):
                conn.execute(f"DROP SCHEMA IF EXISTS kanban_new_board_bench_{n} CASCADE")


def measure(
    boards: list[str],
    work: Callable[[str], None],
    postmaster: int | None,
    *,
    make: Callable[[], str] | None = None,
) -> dict[str, float | None]:
    """Client CPU, server CPU and wall per board (milliseconds) for `work` on each board."""
    server_before = server_cpu_s(postmaster)
    client_before = time.process_time()
    wall_before = time.perf_counter()
    spans = []
    for url in boards:
        began = time.perf_counter()
        work(make() if make is not None else url)
        spans.append(time.perf_counter() - began)
    client = time.process_time() - client_before
    wall = time.perf_counter() - wall_before
    time.sleep(0.05)  # the last backend's exit reaches the postmaster's children's time
    server_after = server_cpu_s(postmaster)
    server = None
    if server_before is not None and server_after is not None:
        server = server_after - server_before
    n = len(boards)
    return {
        "client_cpu_ms": round(client / n * 1000, 2),
        "server_cpu_ms": None if server is None else round(server / n * 1000, 2),
        "cpu_ms": None if server is None else round((client + server) / n * 1000, 2),
        "wall_ms": round(wall / n * 1000, 2),
        "wall_median_ms": round(statistics.median(spans) * 1000, 2),
    }


def round_trips(
    log: Path | None, url: str, work: Callable[[str], None], before: Callable[[str], None] | None
) -> dict[str, Any]:
    """Statements the server logged for `work` on `url` (after `before`), and its connections."""
    if log is None:
        return {}
    if before is not None:
        before(url)
    time.sleep(0.2)  # the server writes its log as it goes; leave `before`'s lines behind
    start = log.stat().st_size
    work(url)
    time.sleep(0.2)
    with log.open("rb") as stream:
        stream.seek(start)
        lines = stream.read().decode(errors="replace")
    pids = [match.group(1) for match in LOGGED.finditer(lines)]
    return {"round_trips": len(pids), "connections": len(set(pids))}


@contextmanager
def server(db: str | None, parent: Path | None) -> Iterator[tuple[str, Path | None]]:
    if db is not None:
        yield db, None
        return
    from tests.pg_cluster import find_binaries, start_cluster

    binaries = find_binaries()
    assert binaries is not None, "no PostgreSQL binaries"
    cluster = start_cluster(binaries, parent=parent)
    try:
        yield cluster.url, cluster.folder / "server.log"
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=40, help="boards made per phase")
    parser.add_argument("--db", metavar="URL", help="a server to use (default: a temp cluster)")
    parser.add_argument(
        "--folder", type=Path, help="the temp cluster's parent folder (default: as the tests')"
    )
    add_arguments(parser)
    args = parser.parse_args()
    with Run("new_board", args) as run, server(args.db, args.folder) as (url, log):
        postmaster = postmaster_pid(url)
        schemas = Schemas(url)
        open_and_close(schemas.make())  # warm: imports, the server's caches
        step_by_step(schemas.make())
        n = args.boards
        try:
            made = measure([""] * n, lambda _: None, postmaster, make=schemas.make)
            run.emit({"phase": "create schema (a connection each)", "boards": n, **made})
            fresh = [schemas.make() for _ in range(n)]
            phases: list[tuple[str, list[str], Callable[[str], None], Any]] = [
                ("new board: open + close", fresh, open_and_close, None),
                ("made board: open + close", fresh, open_and_close, open_and_close),
                ("baseline: step by step", [schemas.make() for _ in range(n)], step_by_step, None),
            ]
            for phase, boards, work, before in phases:
                made = measure(boards, work, postmaster)
                trips = round_trips(log, schemas.make(logged=True), work, before)
                run.emit({"phase": phase, "boards": n, **made, **trips})
        finally:
            schemas.drop_all()


if __name__ == "__main__":
    main()
