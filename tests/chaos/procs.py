"""Small processes the chaos tests start: a lock holder, a library writer, a library reader.

    python -m tests.chaos.procs hold  DB --kind kanban|foreign|exclusive --seconds 3
    python -m tests.chaos.procs write DB NAME       (waits for a line on stdin, then writes)
    python -m tests.chaos.procs read  DB            (waits for a line on stdin, then reads)

Each prints JSON lines: the holder `{"held": ms}` once it holds the lock and `{"released": ms}`
after it let go, stamped as it began to (a waiter may finish before the holder runs again); the
writer and the reader one `{"outcome", "elapsedMs", "endMs", ...}` each, the time measured
around the board call alone (no interpreter start-up in it).
"""

import argparse
import json
import os
import sqlite3
import sys
import time
from typing import Any


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def say(**doc: Any) -> None:
    print(json.dumps(doc), flush=True)


def hold(db: str, kind: str, seconds: float) -> None:
    """Hold the board's write lock for `seconds`, as a stuck writer would:

    - `kanban`: a kanban process inside its write transaction (the writers' turn and SQLite's
      RESERVED lock), its update committed at the end;
    - `foreign`: another program's `BEGIN IMMEDIATE` (SQLite's lock only, no writers' turn);
    - `exclusive`: a connection in exclusive locking mode, which also shuts readers out (the one
      lock a WAL board's readers wait on)."""
    if kind == "kanban":
        from boardlib import Board

        with Board(db, reconcile_orphans=False, create=False) as board:
            letting_go: list[int] = []

            def stuck(tx: Any) -> None:
                tx.conn.execute("UPDATE tasks SET priority = priority + 1 WHERE seq = 1")
                say(held=now_ms())
                time.sleep(seconds)
                letting_go.append(now_ms())

            board.store.write(stuck)
        say(released=letting_go[0])
        return
    conn = sqlite3.connect(db, isolation_level=None, timeout=30)
    if kind == "exclusive":
        # Only while no other connection is open: a WAL reader's open connection keeps a shared
        # lock that exclusive locking mode cannot get past (a live board cannot be locked out).
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE" if kind == "exclusive" else "BEGIN IMMEDIATE")
    conn.execute("UPDATE tasks SET priority = priority + 1 WHERE seq = 1")
    if kind == "exclusive":
        conn.execute("COMMIT")  # the exclusive lock stays until the connection closes
    say(held=now_ms())
    time.sleep(seconds)
    letting_go = now_ms()
    if conn.in_transaction:
        conn.execute("COMMIT")
    conn.close()
    say(released=letting_go)


def write(db: str, name: str) -> None:
    """On a line from stdin: open the board and write one plan of five tasks titled `NAME-i`,
    all or nothing (the time measured covers both, as for an agent's one call)."""
    from boardlib import Board, BoardConfig, BoardError, PlanItem

    items = [PlanItem(key=f"k{i}", title=f"{name}-{i}") for i in range(5)]
    sys.stdin.readline()
    started = time.monotonic()
    try:
        with Board(
            db, config=BoardConfig.from_env(), reconcile_orphans=False, create=False
        ) as board:
            board.create_plan(items)
        outcome = "ok"
    except BoardError as error:
        outcome = error.reason.value
    elapsed = (time.monotonic() - started) * 1000
    say(name=name, outcome=outcome, elapsedMs=round(elapsed, 1), endMs=now_ms(), pid=os.getpid())


def read(db: str) -> None:
    """On a line from stdin: list every task and count the statuses."""
    from boardlib import Board, BoardError

    sys.stdin.readline()
    started = time.monotonic()
    try:
        with Board(db, read_only=True, reconcile_orphans=False) as board:
            tasks = board.list_tasks()
            board.status_counts()
        outcome, count = "ok", len(tasks)
    except BoardError as error:
        outcome, count = error.reason.value, 0
    elapsed = (time.monotonic() - started) * 1000
    say(outcome=outcome, tasks=count, elapsedMs=round(elapsed, 1), endMs=now_ms())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos.procs")
    parser.add_argument("what", choices=("hold", "write", "read"))
    parser.add_argument("db")
    parser.add_argument("name", nargs="?", default="writer")
    parser.add_argument("--kind", default="kanban", choices=("kanban", "foreign", "exclusive"))
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    if args.what == "hold":
        hold(args.db, args.kind, args.seconds)
    elif args.what == "write":
        write(args.db, args.name)
    else:
        read(args.db)


if __name__ == "__main__":
    main()
