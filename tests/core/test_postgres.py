"""What only the PostgreSQL store has to prove: the event log's safe horizon under out-of-order
commits, LISTEN/NOTIFY, concurrent reconcilers, claims that never queue, credentials that are
never printed, libpq's own ways of finding a password, pooled boards, and refusals on schemas that
are not boards. (Everything the two stores share runs on both through the `board_path` fixture.)"""

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from boardlib import Board, BoardConfig, BoardError, ManualClock, Reason
from boardlib.landings import LandQueue
from boardlib.location import DatabaseUrl, board_location, redact_url
from boardlib.store.base import CREATING_VERBS
from boardlib.store.postgres import (
    CONNECT_TIMEOUT_S,
    POOL_RECONNECT_S,
    StoreUnavailable,
    board_lock_and_channel,
)
from boardlib.store.postgres_schema import META_DDL, MIGRATIONS, SCHEMA_VERSION
from tests.backends import allow_connections, kanban_backends
from tests.cli.conftest import Kanban
from tests.conftest import new_postgres_board
from tests.pg_cluster import PASSWORD_ROLE, Cluster
from tests.racers import racing_context

CTX = racing_context()
START = 1_800_000_000_000


@pytest.fixture
def url(postgres_cluster: Cluster) -> str:
    return new_postgres_board(postgres_cluster)


@contextmanager
def event_in_flight(url: str) -> Iterator[psycopg.Connection[Any]]:
    """Another writer that has taken its event seq (as the store does: xid first, then nextval)
    and not committed yet. The caller commits or rolls back the yielded connection."""
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO events (seq, kind, data, created_at) "
        "SELECT nextval('event_seq'), 'slow_writer', '{}', 0 FROM (SELECT pg_current_xact_id()) x"
    )
    try:
        yield conn
    finally:
        conn.close()


# -- the event log's safe horizon ---------------------------------------------------------------


def test_a_later_seq_is_held_back_until_an_earlier_one_commits(url: str) -> None:
    with Board(url, clock=ManualClock(START)) as board:
        board.create_task("one")
        cursor = board.last_event_seq()
        with event_in_flight(url) as slow:
            board.create_task("two")  # commits seq cursor+2 while cursor+1 is still open
            assert board.events(since=cursor) == []  # handing out +2 would lose +1 for good
            assert board.last_event_seq() == cursor
            assert board.changes_since(cursor)[2] == cursor
            slow.execute("COMMIT")
        events = board.events(since=cursor)
        assert [e.seq for e in events] == [cursor + 1, cursor + 2]
        assert [e.kind for e in events] == ["slow_writer", "task_created"]
        assert board.last_event_seq() == cursor + 2


def test_a_seq_taken_by_an_aborted_writer_is_skipped_once_proven_gone(url: str) -> None:
    with Board(url, clock=ManualClock(START)) as board:
        board.create_task("one")
        cursor = board.last_event_seq()
        with event_in_flight(url) as slow:
            board.create_task("two")
            assert board.events(since=cursor) == []
            slow.execute("ROLLBACK")
        # the writer that held cursor+1 has finished without it: the gap is final
        assert [e.seq for e in board.events(since=cursor)] == [cursor + 2]
    with Board(url, read_only=True) as fresh:  # a new reader proves it again for itself
        assert [e.seq for e in fresh.events(since=cursor)] == [cursor + 2]


def test_the_horizon_is_persisted_by_reconcile_for_new_readers(url: str) -> None:
    with Board(url, clock=ManualClock(START)) as board:
        for n in range(5):
            board.create_task(f"t{n}")
        board.reconcile_stale_tasks()
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT safe_seq FROM event_horizon").fetchone()
    assert row is not None and row[0] == 5


# -- the change feed ----------------------------------------------------------------------------


def test_change_token_moves_on_notify_and_stays_while_idle(url: str) -> None:
    with Board(url, clock=ManualClock(START)) as writer, Board(url, read_only=True) as reader:
        token = reader.change_token()
        assert reader.change_token() == token  # nothing happened
        writer.create_task("hello")
        deadline = time.monotonic() + 5
        while reader.change_token() == token and time.monotonic() < deadline:
            time.sleep(0.02)
        assert reader.change_token() == token + 1
        listener = reader.store._listener  # type: ignore[attr-defined]
        assert listener is not None, "the reader listens instead of polling"


def test_a_reconcile_that_releases_a_lease_wakes_listeners(url: str) -> None:
    """Found testing the TUI's recovery: a reconcile pass wrote its `lease_expired` event early
    (the purge that follows reads the log), so its COMMIT went without the NOTIFY, and a live
    view went on showing the task in progress: the listener's token never moved."""
    clock = ManualClock(START)
    with Board(url, clock=clock) as writer, Board(url, read_only=True) as reader:
        task = writer.create_task("abandoned")
        writer.claim(task.id, "agent-ada", lease_ms=1_000)
        clock.advance(seconds=5)
        token = reader.change_token()
        assert token == writer.last_event_seq()
        assert writer.reconcile_stale_tasks().released
        deadline = time.monotonic() + 5
        while reader.change_token() == token and time.monotonic() < deadline:
            time.sleep(0.02)
        assert reader.change_token() == token + 1
        assert reader.store._listener is not None  # type: ignore[attr-defined]


def test_events_written_in_as_literals_read_back_exactly(url: str) -> None:
    """The events of a transaction travel as quoted literals with its COMMIT: quotes, backslashes
    (which would turn a literal into an E'' escape string), non-ASCII text and NULLs come back as
    they went in, in order, several to one statement."""
    texts = ["it's", "back\\slash \\n", "E'\\x41'", "ünïcødé ✓", '"; DROP TABLE tasks; --']

    def write(tx: Any) -> None:
        for n, text in enumerate(texts):
            tx.insert_event("note", None if n == 0 else text, text, {"text": text}, START + n, None)
        tx.insert_event("last", "t", None, {}, START, 60, "tenant's")

    with Board(url, clock=ManualClock(START)) as board:
        since = board.last_event_seq()
        board.store.write(write)
        rows = board.store.read(lambda tx: tx.events(since=since))
    assert [(r["kind"], r["task_id"], r["actor"]) for r in rows] == [
        ("note", None, texts[0]),
        *[("note", t, t) for t in texts[1:]],
        ("last", "t", None),
    ]
    assert [r["data"] for r in rows[:-1]] == [
        json.dumps({"text": t}, separators=(",", ":")) for t in texts
    ]
    assert [(r["created_at"], r["ttl_seconds"], r["tenant_id"]) for r in rows[-1:]] == [
        (START, 60, "tenant's")
    ]
    assert rows[0]["ttl_seconds"] is None and rows[0]["tenant_id"] is None


