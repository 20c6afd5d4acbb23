"""Guarantee 3: a stuck writer costs the others their budget, never a hang or a half write.

One connection holds the board's write lock for 3 s while 8 writers start at staggered moments of
the hold: 3 through the library and 3 through the CLI (a plan of five tasks each), 2 through
`kanban serve` (a task each). Each either succeeds after the hold (all of its tasks) or is refused
`busy` (library: `BoardError`, CLI: exit 4, HTTP: 503 with Retry-After) within the 1.5 s retry
budget with none of its tasks written. Reads answer throughout, through all three (WAL: readers
never wait on a writer), and the live board stays live and says busy for its own write. The one
lock that does stop readers (another program's exclusive locking mode, which can only be taken
while no connection is open) turns reads into `busy` within the budget instead of a 5 s wait and
an untyped error; the live board started under it shows "unreadable since" and recovers by itself
(tests/tui/test_live.py::test_locked_board_goes_unreadable_and_recovers).
"""

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from boardlib import Board
from tests.cli.conftest import KANBAN, clean_env
from tests.http.warm import popen_serve
from tests.tui.conftest import Notes, loaded, make_app, until
from tui.components.header_bar import HeaderBar

pytestmark = pytest.mark.slow  # writers held past their budget, timed

REPO = Path(__file__).resolve().parents[2]
BUDGET_MS = 1500
HOLD_S = 3.0
# How far past the budget a refused library call may return: SQLite's busy handler may be inside
# its last 250 ms wait when the deadline passes, plus scheduling on a loaded 2-core machine.
LIBRARY_SLACK_MS = 250 + 1000
# A CLI process adds its interpreter start-up and imports; on a machine with a load of 20 that is
# seconds. Bounded all the same: a hang would be the whole hold or forever.
CLI_SLACK_S = 12.0


def python(*args: str, **popen: Any) -> "subprocess.Popen[str]":
    env = clean_env(PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, "-m", "tests.chaos.procs", *args],
        cwd=REPO,
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **popen,
    )


def line(proc: "subprocess.Popen[str]") -> dict[str, Any]:
    assert proc.stdout is not None
    text = proc.stdout.readline()
    assert text, f"the process said nothing: {proc.stderr.read() if proc.stderr else ''}"
    return dict(json.loads(text))


def titles(db: Path) -> list[str]:
    with Board(db, read_only=True) as board:
        return [task.title for task in board.all_tasks()]


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def start_server(db: Path) -> tuple["subprocess.Popen[str]", str]:
    server = popen_serve([str(KANBAN), "serve", "--port", "0"], env=clean_env(KANBAN_DB=str(db)))
    assert server.stdout is not None
    ready = server.stdout.readline()
    assert ready, server.stderr.read() if server.stderr else ""
    return server, str(json.loads(ready)["listening"])


class HttpCall(threading.Thread):
    """One request at a moment of the hold, timed around the request alone."""

    def __init__(self, url: str, method: str, path: str, body: dict[str, Any] | None) -> None:
        super().__init__(daemon=True)
        self.url, self.method, self.path, self.body = url, method, path, body
        self.status = 0
        self.doc: Any = None
        self.headers: dict[str, str] = {}
        self.elapsed_ms = 0.0
        self.end_ms = 0

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as client:
            started = time.monotonic()
            answer = client.request(self.method, self.path, json=self.body)
            self.elapsed_ms = (time.monotonic() - started) * 1000
            self.end_ms = time.time_ns() // 1_000_000
        self.status, self.headers = answer.status_code, dict(answer.headers)
        self.doc = answer.json() if answer.content else None


