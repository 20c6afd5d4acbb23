"""`kanban watch --consumer n --on status_changed -- sh -c 'cat >> log'`, SIGKILLed and restarted 20
times while real agent processes work the board: the log holds every status_changed event, in
order, with no gap; the only repeats are a restart delivering again the one event its killed
predecessor had handed on but not yet recorded (at least once), each right after itself. The
count of those repeats is printed (run with -s to see it).

Each kill waits for progress, not for a clock: the watcher it kills has delivered two new lines
(it owns the consumer and is mid-stream), and then dies at once (often between a delivery and
its cursor's commit: the at-least-once path) or within 0.3 s. The agents pace themselves (a
pause between rounds) so the stream stays ahead of the watcher without thousands of deliveries
to wait through: the lines, not the events, are what each kill must land among."""

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardlib import Board
from boardlib.events import EventKind
from boardlib.watch import Consumers
from tests.cli.conftest import KANBAN, clean_env

pytestmark = pytest.mark.slow

KILLS = 20
AGENTS = 3
PAUSE_S = 0.5  # between an agent's rounds (3 status_changed each): ~18 events/s in all
PROGRESS_S = 120.0  # how long one watcher may take to deliver its first lines (a loaded machine)

AGENT = """
import sys, time
from boardlib import Board, BoardError
board = Board(sys.argv[1], reconcile_orphans=False)
me, judge = sys.argv[2], sys.argv[2] + "-judge"
deadline = time.monotonic() + float(sys.argv[3])
while time.monotonic() < deadline:
    try:
        task = board.create_task(f"work of {me}")
        board.claim(task.id, me)
        board.complete(task.id, me)
        board.approve(task.id, judge)
    except BoardError as error:  # busy under load: try again
        if error.reason.value != "busy":
            raise
    time.sleep(float(sys.argv[4]))
"""


def watcher(db: str, log: Path, *extra: str) -> "subprocess.Popen[bytes]":
    return subprocess.Popen(
        [str(KANBAN), "watch", "--consumer", "n", "--on", EventKind.STATUS_CHANGED, *extra,
         "--", "sh", "-c", f"cat >> {log}"],
        env=clean_env(KANBAN_DB=db),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip


def logged(log: Path) -> list[int]:
    if not log.exists():
        return []
    return [json.loads(line)["seq"] for line in log.read_text().splitlines()]


def lines(log: Path) -> int:
    try:
        return log.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def delivering(log: Path, since: int, current: "subprocess.Popen[bytes]") -> None:
    """Wait until the log holds two lines more than `since`: the watcher took the consumer over
    and delivers (a killed predecessor's last delivery can add one line, never two)."""
    deadline = time.monotonic() + PROGRESS_S
    while lines(log) < since + 2:
        assert current.poll() is None, current.stderr.read() if current.stderr else ""
        assert time.monotonic() < deadline, f"no delivery in {PROGRESS_S:g} s"
        time.sleep(0.005)


def test_every_event_once_across_20_kills(board_path: Path, tmp_path: Path) -> None:
    db = str(board_path)
    log = tmp_path / "log"
    with Board(db) as board:
        start = board.last_event_seq()
        made = Consumers(board)  # made before the first watcher, which may die before it would
        made.open("n", since=start)
        made.release("n")
    agents = [
        subprocess.Popen(
            [sys.executable, "-c", AGENT, db, f"agent-{n}", "600", str(PAUSE_S)],
            env=clean_env(PYTHONPATH=os.getcwd()),
        )
        for n in range(AGENTS)
    ]
    rng = random.Random(24)
    kills = 0
    try:
        current = watcher(db, log)
        while kills < KILLS:
            delivering(log, lines(log), current)
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0.0, 0.3))
            current.send_signal(signal.SIGKILL)
            current.wait()
            kills += 1
            current = watcher(db, log)
        delivering(log, lines(log), current)  # the last one is delivering too, then stops
    finally:
        for agent in agents:
            agent.terminate()
        for agent in agents:
            agent.wait(timeout=60)
    with Board(db, reconcile_orphans=False) as board:
        expected = [
            e.seq
            for e in board.events(since=start, limit=1_000_000)
            if e.kind == EventKind.STATUS_CHANGED
        ]
    # Wait while the last watcher catches up, as long as it keeps delivering (a loaded machine
    # is slow, not stuck): 60 s without a new line ends the wait.
    seen, progress = 0, time.monotonic()
    while time.monotonic() - progress < 60 and (
        not (so_far := logged(log)) or so_far[-1] < expected[-1]
    ):
        if len(so_far) > seen:
            seen, progress = len(so_far), time.monotonic()
        time.sleep(0.2)
    current.terminate()
    assert current.wait(timeout=60) == 0, current.stderr.read() if current.stderr else ""
    seqs = logged(log)  # every line whole JSON: a killed delivery wrote all of its line or none
    repeats = [a for a, b in itertools.pairwise(seqs) if a == b]
    once = [seq for i, seq in enumerate(seqs) if i == 0 or seq != seqs[i - 1]]
    print(
        f"\nwatch under {KILLS} SIGKILLs: {len(expected)} status_changed events, "
        f"{len(seqs)} lines, {len(repeats)} repeated (at least once), 0 missing"
    )
    differs = next(
        (i for i, (a, b) in enumerate(zip(once, expected, strict=False)) if a != b), None
    )
    assert differs is None, (
        f"a gap, a reordering, or a repeat that was not the last line, at line {differs}: "
        f"{once[differs]} where {expected[differs]} was due"
    )
    assert len(once) == len(expected), (
        f"{len(once)} events delivered of {len(expected)}: the last watcher had not caught up "
        "(60 s without a new line), or delivered more than the board holds"
    )
    assert len(repeats) <= KILLS
    assert len(expected) > 50, "the agents did too little for the test to mean anything"
