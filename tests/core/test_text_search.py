"""Text search through SQLite's full-text index (schema migration 10, `queries.text_match`): the
same rows in the same order as the LIKE alone, whatever the words (wildcards, quotes, Unicode
case, control pictures); kept by a task's creation and text edits, never by a claim or a beat."""

import hashlib
import json
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardlib import Board, ManualClock
from boardlib.columns import FINISHED, TaskSearch
from boardlib.store import schema
from boardlib.store.base import TEXT_INDEX_BUILT, TEXT_INDEX_PRESENT
from boardlib.store.queries import SharedTx, text_index_query
from boardlib.store.sqlite import SqliteTx
from tests.cli.conftest import Kanban
from tests.pg_cluster import Cluster

pytestmark = pytest.mark.sqlite_only

# Texts that tell LIKE's ASCII-only case folding from the index's Unicode folding, LIKE's
# wildcards and escape from literal text, FTS5's quotes from its strings, and a control
# character (ESC) from its picture (␛), which a search typed from the screen holds.
TEXTS = [
    "Fix the Parser",
    "fix THE parser again",
    "ÉCOLE normale",
    "école Normale",
    "Straße und STRASSE",
    "Kelvin \u212a and kelvin",
    "İstanbul istanbul",
    "100% done_right",
    "1000 done right",
    'say "hello" to a\\b',
    "red \x1b[31m alert",
    "red ␛[31m alert",
    "ΣΊΣΥΦΟΣ σίσυφος",
    "日本語のテキスト",
]
ALPHABET = "abcdeilnorstxyzABCDEILNORSTÉéßẞİ\u0131Σ\u03c3ς\u212a%_\\\"' [␛\x1b0123日本語-"


class LikeOnlyTx(SqliteTx):
    """The same transaction, searching as before the index: the LIKE alone."""

    def _text_index(self) -> str | None:
        return None


def _board(path: Path, clock: ManualClock) -> tuple[Board, list[str]]:
    board = Board(path, clock=clock)
    made = []
    for n, text in enumerate(TEXTS):
        title, description = (text, None) if n % 2 else (f"task {n}", text)
        task = board.create_task(title, description=description)
        made.append(task.id)
        clock.advance(ms=1)
        if n % 3 == 0:  # some finished, so the finished columns' reads are compared too
            board.claim(task.id, "w")
            board.complete(task.id, "w")
            board.approve(task.id, "reviewer")
        elif n % 3 == 1:
            board.update_task(task.id, status="cancelled", reason="not needed")
    return board, made


def search_reads(tx: "SharedTx", words: tuple[str, ...]) -> list[object]:
    """Every read a search of `words` makes (the CLI's, the palette's, the filter's, the finished
    columns' pages and counts): compared with and without a text index, on either store."""
    search = TaskSearch(words=words)
    found: list[object] = [
        [row["id"] for row in tx.search_tasks(search, 100)],
        tx.matching_ids(search, None),
        [row["id"] for row in tx.list_tasks(text=" ".join(words), limit=100)],
    ]
    for status in FINISHED:
        found.append([row["id"] for row in tx.finished_page(status, search, limit=100)])
        found.append(tx.finished_count(status, search, None))
    return found


def _compare(board: Board, words: tuple[str, ...]) -> None:
    def both(tx: SqliteTx) -> tuple[list[object], list[object]]:
        return search_reads(tx, words), search_reads(LikeOnlyTx(tx.conn), words)

    indexed, like_only = board.store.read(both)
    assert indexed == like_only, words


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> "Board":
    clock = ManualClock(start_ms=1_800_000_000_000)
    opened, _ = _board(tmp_path_factory.mktemp("text") / "board.db", clock)
    return opened


@pytest.mark.parametrize(
    "word",
    ["parser", "PARSER", "école", "ÉCOLE", "École", "strasse", "STRAßE", "kelvin", "\u212aelvin",
     "istanbul", "İstanbul", "σίσυφος", "ΣΊΣΥΦΟΣ", "0% d", "e_r", "done_", "%_%", '"hello"',
     'o" to', "a\\b", "␛[31m", "\x1b[31", "テキスト", "TASK-1", "task-1", "ask 1", "no such"],
)  # fmt: skip
def test_the_index_finds_what_like_finds(board: Board, word: str) -> None:
    _compare(board, (word,))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(
        st.one_of(
            st.text(ALPHABET, min_size=1, max_size=6),
            # pieces of the board's own texts, so most searches find something
            st.builds(
                lambda text, start, size: text[start : start + size],
                st.sampled_from(TEXTS), st.integers(0, 12), st.integers(1, 8),
            ).filter(bool),
        ),
        min_size=1, max_size=2,
    )
)  # fmt: skip
def test_any_words_find_the_same_rows_in_the_same_order(board: Board, words: list[str]) -> None:
    _compare(board, tuple(words))


