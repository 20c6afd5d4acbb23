"""Migration 10's `pg_trgm` index on Postgres where the role is not a superuser: a role that may
not create the extension gets a board without the index (fresh or from schema 9, migrated once),
one an admin installed is used, two boards migrating at once both get theirs, and the extension
is never placed in (or an index hung on) a board's schema, which dropping would take along. A
board made without it gets it from `kanban db migrate` (never an open), built concurrently:
writers go on meanwhile, two builds build it once, and a killed build's invalid index heals."""

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from boardlib import Board
from boardlib.columns import TaskSearch
from boardlib.store import postgres_schema, schema
from boardlib.store.base import TEXT_INDEX_BUILT, TEXT_INDEX_PRESENT, TEXT_INDEX_UNAVAILABLE
from boardlib.store.postgres import PostgresTx
from boardlib.store.queries import pyformat
from tests.cli.conftest import Kanban
from tests.core.test_text_search import one_built_one_found, search_reads
from tests.pg_cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["Fix the Parser", "fix THE parser again", "ÉCOLE normale", "100% done_right", "red alert"]
WORDS = [
    ("parser",), ("PARSER",), ("école",), ("0% d",), ("e_r",), ("TASK-1",), ("r a",), ("no such",),
]  # fmt: skip


class LikeOnlyTx(PostgresTx):
    """The same transaction, searching as before the index: the ILIKE alone."""

    def _text_index(self) -> str | None:
        return None


@dataclass
class Shared:
    """A database of the cluster, as an admin sees it, and the plain roles made for it."""

    cluster: Cluster
    database: str
    roles: list[str]

    def admin(self) -> "psycopg.Connection[Any]":
        return psycopg.connect(self.cluster.url_of(self.database), autocommit=True)

    def role(self, *grants: str) -> str:
        """A new LOGIN role (not a superuser), granted `grants` (SQL, `{role}` for its name)."""
        name = f"plain_{self.database}_{len(self.roles)}"
        with psycopg.connect(self.cluster.url, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {name} LOGIN")  # type: ignore[arg-type]
        self.roles.append(name)
        with self.admin() as conn:
            for grant in grants:
                conn.execute(grant.format(role=name))  # type: ignore[arg-type]
        return name

    def board_url(self, role: str, schema_name: str) -> str:
        """The URL of a new schema `role` owns, which a board is made in as that role."""
        with self.admin() as conn:
            conn.execute(f"CREATE SCHEMA {schema_name} AUTHORIZATION {role}")  # type: ignore[arg-type]
        server = f"127.0.0.1:{self.cluster.port}/{self.database}"
        return f"postgresql://{role}@{server}?options=-csearch_path%3D{schema_name}"

    def extension_home(self) -> str | None:
        with self.admin() as conn:
            row = conn.execute(
                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                "ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'"
            ).fetchone()
        return None if row is None else str(row[0])

    def indexes(self, schema_name: str) -> dict[str, str]:
        with self.admin() as conn:
            rows = conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s",
                (schema_name,),
            ).fetchall()
        return {str(name): str(definition) for name, definition in rows}