def test_the_tui_reader_follows_a_postgres_board(url: str) -> None:
    from tui.live import BoardReader, BoardUpdate

    with Board(url, clock=ManualClock(START)) as board:
        first = board.create_task("first")
        posted: list[Any] = []
        reader = BoardReader(
            board_location(url), poll_ms=50, post=posted.append, clock=ManualClock(START)
        ).start()
        try:
            _wait_for(lambda: any(isinstance(m, BoardUpdate) and m.full for m in posted))
            board.claim(first.id, "alice")
            _wait_for(
                lambda: any(
                    isinstance(m, BoardUpdate) and not m.full and m.tasks
                    and m.tasks[0].assignee_agent_id == "alice"
                    for m in posted
                )
            )  # fmt: skip
        finally:
            reader.stop()


def _wait_for(condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# -- claims and reconciliations side by side ----------------------------------------------------


def test_claim_next_skips_a_row_another_transaction_holds_instead_of_waiting(url: str) -> None:
    with Board(url, clock=ManualClock(START)) as board:
        best = board.create_task("best", priority=9)
        other = board.create_task("other")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("BEGIN")
            conn.execute("SELECT 1 FROM tasks WHERE id = %s FOR UPDATE", (best.id,))
            started = time.monotonic()
            claimed = board.claim_next("alice")
            assert time.monotonic() - started < 0.5
            assert claimed is not None and claimed.id == other.id
            conn.execute("ROLLBACK")
        assert board.claim_next("bob").id == best.id  # type: ignore[union-attr]


def test_a_role_claim_takes_the_better_of_its_own_and_role_less_tasks(url: str) -> None:
    with Board(url, clock=ManualClock(START)) as board:
        board.create_task("anyone", priority=1)
        mine = board.create_task("reviewer's", role="reviewer", priority=5)
        board.create_task("builder's", role="builder", priority=9)
        assert board.claim_next("r", role="reviewer").id == mine.id  # type: ignore[union-attr]
        assert board.claim_next("r2", role="reviewer").title == "anyone"  # type: ignore[union-attr]
        assert board.claim_next("r3", role="reviewer") is None


def _reconcile(url: str, now: int, barrier: Any, results: Any, budget_ms: int = 1500) -> None:
    """One reconciliation pass, its released ids put on `results` (or the reason it failed)."""
    config = BoardConfig(retry_budget_ms=budget_ms)
    with Board(url, clock=ManualClock(now), config=config, reconcile_orphans=False) as board:
        barrier.wait()
        try:
            report = board.reconcile_stale_tasks()
        except BoardError as error:
            results.put(str(error.reason))
            return
        results.put([task.id for task in report.released])


def test_many_reconcilers_release_each_expired_lease_exactly_once(url: str) -> None:
    with Board(url, clock=ManualClock(START)) as board:
        for n in range(60):
            board.create_task(f"t{n}")
        for n in range(60):
            board.claim_next(f"w{n}", lease_ms=1_000)
    reconcilers = 6
    barrier, results = CTX.Barrier(reconcilers), CTX.Queue()
    workers = [
        CTX.Process(target=_reconcile, args=(url, START + 60_000, barrier, results))
        for _ in range(reconcilers)
    ]
    for worker in workers:
        worker.start()
    released = [task for _ in workers for task in results.get(timeout=60)]
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    assert Counter(released) == {f"TASK-{n}": 1 for n in range(1, 61)}
    with Board(url, read_only=True) as board:
        kinds = Counter(event.kind for event in board.events(limit=10_000))
        assert kinds["lease_expired"] == 60
        assert {task.status for task in board.list_tasks()} == {"todo"}
        assert board.check().ok


def _passes_beside_a_held_board_lock(url: str, target: Any, extra: tuple[Any, ...]) -> None:
    """Four processes each run one pass (`target(url, now, barrier, results, 200, *extra)`,
    a 200 ms budget) over 20 expired leases while a writer holds the board's lock: none fails,
    and each lease is released once, with its event."""
    with Board(url, clock=ManualClock(START)) as board:
        for n in range(20):
            board.create_task(f"t{n}")
        for n in range(20):
            board.claim_next(f"w{n}", lease_ms=1_000)
        key = board.store.lock_key  # type: ignore[attr-defined]
    passes = 4
    barrier, results = CTX.Barrier(passes), CTX.Queue()
    with psycopg.connect(url, autocommit=True) as writer:
        writer.execute("BEGIN")
        writer.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
        args = (url, START + 60_000, barrier, results, 200, *extra)
        workers = [CTX.Process(target=target, args=args) for _ in range(passes)]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=60) for _ in workers]
        for worker in workers:
            worker.join(30)
        writer.execute("ROLLBACK")
    assert [outcome for outcome in outcomes if not isinstance(outcome, list)] == []
    released = [task for outcome in outcomes for task in outcome]
    assert Counter(released) == {f"TASK-{n}": 1 for n in range(1, 21)}
    with Board(url, read_only=True) as board:
        assert {task.status for task in board.list_tasks()} == {"todo"}
        kinds = Counter(event.kind for event in board.events(limit=10_000))
        assert kinds["lease_expired"] == 20


def test_reconcilers_release_expired_leases_while_a_writer_holds_the_board_lock(url: str) -> None:
    """Found in CI: one of six reconcilers failed `busy`, queued for the board's lock behind the
    others past its retry budget. A pass releases expired leases as claims do, beside other
    writers (each row it takes is its own, SKIP LOCKED), so a writer holding the board's lock
    longer than every pass's budget delays none of them: only the purge, which needs the lock,
    gives way until a later pass."""
    _passes_beside_a_held_board_lock(url, _reconcile, ())


def _reconcile_orphans(
    url: str, now: int, barrier: Any, results: Any, budget_ms: int, best_effort: bool
) -> None:
    """One orphan pass (`kanban serve`'s at start; `best_effort`: a board's at open), its
    released ids put on `results` (or the reason it failed)."""
    config = BoardConfig(retry_budget_ms=budget_ms)
    with Board(url, clock=ManualClock(now), config=config, reconcile_orphans=False) as board:
        barrier.wait()
        try:
            released = board.reconcile_orphans(best_effort=best_effort)
        except BoardError as error:
            results.put(str(error.reason))
            return
        results.put([task.id for task in released])


@pytest.mark.parametrize("best_effort", [False, True], ids=["at-serve-start", "at-open"])
def test_orphan_passes_release_expired_leases_while_a_writer_holds_the_board_lock(
    url: str, best_effort: bool
) -> None:
    """Servers started together each run an orphan pass, beside agents' writes. It took the
    board's lock, so while a writer held it past the retry budget the pass at `kanban serve`
    start failed `busy` (the server did not start), and the pass at open released nothing. It
    releases as the stale-task pass does, each row its own (SKIP LOCKED): every lease once."""
    _passes_beside_a_held_board_lock(url, _reconcile_orphans, (best_effort,))


