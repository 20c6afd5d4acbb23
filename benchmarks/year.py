"""Reads on a year's board that the other benchmarks leave out: a text search, a team's first task
(`born`), one team's flow figures and `kanban budget show`, at 100,000 tasks.

    python benchmarks/year.py [--tasks 100000] [--teams 20]

The board is `stats.generate`'s (81% done or cancelled, one task in 50 with a budget), its tasks
spread over `--teams` teams, written straight into a migrated SQLite file. JSON lines
(benchmarks/record.py); each read in process is timed in CPU milliseconds (SQLite reads a warm
file on the caller's thread, so other load on the machine moves it less than wall time), the
median of 20 calls (5 for `Board.stats` and drawing):

- search: the store's query for `kanban task search` (`list_tasks`), the TUI's palette
  (`search_tasks`) and its filter of the live columns (`matching_ids`), with a word no task
  holds, typed plainly (one LIKE pattern a column) and with a control picture in it (two:
  `queries.text_match`), each looked up in the full-text index first (schema migration 10);
- born: `born(team)` and `born(None)`, each with SQLite's plan;
- stats: `Board.stats()`, the board's and one team's, over 24 hours and 7 days;
- budget show: `Board.budget_report()` and drawing it (`render_budgets`) in process, and the
  CPU seconds of the processes `kanban budget show` (table, JSON) and `kanban --version`.
"""

import argparse
import io
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: the project on the path)
import stats
from record import Run, add_arguments
from rich.console import Console

from boardlib import Board, ManualClock
from boardlib.columns import TaskSearch
from kanban.cli.stats_table import render_budgets

MISSING = "zzz-nowhere"  # held by no task (without the index every row was read)
PICTURED = "zzz\u241bnowhere"  # the same with ␛ in it: matched as typed and as ESC


def p50(
    call: Callable[[], Any], repeat: int = 20, clock: Callable[[], float] = time.process_time
) -> float:
    """Median CPU milliseconds (or `clock`'s) of `repeat` calls, after one warm-up."""
    call()
    spans = []
    for _ in range(repeat):
        start = clock()
        call()
        spans.append((clock() - start) * 1000)
    return round(statistics.median(spans), 3)


def cpu_seconds(argv: list[str], repeat: int = 3) -> float:
    """Median user + system CPU seconds of running `argv` (output discarded)."""
    spent = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return round(statistics.median(spent), 3)


def search_reads(word: str) -> dict[str, Callable[[Any], Any]]:
    """The store's text searches, each one read of `word`."""
    words = TaskSearch(words=(word,), include_dropped=True)
    return {
        "list_tasks (kanban task search)": lambda tx: tx.list_tasks(
            text=word, include_dropped=True, limit=200
        ),
        "search_tasks (the TUI's palette)": lambda tx: tx.search_tasks(words, 30),
        "matching_ids (the TUI's filter, live tasks)": lambda tx: tx.matching_ids(words, None),
    }


def search(board: Board, emit: Callable[[dict[str, Any]], Any]) -> None:
    for word, patterns in ((MISSING, 1), (PICTURED, 2)):
        for query, read in search_reads(word).items():
            ms = p50(lambda read=read: board.store.read(read))  # type: ignore[misc]
            emit({"part": "search", "query": query, "patterns": patterns, "cpu_ms": ms})


def born(board: Board, path: Path, team: str, emit: Callable[[dict[str, Any]], Any]) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    for owner, where, params in (
        (team, "team_id = :team", {"team": team}),
        (None, "parent_task_id IS NULL", {}),
    ):
        query = f"SELECT MIN(created_at) FROM tasks WHERE {where}"
        plan = "; ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {query}", params))
        rows = conn.execute(f"SELECT COUNT(*) FROM tasks WHERE {where}", params).fetchone()[0]
        ms = p50(lambda owner=owner: board.store.read(lambda tx: tx.born(owner)))  # type: ignore[misc]
        emit({"part": "born", "team": owner, "rows": rows, "plan": plan, "cpu_ms": ms})
    conn.close()


def flow(board: Board, team: str, emit: Callable[[dict[str, Any]], Any]) -> None:
    for window in ("24h", "7d"):
        for owner in (None, team):
            ms = p50(lambda: board.stats(since=window, team_id=owner), repeat=5)  # noqa: B023
            emit({"part": "stats", "window": window, "team": owner, "cpu_ms": ms})


def budget_show(board: Board, path: Path, emit: Callable[[dict[str, Any]], Any]) -> None:
    report = board.budget_report()
    doc = report.to_json()

    def draw() -> None:
        render_budgets(Console(file=io.StringIO(), width=120), doc)

    kanban = [str(Path(sys.executable).parent / "kanban"), "--db", str(path)]
    emit({
        "part": "budget show", "budgeted tasks": len(report.tasks),
        "report_cpu_ms": p50(board.budget_report),
        "render_cpu_ms": p50(draw, repeat=5),
        "cli_table_cpu_s": cpu_seconds([*kanban, "--format", "table", "budget", "show"]),
        "cli_json_cpu_s": cpu_seconds([*kanban, "budget", "show"]),
        "cli_version_cpu_s": cpu_seconds([*kanban, "--version"]),
    })  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--teams", type=int, default=20)
    add_arguments(parser)
    args = parser.parse_args()
    teams = [f"team-{n}" for n in range(args.teams)]
    with Run("year", args) as bench, tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "year.db"
        stats.fill_sqlite(path, stats.generate(args.tasks, args.tasks, teams))
        with Board(path, clock=ManualClock(stats.NOW), read_only=True) as board:
            bench.emit({"part": "board", "tasks": args.tasks, "teams": args.teams})
            search(board, bench.emit)
            born(board, path, teams[0], bench.emit)
            flow(board, teams[0], bench.emit)
            budget_show(board, path, bench.emit)


if __name__ == "__main__":
    main()