@pytest.mark.parametrize("holder_kind", ["kanban", "foreign"])
def test_writers_wait_out_a_held_write_or_are_refused_busy_within_the_budget(
    tmp_path: Path, holder_kind: str
) -> None:
    """8 writers: 3 through the library, 3 through the CLI (a plan of five each), 2 through
    `kanban serve` (one task each); readers of all three kinds meanwhile."""
    db = tmp_path / "board.db"
    with Board(db) as board:
        board.create_task("the holder's task")
    plans = []
    for i in range(3):
        plan = tmp_path / f"cli-{i}.yaml"
        plan.write_text("".join(f"- {{key: k{j}, title: cli-{i}-{j}}}\n" for j in range(5)))
        plans.append(plan)
    writers = [python("write", str(db), f"lib-{i}") for i in range(3)]
    readers = [python("read", str(db)) for _ in range(2)]
    cli_env = clean_env(KANBAN_DB=str(db))
    server, url = start_server(db)
    http = {
        "http-write-0": HttpCall(url, "POST", "/api/board", {"title": "http-0"}),
        "http-read": HttpCall(url, "GET", "/api/board", None),
        "http-write-1": HttpCall(url, "POST", "/api/board", {"title": "http-1"}),
    }
    try:
        holder = python("hold", str(db), "--kind", holder_kind, "--seconds", str(HOLD_S))
        held_at = time.monotonic()
        line(holder)  # {"held": ...}
        cli: dict[str, tuple[subprocess.Popen[str], float]] = {}
        schedule: list[tuple[float, str, int]] = [
            (0.1, "lib", 0), (0.2, "cli", 0), (0.3, "read", 0), (0.4, "http-write-0", 0),
            (0.5, "lib", 1), (0.6, "cli-read", 0), (0.7, "http-read", 0), (0.9, "cli", 1),
            (1.2, "read", 1), (2.3, "http-write-1", 0), (2.6, "cli", 2), (2.8, "lib", 2),
        ]  # fmt: skip
        for offset, what, index in schedule:
            time.sleep(max(0.0, held_at + offset - time.monotonic()))
            if what in ("lib", "read"):
                proc = (writers if what == "lib" else readers)[index]
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            elif what.startswith("http"):
                http[what].start()
            else:
                args = ["plan", "apply", str(plans[index])] if what == "cli" else ["task", "list"]
                started = time.monotonic()
                proc = subprocess.Popen(
                    [str(KANBAN), *args],
                    env=cli_env,
                    text=True,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
                cli[f"{what}-{index}"] = (proc, started)
        released = line(holder)["released"]
        holder.wait(timeout=30)
        for call in http.values():
            call.join(timeout=60)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)

    outcomes = []
    for proc in writers:
        out, err = proc.communicate(timeout=60)
        doc = json.loads(out)
        outcomes.append(doc["outcome"])
        assert doc["outcome"] in ("ok", "busy"), (doc, err)
        if doc["outcome"] == "busy":
            assert doc["elapsedMs"] <= BUDGET_MS + LIBRARY_SLACK_MS, doc
        else:
            assert doc["endMs"] >= released, doc  # it waited the hold out
    for proc in readers:
        doc = json.loads(proc.communicate(timeout=60)[0])
        assert doc["outcome"] == "ok" and doc["tasks"] >= 1, doc
        assert doc["elapsedMs"] < BUDGET_MS, doc  # a read never waits for the writer
    for name, (proc, started) in cli.items():
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - started
        if name.startswith("cli-read"):
            assert proc.returncode == 0 and json.loads(out), err
            continue
        assert proc.returncode in (0, 4), (name, proc.returncode, err)
        if proc.returncode == 4:
            error = json.loads(err.strip())  # one JSON line
            assert error["reason"] == "busy" and out == ""
            outcomes.append("busy")
        else:
            outcomes.append("ok")
        assert took < BUDGET_MS / 1000 + CLI_SLACK_S, (name, took)
    read = http.pop("http-read")
    assert read.status == 200 and read.elapsed_ms < BUDGET_MS, (read.status, read.elapsed_ms)
    for name, call in http.items():
        assert call.status in (200, 503), (name, call.status, call.doc)
        if call.status == 503:
            assert call.doc["reason"] == "busy" and call.headers.get("retry-after"), call.doc
            assert call.elapsed_ms <= BUDGET_MS + LIBRARY_SLACK_MS, (name, call.elapsed_ms)
            outcomes.append("busy")
        else:
            assert call.end_ms >= released, name
            outcomes.append("ok")

    on_board = titles(db)
    prefixes = [f"lib-{i}-" for i in range(3)] + [f"cli-{i}-" for i in range(3)]
    for prefix in prefixes:
        written = [title for title in on_board if title.startswith(prefix)]
        assert len(written) in (0, 5), written  # all of the plan or none of it
    http_ok = [name for name, call in http.items() if call.status == 200]
    assert sorted(t for t in on_board if t.startswith("http-")) == sorted(
        f"http-{name[-1]}" for name in http_ok
    )
    assert len(on_board) == 1 + 5 * (outcomes.count("ok") - len(http_ok)) + len(http_ok)
    assert "busy" in outcomes and "ok" in outcomes, outcomes  # the hold was felt, and outlived
    assert integrity(db) == "ok"
    check = subprocess.run(
        [str(KANBAN), "db", "check"], env=cli_env, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stderr


def test_an_exclusive_lock_turns_reads_busy_within_the_budget(tmp_path: Path) -> None:
    """The lock that stops readers too: every read and write is `busy` within the budget (not a
    5 s wait and an untyped "database is locked"), and all answer again once it is gone."""
    db = tmp_path / "board.db"
    with Board(db) as board:
        board.create_task("locked away")
    # Long enough that three CLI processes started now meet it even on a loaded machine.
    holder = python("hold", str(db), "--kind", "exclusive", "--seconds", "8")
    line(holder)
    reader = python("read", str(db))
    writer = python("write", str(db), "lib-0")
    env = clean_env(KANBAN_DB=str(db))
    for proc in (reader, writer):
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    started = time.monotonic()
    procs = {
        " ".join(args): subprocess.Popen(
            [str(KANBAN), *args],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for args in (["task", "list"], ["task", "get", "TASK-1"], ["task", "dispatch", "-t", "x"])
    }
    runs = {}
    for args, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        runs[args] = (proc.returncode, out, err, time.monotonic() - started)
    read_doc = json.loads(reader.communicate(timeout=60)[0])
    write_doc = json.loads(writer.communicate(timeout=60)[0])
    line(holder)  # released
    holder.wait(timeout=30)

    assert read_doc["outcome"] == "busy", read_doc
    assert write_doc["outcome"] == "busy", write_doc
    for doc in (read_doc, write_doc):
        assert doc["elapsedMs"] <= BUDGET_MS + LIBRARY_SLACK_MS, doc
    for args, (code, out, err, took) in runs.items():
        assert code == 4 and out == "", (args, err)
        error = json.loads(err.strip())
        assert error["reason"] == "busy" and "locked" in error["error"]
        assert took < BUDGET_MS / 1000 + CLI_SLACK_S
    assert titles(db) == ["locked away"]  # nothing half-written
    ok = subprocess.run(
        [str(KANBAN), "task", "list"], env=env, capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0 and len(json.loads(ok.stdout)) == 1


async def wait_line(proc: "subprocess.Popen[str]") -> dict[str, Any]:
    return await asyncio.to_thread(line, proc)


async def test_the_live_board_stays_live_under_a_stuck_writer_and_says_busy(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    notes = Notes()
    app = make_app(path, clock, poll_ms=100)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        header = app.screen.query_one(HeaderBar)
        target = ids["flaky"]
        app.jump_to(target)
        before = app.state.tasks[target].priority
        holder = python("hold", str(path), "--kind", "kanban", "--seconds", str(HOLD_S))
        await wait_line(holder)
        await pilot.press("+")  # the operator's write meets the stuck writer
        await until(pilot, lambda: any("busy" in text for text in notes.seen_text()), timeout=8)
        assert header.facts.unreadable_since is None  # reading never waited: the board is live
        await wait_line(holder)  # released
        holder.wait(timeout=30)
        with Board(path, clock=clock) as agent:  # the first write after the hold
            agent.claim(ids["flaky"], "agent-after")
        await until(pilot, lambda: app.state.tasks[target].status == "in_progress", timeout=5)
        assert app.state.tasks[target].priority == before  # the refused bump wrote nothing
        # A read that met the holder's exit (its last connection folds and deletes the log) may
        # have flagged the feed stale for a moment; the health message follows the update that
        # proved the feed good, so wait for it: the promise is that the board recovers by itself.
        await until(pilot, lambda: header.facts.unreadable_since is None, timeout=5)