def test_the_index_query_quotes_each_trigram() -> None:
    assert text_index_query(['a"bc']) == '("a""b" AND """bc")'
    assert text_index_query(["abcab", "xy␛"]) == '("abc" AND "bca" AND "cab") OR ("xy␛")'
    assert text_index_query(["ab"]) is None  # no trigram: the LIKE alone
    assert text_index_query(["ab\0c"]) is None


def _plan(board: Board, words: tuple[str, ...]) -> str:
    def plan(tx: SqliteTx) -> str:
        where, params = tx._search(TaskSearch(words=words))
        query = f"EXPLAIN QUERY PLAN SELECT id FROM tasks WHERE status = 'done'{where}"
        return " / ".join(str(row[-1]) for row in tx.conn.execute(query, params))

    return board.store.read(plan)


def test_a_word_of_three_characters_is_looked_up_in_the_index(board: Board) -> None:
    assert "VIRTUAL TABLE INDEX" in _plan(board, ("abc",))
    assert schema.TEXT_INDEX not in _plan(board, ("ab",))


def _index_pages(path: Path) -> str:
    """A digest of the index's stored pages (its `_data` table: every segment and record)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(f"SELECT id, block FROM {schema.TEXT_INDEX}_data ORDER BY id")
        return hashlib.sha256(repr(rows.fetchall()).encode()).hexdigest()
    finally:
        conn.close()


def test_a_claim_a_beat_and_a_move_never_touch_the_index(tmp_path: Path) -> None:
    """The triggers fire on a task's insert, delete and a write naming its id, title or
    description: a claim, a heartbeat and a completion write none of those, so the index's
    pages stay byte for byte as they were (every write it takes adds a segment)."""
    path = tmp_path / "board.db"
    with Board(path) as board:
        task = board.create_task("a task to claim")
        before = _index_pages(path)
        board.claim(task.id, "w")
        board.heartbeat(task.id, "w")
        board.update_task(task.id, priority=3, actor="w", epoch=1)
        board.complete(task.id, "w")
        assert _index_pages(path) == before
        board.update_task(task.id, title="a task renamed")
        assert _index_pages(path) != before  # the index does take a text edit
        assert [t.id for t in board.search("renamed")] == [task.id]
        assert board.search("to claim") == []


def _board_of_schema_9(path: Path) -> None:
    conn = sqlite3.connect(path)
    for migration in schema.MIGRATIONS[:9]:
        for statement in migration:
            conn.execute(statement)
    conn.execute("PRAGMA user_version=9")
    conn.execute(
        "INSERT INTO tasks (seq, id, title, description, status, created_at, updated_at) "
        "VALUES (1, 'TASK-1', 'Legacy Work', 'written before the index', 'done', 1, 1)"
    )
    conn.commit()
    conn.close()


def test_a_board_read_only_from_before_the_index_searches_as_before(tmp_path: Path) -> None:
    """Opened read-only, a board of schema 9 is not migrated: its search is the LIKE alone."""
    path = tmp_path / "board.db"
    _board_of_schema_9(path)
    with Board(path, read_only=True) as board:
        assert [t.id for t in board.search("written before")] == ["TASK-1"]
        found = board.store.read(lambda tx: tx.search_tasks(TaskSearch(words=("legacy",)), 5))
        assert [row["id"] for row in found] == ["TASK-1"]


def test_an_existing_board_is_indexed_by_the_migration(tmp_path: Path) -> None:
    """A board of schema 9 (made before the index) has its tasks found once it is opened."""
    path = tmp_path / "board.db"
    _board_of_schema_9(path)
    with Board(path) as board:
        found = board.store.read(lambda tx: tx.search_tasks(TaskSearch(words=("before",)), 5))
        assert [row["id"] for row in found] == ["TASK-1"]  # found through the index alone
    conn = sqlite3.connect(path)
    query = f"SELECT rowid FROM {schema.TEXT_INDEX} WHERE {schema.TEXT_INDEX} MATCH '\"gac\"'"
    assert conn.execute(query).fetchall() == [(1,)]  # 'Legacy', any case
    conn.close()


def test_postgres_searches_through_its_trigram_index(postgres_cluster: "Cluster") -> None:
    """Where the server has pg_trgm, the migration makes a GIN index the search's ILIKE uses as
    written (the plan with sequential scans priced out, as on a board too big to read whole)."""
    import psycopg

    from boardlib.store.queries import pyformat
    from tests.backends import conninfo
    from tests.conftest import new_postgres_board

    url = new_postgres_board(postgres_cluster)
    with Board(url) as board:
        made = [board.create_task(f"Task number {n}").id for n in range(20)]
        where, params = board.store.read(lambda tx: tx._search(TaskSearch(words=("BER 1",))))
        short = board.store.read(lambda tx: tx._search(TaskSearch(words=("r 1",))))
        assert [t.id for t in board.search("number 7")] == [made[7]]
    query = pyformat(f"SELECT id FROM tasks WHERE TRUE{where}")
    with psycopg.connect(conninfo(url)) as conn:
        (made_index,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s AND schemaname = "
            "current_schema()", (schema.TEXT_INDEX,),
        ).fetchone() or (None,)  # fmt: skip
        assert made_index is not None and "gin_trgm_ops" in made_index
        conn.execute("SET enable_seqscan = off")
        plan = " ".join(row[0] for row in conn.execute(f"EXPLAIN {query}", params))  # type: ignore[arg-type]
        assert schema.TEXT_INDEX in plan, plan
        found = sorted(row[0] for row in conn.execute(query, params))  # type: ignore[arg-type]
        assert found == sorted([made[1], *made[10:20]])
        # No three letters or digits in a row: no trigram to look up, and the index would be
        # read whole (1.8 s at 100,000 tasks), so the condition is one it does not serve.
        query = pyformat(f"SELECT id FROM tasks WHERE TRUE{short[0]}")
        plan = " ".join(row[0] for row in conn.execute(f"EXPLAIN {query}", short[1]))  # type: ignore[arg-type]
        assert schema.TEXT_INDEX not in plan, plan
        found = sorted(row[0] for row in conn.execute(query, short[1]))  # type: ignore[arg-type]
        assert found == sorted([made[1], *made[10:20]])


def test_a_sqlite_without_the_trigram_tokenizer_makes_a_board_without_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FTS5's trigram tokenizer is SQLite 3.34+ (Ubuntu 20.04 ships 3.31), and FTS5 itself may be
    compiled out: migration 10 failed there, and no board could be made. It skips the index, the
    board is made, and its search is the LIKE alone, finding the same rows."""
    monkeypatch.setattr(schema, "has_trigram_index", lambda: False)  # as such a build says
    clock = ManualClock(start_ms=1_800_000_000_000)
    board, _ = _board(tmp_path / "board.db", clock)
    with board:
        assert board.store.schema_version() == schema.SCHEMA_VERSION
        assert not board.store.read(lambda tx: schema.has_text_index(tx.conn))
        for words in (("parser",), ("école",), ("TASK-1",), ("0% d",)):
            _compare(board, words)
        found = board.store.read(lambda tx: tx.search_tasks(TaskSearch(words=("again",)), 5))
        assert [row["title"] for row in found] == ["fix THE parser again"]


