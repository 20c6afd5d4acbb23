"""The writes that are one guarded statement (claim-next, claim by id, the lease renewals) travel
to Postgres in one round trip, with their event and NOTIFY, and the guard of a renewal accepts
exactly what the board's holder check accepts, on both stores."""

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import psycopg
import pytest

from boardlib import Board, BoardConfig, BoardError, ManualClock
from boardlib import transitions as t
from boardlib.events import EventKind
from boardlib.records import Task
from boardlib.store.base import RowEvent
from boardlib.store.postgres import _OneTrip
from tests.conftest import new_postgres_board
from tests.pg_cluster import Cluster

START = 1_800_000_000_000


@pytest.fixture(params=["flush_off", "flush_on"])
def url(postgres_cluster: Cluster, request: pytest.FixtureRequest) -> str:
    """A board on a server whose commits do not wait for a WAL flush (the test cluster's
    `synchronous_commit = off`: the claim statement sends its NOTIFY itself), and one whose
    sessions wait for it (the NOTIFY then follows the claim's COMMIT, in the same trip)."""
    board = new_postgres_board(postgres_cluster)
    return board if request.param == "flush_off" else f"{board}%20-csynchronous_commit%3Don"


@contextmanager
def round_trips() -> Iterator[list[str]]:
    """Every query the store sends in the block, each one round trip: a cursor's `execute`, and
    a prepared statement the store runs through libpq itself (recorded as `EXECUTE name` with no
    `;`: Bind and Execute of that one statement)."""
    sent: list[str] = []
    real = psycopg.Cursor.execute
    real_prepared = _OneTrip.execute_prepared

    def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(query))
        return real(self, query, *args, **kwargs)

    def counted_prepared(self: _OneTrip, name: str, values: list[Any]) -> Any:
        sent.append(f"EXECUTE {name} (with {len(values)} parameters, bound)")
        return real_prepared(self, name, values)

    with (
        mock.patch.object(psycopg.Cursor, "execute", counted),
        mock.patch.object(_OneTrip, "execute_prepared", counted_prepared),
    ):
        yield sent


def test_claims_and_heartbeats_are_one_round_trip_each(url: str) -> None:
    with Board(url, clock=ManualClock(START), reconcile_orphans=False) as board:
        for n in range(4):
            board.create_task(f"t{n}")
        board.claim_next("warm")  # the first one also prepares its statement: still one trip
        with round_trips() as sent:
            task = board.claim_next("alice")
        assert task is not None and len(sent) == 1, sent
        if "synchronous_commit" in url:  # the NOTIFY after the COMMIT, in the same trip
            assert sent[0].startswith("BEGIN; EXECUTE") and "COMMIT; SELECT pg_notify" in sent[0]
        else:  # one statement, its own transaction, that notifies itself
            assert sent[0].startswith("EXECUTE") and ";" not in sent[0]
        by_id = board.create_task("by id")
        with round_trips() as sent:
            board.claim(by_id.id, "bob")
        assert len(sent) == 1, sent
        for verb in (
            lambda: board.heartbeat(task.id, "alice", epoch=task.claim_epoch),
            lambda: board.extend_lease(task.id, "alice", minutes=30),
        ):
            with round_trips() as sent:
                verb()
            assert len(sent) == 1, sent
        kinds = [event.kind for event in board.events(since=0)]
        assert kinds[-5:] == [
            EventKind.TASK_CLAIMED, EventKind.TASK_CREATED, EventKind.TASK_CLAIMED,
            EventKind.LEASE_RENEWED, EventKind.LEASE_RENEWED,
        ]  # fmt: skip
        claimed = [e for e in board.events(since=0) if e.kind == EventKind.TASK_CLAIMED]
        assert claimed[-2].data == {"epoch": 1, "verb": "claim_next"}
        assert claimed[-1].data == {"epoch": 1, "verb": "claim"}