@pytest.fixture
def shared(postgres_cluster: Cluster) -> Iterator[Shared]:
    """A new database whose `public` schema no plain role may create in (PostgreSQL 15's default,
    written out for older servers); dropped after the test, with the roles made for it."""
    name = f"trgm_{os.getpid()}_{time.monotonic_ns() % 10**9}"
    with psycopg.connect(postgres_cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
    made = Shared(postgres_cluster, name, [])
    with made.admin() as conn:
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    yield made
    with psycopg.connect(postgres_cluster.url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")  # type: ignore[arg-type]
        for role in made.roles:
            conn.execute(f"DROP ROLE {role}")  # type: ignore[arg-type]


def _fill(board: Board) -> list[str]:
    made = []
    for n, text in enumerate(TEXTS):
        title, description = (text, None) if n % 2 else (f"task {n}", text)
        task = board.create_task(title, description=description)
        made.append(task.id)
        if n % 2 == 0:  # some finished, so the finished columns' reads are compared too
            board.claim(task.id, "w")
            board.complete(task.id, "w")
            board.approve(task.id, "reviewer")
    return made


def _searches_as_the_ilike_alone(board: Board) -> None:
    for words in WORDS:

        def both(tx: Any, words: tuple[str, ...] = words) -> tuple[list[object], list[object]]:
            like_only = LikeOnlyTx(tx.conn, tx.store, locking=False)
            return search_reads(tx, words), search_reads(like_only, words)

        indexed, like_only = board.store.read(both)
        assert indexed == like_only, words
    assert [t.title for t in board.search("again")] == ["fix THE parser again"]


def _version(url: str) -> int:
    with Board(url) as board:
        return board.store.schema_version()


def test_a_role_that_may_not_create_the_extension_gets_a_board_without_the_index(
    shared: Shared,
) -> None:
    """No CREATE on the database: migration 10 makes no index, raises nothing, and the board
    says version 10 (opening it again migrates nothing); its search finds the ILIKE's rows."""
    role = shared.role()
    url = shared.board_url(role, "fresh")
    with Board(url) as board:
        assert board.store.schema_version() == schema.SCHEMA_VERSION
        _fill(board)
        _searches_as_the_ilike_alone(board)
    assert shared.extension_home() is None
    assert schema.TEXT_INDEX not in shared.indexes("fresh")
    assert _version(url) == schema.SCHEMA_VERSION

    # a board of schema 9, made by the same role before the index: migrated once, to 10
    old = shared.board_url(role, "older")
    with psycopg.connect(old.split("?")[0], options="-csearch_path=older", autocommit=True) as c:
        c.execute(postgres_schema.META_DDL)  # type: ignore[arg-type]
        c.execute("INSERT INTO board_meta (id, schema_version) VALUES (1, 9)")
        for migration in postgres_schema.MIGRATIONS[:9]:
            for statement in migration:
                c.execute(statement)  # type: ignore[arg-type]
        c.execute(
            "INSERT INTO tasks (seq, id, title, description, status, created_at, updated_at) "
            "VALUES (1, 'TASK-1', 'Legacy Work', 'written before the index', 'done', 1, 1)"
        )
    with Board(old) as board:
        assert board.store.schema_version() == schema.SCHEMA_VERSION
        assert [t.id for t in board.search("before the")] == ["TASK-1"]
        assert [t.id for t in board.search("LEGACY")] == ["TASK-1"]
        _fill(board)
        _searches_as_the_ilike_alone(board)
    assert schema.TEXT_INDEX not in shared.indexes("older")
    assert _version(old) == schema.SCHEMA_VERSION


def test_an_extension_an_admin_installed_serves_a_plain_roles_board(shared: Shared) -> None:
    """pg_trgm in `public`, installed by an admin: the board of a role that could not install it
    gets its GIN index there, and the search's ILIKE is read through it."""
    with shared.admin() as conn:
        conn.execute("CREATE EXTENSION pg_trgm SCHEMA public")
    url = shared.board_url(shared.role(), "plain")
    with Board(url) as board:
        made = _fill(board)
        _searches_as_the_ilike_alone(board)
        where, params = board.store.read(lambda tx: tx._search(TaskSearch(words=("parser",))))
    made_index = shared.indexes("plain").get(schema.TEXT_INDEX, "")
    assert "gin_trgm_ops" in made_index, made_index
    query = pyformat(f"SELECT id FROM tasks WHERE TRUE{where}")
    with psycopg.connect(url.split("?")[0], options="-csearch_path=plain") as conn:
        conn.execute("SET enable_seqscan = off")
        plan = " ".join(row[0] for row in conn.execute(f"EXPLAIN {query}", params))  # type: ignore[arg-type]
        assert schema.TEXT_INDEX in plan, plan
        found = sorted(row[0] for row in conn.execute(query, params))  # type: ignore[arg-type]
    assert found == sorted(made[:2])


def _open_in_a_process(url: str) -> "subprocess.Popen[str]":
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import sys; from boardlib import Board; Board(sys.argv[1]).close()"
    return subprocess.Popen(
        [sys.executable, "-c", code, url], env=env, stderr=subprocess.PIPE, text=True
    )


def test_two_boards_migrating_at_once_both_get_the_index(shared: Shared) -> None:
    """Two processes make two boards of one database while the extension is not there yet: both
    see it missing and create it, and one waits for the other's COMMIT (held here by a lock on
    pg_extension until both are waiting on it). The one that finds it made at that moment still
    makes its own index on it, and neither fails."""
    role = shared.role(
        f"GRANT CREATE ON DATABASE {shared.database} TO {{role}}",
        "GRANT CREATE ON SCHEMA public TO {role}",
    )
    urls = [shared.board_url(role, "board_a"), shared.board_url(role, "board_b")]
    with shared.admin() as admin, shared.admin() as watch:
        admin.execute("BEGIN")
        admin.execute("LOCK TABLE pg_catalog.pg_extension IN ACCESS EXCLUSIVE MODE")
        processes = [_open_in_a_process(url) for url in urls]
        deadline = time.monotonic() + 60
        waiting = 0
        while waiting < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            row = watch.execute(  # autocommit: a new look at the activity each time
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND usename = %s "
                "AND wait_event_type = 'Lock'", (shared.database, role),
            ).fetchone()  # fmt: skip
            waiting = int(row[0]) if row is not None else 0
        admin.execute("COMMIT")
        assert waiting == 2, "both migrations wait on pg_extension"
    for process in processes:
        _, errors = process.communicate(timeout=120)
        assert process.returncode == 0, errors
    assert shared.extension_home() == "public"
    for url, name in zip(urls, ("board_a", "board_b"), strict=True):
        assert "gin_trgm_ops" in shared.indexes(name).get(schema.TEXT_INDEX, ""), name
        assert _version(url) == schema.SCHEMA_VERSION
        with Board(url) as board:
            _fill(board)
            _searches_as_the_ilike_alone(board)


def test_the_extension_is_never_placed_in_a_boards_schema(shared: Shared) -> None:
    """A role that may create the extension but not in `public`: it is not placed in the board's
    schema, where another board's index would hang on it and `DROP SCHEMA ... CASCADE` of the
    first would take the extension and that index along: no index, and dropping one board's
    schema leaves the other's indexes as they were."""
    role = shared.role(f"GRANT CREATE ON DATABASE {shared.database} TO {{role}}")
    first, second = shared.board_url(role, "first"), shared.board_url(role, "second")
    with Board(first) as board:
        _fill(board)
    with Board(second) as board:
        _fill(board)
    before = shared.indexes("second")
    with shared.admin() as conn:
        conn.execute("DROP SCHEMA first CASCADE")
    assert shared.indexes("second") == before
    assert schema.TEXT_INDEX not in before
    assert shared.extension_home() is None
    with Board(second) as board:
        _searches_as_the_ilike_alone(board)


def test_an_extension_found_in_a_boards_schema_is_not_used(shared: Shared) -> None:
    """pg_trgm an admin (or the migration before this fix) placed in a board's schema: another
    board hangs no index on it, so dropping the first board's schema leaves it as it was."""
    role = shared.role()
    third, fourth = shared.board_url(role, "third"), shared.board_url(role, "fourth")
    with Board(third) as board:
        _fill(board)
    with shared.admin() as conn:
        conn.execute("CREATE EXTENSION pg_trgm SCHEMA third")
    with Board(fourth) as board:
        _fill(board)
        _searches_as_the_ilike_alone(board)
    before = shared.indexes("fourth")
    with shared.admin() as conn:
        conn.execute("DROP SCHEMA third CASCADE")
    assert shared.indexes("fourth") == before
    with Board(fourth) as board:
        _searches_as_the_ilike_alone(board)


def _index_is_read(url: str, schema_name: str) -> None:
    """The board's search for a word is planned on its text index (seqscan off: a few rows)."""
    with Board(url) as board:
        where, params = board.store.read(lambda tx: tx._search(TaskSearch(words=("parser",))))
    query = pyformat(f"SELECT id FROM tasks WHERE TRUE{where}")
    with psycopg.connect(url.split("?")[0], options=f"-csearch_path={schema_name}") as conn:
        conn.execute("SET enable_seqscan = off")
        plan = " ".join(row[0] for row in conn.execute(f"EXPLAIN {query}", params))  # type: ignore[arg-type]
    assert schema.TEXT_INDEX in plan, plan


def _valid(shared: Shared, schema_name: str) -> bool | None:
    """The board's text index: None when there is none, else whether it is valid."""
    with shared.admin() as conn:
        row = conn.execute(
            "SELECT x.indisvalid AND x.indisready FROM pg_index x JOIN pg_class i "
            "ON i.oid = x.indexrelid WHERE i.relnamespace = %s::regnamespace AND i.relname = %s",
            (schema_name, schema.TEXT_INDEX),
        ).fetchone()
    return None if row is None else bool(row[0])


def _late_board(shared: Shared, schema_name: str) -> tuple[str, str]:
    """A plain role's board, filled, made where pg_trgm could not be had; then an admin installs
    the extension. Its role and URL."""
    role = shared.role()
    url = shared.board_url(role, schema_name)
    with Board(url) as board:
        _fill(board)
    assert _valid(shared, schema_name) is None
    with shared.admin() as conn:
        conn.execute("CREATE EXTENSION pg_trgm SCHEMA public")
    return role, url


@contextlib.contextmanager
def _tasks_held(shared: Shared, name: str) -> "Iterator[psycopg.Connection[Any]]":
    """An admin's open transaction holding board `name`'s tasks as a writer does (a concurrent
    index build waits for it), and a second admin connection to watch with; committed on
    leaving, whatever the test found."""
    with shared.admin() as admin, shared.admin() as watch:
        admin.execute("BEGIN")
        admin.execute(f"LOCK TABLE {name}.tasks IN ROW EXCLUSIVE MODE")
        try:
            yield watch
        finally:
            admin.execute("COMMIT")


def _migrate(url: str) -> "subprocess.Popen[str]":
    return Kanban(url, init=False).popen("db", "migrate")  # type: ignore[arg-type]


def _builder_waits(shared: Shared, role: str, watch: "psycopg.Connection[Any]") -> list[int]:
    """The backends of `role` waiting on a lock (the build, held), once one does."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = watch.execute(  # autocommit: a new look at the activity each time
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND usename = %s "
            "AND wait_event_type = 'Lock'", (shared.database, role),
        ).fetchall()  # fmt: skip
        if rows:
            return [int(row[0]) for row in rows]
        time.sleep(0.05)
    raise AssertionError("no build waited")


def test_a_board_made_without_the_extension_gets_its_index_from_db_migrate(
    shared: Shared,
) -> None:
    """A board made where pg_trgm could not be had, at the current version: after an admin
    installs the extension no open builds the index (a long build in some agent's call), and
    `db check` says it is missing and what builds it; `kanban db migrate` by a role that may
    write the tables but does not own them (so may not index them) builds nothing; the owner's
    builds it (no migration counted), and the next finds it; searches read through it."""
    _, url = _late_board(shared, "late")
    with Board(url, read_only=True) as board:
        assert len(board.search("parser")) == 2
    with Board(url) as board:
        assert board.store.migrations_applied == 0
        problems = board.check().problems
    assert _valid(shared, "late") is None
    assert any("`kanban db migrate`" in problem for problem in problems), problems
    writer = shared.role(
        "GRANT USAGE ON SCHEMA late TO {role}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA late TO {role}",
        "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA late TO {role}",
    )
    server = f"127.0.0.1:{shared.cluster.port}/{shared.database}"
    with Board(f"postgresql://{writer}@{server}?options=-csearch_path%3Dlate") as board:
        assert board.build_text_index() == TEXT_INDEX_UNAVAILABLE
        board.create_task("written by a role that does not own the tables")
    assert _valid(shared, "late") is None

    kanban = Kanban(url, init=False)  # type: ignore[arg-type]
    migrated = kanban.ok("db", "migrate")
    assert (migrated["applied"], migrated["textIndex"]) == (0, TEXT_INDEX_BUILT)
    assert "gin_trgm_ops" in shared.indexes("late").get(schema.TEXT_INDEX, "")
    assert _valid(shared, "late") is True
    assert kanban.ok("db", "migrate")["textIndex"] == TEXT_INDEX_PRESENT
    assert kanban.ok("db", "check")["ok"] is True
    with Board(url) as board:
        _searches_as_the_ilike_alone(board)
    _index_is_read(url, "late")


def test_the_late_build_does_not_stop_the_boards_writers(shared: Shared) -> None:
    """`kanban db migrate` building the late index, held mid-build (an admin's transaction with
    the tasks table locked as a writer does, which the build waits for): another agent opens the
    board and creates a task meanwhile, at once. `CREATE INDEX` inside the board's lock (the
    old way) kept that write waiting for the whole build (7-11 s at 100,000 tasks)."""
    role, url = _late_board(shared, "busy")
    with _tasks_held(shared, "busy") as watch:
        builder = _migrate(url)
        _builder_waits(shared, role, watch)
        written: list[object] = []

        def write() -> None:
            with Board(url) as board:
                written.append(board.create_task("written during the build").id)

        started = time.monotonic()
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        writer.join(timeout=15)
        took = time.monotonic() - started
        assert written, f"the write waited for the build ({took:.1f} s)"
        assert builder.poll() is None, "the build was still held while the write went"
    out, errors = builder.communicate(timeout=120)
    assert builder.returncode == 0, errors
    assert json.loads(out)["textIndex"] == TEXT_INDEX_BUILT
    assert _valid(shared, "busy") is True
    with Board(url) as board:
        assert [t.title for t in board.search("during the build")] == ["written during the build"]
    _index_is_read(url, "busy")


def test_a_killed_build_leaves_a_board_the_next_migrate_heals(shared: Shared) -> None:
    """A concurrent build killed midway (its process and its server backend) leaves an invalid
    index: the search never reads it but every write keeps it. `db check` says so, and the next
    `kanban db migrate` drops it and builds it whole."""
    role, url = _late_board(shared, "killed")
    with _tasks_held(shared, "killed") as watch:
        builder = _migrate(url)
        pids = _builder_waits(shared, role, watch)
        builder.kill()
        builder.wait(timeout=30)
        for pid in pids:
            watch.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert _valid(shared, "killed") is False
    kanban = Kanban(url, init=False)  # type: ignore[arg-type]
    checked = kanban.run("db", "check")
    assert checked.code != 0 and "left so by a build that did not finish" in checked.err
    assert kanban.ok("db", "migrate")["textIndex"] == TEXT_INDEX_BUILT
    assert _valid(shared, "killed") is True
    assert kanban.ok("db", "check")["ok"] is True
    with Board(url) as board:
        _searches_as_the_ilike_alone(board)
    _index_is_read(url, "killed")


def test_two_builds_at_once_build_the_late_index_once(shared: Shared) -> None:
    """Two `kanban db migrate` at once, the build held: one builds, the other asks for the
    builders' lock until it is free (waiting on it in a statement would be one of the
    transactions the build waits for: a deadlock), then finds the index made."""
    role, url = _late_board(shared, "raced")
    with _tasks_held(shared, "raced") as watch:
        builders = [_migrate(url) for _ in range(2)]
        waiting = _builder_waits(shared, role, watch)
        time.sleep(1.5)  # both past their open: one building, one asking for the lock
        waiting = _builder_waits(shared, role, watch)
        assert len(waiting) == 1, "one builds; the other waits on no lock"
    one_built_one_found(builders)
    assert _valid(shared, "raced") is True
    _index_is_read(url, "raced")