def test_this_sqlite_has_the_trigram_tokenizer() -> None:
    """The probe itself: this machine's SQLite (3.40) has it, so the other tests use the index."""
    assert schema.has_trigram_index()


def _without_the_index_module(path: Path) -> None:
    """The file as a SQLite without FTS5 sees it: its index's module is one this SQLite lacks
    (renamed in the schema, as FTS5 itself cannot be compiled out of this one)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute(
        "UPDATE sqlite_master SET sql = replace(sql, 'USING fts5(', 'USING fts5_absent(') "
        "WHERE name = ?", (schema.TEXT_INDEX,),
    )  # fmt: skip
    conn.commit()
    conn.close()


def test_a_sqlite_that_cannot_read_the_index_searches_without_it_and_refuses_its_writes(
    tmp_path: Path,
) -> None:
    """A board made with the index, then opened where SQLite lacks its module: every search and
    a create failed with SQLite's bare "no such module" (`unexpected`). The search now reads as
    the LIKE alone (the same rows); a write the index keeps (a create, a title edit) is refused
    `unsupported_backend` naming the cause, and changes nothing; a claim, which touches no
    text, works; `db check`'s problems say it."""
    from boardlib import BoardError, Reason

    path = tmp_path / "board.db"
    clock = ManualClock(start_ms=1_800_000_000_000)
    board, made = _board(path, clock)
    board.close()
    _without_the_index_module(path)
    with Board(path, clock=clock) as board:
        for words in (("parser",), ("école",), ("TASK-1",), ("0% d",)):
            _compare(board, words)
        assert {t.title for t in board.search("again")} == {"fix THE parser again"}
        before = board.store.read(
            lambda tx: (tx.audit(), [dict(r) for r in tx.table_rows("tasks")])
        )
        for write in (
            lambda: board.create_task("a new task"),
            lambda: board.update_task(made[1], title="renamed"),
        ):
            with pytest.raises(BoardError) as caught:
                write()
            assert caught.value.reason is Reason.UNSUPPORTED_BACKEND
            assert "no such module: fts5_absent" in str(caught.value)
            assert "tasks_text" in str(caught.value) and "nothing was written" in str(caught.value)
            after = board.store.read(
                lambda tx: (tx.audit(), [dict(r) for r in tx.table_rows("tasks")])
            )
            assert after == before
        board.claim(made[2], "w2")
        problems = board.store.read(lambda tx: tx.integrity_problems())
        assert len(problems) == 1 and "fts5_absent" in problems[0], problems


