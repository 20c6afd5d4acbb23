"""The store: schema versioning, the contention recipe, the retry budget, read-only opening."""

import multiprocessing
import os
import sqlite3
import time
from pathlib import Path

import pytest

from boardlib import Board, BoardConfig, BoardError, Reason
from boardlib.store.contention import PRAGMAS, connect, is_transient_lock_error
from boardlib.store.schema import SCHEMA_VERSION

# The SQLite store's own machinery: pragmas, file locks, the writer queue
# (tests/core/test_postgres.py covers the Postgres store's).
pytestmark = pytest.mark.sqlite_only


def test_every_connection_gets_the_recipe(board_path: Path) -> None:
    Board(board_path).close()
    conn = connect(board_path)
    values = {name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name, _ in PRAGMAS}
    assert values == {
        "journal_mode": "wal",
        "busy_timeout": 250,
        "wal_autocheckpoint": 1000,
        "synchronous": 1,  # NORMAL
        "foreign_keys": 1,
    }
    reader = connect(board_path, query_only=True)
    assert reader.execute("PRAGMA query_only").fetchone()[0] == 1
    with pytest.raises(sqlite3.OperationalError):
        reader.execute("DELETE FROM tasks")


def test_a_claim_answered_at_once_is_four_statements_and_a_later_write_may_wait(
    board_path: Path,
) -> None:
    """Inside `at_once` the writer's busy timeout is 0, set when it changes: claims answered one
    after another (the HTTP lane's common case) are BEGIN, the claim, its event and COMMIT, as
    the claim on the usual path is. The next write that may wait has the recipe's 250 ms back."""
    with Board(board_path) as board:
        for n in range(4):
            board.create_task(f"task {n}")
        writer = board.store._open_writer()[0]  # type: ignore[attr-defined]
        seen: list[str] = []
        writer.set_trace_callback(seen.append)
        with board.at_once():
            assert board.claim_next("alice") is not None
        assert seen[0] == "PRAGMA busy_timeout=0"
        for _ in range(2):
            seen.clear()
            with board.at_once():
                assert board.claim_next("alice") is not None
            assert [sql.split()[0] for sql in seen] == ["BEGIN", "UPDATE", "INSERT", "COMMIT"]
        seen.clear()
        assert board.claim_next("bob") is not None
        assert seen[0] == "PRAGMA busy_timeout=250"
        writer.set_trace_callback(None)
        assert writer.execute("PRAGMA busy_timeout").fetchone()[0] == 250


def test_schema_is_versioned_and_a_newer_file_is_refused(board_path: Path) -> None:
    with Board(board_path) as board:
        assert board.check().schema_version == SCHEMA_VERSION
        assert board.check().ok
    conn = sqlite3.connect(board_path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    before = board_path.read_bytes()
    with pytest.raises(BoardError) as refused:
        Board(board_path)
    assert refused.value.reason is Reason.NEWER_SCHEMA
    assert refused.value.details["schema_version"] == SCHEMA_VERSION + 1
    assert board_path.read_bytes() == before  # refused before anything touched it
    with Board(board_path, read_only=True) as viewer:  # still readable
        assert viewer.schema_is_newer()


def test_read_only_board_refuses_every_write(board_path: Path) -> None:
    with Board(board_path) as board:
        task = board.create_task("job")
    with Board(board_path, read_only=True) as viewer:
        assert viewer.get_task(task.id).title == "job"
        with pytest.raises(BoardError) as refused:
            viewer.move(task.id, "cancelled")
        assert refused.value.reason is Reason.READ_ONLY
        with pytest.raises(BoardError):
            viewer.create_task("nope")
    with Board(board_path) as board:
        assert board.get_task(task.id).status == "todo"
        assert len(board.list_tasks()) == 1


def test_read_only_on_a_missing_file_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(BoardError) as missing:
        Board(tmp_path / "nope.db", read_only=True)
    assert missing.value.reason is Reason.NO_BOARD
    assert not (tmp_path / "nope.db").exists()


def test_transient_errors_are_recognised() -> None:
    busy = sqlite3.OperationalError("database is locked")
    busy.sqlite_errorcode = 5  # type: ignore[attr-defined]
    snapshot = sqlite3.OperationalError("database is locked")
    snapshot.sqlite_errorcode = 517  # type: ignore[attr-defined]
    other = sqlite3.OperationalError("no such table: x")
    other.sqlite_errorcode = 1  # type: ignore[attr-defined]
    assert is_transient_lock_error(busy) and is_transient_lock_error(snapshot)
    assert not is_transient_lock_error(other)
    assert not is_transient_lock_error(sqlite3.IntegrityError("UNIQUE"))


def _hold_write_lock(path: str, seconds: float, ready: "multiprocessing.synchronize.Event") -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    ready.set()
    time.sleep(seconds)
    conn.execute("ROLLBACK")


def _held_in_another_process(hold: object, path: Path, seconds: float) -> multiprocessing.Process:
    """Start `hold(path, seconds, ready)` in a spawned process; return once it holds its lock."""
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=hold, args=(str(path), seconds, ready))
    holder.start()
    assert ready.wait(20)
    return holder


