"""Shared fixtures: a real board with a clock the test drives, on both backends.

Every test that asks for `board_path` (or `board`, or the CLI's `Kanban` built on it) runs twice:
`[sqlite]` on a file in a temp folder, `[postgres]` in a fresh schema of a throwaway cluster the
session starts (tests/pg_cluster.py). A module or test marked `sqlite_only` (it checks the file
itself: pragmas, the writer queue, the WAL) runs on SQLite alone. Every test that needs Postgres
is `slow`: `pytest -m "not slow"` is the SQLite-only fast loop. Where no cluster can start (no
server binaries; as root, no `runuser`) the `[postgres]` half says so once: one failure in CI,
one skip elsewhere, the rest deselected.
"""

import atexit
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from boardlib import Board, BoardConfig, ManualClock, Task
from boardlib import transitions as t

if TYPE_CHECKING:
    import psycopg

    from tests.pg_cluster import Cluster
    from tests.worktrees.conftest import Env

BACKENDS = ("sqlite", "postgres")

# The operator's own settings and keymap (tui.settings, tui.keymap: $XDG_CONFIG_HOME/kanban, or
# KANBAN_SETTINGS and KANBAN_KEYMAP) are neither read nor written by a test: a drawer test pressed
# `w` and saved diff_wrap = true in ~/.config, and later runs' diff tests failed (no sideways pan
# in a wrapped diff). Each test process, and every process it starts, gets an empty folder of
# its own; a test that wants a file sets the variable to it.
for _variable in ("KANBAN_SETTINGS", "KANBAN_KEYMAP"):
    os.environ.pop(_variable, None)
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="kanban-tests-config-")
atexit.register(shutil.rmtree, os.environ["XDG_CONFIG_HOME"], ignore_errors=True)

# With PYTHONDONTWRITEBYTECODE (set in some environments; CI unsets it) nothing a test process
# compiles was kept: each worker of every run rewrote the assertions of every test module and
# compiled the app's modules anew, ~8 of its ~12 CPU-s of start-up. Kept in the user's cache
# folder, outside the checkout (the modules imported before this file stay uncached).
if sys.dont_write_bytecode:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    sys.pycache_prefix = sys.pycache_prefix or os.path.join(cache, "kanban-tests-pycache")
    sys.dont_write_bytecode = False

# The session fails when the tests leave a file in the repository tree (tests/tree_guard.py).
pytest_plugins = ["tests.tree_guard"]


@pytest.hookimpl(optionalhook=True)  # xdist's hook: a run with -p no:xdist has none
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers a core. A worker spends about a fifth of its time waiting on
    something real (a server starting, a lease running out, the app's timers, a terminal), so
    with one worker a core the cores sat idle a fifth of the run (2 cores: 902 s with 22% idle;
    965 s for the whole CI run, against 763 s and 1% idle with two a core)."""
    return 2 * len(os.sched_getaffinity(0))


@pytest.hookimpl(tryfirst=True)  # before xdist turns `-n` into its default, `--dist load`
def pytest_cmdline_main(config: pytest.Config) -> None:
    """With workers and no `--dist` of the caller's: `worksteal`, so that an idle worker takes
    queued tests from a busy one and one long test near the end does not hold the run. (In
    `addopts` it broke every `pytest -p no:xdist`.)"""
    if getattr(config.option, "numprocesses", None) and config.option.dist == "no":
        config.option.dist = "worksteal"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        only_sqlite = metafunc.definition.get_closest_marker("sqlite_only") is not None
        chosen = os.environ.get("KANBAN_TEST_BACKENDS")  # e.g. "postgres" to run one half
        backends = ["sqlite"] if only_sqlite else list(BACKENDS)
        if chosen:
            backends = [b for b in backends if b in chosen.split(",")]
        metafunc.parametrize("backend", backends, indirect=True)


def _needs_postgres(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    on_postgres = callspec is not None and callspec.params.get("backend") == "postgres"
    return on_postgres or "postgres_cluster" in getattr(item, "fixturenames", ())


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every test that needs the Postgres cluster is `slow`, so `pytest -m "not slow"` (the fast
    loop, docs/development.md) runs every wing on SQLite alone."""
    if _needs_postgres(item):
        item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)  # after -m and -k have chosen
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """When no cluster can start here (tests/pg_cluster.py says why), one Postgres test stays to
    say so (a failure in CI, a skip elsewhere) and the others are deselected: one message
    instead of one per test. Every xdist worker collects alike, so they keep the same one."""
    from tests.pg_cluster import missing_prerequisite

    postgres = [item for item in items if _needs_postgres(item)]
    if len(postgres) < 2 or missing_prerequisite() is None:
        return
    _deselected.append(len(postgres) - 1)
    dropped = set(postgres[1:])
    items[:] = [item for item in items if item not in dropped]
    config.hook.pytest_deselected(items=postgres[1:])


