"""Expired leases released a batch per transaction (`recovery.RELEASE_BATCH`): every pass and
claim still releases each lease once, with its event, and a fleet's leases lapsing together do
not hold SQLite's one write lock past another writer's patience (`busy`)."""

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from boardlib import Board, ManualClock
from boardlib import transitions as t
from boardlib.recovery import RELEASE_BATCH

MORE_THAN_TWO_BATCHES = 2 * RELEASE_BATCH + 50


def lapsed(board: Board, clock: ManualClock, count: int) -> list[str]:
    """`count` tasks claimed (one lease each, the first lapsing first) whose leases then expired."""
    ids = [board.create_task(f"held {n}").id for n in range(count)]
    for n, task_id in enumerate(ids):
        board.claim(task_id, f"w{n}", lease_ms=60_000 + n)
    clock.advance(minutes=2)
    return ids


def released_once(board: Board, ids: list[str]) -> None:
    tasks = [board.get_task(task_id) for task_id in ids]
    assert {(task.status, task.claim_epoch) for task in tasks} <= {(t.TODO, 2), (t.IN_PROGRESS, 3)}
    expired = [
        e.task_id
        for e in board.events(limit=100_000)
        if e.kind == "lease_expired" and e.task_id in ids
    ]
    assert sorted(expired) == sorted(ids)  # one event each, none twice


def test_a_pass_releases_more_than_a_batch_each_once(board: Board, clock: ManualClock) -> None:
    ids = lapsed(board, clock, MORE_THAN_TWO_BATCHES)
    report = board.reconcile_stale_tasks()
    assert sorted(task.id for task in report.released) == sorted(ids)
    released_once(board, ids)
    assert board.reconcile_stale_tasks().released == []


def test_a_claim_releases_batch_after_batch_then_claims(board: Board, clock: ManualClock) -> None:
    """A claim statement claims nothing while any lease has lapsed: claim-next and a claim by id
    release the batches in turn, then claim (the lease lapsing last, in the last batch)."""
    ids = lapsed(board, clock, MORE_THAN_TWO_BATCHES)
    last = board.claim(ids[-1], "late")
    assert (last.assignee_agent_id, last.claim_epoch) == ("late", 3)
    released_once(board, ids)
    ids = lapsed(board, clock, MORE_THAN_TWO_BATCHES)
    claimed = board.claim_next("next")
    assert claimed is not None and claimed.id in ids
    released_once(board, ids)


WRITER = textwrap.dedent(
    """
    import sys, time
    from boardlib import Board, BoardError
    board = Board(sys.argv[1], reconcile_orphans=False)
    print("ready", flush=True)
    sys.stdin.readline()
    end, busy, claimed = time.monotonic() + 4, 0, 0
    for task_id in sys.argv[2:]:
        if time.monotonic() > end:
            break
        try:
            board.claim(task_id, "writer")
            claimed += 1
        except BoardError as error:
            busy += error.reason.value == "busy"
        time.sleep(0.02)
    print(claimed, busy, flush=True)
    """
)


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_a_fleets_leases_lapsing_together_leave_other_writers_their_turn(
    board_path: Path,
) -> None:
    """10,000 leases released in one write held the write lock ~2 s on this machine, past the
    1.5 s another writer waits before `busy`: a writer's claims failed while a pass released
    them. In batches, none does, and each lease is released once."""
    count = 10_000
    with Board(board_path, reconcile_orphans=False) as board:
        ids = [board.create_task(f"held {n}").id for n in range(count)]
        free = [board.create_task(f"free {n}").id for n in range(200)]
    with sqlite3.connect(board_path) as conn:  # a fleet's claims, lapsed long ago
        conn.executemany(
            "UPDATE tasks SET status = 'in_progress', assignee_agent_id = ?, claim_epoch = 1, "
            "holders = ?, lease_until = 1000, last_heartbeat_at = 1 WHERE id = ?",
            [(f"w{n}", f'["w{n}"]', task_id) for n, task_id in enumerate(ids)],
        )
    conn.close()
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(board_path), *free],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert writer.stdout is not None and writer.stdin is not None
    assert writer.stdout.readline().strip() == "ready"
    with Board(board_path, reconcile_orphans=False) as board:
        writer.stdin.write("go\n")
        writer.stdin.flush()
        started = time.monotonic()
        report = board.reconcile_stale_tasks()  # raises `busy` if the writer held it too long
        took = time.monotonic() - started
        out, _ = writer.communicate(timeout=60)
        claimed, busy = map(int, out.split())
        assert busy == 0 and claimed > 0, (out, took)
        pass_and_claims = {task.id for task in report.released}
        with sqlite3.connect(board_path) as conn:
            rows = conn.execute(
                "SELECT task_id, COUNT(*) FROM events WHERE kind = 'lease_expired' GROUP BY task_id"
            ).fetchall()
        conn.close()
        assert pass_and_claims <= set(ids)
        assert sorted(rows) == sorted((task_id, 1) for task_id in ids)
        assert {board.get_task(i).status for i in ids} == {t.TODO}