def _with_lock_held(path: Path, seconds: float) -> multiprocessing.Process:
    return _held_in_another_process(_hold_write_lock, path, seconds)


@pytest.mark.slow  # waits out the busy budget
def test_a_lock_held_past_the_budget_is_busy_and_writes_nothing(board_path: Path) -> None:
    with Board(board_path, config=BoardConfig(retry_budget_ms=600)) as board:
        holder = _with_lock_held(board_path, 3.0)
        started = time.monotonic()
        with pytest.raises(BoardError) as busy:
            board.create_task("never")
        waited = time.monotonic() - started
        holder.join()
        assert busy.value.reason is Reason.BUSY
        assert busy.value.message == "database busy, try again"
        assert 0.5 < waited < 1.5  # bounded by the wall-clock budget, not by attempts
        assert board.list_tasks() == []


def test_a_lock_released_within_the_budget_is_waited_out(board_path: Path) -> None:
    with Board(board_path) as board:
        holder = _with_lock_held(board_path, 0.4)
        task = board.create_task("eventually")
        holder.join()
        assert board.get_task(task.id).title == "eventually"


def _hold_writer_turn(
    path: str, seconds: float, ready: "multiprocessing.synchronize.Event"
) -> None:
    import fcntl

    fd = os.open(f"{path}-writers", os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    ready.set()
    time.sleep(seconds)  # a stalled writer (stopped in a debugger, say)
    # When, on the clock every process shares (CLOCK_MONOTONIC), for a test that waited: read
    # before the unlock, so no waiter can have gone before it.
    Path(f"{path}-given-back").write_text(repr(time.monotonic()))
    fcntl.flock(fd, fcntl.LOCK_UN)  # given back now, not when this process has wound down


def _writer_turn_held(path: Path, seconds: float) -> multiprocessing.Process:
    return _held_in_another_process(_hold_writer_turn, path, seconds)


@pytest.mark.slow
def test_a_stalled_writer_turn_is_busy_within_the_budget(board_path: Path) -> None:
    with Board(board_path, config=BoardConfig(retry_budget_ms=500)) as board:
        holder = _writer_turn_held(board_path, 2.0)
        started = time.monotonic()
        with pytest.raises(BoardError) as busy:
            board.create_task("never")
        assert busy.value.reason is Reason.BUSY
        assert 0.4 < time.monotonic() - started < 1.2
        assert board.list_tasks() == []
        holder.join()
        # the abandoned wait handed the turn straight on: the next write does not hang
        started = time.monotonic()
        board.create_task("now")
        assert time.monotonic() - started < 0.5


def test_a_dead_writer_never_wedges_the_board(board_path: Path) -> None:
    with Board(board_path) as board:
        holder = _writer_turn_held(board_path, 60.0)
        holder.kill()  # the kernel drops its lock with it
        holder.join()
        assert board.create_task("after the crash").title == "after the crash"


def test_writers_queue_behind_a_held_turn_then_proceed(board_path: Path) -> None:
    """A write waits while another process holds the writers' turn and goes as soon as it is
    given back. Timed from the moment it was given back: on a loaded CI the holder woke from its
    0.5 s late, past the default budget (1.5 s), so this budget is ample."""
    with Board(board_path, config=BoardConfig(retry_budget_ms=30_000)) as board:
        holder = _writer_turn_held(board_path, 0.5)
        started = time.monotonic()
        board.create_task("waited its turn")
        done = time.monotonic()
        holder.join()
        given_back = float(Path(f"{board_path}-given-back").read_text())
        assert done - started > 0.2  # it waited
        assert given_back <= done < given_back + 1.0  # and went once the turn was free


@pytest.mark.slow
def test_writes_from_other_threads_queue_through_the_helper_and_give_up_in_time(
    board_path: Path,
) -> None:
    """The TUI writes from worker threads, where no alarm can end a wait: the queue's helper
    thread waits instead, and a caller that runs out of budget leaves nothing held behind."""
    import threading

    outcome: dict[str, object] = {}

    def write(title: str) -> None:
        started = time.monotonic()
        try:
            board.create_task(title)
            outcome[title] = ("created", time.monotonic() - started)
        except BoardError as error:
            outcome[title] = (error.reason.value, time.monotonic() - started)

    with Board(board_path, config=BoardConfig(retry_budget_ms=500)) as board:
        holder = _writer_turn_held(board_path, 1.5)
        thread = threading.Thread(target=write, args=("too late",))
        thread.start()
        thread.join()
        assert outcome["too late"][0] == "busy"  # type: ignore[index]
        assert 0.4 < outcome["too late"][1] < 1.2  # type: ignore[index,operator]
        holder.join()
        thread = threading.Thread(target=write, args=("in time",))
        thread.start()
        thread.join()
        assert outcome["in time"][0] == "created"  # type: ignore[index]
        assert [task.title for task in board.list_tasks()] == ["in time"]


_TURN_WATCH = r"""
import json, sys
import boardlib.store.writer_queue as writer_queue
from boardlib import Board, PlanItem

imported = []
acquire, release = writer_queue.WriterQueue.acquire, writer_queue.WriterQueue.release


def watched_acquire(self, timeout_s):
    got = acquire(self, timeout_s)
    self.modules_at_turn = set(sys.modules)
    return got


def watched_release(self):
    imported.extend(sorted(set(sys.modules) - self.modules_at_turn))
    release(self)


writer_queue.WriterQueue.acquire = watched_acquire
writer_queue.WriterQueue.release = watched_release
with Board(sys.argv[1]) as board:
    parent = board.create_task("parent")
    child = board.create_task("child", parent_task_id=parent.id, capped=True)
    board.create_plan([PlanItem(key="a", title="a", parent=child.id)], capped=True)
    board.claim(child.id, "builder")
    board.complete(child.id, "builder")
    board.approve(child.id, "reviewer")
print(json.dumps(imported))
"""


def test_nothing_is_imported_while_a_write_holds_the_writers_turn(tmp_path: Path) -> None:
    """Lazy imports (pydantic for the depth cap's ancestor check and for verdicts) happen before
    a write takes its turn: a first import inside it held every other writer for ~0.4 s (seconds
    under load), and 20 agents racing capped creates ran out of their budget behind it."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _TURN_WATCH, str(tmp_path / "board.db")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == []


def _write_from_another_process(path: Path, code: str) -> None:
    """One short-lived process that opens the board, writes, and closes (the last one out, if it
    believes nobody else has the file open, checkpoints and deletes the write-ahead log)."""
    import subprocess
    import sys

    program = f"from boardlib import Board\nwith Board({str(path)!r}) as board:\n    {code}"
    subprocess.run([sys.executable, "-c", program], check=True, timeout=60)


def test_a_second_store_in_a_process_leaves_the_first_one_seeing_every_commit(
    board_path: Path,
) -> None:
    """Opening a second store on the board (the TUI's reader, then the operator's writer) must
    not cost the first one its SQLite locks: the probe had read the file's header with a plain
    descriptor, and closing it dropped every POSIX lock of the process on the file. The next
    agent process to close then deleted the write-ahead log under the reader, which never saw
    another commit (the TUI kept showing a cancelled task as running)."""
    with Board(board_path) as board:
        task = board.create_task("watched")
    reader = Board(board_path, read_only=True)
    try:
        assert reader.snapshot()[0][0].status == "todo"
        Board(board_path).close()  # a second store, opened and closed in this process
        _write_from_another_process(board_path, f"board.claim({task.id!r}, 'ada')")
        seen_claim = reader.change_token()
        assert reader.snapshot()[0][0].status == "in_progress"
        _write_from_another_process(board_path, f"board.move({task.id!r}, 'cancelled')")
        assert reader.change_token() != seen_claim
        assert reader.snapshot()[0][0].status == "cancelled"
    finally:
        reader.close()