def test_a_refused_heartbeat_still_says_why(url: str) -> None:
    """The guard fails: the board's full check runs and names the reason."""
    with Board(url, clock=ManualClock(START), reconcile_orphans=False) as board:
        task = board.create_task("one")
        held = board.claim(task.id, "alice")
        with pytest.raises(BoardError) as refused:
            board.heartbeat(task.id, "bob")
        assert refused.value.reason == "not_assignee"
        with pytest.raises(BoardError) as stale:
            board.heartbeat(task.id, "alice", epoch=held.claim_epoch + 5)
        assert stale.value.reason == "stale_claim"


def test_only_a_claim_that_claimed_wakes_the_listeners(url: str) -> None:
    with Board(url, clock=ManualClock(START), reconcile_orphans=False) as board:
        listener = psycopg.connect(url, autocommit=True)
        try:
            listener.execute(f"LISTEN {board.store.channel}")  # type: ignore[attr-defined]
            assert board.claim_next("alice") is None  # an empty board: nothing to say
            assert list(listener.notifies(timeout=0.3)) == []
            board.create_task("one")
            list(listener.notifies(timeout=0.3))  # the create's own
            assert board.claim_next("alice") is not None
            assert len(list(listener.notifies(timeout=1, stop_after=1))) == 1
        finally:
            listener.close()


def test_a_statement_deallocated_behind_the_store_is_prepared_again(url: str) -> None:
    with Board(url, clock=ManualClock(START), reconcile_orphans=False) as board:
        for n in range(3):
            board.create_task(f"t{n}")
        assert board.claim_next("alice") is not None
        with board.store._connection() as conn:  # type: ignore[attr-defined]
            conn.execute("DEALLOCATE ALL")
        assert board.claim_next("alice") is not None
        assert board.claim_next("alice") is not None


def test_a_one_trip_claim_waits_for_a_row_lock_no_longer_than_the_budget(url: str) -> None:
    """The lock timeout is the connection's own (set once, with the first PREPARE), and a claim
    held up by a row lock gives up within the retry budget; the next claim on the same
    connection still runs under it."""
    import time

    config = BoardConfig(retry_budget_ms=300)
    with Board(url, clock=ManualClock(START), reconcile_orphans=False, config=config) as board:
        held, free = board.create_task("held"), board.create_task("free")
        assert board.claim(free.id, "warm").id == free.id  # prepared: the session's timeout set
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("BEGIN")
            other.execute("SELECT 1 FROM tasks WHERE id = %s FOR UPDATE", (held.id,))
            for _ in range(2):
                started = time.monotonic()
                with pytest.raises(BoardError) as refused:
                    board.claim(held.id, "alice")
                assert refused.value.reason == "busy"
                assert time.monotonic() - started < 5  # the budget, not for ever
            other.execute("ROLLBACK")
        assert board.claim(held.id, "alice").assignee_agent_id == "alice"
        with board.store._connection() as conn:  # type: ignore[attr-defined]
            assert conn.execute("SHOW lock_timeout").fetchone()[0] == "300ms"


def test_an_expired_lease_is_swept_by_the_claim_that_finds_it(url: str) -> None:
    clock = ManualClock(START)
    with Board(url, clock=clock, config=BoardConfig(), reconcile_orphans=False) as board:
        task = board.create_task("one")
        board.claim(task.id, "alice", lease_ms=1000)
        clock.advance(ms=5000)
        again = board.claim_next("bob")
        assert again is not None and again.id == task.id and again.assignee_agent_id == "bob"
        kinds = [event.kind for event in board.events(since=0)]
        assert kinds[-2:] == [EventKind.LEASE_EXPIRED, EventKind.TASK_CLAIMED]


# -- the renewal's guard is the holder check ----------------------------------------------------

STATES = list(
    itertools.product(
        (t.IN_PROGRESS, t.TODO, t.IN_REVIEW, t.BLOCKED),  # status
        ("alice", "bob", None),  # assignee
        (None, 0, -1, 1),  # quoted epoch, relative to the current one (None: not quoted)
        (None, 1000, 0, -1),  # lease_until relative to now (None: no lease; 0: the last ms)
    )
)


class Rollback(Exception):
    pass


