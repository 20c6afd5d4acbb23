"""Shared fixtures: a real board with a clock the test drives, on both backends.

Every test that asks for `board_path` (or `board`, or the CLI's `Kanban` built on it) runs twice:
`[sqlite]` on a file in a temp folder, `[postgres]` in a fresh schema of a throwaway cluster the
session starts (tests/pg_cluster.py). A module or test marked `sqlite_only` (it checks the file
itself: pragmas, the writer queue, the WAL) runs on SQLite alone. Without Postgres binaries the
`[postgres]` half fails in CI and is skipped, with the reason, elsewhere.
"""

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from boardlib import Board, BoardConfig, ManualClock, Task
from boardlib import transitions as t

if TYPE_CHECKING:
    from tests.pg_cluster import Cluster
    from tests.worktrees.conftest import Env

BACKENDS = ("sqlite", "postgres")

# The session fails when the tests leave a file in the repository tree (tests/tree_guard.py).
pytest_plugins = ["tests.tree_guard"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: the test inspects the SQLite file itself; one backend only"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        only_sqlite = metafunc.definition.get_closest_marker("sqlite_only") is not None
        chosen = os.environ.get("KANBAN_TEST_BACKENDS")  # e.g. "postgres" to run one half
        backends = ["sqlite"] if only_sqlite else list(BACKENDS)
        if chosen:
            backends = [b for b in backends if b in chosen.split(",")]
        metafunc.parametrize("backend", backends, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator["Cluster"]:
    """One cluster per test process (each xdist worker has its own), started on first use."""
    from tests.pg_cluster import MISSING, find_binaries, in_ci, start_cluster

    binaries = find_binaries()
    if binaries is None:
        if in_ci():
            pytest.fail(f"CI must run the Postgres tests: {MISSING}", pytrace=False)
        pytest.skip(MISSING)
    cluster = start_cluster(binaries)
    try:
        yield cluster
    finally:
        cluster.stop()


_schemas = itertools.count(1)


def new_postgres_board(cluster: "Cluster") -> str:
    """A URL naming a fresh, empty schema: one board per test."""
    import psycopg

    name = f"board_{os.getpid()}_{next(_schemas)}"
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")  # type: ignore[arg-type]
    return f"{cluster.url}?options=-csearch_path%3D{name}"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start_ms=1_800_000_000_000)


@pytest.fixture
def board_path(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """Where the test's board lives: a file path, or (typed loosely, as tests pass it straight to
    `Board` and `KANBAN_DB`) a `postgresql://` URL."""
    if backend == "postgres":
        cluster = request.getfixturevalue("postgres_cluster")
        return new_postgres_board(cluster)  # type: ignore[return-value]
    return tmp_path / "board.db"


@pytest.fixture
def board(board_path: Path, clock: ManualClock) -> Iterator[Board]:
    with Board(board_path, clock=clock, config=BoardConfig()) as opened:
        yield opened


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator["Env"]:
    """A board, a real temporary git repository and `Worktrees` rooted in a temp folder (the
    worktree and gate tests; test_worktrees_complete overrides it with a verify timeout)."""
    from tests.worktrees.conftest import make_env

    made = make_env(tmp_path, monkeypatch)
    yield made
    made.board.close()


def task_in(board: Board, status: str, *, title: str = "task", builder: str = "builder") -> Task:
    """A fresh task driven to `status` through the board's own verbs."""
    initial = t.BACKLOG if status == t.BACKLOG else t.TODO
    task = board.create_task(title, status=initial)
    if status in (t.BACKLOG, t.TODO):
        return task
    if status == t.CANCELLED:
        return board.cancel(task.id)
    board.claim(task.id, builder)
    if status == t.IN_PROGRESS:
        return board.get_task(task.id)
    if status == t.BLOCKED:
        return board.block(task.id, builder, "waiting on a human")
    board.complete(task.id, builder)
    if status == t.IN_REVIEW:
        return board.get_task(task.id)
    assert status == t.DONE
    return board.approve(task.id, "reviewer")


def row(board: Board, task_id: str) -> Task:
    """The task as stored right now (for "refused and changed nothing" checks)."""
    return board.get_task(task_id)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The chaos suite's soak (tests/chaos/test_soak.py): bounded in CI, longer on request."""
    group = parser.getgroup("chaos", "the chaos suite's kill -9 soak")
    group.addoption("--soak-seconds", type=float, help="soak time before the drain (CI: 45)")
    group.addoption("--soak-workers", type=int, default=12, help="workers in the soak")
    group.addoption("--soak-surfaces", help="surfaces the workers cycle over (lib,cli[,http])")
    group.addoption("--soak-db", help="the soak's board: a file, a URL, or 'postgres' (a temp one)")
    group.addoption("--soak-report", help="write the soak's JSON report to this file")


@pytest.fixture
def demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, ManualClock, dict[str, str]]:
    """The TUI tests' fixed board (the screenshots' demo board) in a temp folder that the test
    runs in, in UTC: its path, the clock it was built with, and its ids by story."""
    from tests.tui.conftest import demo_board, utc  # Textual only for the tests that ask

    monkeypatch.chdir(tmp_path)
    utc()
    return demo_board(tmp_path)
