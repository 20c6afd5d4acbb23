"""The Postgres half of `benchmarks/claim.py --db postgresql://...`: the same boards, the same
workers, the same checks, on a PostgreSQL server, printed next to SQLite's in the same run.

Each worker count gets a fresh board: a new schema in the URL's database, filled from the SQLite
template with `kanban db copy` (which checks counts and content hashes), then ANALYZEd. Schemas are
dropped afterwards. The server's durability settings are printed with the figures: with
`synchronous_commit=on` every claim waits for its WAL flush, which SQLite's `synchronous=NORMAL`
does not do.
"""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
from proc_stat import command_name, cpu_seconds, stat_fields

from boardlib.location import board_location, redact_url
from boardlib.store.copy import copy_board


def with_schema(url: str, schema: str) -> str:
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query)
    options = " ".join([v for k, v in pairs if k == "options"] + [f"-csearch_path={schema}"])
    query = [(k, v) for k, v in pairs if k != "options"] + [("options", options)]
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


def postmaster_pid(url: str) -> int | None:
    """The pid of the server behind `url` when it runs on this machine (the parent of this
    connection's backend), else None."""
    with psycopg.connect(url, autocommit=True) as conn:  # read while the backend lives
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        try:
            backend = row[0] if row else 0
            is_postgres = command_name(backend) == "postgres"
            parent = int(stat_fields(backend)[1])
        except OSError:
            return None
    return parent if is_postgres else None


# The server's own processes (PostgreSQL 13-17 name them so in their command lines); every other
# child of the postmaster is a backend serving a client connection.
BACKGROUND = (
    "checkpointer",
    "background writer",
    "walwriter",
    "autovacuum",
    "logical replication",
    "archiver",
    "stats",
    "startup",
    "walreceiver",
    "walsender",
    "parallel worker",
)


def server_cpu_by_role(postmaster: int | None) -> dict[str, float] | None:
    """CPU seconds (user + system) used so far by the server whose postmaster is `postmaster`,
    in two parts (None when it does not run here):

    - `backends`: the processes serving client connections (the claims' own statements);
    - `background`: the postmaster, its own processes (WAL writer, checkpointer, autovacuum...)
      and every child that exited and was reaped into its time (cutime, cstime; without it a
      run whose connections closed in between reported a negative server CPU per claim).

    Background work comes in lumps (an autovacuum worker of a 100,000-row table spends a large
    part of a second, once), so over a few seconds it is noise against the per-claim cost: the
    split lets a ratio leave it out, and say so. Only that server's processes: the machine may run
    other clusters."""
    if postmaster is None:
        return None
    parts, seen = {"backends": 0.0, "background": 0.0}, False
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            pid = int(entry.name)
            if pid != postmaster and int(stat_fields(pid)[1]) != postmaster:
                continue
            used = cpu_seconds(pid, with_children=True)
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
            role = title.removeprefix("postgres: ")
            background = pid == postmaster or role.startswith(BACKGROUND)
            parts["background" if background else "backends"] += used
            seen = True
        except (OSError, IndexError, ValueError):
            continue
    return parts if seen else None


def server_cpu_s(postmaster: int | None) -> float | None:
    """CPU seconds used so far by the server whose postmaster is `postmaster`, every process
    (`server_cpu_by_role`'s two parts together): the server's share of a claim, when the server
    runs here (None when it does not)."""
    parts = server_cpu_by_role(postmaster)
    return None if parts is None else parts["backends"] + parts["background"]


def server_facts(url: str) -> dict[str, str]:
    with psycopg.connect(url, autocommit=True) as conn:
        facts = {}
        for name in ("server_version", "synchronous_commit", "fsync", "max_connections"):
            row = conn.execute(f"SHOW {name}").fetchone()
            facts[name] = str(row[0]) if row else "?"
    return facts


class Boards:
    """Fresh board schemas filled from a SQLite template, dropped on close."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.schemas: list[str] = []

    def fresh(self, template: Path) -> str:
        schema = f"kanban_bench_{os.getpid()}_{len(self.schemas)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            conn.execute(f"CREATE SCHEMA {schema}")
        self.schemas.append(schema)
        target = with_schema(self.url, schema)
        copy_board(template, board_location(target))
        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute("ANALYZE")
        return target

    def close(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            for schema in self.schemas:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run_postgres(
    url: str,
    templates: dict[str, Path],
    counts: list[int],
    duration: float,
    run: Callable[[Any, int, float], dict[str, Any]],
    emit: Callable[[dict[str, Any]], Any],
) -> dict[tuple[str, int], dict[str, Any]]:
    """Run every board and worker count on Postgres; emit one line each; return them."""
    facts = server_facts(url)
    postmaster = postmaster_pid(url)
    emit({"backend": "postgres", "server": redact_url(url), **facts})
    boards = Boards(url)
    results: dict[tuple[str, int], dict[str, Any]] = {}
    try:
        for name, template in templates.items():
            for workers in counts:
                target = boards.fresh(template)
                cpu_before = server_cpu_s(postmaster)
                outcome = run(target, workers, duration)
                cpu_after = server_cpu_s(postmaster)
                line = {
                    "backend": "postgres",
                    "board": name,
                    "workers": workers,
                    "claims_per_s": round(outcome["claims_per_s"], 1),
                    "p50_ms": round(outcome["p50_ms"], 2),
                    "p99_ms": round(outcome["p99_ms"], 2),
                    "failed": outcome["failed"],
                    "double_claims": outcome["double_claims"],
                    "claims": outcome["claims"],
                    "synchronous_commit": facts["synchronous_commit"],
                }
                for key in ("cpu_us_per_claim", "switches_per_claim"):
                    if key in outcome:
                        line[key] = round(outcome[key], 2)
                if cpu_before is not None and cpu_after is not None and outcome["claims"]:
                    # the server's CPU over the whole run (worker start-up included) per claim
                    line["server_cpu_us_per_claim"] = round(
                        1e6 * (cpu_after - cpu_before) / outcome["claims"], 1
                    )
                results[(name, workers)] = line
                emit(line)
    finally:
        boards.close()
    return results


def postgres_summary(
    sqlite: dict[tuple[str, int], dict[str, Any]],
    postgres: dict[tuple[str, int], dict[str, Any]],
    counts: list[int],
) -> dict[str, Any]:
    """The Postgres issue's targets: at the most workers Postgres claims at least SQLite's rate at
    16; p99 <= 50 ms at 16; no double claims."""
    most = max(counts)
    summary: dict[str, Any] = {"summary": "postgres"}
    for name in sorted({board for board, _ in postgres}):
        if (name, 16) in sqlite and (name, most) in postgres:
            summary[f"{name}: postgres_{most} >= sqlite_16"] = (
                postgres[(name, most)]["claims_per_s"] >= sqlite[(name, 16)]["claims_per_s"]
            )
        if (name, 16) in postgres:
            summary[f"{name}: postgres_p99_16 <= 50ms"] = postgres[(name, 16)]["p99_ms"] <= 50
    summary["zero_double_claims"] = all(line["double_claims"] == 0 for line in postgres.values())
    summary["no_failed_claims"] = all(line["failed"] == 0 for line in postgres.values())
    return summary