def test_a_landing_renews_its_turn_while_a_writer_holds_the_board_lock(url: str) -> None:
    """A lander's heartbeat renews its queue row every third of its lease. The renewal took the
    board's lock, so a writer holding it past the retry budget made each renewal `busy`, and one
    holding it a lease long lost the lander its turn mid-landing. The renewal is one guarded
    update of the lander's own row (its id, its holder, a lease still running), as a claim's
    renewal is: it runs beside other writers, and a row whose lease ran out stays unrenewed."""
    with Board(url, clock=ManualClock(START)) as board:
        task = board.create_task("land me")
        board.claim_next("builder", lease_ms=60_000)
        board.complete(task.id, "builder")
        key = board.store.lock_key  # type: ignore[attr-defined]
    config = BoardConfig(retry_budget_ms=200)
    clock = ManualClock(START + 1_000)
    with Board(url, clock=clock, config=config, reconcile_orphans=False) as board:
        queue = LandQueue(board, lease_ms=30_000)
        entry = queue.join(
            task.id, repo_path="/repo", ref="refs/heads/main", lander="reviewer",
            holder="lander-1", strategy="squash", fence="0" * 40,
        )  # fmt: skip
        turn = queue.take_turn(entry)
        assert turn is not None
        with psycopg.connect(url, autocommit=True) as writer:
            writer.execute("BEGIN")
            writer.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
            clock.advance(seconds=10)
            renewed = queue.renew(turn)
            assert renewed is not None and renewed.lease_until == START + 41_000
            clock.advance(seconds=60)  # past the lease: no longer the lander's to renew
            assert queue.renew(renewed) is None
            writer.execute("ROLLBACK")
        assert queue.entry(entry.id) == renewed


