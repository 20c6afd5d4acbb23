"""`Board.at_once()`: a call that would wait for the board raises `WouldWait` with nothing
written, one that need not runs on the caller's thread, and once a write has committed the rest
of the block waits as usual (a call is never half done when `WouldWait` comes). The HTTP fast
lane runs the lease verbs this way (tests/http/test_fast_lane.py)."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, BoardConfig
from boardlib.store.base import WouldWait
from tests.backends import is_postgres


@contextmanager
def write_turn_held(path: Any) -> Iterator[threading.Event]:
    """Another opener of the board inside its write transaction until the event is set."""
    other = Board(path, config=BoardConfig(), reconcile_orphans=False)
    inside, leave = threading.Event(), threading.Event()

    def hold(tx: Any) -> None:
        inside.set()
        leave.wait(10)

    holder = threading.Thread(target=lambda: other.store.write(hold))
    holder.start()
    assert inside.wait(10)
    try:
        yield leave
    finally:
        leave.set()
        holder.join(10)
        other.close()


def test_a_free_board_answers_at_once(board: Board, board_path: Path) -> None:
    task = board.create_task("one")
    if is_postgres(board_path):  # every call is a round trip: never on the caller's thread
        with board.at_once(), pytest.raises(WouldWait):
            board.claim_next("alice")
        with board.at_once(), pytest.raises(WouldWait):
            board.get_task(task.id)
        assert board.get_task(task.id).status == "todo"
        return
    with board.at_once():
        assert board.get_task(task.id).id == task.id
        claimed = board.claim_next("alice")
    assert claimed is not None and claimed.id == task.id


@pytest.mark.sqlite_only
def test_a_held_write_turn_is_would_wait_with_nothing_written(
    board: Board, board_path: Path
) -> None:
    task = board.create_task("one")
    with write_turn_held(board_path):
        with board.at_once(), pytest.raises(WouldWait):
            board.claim_next("alice")
        assert board.get_task(task.id).status == "todo"  # reads wait for no writer
    with board.at_once():
        assert board.claim_next("alice") is not None  # free again: at once


@pytest.mark.sqlite_only
def test_a_busy_reader_connection_is_would_wait(board: Board) -> None:
    task = board.create_task("one")
    inside, leave = threading.Event(), threading.Event()

    def long_read(tx: Any) -> None:
        inside.set()
        leave.wait(10)

    reader = threading.Thread(target=lambda: board.store.read(long_read))
    reader.start()
    assert inside.wait(10)
    try:
        with board.at_once(), pytest.raises(WouldWait):
            board.get_task(task.id)
    finally:
        leave.set()
        reader.join(10)


@pytest.mark.sqlite_only
def test_after_one_write_the_block_waits_as_usual(board: Board, board_path: Path) -> None:
    first, second = board.create_task("one"), board.create_task("two")
    done: dict[str, Any] = {}
    with board.at_once():
        assert board.claim(first.id, "alice").id == first.id  # committed: the block is settled
        with write_turn_held(board_path) as leave:
            timer = threading.Timer(0.3, leave.set)
            timer.start()
            done["task"] = board.claim(second.id, "alice")  # waits for the turn, then claims
            timer.join()
    assert done["task"].assignee_agent_id == "alice"
