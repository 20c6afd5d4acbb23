"""The statements both stores share (`boardlib/store/queries.py`): one text per query, converted to
psycopg's placeholder style once per text, and each store keeping only what must differ."""

import json
import sqlite3
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from boardlib import Board, BoardConfig, ManualClock
from boardlib.records import MICROS_PER_USD, USD_MAX
from boardlib.store.base import Tx
from boardlib.store.queries import SharedTx, like_pattern, pyformat
from boardlib.store.sqlite import SqliteTx, _exact_real
from tests.examples import examples


@pytest.mark.parametrize(
    ("shared", "psycopg"),
    [
        ("SELECT * FROM tasks WHERE id = :id", "SELECT * FROM tasks WHERE id = %(id)s"),
        ("INSERT INTO t (a, b) VALUES (?, ?)", "INSERT INTO t (a, b) VALUES (%s, %s)"),
        # a named parameter used twice stays one name
        ("a = :x OR b = :x", "a = %(x)s OR b = %(x)s"),
        # literals keep their colons and question marks; every `%` is doubled, inside them too
        (
            "SELECT ':nope', 'why?', 'it''s 50%' WHERE t LIKE :p ESCAPE '\\'",
            "SELECT ':nope', 'why?', 'it''s 50%%' WHERE t LIKE %(p)s ESCAPE '\\'",
        ),
        # a Postgres cast is not a parameter; a modulo is not a placeholder
        ("SELECT x::text, 10 % 3", "SELECT x::text, 10 %% 3"),
    ],
)
def test_pyformat_rewrites_placeholders_and_leaves_literals_alone(
    shared: str, psycopg: str
) -> None:
    assert pyformat(shared) == psycopg


def test_like_pattern_takes_wildcards_literally() -> None:
    assert like_pattern("50%_a\\b") == "%50\\%\\_a\\\\b%"


def _round(board: Board, n: int) -> None:
    """One pass over most shared statements: writes, reads, a search, the health check."""
    first = board.create_task(f"first {n}")
    second = board.create_task(f"second {n}", depends_on=[first.id])
    board.add_comment(first.id, "a note")
    board.claim(first.id, "alice")
    run = board.open_execution(first.id, "sh")
    board.close_execution(run.id, "succeeded", agent="alice")
    board.complete(first.id, "alice")
    board.approve(first.id, "bob")
    board.update_task(second.id, priority=2)
    board.get_task(second.id)
    board.list_tasks(ready=True, limit=10)
    board.search(f"second {n}")
    board.comments(first.id)
    board.check()


def test_each_statement_text_is_converted_once_never_per_call(
    board_path: Any, backend: str
) -> None:
    """SQLite runs the shared text as written (no conversion at all); Postgres converts each text
    the first time it runs and then only finds it: a second round of the same work converts
    nothing."""
    with Board(board_path, clock=ManualClock(1_800_000_000_000), config=BoardConfig()) as board:
        _round(board, 1)
        before = pyformat.cache_info()
        _round(board, 2)
        after = pyformat.cache_info()
    assert after.misses == before.misses
    if backend == "postgres":
        assert after.hits > before.hits + 20
    else:
        assert after.hits == before.hits


def test_a_search_finds_the_same_rows_on_both_stores(board: Board) -> None:
    """The one shared search: an exact id, or title/description ignoring case, wildcards literal
    (`%` travels as a parameter on Postgres, not as a placeholder)."""
    wanted = board.create_task("Half: 50% done")
    board.create_task("500 items")
    board.create_task("half_way", description="5_0")
    assert [task.id for task in board.search("50%")] == [wanted.id]
    assert [task.id for task in board.search("HALF:")] == [wanted.id]
    assert [task.id for task in board.search(wanted.id)] == [wanted.id]