def test_a_pooled_board_serves_many_threads(url: str) -> None:
    with Board(url, clock=ManualClock(START), pool_size=4) as board:
        for n in range(40):
            board.create_task(f"t{n}")
        claimed: list[str] = []
        lock = threading.Lock()

        def claim(agent: str) -> None:
            while (task := board.claim_next(agent)) is not None:
                with lock:
                    claimed.append(task.id)

        threads = [threading.Thread(target=claim, args=(f"a{n}",)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(claimed) == sorted(f"TASK-{n}" for n in range(1, 41))


@pytest.mark.parametrize("pool_size", [None, 4])
def test_connections_the_server_dropped_while_idle_are_replaced_not_failed(
    url: str, pool_size: int | None
) -> None:
    """After `pg_ctl restart` the first call on each connection the board had open (the pool of
    `kanban serve`, the MCP server, the terminal board) failed `database_unavailable` though the
    server was back. A restart ends every session as `pg_terminate_backend` does (FATAL 57P01); each
    next call must get a new connection."""
    with Board(url, clock=ManualClock(START), pool_size=pool_size) as board:
        with ThreadPoolExecutor(4) as pool:  # every pooled connection opened and put back
            list(pool.map(lambda n: board.create_task(f"before {n}"), range(8)))
        dropped = kanban_backends(url)
        assert dropped
        with psycopg.connect(url, autocommit=True) as admin:
            for pid in dropped:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 10
        while kanban_backends(url) & dropped:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        for n in range(6):  # one call per connection the pool had, and then some
            board.create_task(f"after {n}")
        assert len(board.list_tasks()) == 14


def refused_while_down(
    board: Board, cluster: Cluster, database: str, *, seconds: float, every_s: float
) -> list[str]:
    """Take `database` down for `seconds` while a caller keeps asking every `every_s`, as agents
    do; every call is refused. Its refusals' messages, the database allowed again after."""
    allow_connections(cluster, database, False)
    said = []
    try:
        down_until = time.monotonic() + seconds
        while time.monotonic() < down_until:
            with pytest.raises(StoreUnavailable) as refused:
                board.list_tasks()
            said.append(str(refused.value))
            time.sleep(every_s)
    finally:
        allow_connections(cluster, database, True)
    return said


def test_a_pooled_board_works_at_the_first_call_once_its_server_is_back(
    postgres_cluster: Cluster, own_database: str
) -> None:
    """`kanban serve` answered 503 `database_unavailable` for 25 s after a 47 s outage had ended.
    The pool retries a lost connection with a backoff that doubles (1, 2, 4, 8... s, for 5 minutes):
    the longer the outage, the longer the server, back, was not asked again. Ten seconds down put
    the next try some 5 s past the outage."""
    url = board_location(postgres_cluster.url_of(own_database))
    with Board(url, clock=ManualClock(START), pool_size=4) as board:
        board.create_task("before")
        refused_while_down(board, postgres_cluster, own_database, seconds=10, every_s=0.5)
        board.create_task("after")  # the first call after the outage
        assert [task.title for task in board.list_tasks()] == ["after", "before"]


@contextmanager
def pool_backing_off(board: Board, cluster: Cluster, database: str) -> Iterator[str]:
    """`database` down, and the board's pool deep in its backoff: its tries of the outage given
    up (POOL_RECONNECT_S), then a call's refusal starts a new round, whose next try is a second
    away, past the board's budget. Yields that refusal's message; the database allowed again
    after."""
    allow_connections(cluster, database, False)
    try:
        with pytest.raises(StoreUnavailable):
            board.list_tasks()
        time.sleep(POOL_RECONNECT_S + 0.5)
        with pytest.raises(StoreUnavailable) as refused:
            board.list_tasks()
        yield str(refused.value)
    finally:
        allow_connections(cluster, database, True)


def test_the_first_call_works_while_the_pool_waits_to_retry(
    postgres_cluster: Cluster, own_database: str
) -> None:
    """Found in CI: the first call after an outage was refused with the pool's timeout, and the
    outage's reason: the server was back but the pool had not asked it again yet (its backoff,
    1 s then 2 s), and the call's budget ended first. Here it always does (a 300 ms budget, the
    pool's next try a second away): the call asks the server itself."""
    url = board_location(postgres_cluster.url_of(own_database))
    config = BoardConfig(retry_budget_ms=300)
    with Board(url, clock=ManualClock(START), config=config, pool_size=4) as board:
        board.create_task("before")
        with pool_backing_off(board, postgres_cluster, own_database) as said:
            assert "is not currently accepting" in said, said
        board.create_task("after")  # the first call after the outage, before the pool's retry
        assert [task.title for task in board.list_tasks()] == ["after", "before"]


def test_a_refusal_names_the_current_failure_not_the_pools_last(
    postgres_cluster: Cluster, own_database: str
) -> None:
    """Found in CI: a refusal said the reason the pool's last try got, which may be long gone.
    Here the outage changes its reason (the database renamed away) while the pool waits to
    retry: the next call's refusal names the new one."""
    url = board_location(postgres_cluster.url_of(own_database))
    config = BoardConfig(retry_budget_ms=300)
    moved = f"{own_database}_moved"
    with Board(url, clock=ManualClock(START), config=config, pool_size=4) as board:
        board.create_task("before")
        with pool_backing_off(board, postgres_cluster, own_database) as said:
            assert "is not currently accepting" in said, said
            with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
                admin.execute(f"ALTER DATABASE {own_database} RENAME TO {moved}")
                try:
                    with pytest.raises(StoreUnavailable) as refused:
                        board.list_tasks()
                finally:
                    admin.execute(f"ALTER DATABASE {moved} RENAME TO {own_database}")
            assert f"database {own_database} does not exist" in str(refused.value), refused.value
        assert [task.title for task in board.list_tasks()] == ["before"]


def test_a_pooled_board_tells_an_outage_once_and_its_end_once(
    postgres_cluster: Cluster, own_database: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`kanban serve` wrote 92 lines on stderr in a 30 s outage, the pool's warning of each failed
    connection (the MCP server's log, rich-framed, ten times as tall), while its 503s said only
    "couldn't get a connection after 1.50 sec". Now: one line when the server stops answering, one
    when it is back, and each refusal says why."""
    caplog.set_level(logging.WARNING, logger="psycopg.pool")
    url = board_location(postgres_cluster.url_of(own_database))
    with Board(url, clock=ManualClock(START), pool_size=4) as board:
        board.create_task("before")
        said = refused_while_down(board, postgres_cluster, own_database, seconds=5, every_s=0.2)
        # each refusal says why: the first may be the pooled connection the outage ended (CI saw
        # "terminating connection due to administrator command"), then the refusal of every new one
        ended, refusing = "due to administrator command", "is not currently accepting"
        assert all(ended in why or refusing in why for why in said), said
        assert refusing in said[-1], said
        board.create_task("after")
    told = [record.getMessage() for record in caplog.records if record.name == "psycopg.pool"]
    shown = redact_url(postgres_cluster.url_of(own_database))
    assert told == [
        f"kanban: database unavailable at {shown}: connection failed: connection to server at "
        f'"127.0.0.1", port {postgres_cluster.port} failed: FATAL: database "{own_database}" '
        "is not currently accepting connections (database_unavailable); retrying",
        f"kanban: the board's database is reachable again ({shown})",
    ], told


def test_a_read_waits_for_a_locked_table_no_longer_than_the_budget(url: str) -> None:
    """A table another session holds ACCESS EXCLUSIVE (a `LOCK TABLE`, a `VACUUM FULL`) makes a
    read `busy` once the retry budget is spent, as it does a claim; reads had no lock timeout
    and waited for the lock's end (`task get` and `task comment` hung, whose opening read is the
    expired-lease check). The holder gives up after 20 s, so the old code answered late, not
    never."""
    with Board(url, clock=ManualClock(START)) as board:
        task = board.create_task("one")
    kanban = Kanban(url, init=False)  # type: ignore[arg-type]
    budget = {"KANBAN_RETRY_BUDGET_MS": "300"}
    with psycopg.connect(url, autocommit=True) as holder:
        holder.execute("SET idle_in_transaction_session_timeout = '20s'")
        holder.execute("BEGIN")
        holder.execute("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE")
        config = BoardConfig(retry_budget_ms=300)
        with Board(url, clock=ManualClock(START), config=config) as board:
            started = time.monotonic()
            with pytest.raises(BoardError) as refused:
                board.get_task(task.id)
            assert refused.value.reason is Reason.BUSY
            assert time.monotonic() - started < 8  # the budget, not the lock's end
        for verb in (("task", "get", task.id), ("task", "comment", task.id, "-m", "hi")):
            started = time.monotonic()
            result = kanban.run(*verb, env=budget)
            assert result.code == 4 and result.error["reason"] == "busy", str(result)
            assert time.monotonic() - started < 8
        holder.execute("ROLLBACK")
    assert kanban.ok("task", "get", task.id)["title"] == "one"


# -- opening, refusing, migrating ---------------------------------------------------------------


def test_a_schema_that_does_not_exist_is_no_board_saying_to_create_it(
    postgres_cluster: Cluster,
) -> None:
    """A search_path naming no schema that exists: the server answered, so it is no board (no
    retry helps, as `database_unavailable` would promise), and the refusal says what to create,
    on `db init` too."""
    url = f"{postgres_cluster.url}?options=-csearch_path%3Dnever_made"
    for kwargs in ({}, {"read_only": True}, {"create": False}):
        with pytest.raises(BoardError) as missing:
            Board(url, **kwargs)  # type: ignore[arg-type]
        assert missing.value.reason is Reason.NO_BOARD
        assert "CREATE SCHEMA never_made" in missing.value.message
    kanban = Kanban(url, init=False)  # type: ignore[arg-type]
    for verb in (("db", "init"), ("task", "dispatch", "one"), ("task", "list")):
        error = kanban.refused(*verb, reason="no_board")
        assert "CREATE SCHEMA never_made" in error["error"] and error["path"] == url
    with psycopg.connect(postgres_cluster.url) as conn:
        found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'never_made'")
        assert found.fetchone() is None


def test_a_board_the_role_may_not_read_is_permission_denied_not_missing(
    postgres_cluster: Cluster, url: str
) -> None:
    """A role without USAGE on the board's schema does not see it in its search path: it was
    told the schema does not exist and to `CREATE SCHEMA` it; one without SELECT on the tables
    got exit 1 `unexpected`. Both are `permission_denied`, as a board file this user may not
    read is, the first naming the GRANT that lets it in."""
    with Board(url, clock=ManualClock(START)) as board:
        board.create_task("kept from view")
    schema = url.rsplit("%3D", 1)[1]
    role = f"outsider_{schema}"
    as_role = url.replace("postgres@", f"{role}@", 1)
    with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
    kanban = Kanban(as_role, init=False)  # type: ignore[arg-type]
    for verb in (("task", "list"), ("db", "init"), ("task", "dispatch", "x")):
        error = kanban.refused(*verb, reason="permission_denied")
        assert f"GRANT USAGE ON SCHEMA {schema} TO {role}" in error["error"], error
        assert "CREATE SCHEMA" not in error["error"] and error["path"] == as_role
    with psycopg.connect(postgres_cluster.url, autocommit=True) as admin:
        admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
    for verb in (("task", "list"), ("task", "dispatch", "x")):
        error = kanban.refused(*verb, reason="permission_denied")
        assert "permission denied for table board_meta" in error["error"], error
    with Board(url, read_only=True) as board:
        assert [task.title for task in board.list_tasks()] == ["kept from view"]


def test_an_empty_schema_is_no_board_unless_created(url: str) -> None:
    for kwargs in ({"read_only": True}, {"create": False}):
        with pytest.raises(BoardError) as missing:
            Board(url, **kwargs)  # type: ignore[arg-type]
        assert missing.value.reason is Reason.NO_BOARD
        assert "db init" in missing.value.message and CREATING_VERBS in missing.value.message
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('board_meta')").fetchone() == (None,)
    with Board(url) as made:
        assert made.created
    with Board(url, create=False) as opened:
        assert not opened.created


def test_the_verbs_that_make_a_board_make_it_in_an_empty_schema_as_docs_say(
    postgres_cluster: Cluster, tmp_path: Path
) -> None:
    """docs/postgresql.md said only `db init` creates a board in an empty schema; `task dispatch`
    and `plan apply` do too, as they make a new SQLite file, and say so on stderr. Any other
    verb is `no_board`, naming the verbs that create."""
    plan = tmp_path / "plan.json"
    plan.write_text('{"name": "p", "tasks": [{"key": "a", "title": "x"}]}')
    for verb in (("task", "dispatch", "-t", "x"), ("plan", "apply", str(plan))):
        kanban = Kanban(new_postgres_board(postgres_cluster), init=False)  # type: ignore[arg-type]
        kanban.created(*verb)
        assert [task["title"] for task in kanban.ok("task", "list")] == ["x"]
    empty = Kanban(new_postgres_board(postgres_cluster), init=False)  # type: ignore[arg-type]
    assert CREATING_VERBS in empty.refused("task", "list", reason="no_board")["error"]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "postgresql.md").read_text()
    assert "the first `task dispatch` and `plan apply`" in " ".join(docs.split())
    for group in ((), ("db",)):
        helped = kanban.run(*group, "--help").out
        assert "PostgreSQL" in helped, helped


def test_a_board_refused_while_opening_holds_no_connection(
    postgres_cluster: Cluster, own_database: str
) -> None:
    """A store that refuses to open closes what it connected at once: its connection (or pool)
    used to stay open, a server backend each, for as long as anything kept the refusal's
    traceback (a long-lived caller, a test's `pytest.raises`) or until the garbage collector
    found the cycle. The refusals are kept here, so only closing can end the backends."""
    url = postgres_cluster.url_of(own_database)
    kept: list[BaseException] = []
    for kwargs in ({"create": False}, {"read_only": True}, {"create": False, "pool_size": 4}):
        with pytest.raises(BoardError) as refused:
            Board(url, **kwargs)  # type: ignore[arg-type]
        assert refused.value.reason is Reason.NO_BOARD
        kept.append(refused.value)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE tasks (id text)")
    with pytest.raises(BoardError) as foreign:
        Board(url)
    assert foreign.value.reason is Reason.NOT_A_BOARD
    kept.append(foreign.value)
    # opened, then refused by the orphan reconciliation at open: a role that may read board_meta
    # and no other table
    role = f"meta_only_{own_database}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE tasks")
        Board(url).close()
        conn.execute(f"CREATE ROLE {role} LOGIN")  # type: ignore[arg-type]
        conn.execute(f"GRANT SELECT ON board_meta TO {role}")  # type: ignore[arg-type]
    with pytest.raises(BoardError) as denied:
        Board(url.replace("postgres@", f"{role}@", 1))
    assert denied.value.reason is Reason.PERMISSION_DENIED, denied.value
    kept.append(denied.value)
    with psycopg.connect(postgres_cluster.url, autocommit=True) as observer:
        _wait_for(
            lambda: (
                observer.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (own_database,)
                ).fetchone()
                == (0,)
            ),
            seconds=5,
        )


def test_a_schema_holding_someone_elses_tasks_table_is_refused_untouched(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE tasks (id int)")
    for kwargs in ({}, {"read_only": True}, {"create": False}):
        with pytest.raises(BoardError) as refused:
            Board(url, **kwargs)  # type: ignore[arg-type]
        assert refused.value.reason is Reason.NOT_A_BOARD
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
            "AND relkind = 'r'"
        ).fetchall()
    assert tables == [("tasks",)]


def test_a_newer_schema_is_refused(url: str) -> None:
    Board(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE board_meta SET schema_version = schema_version + 1")
    with pytest.raises(RuntimeError, match="newer"):
        Board(url)


def _open_new_board(url: str, results: Any) -> None:
    with Board(url, clock=ManualClock(START)) as board:
        results.put((board.created, board.store.migrations_applied))


def _waiting_for_the_board_lock(admin: psycopg.Connection[Any], key: int) -> int:
    row = admin.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
        "AND classid::bigint = %s AND objid::bigint = %s AND objsubid = 1",
        ((key >> 32) & 0xFFFF_FFFF, key & 0xFFFF_FFFF),
    ).fetchone()
    return int(row[0]) if row else 0


def test_two_processes_creating_one_board_make_it_once(url: str) -> None:
    """Both openers find the schema empty and queue for the board's lock (held here until both
    wait, so the race is not left to chance): the first makes the board in its one transaction,
    the second looks again under the lock, finds it made and migrates nothing."""
    with psycopg.connect(url, autocommit=True) as admin:
        schema = admin.execute("SELECT current_schema()").fetchone()
        assert schema is not None
        key, _ = board_lock_and_channel(schema[0])
        admin.execute("SELECT pg_advisory_lock(%s)", (key,))
        results = CTX.Queue()
        openers = [CTX.Process(target=_open_new_board, args=(url, results)) for _ in range(2)]
        for opener in openers:
            opener.start()
        deadline = time.monotonic() + 60
        while _waiting_for_the_board_lock(admin, key) < 2:
            assert time.monotonic() < deadline, "the openers never queued for the board lock"
            assert all(opener.is_alive() for opener in openers), "an opener ended early"
            time.sleep(0.02)
        admin.execute("SELECT pg_advisory_unlock(%s)", (key,))
        for opener in openers:
            opener.join(60)
        assert [opener.exitcode for opener in openers] == [0, 0]
        outcomes = sorted(results.get(timeout=10) for _ in openers)
        assert outcomes == [(False, 0), (True, SCHEMA_VERSION)]
        assert admin.execute("SELECT id, schema_version FROM board_meta").fetchall() == [
            (1, SCHEMA_VERSION)
        ]
    with Board(url) as board:
        assert not board.created
        assert board.check().ok


def _schema_shape(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's columns, every index and constraint, every sequence, with the schema's name
    taken out: what a board's schema is, whichever way it was made."""
    with psycopg.connect(url, autocommit=True) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()
        assert schema is not None

        def rows(query: str) -> list[tuple[Any, ...]]:
            found = conn.execute(query.replace("SCHEMA", "current_schema()")).fetchall()  # type: ignore[arg-type]
            return [tuple(str(v).replace(f"{schema[0]}.", "") for v in row) for row in found]

        return {
            "columns": rows(
                "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, "
                "column_default, is_identity FROM information_schema.columns "
                "WHERE table_schema = SCHEMA ORDER BY 1, 2"
            ),
            "indexes": rows(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = SCHEMA ORDER BY 1"
            ),
            "constraints": rows(
                "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                "FROM pg_constraint WHERE connamespace = SCHEMA::regnamespace ORDER BY 1, 2"
            ),
            "sequences": rows(
                "SELECT sequencename, data_type, start_value, increment_by "
                "FROM pg_sequences WHERE schemaname = SCHEMA ORDER BY 1"
            ),
            "rows": rows("SELECT * FROM board_meta") + rows("SELECT * FROM event_horizon"),
        }


def test_a_board_of_every_released_version_upgrades_to_the_new_boards_schema(
    postgres_cluster: Cluster,
) -> None:
    """A board left at each older version (made the way that kanban made it: one statement at a
    time, its version bumped per migration) upgrades in one transaction to exactly the schema a
    new board gets in one execute: same columns in the same order, indexes, constraints."""
    made = new_postgres_board(postgres_cluster)
    with Board(made) as board:
        assert board.created and board.store.migrations_applied == SCHEMA_VERSION
    expected = _schema_shape(made)
    for old in range(1, SCHEMA_VERSION):
        url = new_postgres_board(postgres_cluster)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(META_DDL)
            conn.execute("INSERT INTO board_meta (id, schema_version) VALUES (1, 0)")
            for version, migration in enumerate(MIGRATIONS[:old], start=1):
                for statement in migration:
                    conn.execute(statement)  # type: ignore[arg-type]
                conn.execute("UPDATE board_meta SET schema_version = %s", (version,))
        with Board(url) as board:
            assert not board.created
            assert board.store.migrations_applied == SCHEMA_VERSION - old
            assert board.store.schema_version() == SCHEMA_VERSION
        assert _schema_shape(url) == expected, f"upgraded from version {old}"


def test_db_migrate_and_check_on_postgres(url: str) -> None:
    kanban = Kanban(url)  # type: ignore[arg-type]
    with kanban.board() as board:
        board.create_task("x")
    migrated = kanban.ok("db", "migrate")
    assert migrated == {
        "path": url, "backend": "postgres", "schemaVersion": SCHEMA_VERSION, "applied": 0,
        "textIndex": "present",
    }  # fmt: skip
    assert kanban.ok("db", "check")["ok"] is True


# -- credentials --------------------------------------------------------------------------------


def test_urls_never_print_their_password() -> None:
    url = DatabaseUrl("postgresql://kanban:hunter2@db.example:5432/board?password=hunter2&x=1")
    for text in (str(url), repr(url), url.display, f"{url}", redact_url(url.conninfo)):
        assert "hunter2" not in text
        assert "***" in text
    assert "hunter2" not in url.scrub("failed for postgresql://kanban:hunter2@db: hunter2")
    assert url.conninfo.count("hunter2") == 2  # libpq still gets it


def test_the_tui_header_shows_a_url_without_its_password() -> None:
    from tui.components.header_bar import short_path

    shown = short_path(DatabaseUrl("postgresql://ops:hunter2@db.example/boards"))
    assert shown == "postgresql://ops:***@db.example/boards"


def _password_role(cluster: Cluster) -> str:
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_roles WHERE rolname = %s", (PASSWORD_ROLE,)
        ).fetchone()
        if not exists:
            conn.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD 'sesame-42' SUPERUSER")
    return f"postgresql://{PASSWORD_ROLE}@127.0.0.1:{cluster.port}/postgres"


def test_a_wrong_password_is_refused_without_printing_it(postgres_cluster: Cluster) -> None:
    base = _password_role(postgres_cluster)
    wrong = base.replace(f"{PASSWORD_ROLE}@", f"{PASSWORD_ROLE}:not-sesame@")
    with pytest.raises(StoreUnavailable) as refused:
        Board(wrong)
    assert "not-sesame" not in refused.value.message and "***" in refused.value.message
    kanban = Kanban(wrong, init=False)  # type: ignore[arg-type]
    result = kanban.run("task", "list")
    assert result.code == 2, str(result)
    assert result.error["reason"] == "database_unavailable"
    assert "not-sesame" not in result.err + result.out
    where = kanban.ok("db", "path")
    assert "not-sesame" not in str(where) and where["backend"] == "postgres"


def test_libpq_finds_the_password_in_pgpassfile_and_pg_variables(
    postgres_cluster: Cluster, tmp_path: Path
) -> None:
    base = _password_role(postgres_cluster)
    schema_url = new_postgres_board(postgres_cluster)
    options = schema_url.split("?", 1)[1]
    kanban = Kanban(f"{base}?{options}", init=False)  # type: ignore[arg-type]
    without = kanban.run("task", "list", env={"PGPASSFILE": str(tmp_path / "none")})
    assert without.code == 2 and without.error["reason"] == "database_unavailable"
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{postgres_cluster.port}:*:{PASSWORD_ROLE}:sesame-42\n")
    passfile.chmod(0o600)
    created = kanban.created("db", "init", env={"PGPASSFILE": str(passfile)})
    assert created["backend"] == "postgres" and created["created"] is True
    assert kanban.ok("task", "list", env={"PGPASSFILE": str(passfile)}) == []
    # PG* variables fill in what the URL leaves out, as for psql
    bare = Kanban(f"postgresql:///postgres?{options}", init=False)  # type: ignore[arg-type]
    env = {
        "PGHOST": "127.0.0.1", "PGPORT": str(postgres_cluster.port), "PGUSER": PASSWORD_ROLE,
        "PGPASSWORD": "sesame-42",
    }  # fmt: skip
    assert bare.ok("task", "dispatch", "-t", "via PG*", env=env)["title"] == "via PG*"


def test_an_unreachable_server_is_one_json_line_and_exit_2(tmp_path: Path) -> None:
    with socket_closed_port() as port:
        kanban = Kanban(f"postgresql://nobody:pw-123@127.0.0.1:{port}/x", init=False)  # type: ignore[arg-type]
        result = kanban.run("task", "list", env={"PGCONNECT_TIMEOUT": "2"})
    assert result.code == 2, str(result)
    assert result.out == ""
    assert result.error["reason"] == "database_unavailable"
    assert "pw-123" not in result.err


def test_a_database_that_does_not_exist_is_unavailable_saying_to_create_it(
    postgres_cluster: Cluster,
) -> None:
    """A URL naming a database the server does not have: `database_unavailable` (the login was
    refused), naming the database and saying kanban never makes one, on `db init` too. A pooled
    board (TUI, server, MCP) says so at once, as a plain one does: its pool used to retry the
    login for the whole connect timeout, then say only "pool initialization incomplete"."""
    url = postgres_cluster.url_of("no_such_db")
    for kwargs in ({}, {"pool_size": 4}):
        started = time.monotonic()
        with pytest.raises(StoreUnavailable) as refused:
            Board(url, **kwargs)  # type: ignore[arg-type]
        assert time.monotonic() - started < CONNECT_TIMEOUT_S / 2
        assert "the database no_such_db does not exist" in refused.value.message
        assert "CREATE DATABASE no_such_db" in refused.value.message
    kanban = Kanban(url, init=False)  # type: ignore[arg-type]
    for verb in (("db", "init"), ("task", "dispatch", "one"), ("task", "list")):
        result = kanban.run(*verb)
        assert result.code == 2, str(result)
        assert result.error["reason"] == "database_unavailable"
        assert "CREATE DATABASE no_such_db" in result.error["error"]
    with psycopg.connect(postgres_cluster.url) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = 'no_such_db'")
        assert found.fetchone() is None


def test_a_refused_connection_is_one_clean_line(postgres_cluster: Cluster) -> None:
    """libpq's text, folded into the refusal: one line with single spaces (libpq writes
    `FATAL:  `, two, and a hint on a line of its own), on a real refused connection of each
    kind."""
    base = _password_role(postgres_cluster)
    wrong_password = base.replace(f"{PASSWORD_ROLE}@", f"{PASSWORD_ROLE}:not-sesame@")
    no_database = postgres_cluster.url_of("no_such_db")
    with socket_closed_port() as port:
        wrong_port = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        for url in (wrong_port, wrong_password, no_database):
            with pytest.raises(StoreUnavailable) as refused:
                Board(url)
            message = refused.value.message
            assert "  " not in message and "\n" not in message and "\t" not in message, message
            printed = Kanban(url, init=False).run("task", "list")  # type: ignore[arg-type]
            assert printed.error["error"] == message, str(printed)


@contextmanager
def socket_closed_port() -> Iterator[int]:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        yield int(probe.getsockname()[1])  # bound, never listening: connections are refused


# -- copies -------------------------------------------------------------------------------------


def _populate(board: Board) -> None:
    a = board.create_task("alpha ünïcödé", priority=3, role="builder")
    b = board.create_task("beta", depends_on=[a.id])
    board.create_task("child", parent_task_id=a.id)
    claimed = board.claim(a.id, "alice")
    run = board.open_execution(a.id, "sh", agent="alice")
    board.close_execution(run.id, "succeeded", agent="alice", cost_usd=0.1 + 0.2, input_tokens=12)
    board.add_comment(b.id, "a 'quoted' \\ comment\nwith a newline")
    board.record_workspace(
        a.id, repo_path="/r", branch="kanban/task-1", worktree_path="/w", base_commit="abc"
    )
    board.complete(a.id, "alice", epoch=claimed.claim_epoch)
    board.move(a.id, "done", human_override=True, reason="trust me")


def test_copy_sqlite_to_postgres_and_back_loses_nothing(url: str, tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    with Board(source, clock=ManualClock(START)) as board:
        _populate(board)
        before = [task.to_json() for task in board.all_tasks()]
        events = [event.to_json() for event in board.events(limit=10_000)]
    kanban = Kanban(source)
    there = kanban.ok("db", "copy", "--from", str(source), "--to", url)
    assert there["rows"] > 15 and there["targetBackend"] == "postgres"
    back = kanban.ok("db", "copy", "--from", url, "--to", str(tmp_path / "back.db"))
    assert back["tables"] == there["tables"]  # the same counts and hashes all the way round
    for where in (url, tmp_path / "back.db"):
        with Board(where, read_only=True) as board:
            assert [task.to_json() for task in board.all_tasks()] == before
            assert [event.to_json() for event in board.events(limit=10_000)] == events
            assert board.check().ok
    with Board(url, clock=ManualClock(START)) as board:  # the copy hands out fresh ids and seqs
        fresh = board.create_task("after the copy")
        assert fresh.id == "TASK-4"
        assert board.events(since=len(events))[0].seq == len(events) + 1


def test_copy_refuses_a_non_empty_target_and_changes_nothing(url: str, tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    with Board(source) as board:
        board.create_task("one")
    with Board(url) as board:
        board.create_task("already here")
    kanban = Kanban(source)
    error = kanban.refused("db", "copy", "--from", str(source), "--to", url, reason="invalid_input")
    assert "not empty" in error["error"]
    with Board(url, read_only=True) as board:
        assert [task.title for task in board.all_tasks()] == ["already here"]
    kanban.refused("db", "copy", "--from", url, "--to", url, reason="invalid_input")


def test_a_value_the_database_cannot_store_is_invalid_input_at_the_stores_door(url: str) -> None:
    """Past every field check (here: straight at the store), what psycopg refuses as a DataError
    (a NUL in text) is the typed `invalid_input`, not `unexpected`, and nothing is written."""
    with Board(url, clock=ManualClock(START)) as board:
        task = board.create_task("kept")
        before = board.last_event_seq()
        with pytest.raises(BoardError) as refused:
            board.store.write(
                lambda tx: tx.insert_comment(task.id, "a\x00b", "user", None, START, None)
            )
        assert refused.value.reason is Reason.INVALID_INPUT
        assert board.comments(task.id) == [] and board.last_event_seq() == before


def _schema_tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
            "AND relkind IN ('r', 'S')"
        ).fetchall()
    return [row[0] for row in rows]


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        # text written with a NUL before the board refused it: PostgreSQL text cannot hold it
        ("UPDATE tasks SET title = 'a' || char(0) || 'b' WHERE id = 'TASK-2'", "title"),
        # a value SQLite's loose types kept that the target's column refuses at the load
        ("UPDATE tasks SET priority = 'high' WHERE id = 'TASK-2'", None),
    ],
)
def test_a_copy_that_fails_leaves_the_empty_schema_without_tables(
    url: str, tmp_path: Path, damage: str, named: str | None
) -> None:
    """`db copy` into an empty schema is one transaction on the target: a source the target
    cannot take is a typed refusal (naming the row and field where it knows them), and the
    schema is left as it was, not holding an empty board that `db check` calls ok."""
    import sqlite3

    source = tmp_path / "source.db"
    with Board(source) as board:
        board.create_task("one")
        board.create_task("two")
    with sqlite3.connect(source) as conn:
        conn.execute(damage)
    conn.close()
    error = Kanban(source).refused(
        "db", "copy", "--from", str(source), "--to", url, reason="invalid_input"
    )
    if named:
        assert (error["table"], error["column"], error["key"]["id"]) == ("tasks", named, "TASK-2")
        assert "U+0000" in error["error"]
    assert _schema_tables(url) == []
    with pytest.raises(BoardError) as missing:
        Board(url, read_only=True)
    assert missing.value.reason is Reason.NO_BOARD


def test_a_copy_to_sqlite_carries_text_with_a_nul_faithfully(tmp_path: Path) -> None:
    """A SQLite target can keep what a SQLite source holds: carried, and proven by the hashes."""
    import sqlite3

    source = tmp_path / "source.db"
    with Board(source) as board:
        board.create_task("one")
    with sqlite3.connect(source) as conn:
        conn.execute("UPDATE tasks SET title = 'a' || char(0) || 'b'")
    conn.close()
    Kanban(source).ok("db", "copy", "--from", str(source), "--to", str(tmp_path / "copy.db"))
    with Board(tmp_path / "copy.db", read_only=True) as board:
        assert board.get_task("TASK-1").title == "a\x00b"


def test_the_cluster_probe(postgres_cluster: Cluster) -> None:
    """The session's cluster is up (the probe the next test runs without binaries)."""
    with psycopg.connect(postgres_cluster.url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_the_cluster_lives_in_memory_only_when_there_is_room(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests import pg_cluster

    monkeypatch.setattr(pg_cluster, "IN_MEMORY", tmp_path)
    monkeypatch.setattr(pg_cluster, "IN_MEMORY_ROOM", 1)
    assert pg_cluster.cluster_parent() == tmp_path
    monkeypatch.setattr(pg_cluster, "IN_MEMORY_ROOM", 1 << 62)  # more than any disk holds
    assert pg_cluster.cluster_parent() == Path("/tmp")
    monkeypatch.setattr(pg_cluster, "IN_MEMORY", tmp_path / "absent")
    monkeypatch.setattr(pg_cluster, "IN_MEMORY_ROOM", 1)
    assert pg_cluster.cluster_parent() == Path("/tmp")


PROBES = [
    "tests/core/test_postgres.py::test_the_cluster_probe",
    "tests/core/test_postgres.py::test_a_wrong_password_is_refused_without_printing_it",
]


def _pytest_probes(**env: str) -> str:
    """The two probes in a pytest of their own (no xdist), with `env` over this environment;
    without the plugins they do not use (schemathesis and the snapshots: 0.6 s of start-up)."""
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_XDIST_WORKER")}
    unused = ("xdist", "cacheprovider", "schemathesis", "textual-snapshot", "syrupy")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *(f"-pno:{name}" for name in unused), "-q", "-ra",
         *PROBES],
        capture_output=True, text=True, cwd=Path(__file__).parents[2], env=base | env, timeout=300,
    )  # fmt: skip
    return done.stdout


WITHOUT = [("KANBAN_PG_BIN", "/nonexistent", "PostgreSQL server binaries not found")]
if os.geteuid() == 0:  # only root runs the cluster through runuser
    WITHOUT.append(("KANBAN_RUNUSER", "/nonexistent/runuser", "runuser not found"))


@pytest.mark.slow  # four pytest sessions of their own
@pytest.mark.parametrize(("variable", "value", "message"), WITHOUT)
def test_without_a_cluster_the_postgres_tests_say_why_once(
    variable: str, value: str, message: str
) -> None:
    """No server binaries (or, as root, no runuser): in CI the first Postgres test fails with the
    reason, locally it skips with it, and the rest are deselected: one message, however many
    Postgres tests there are, no traceback, and never a silent pass."""
    in_ci = _pytest_probes(**{variable: value, "KANBAN_CI": "1"})
    assert "1 deselected, 1 error in" in in_ci, in_ci
    assert message in in_ci and "1 more Postgres tests deselected" in in_ci, in_ci
    assert "Traceback" not in in_ci, in_ci
    local = _pytest_probes(**{variable: value, "KANBAN_CI": "0"})
    assert "1 skipped, 1 deselected in" in local, local
    skips = [line for line in local.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 1 and message in skips[0], local


@pytest.mark.slow  # starts a cluster of its own
def test_runuser_is_found_without_the_sbin_folders_on_path() -> None:
    """A root shell whose PATH lacks /usr/sbin (runuser's home) still starts the cluster."""
    path = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not p.rstrip("/").endswith("sbin")
    )
    assert "2 passed" in (out := _pytest_probes(PATH=path, KANBAN_CI="1")), out


def _hold_board_lock_then_hang(url: str, ready: Any) -> None:
    """A writer that takes the board's write turn and then stops (killed while inside it)."""
    with Board(url, reconcile_orphans=False) as board:

        def work(tx: Any) -> None:
            tx.insert_comment("TASK-1", "half-written", "agent", "ghost", START, None)
            ready.set()
            time.sleep(600)

        board.store.write(work)


def test_a_writer_killed_inside_its_transaction_never_wedges_the_board(url: str) -> None:
    with Board(url, clock=ManualClock(START)) as board:
        task = board.create_task("survives")
    ready = CTX.Event()
    holder = CTX.Process(target=_hold_board_lock_then_hang, args=(url, ready))
    holder.start()
    assert ready.wait(30)
    with Board(url, clock=ManualClock(START), config=BoardConfig(retry_budget_ms=300)) as board:
        with pytest.raises(BoardError) as busy:
            board.add_comment(task.id, "blocked behind the hung writer")
        assert busy.value.reason is Reason.BUSY
        assert board.claim_next("alice") is not None  # claims never wait for the board lock
        holder.kill()  # SIGKILL: the server sees the connection drop and rolls it back
        holder.join()
        deadline = time.monotonic() + 10
        while True:
            try:
                board.add_comment(task.id, "after the crash")
                break
            except BoardError:
                assert time.monotonic() < deadline, "the dead writer's lock was never released"
        bodies = [comment.body for comment in board.comments(task.id)]
        assert bodies == ["after the crash"]  # nothing of the dead transaction survived


def test_a_lease_another_process_is_releasing_does_not_hide_the_ready_tasks(url: str) -> None:
    """Claims claim nothing while an expired lease waits to be reclaimed (the board releases it
    first); but an expired lease that another process holds right now is that process's: this
    claimer's reclaim would skip it, so the claim must go ahead with the ready tasks."""
    clock = ManualClock(START)
    with Board(url, clock=clock) as board:
        abandoned = board.create_task("abandoned", priority=1)
        ready = board.create_task("ready")
        board.claim(abandoned.id, "ghost", lease_ms=1_000)
        clock.advance(seconds=5)
        with psycopg.connect(url, autocommit=True) as releaser:
            releaser.execute("BEGIN")
            releaser.execute("SELECT 1 FROM tasks WHERE id = %s FOR NO KEY UPDATE", (abandoned.id,))
            claimed = board.claim_next("alice")
            assert claimed is not None and claimed.id == ready.id
            releaser.execute("ROLLBACK")
        # nobody holds it now: the next claim reclaims it and takes it, in one transaction
        retaken = board.claim_next("bob")
        assert retaken is not None and retaken.id == abandoned.id
        assert retaken.claim_epoch == 3  # claim, lease-expiry release, reclaim


def test_a_clean_shutdown_checkpoint_and_the_readiness_probe(url: str) -> None:
    with Board(url) as board:
        assert board.checkpoint() is True  # the server owns its log: nothing to fold
        assert board.schema_current() is True
