"""`Board.at_once()`: a call that would wait for the board raises `WouldWait` with nothing
written, one that need not runs on the caller's thread, and once a write has committed the rest
of the block waits as usual (a call is never half done when `WouldWait` comes). The HTTP fast
lane runs the lease verbs this way (tests/http/test_fast_lane.py)."""

import sys
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


@pytest.mark.sqlite_only
def test_a_claim_answered_at_once_runs_no_import_machinery_nor_a_generator_block(
    board: Board, board_path: Path
) -> None:
    """The HTTP lane answers most claims this way, so what runs here is paid per claim: an import
    statement in the path runs importlib each time, and a generator-made context manager costs
    contextlib's frames; neither is needed. Nested blocks still leave the decision to the outer."""
    for n in range(3):
        board.create_task(f"task {n}")
    board.claim_next("warm-up")  # the writer connection and its queue, opened once
    seen: set[str] = set()

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event == "call":
            seen.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        with board.at_once():
            with board.at_once():
                assert board.claim_next("alice") is not None
            assert board.claim_next("bob") is not None  # committed once: may wait as usual
    finally:
        sys.setprofile(None)
    machinery = sorted(name for name in seen if "importlib" in name or "contextlib" in name)
    assert machinery == []
    with write_turn_held(board_path), board.at_once(), pytest.raises(WouldWait):
        board.claim_next("carol")  # the block still refuses to wait