# What each store still says for itself, and why (the rest is `SharedTx`'s, said once).
MUST_DIFFER = {
    "tasks_by_id": "Postgres binds the ids as one array; SQLite has no array parameter",
    "claim_by_id": "the claim protocol: SQLite's guarded UPDATE vs Postgres's row locks",
    "claim_best_ready": "the claim protocol: INDEXED BY pick vs FOR NO KEY UPDATE SKIP LOCKED",
    "claim_held_back": "SQLite probes its lease index; Postgres reads the claim's own row",
    "renew_lease": "SQLite writes the event after the UPDATE; Postgres in the same statement",
    "best_ready": "the claim's own pick, read without writing: each store's claim statement",
    "expired_leases": "SQLite pins the lease index; Postgres reconcilers lock what they take",
    "any_lease_expired": "SQLite pins the lease index with INDEXED BY",
    "insert_event": "SQLite numbers by rowid at once; Postgres queues, numbers at COMMIT",
    "events": "Postgres reads only up to the safe horizon",
    "recent_events": "Postgres reads only up to the safe horizon",
    "last_event_seq": "Postgres's cursor is the safe horizon",
    "list_version": "SQLite's newest seq vs the horizon and the seqs a snapshot sees above it",
    "integrity_problems": "PRAGMAs vs the catalog",
    "schema_version": "PRAGMA user_version vs board_meta",
    "finish_load": "Postgres moves its sequences and horizon past the loaded rows",
}
POSTGRES_WRAPS = {
    "purge_expired_events": "flush the queued events first, persist the horizon",
    "status_entry": "flush the queued events first: a move this transaction made is the newest",
    "gate_entry": "flush the queued events first: a gate start this transaction made is the newest",
    "gate_entries": "flush the queued events first, as for `gate_entry`",
}


def _own_interface_methods(cls: type) -> set[str]:
    interface = {name for name in vars(Tx) if not name.startswith("_")}
    return {name for name in vars(cls) if name in interface}


def test_each_store_keeps_only_the_statements_that_must_differ() -> None:
    """A statement added to one store that could be shared fails here: put it in `SharedTx`
    (or, when it truly must differ, add it above with the reason)."""
    from boardlib.store.postgres import PostgresTx

    assert _own_interface_methods(SqliteTx) == set(MUST_DIFFER)
    assert _own_interface_methods(PostgresTx) == set(MUST_DIFFER) | set(POSTGRES_WRAPS)
    shared = _own_interface_methods(SharedTx)
    assert not shared & set(MUST_DIFFER)
    # together they are the whole interface (mypy --strict checks the signatures)
    assert shared | set(MUST_DIFFER) == {name for name in vars(Tx) if not name.startswith("_")}


@pytest.mark.parametrize("size", [2**63 - 1, 2**63 - 2])
def test_a_page_larger_than_any_board_is_the_whole_list(board: Board, size: int) -> None:
    """A page reads one row more than its size; at the largest 64-bit sizes that one more row
    overflowed the store's integers (found by tests/chaos/test_fuzz_library.py)."""
    made = [board.create_task(f"t{n}").id for n in range(3)]
    page = board.task_page(limit=size)
    assert [task.id for task in page.tasks] == made[::-1]
    assert page.next_cursor is None
    documents = board.task_documents(limit=size)
    assert documents.next_cursor is None
    assert len(documents.documents) == 3


@settings(max_examples=examples(400), deadline=None)
@given(
    value=st.one_of(
        st.floats(min_value=1e-8, max_value=USD_MAX),
        st.integers(min_value=0, max_value=int(USD_MAX)).map(float),
        st.integers(min_value=0, max_value=int(USD_MAX) * MICROS_PER_USD).map(
            lambda micros: micros / MICROS_PER_USD  # the amounts the board keeps
        ),
        st.sampled_from([0.0, 1.0, USD_MAX, 0.1 + 0.2, 0.012, 1e-8, 1e15 - 1, 1e15]),
    )
)
@example(268435456.26433897)  # SQLite 3.40 reads 268435456.264339 as this double (found in CI)
@example(1.4465233386839201e-133)  # and 1.4465233386839201e-133 one ulp off
def test_a_task_documents_dollars_read_back_as_themselves(value: float) -> None:
    """The documents the database writes (`GET /api/board`) carry a REAL column (dollars, from 0
    to USD_MAX) as a number that reads back as the same double: a whole number in json_object's
    own printing, whole micro-dollars in 15 digits, any other double in 17."""
    connection = sqlite3.connect(":memory:")
    written = connection.execute(
        f"SELECT json_object('x', {_exact_real('v')}) FROM (SELECT ? AS v)", (value,)
    ).fetchone()[0]
    assert json.loads(written)["x"] == value, written
    if value == int(value) and value < 1e15:  # printed as Task.to_json prints it: 3.0, not 3
        assert written == json.dumps({"x": value}, separators=(",", ":")), written