def _judged(
    board: Board, task_id: str, now: int, state: tuple[str, str | None, int | None, int | None]
) -> dict[str, bool]:
    """For one state of the task: whether the holder check passes for alice, and whether the
    renewal's guard renews, in one transaction that is then rolled back."""
    status, assignee, quoted, lease = state
    event = RowEvent(str(EventKind.LEASE_RENEWED), {"verb": "heartbeat"}, None)
    outcome: dict[str, bool] = {}

    def work(tx: Any) -> None:
        changes = {
            "status": status,
            "assignee_agent_id": assignee,
            "claim_epoch": 3,
            "lease_until": None if lease is None else now + lease,
        }
        current = Task.from_row(tx.update_task(task_id, changes))
        epoch = None if quoted is None else 3 + quoted
        try:
            board._check_holder(tx, current, "heartbeat", "alice", epoch, now)
            outcome["check"] = True
        except BoardError:
            outcome["check"] = False
        renewed = tx.renew_lease(task_id, "alice", epoch, now, now + 60_000, event)
        outcome["guard"] = renewed is not None
        raise Rollback

    with pytest.raises(Rollback):
        board.store.write(work)
    return outcome


def test_the_renewal_guard_accepts_exactly_what_the_holder_check_accepts(
    board: Board, clock: ManualClock
) -> None:
    task = board.create_task("one")
    board.claim(task.id, "alice")
    now = clock.now_ms()
    disagreements = []
    for state in STATES:
        outcome = _judged(board, task.id, now, state)
        if outcome["check"] != outcome["guard"]:
            disagreements.append((state, outcome))
    assert not disagreements
    accepted = [s for s in STATES if _judged(board, task.id, now, s)["guard"]]
    assert len(accepted) == 6  # in progress, alice's, epoch unquoted or current, lease live


def test_a_write_sends_its_opening_with_its_first_statement(url: str) -> None:
    """A status move in three round trips: BEGIN, the lock timeout and the board lock with the read
    the move judges; the task's update with its follow-ups (the runs it closes, the dependents it
    satisfies) in one simple query; the events with COMMIT and the NOTIFY (was five)."""
    with Board(url, clock=ManualClock(START), reconcile_orphans=False) as board:
        task = board.create_task("judged")
        claimed = board.claim(task.id, "builder")
        for verb in (
            lambda: board.complete(task.id, "builder", epoch=claimed.claim_epoch),
            lambda: board.approve(task.id, "judge"),
        ):
            with round_trips() as sent:
                verb()
            assert sent[0].startswith("BEGIN; SET LOCAL lock_timeout = "), sent
            assert "pg_advisory_xact_lock" in sent[0] and "FROM tasks" in sent[0], sent
            assert len(sent) == 3, sent
            assert sent[1].startswith("UPDATE tasks SET") and "UPDATE " in sent[1][10:], sent
            assert "COMMIT" in sent[-1] and not any("COMMIT" in query for query in sent[:-1])
        assert board.get_task(task.id).status == t.DONE
        kinds = [event.kind for event in board.events(since=0)]
        assert kinds[-2:] == [EventKind.STATUS_CHANGED, EventKind.STATUS_CHANGED]


def test_a_claim_on_a_connection_the_server_ended_reconnects_and_prepares_again(url: str) -> None:
    """The server ends the session between two claims (a restart, an admin): the next claim
    sees the connection is gone before it sends anything, opens a new one and prepares the
    claim there (it was `database_unavailable` though the server was up, one failed call per
    connection after every restart)."""
    with Board(url, clock=ManualClock(START), reconcile_orphans=False) as board:
        for n in range(3):
            board.create_task(f"t{n}")
        assert board.claim_next("alice") is not None  # prepared on this connection
        with board.store._connection() as conn:  # type: ignore[attr-defined]
            pid = conn.info.backend_pid
        with psycopg.connect(url, autocommit=True) as admin:
            # with a timeout it returns once the backend is gone, not when the signal is sent
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
        assert board.claim_next("bob").assignee_agent_id == "bob"  # type: ignore[union-attr]
        with board.store._connection() as conn:  # type: ignore[attr-defined]
            assert conn.info.backend_pid != pid
        holders = sorted(t.assignee_agent_id or "" for t in board.list_tasks(status="in_progress"))
        assert holders == ["alice", "bob"]