_deselected: list[int] = []  # how many Postgres tests were deselected for want of a cluster


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def _cluster_or_why_not() -> Iterator["Cluster | str"]:
    """One cluster per test process (each xdist worker has its own), started on first use; or,
    when it cannot start, the one sentence that says why."""
    from tests.pg_cluster import find_binaries, missing_prerequisite, start_cluster

    problem = missing_prerequisite()
    binaries = find_binaries()
    if problem is not None or binaries is None:
        yield problem or "no PostgreSQL binaries"
        return
    try:
        cluster = start_cluster(binaries)
    except (OSError, RuntimeError, subprocess.SubprocessError) as error:
        yield f"the test cluster did not start: {error}"
        return
    try:
        yield cluster
    finally:
        admin = _admin.pop(cluster.url, None)
        if admin is not None:
            admin.close()
        cluster.stop()


_told: list[str] = []  # the reason this process already reported as a failure (CI)


@pytest.fixture
def postgres_cluster(_cluster_or_why_not: "Cluster | str") -> "Cluster":
    """The session's cluster. Without one: locally every Postgres test is skipped with the reason
    (one line of `-ra`); in CI the first one in each process fails with it, the rest are skipped
    pointing there: one message, not a traceback per test."""
    from tests.pg_cluster import in_ci

    if not isinstance(_cluster_or_why_not, str):
        return _cluster_or_why_not
    why = _cluster_or_why_not
    if _deselected:
        why += f" ({_deselected[0]} more Postgres tests deselected)"
    if not in_ci():
        pytest.skip(why)
    if not _told:
        _told.append(why)
        pytest.fail(f"CI must run the Postgres tests: {why}", pytrace=False)
    pytest.skip(f"no Postgres cluster (the first Postgres test failed with the reason): {why}")


_schemas = itertools.count(1)
_admin: dict[str, "psycopg.Connection[Any]"] = {}  # by cluster URL: one connection a process
ADMIN_APPLICATION = "kanban-tests-admin"  # its name in pg_stat_activity, never the board's


def new_postgres_board(cluster: "Cluster") -> str:
    """A URL naming a fresh, empty schema: one board per test. The schemas are made on one
    connection kept for the process (a connection each cost a server backend's start)."""
    import psycopg

    name = f"board_{os.getpid()}_{next(_schemas)}"
    for attempt in (1, 2):
        conn = _admin.get(cluster.url)
        if conn is None or conn.closed or conn.broken:
            conn = _admin[cluster.url] = psycopg.connect(
                cluster.url, autocommit=True, application_name=ADMIN_APPLICATION
            )
        try:
            conn.execute(f"CREATE SCHEMA {name}")  # type: ignore[arg-type]
            break
        except psycopg.OperationalError:  # the server dropped it (a test restarted it): anew
            conn.close()
            if attempt == 2:
                raise
    return f"{cluster.url}?options=-csearch_path%3D{name}"


_databases = itertools.count(1)


@pytest.fixture
def own_database(postgres_cluster: "Cluster") -> Iterator[str]:
    """The name of a new, empty database of the session's cluster, dropped after the test: its
    backends, told apart by pg_stat_activity's datname, are the test's own, whatever connections
    other tests of the process left open (or that are still closing) on the cluster."""
    import psycopg

    name = f"own_{os.getpid()}_{next(_databases)}"
    with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
    yield name
    with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")  # type: ignore[arg-type]


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


@pytest.fixture(scope="module")
def _shared_boards() -> Iterator[dict[str, Board]]:
    opened: dict[str, Board] = {}
    yield opened
    for board in opened.values():
        board.close()


@pytest.fixture
def shared_board(
    backend: str,
    _shared_boards: dict[str, Board],
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Board:
    """One board per backend for a module's many cases that each act on a task of their own and
    judge only what they did (a board each costs a schema and seven migrations on Postgres: 0.4
    to 1.7 s on a loaded machine). Its clock is never moved: a test that moves time, counts the
    whole board or needs it empty takes `board`."""
    if backend not in _shared_boards:
        if backend == "postgres":
            location: Path = new_postgres_board(request.getfixturevalue("postgres_cluster"))  # type: ignore[assignment]
        else:
            location = tmp_path_factory.mktemp("shared") / "board.db"
        clock = ManualClock(start_ms=1_800_000_000_000)
        _shared_boards[backend] = Board(location, clock=clock, config=BoardConfig())
    return _shared_boards[backend]


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


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collector off what collection made, and run less often. A test process holds every
    collected test, module and fixture for its whole life, and the app sessions of the TUI wing
    make short-lived objects by the million: with the default thresholds the collector kept
    walking the first for the sake of the second. Frozen and at 20,000 allocations a young
    collection, a TUI test spends about a quarter less CPU (the every-theme legibility run on
    truecolor: 35.6 to 27.3 s of user CPU). The product's own start-up pause is untouched
    (`tui/launch.py`)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