def _text_index_objects(path: Path) -> list[str]:
    """The file's schema objects of the text index: its table, shadow tables and triggers."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE ? ORDER BY name",
            (f"{schema.TEXT_INDEX}%",),
        ).fetchall()
    finally:
        conn.close()
    return [str(row[0]) for row in rows]


def one_built_one_found(builders: "list[subprocess.Popen[str]]") -> None:
    """Two `kanban db migrate` run at once: both exit 0, one built the text index, the other
    found it made."""
    said = []
    for builder in builders:
        out, errors = builder.communicate(timeout=120)
        assert builder.returncode == 0, errors
        said.append(json.loads(out)["textIndex"])
    assert sorted(said) == sorted([TEXT_INDEX_BUILT, TEXT_INDEX_PRESENT])


def test_a_board_made_without_fts5_gets_its_index_from_db_migrate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A board file made where SQLite lacked FTS5's trigram tokenizer (migration 10 skipped, as
    such a SQLite's probe says), then used by one that has it: it never got its index. No open
    makes it (the build holds the writer turn, ~1.3 s at 100,000 tasks, and a Python without
    FTS5 could then no longer create tasks there), `db check` says what does: `kanban db
    migrate`, which builds it; the searches read the same rows through it, and a task created
    after is in it. Two migrates at once, the writer turn held: one builds, the other finds it."""
    path = tmp_path / "board.db"
    clock = ManualClock(start_ms=1_800_000_000_000)
    with monkeypatch.context() as lacking:
        lacking.setattr(schema, "has_trigram_index", lambda: False)
        board, _ = _board(path, clock)
        board.close()
    assert _text_index_objects(path) == []
    with Board(path, clock=clock) as board:
        assert board.store.migrations_applied == 0
        assert not board.store.read(lambda tx: schema.has_text_index(tx.conn))
        problems = board.check().problems
    assert len(problems) == 1 and "`kanban db migrate`" in problems[0], problems
    assert _text_index_objects(path) == []

    kanban = Kanban(path, init=False)
    migrated = kanban.ok("db", "migrate")
    assert (migrated["applied"], migrated["textIndex"]) == (0, TEXT_INDEX_BUILT)
    assert schema.TEXT_INDEX in _text_index_objects(path)
    assert kanban.ok("db", "migrate")["textIndex"] == TEXT_INDEX_PRESENT
    assert kanban.ok("db", "check")["ok"] is True
    with Board(path, clock=clock) as board:
        for words in (("parser",), ("école",), ("TASK-1",), ("0% d",), ("Normale",)):
            _compare(board, words)
        added = board.create_task("a parser written after the index").id
        found = board.store.read(
            lambda tx: tx.search_tasks(TaskSearch(words=("written after",)), 5)
        )
        assert [row["id"] for row in found] == [added]
        _compare(board, ("parser",))

    raced = tmp_path / "raced.db"
    with monkeypatch.context() as lacking:
        lacking.setattr(schema, "has_trigram_index", lambda: False)
        board, _ = _board(raced, clock)
        board.close()
    holder = sqlite3.connect(raced, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the writer turn, held past a call's 1.5 s budget
    racing = Kanban(raced, init=False)
    builders = [racing.popen("db", "migrate") for _ in range(2)]
    time.sleep(2.5)
    holder.execute("ROLLBACK")
    holder.close()
    one_built_one_found(builders)
    assert schema.TEXT_INDEX in _text_index_objects(raced)
