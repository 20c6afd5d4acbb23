"""Live updates from other processes: a change committed by another process is on screen within
the poll interval; a vanished board shows "unreadable since ..." and recovers by itself; `p`
pauses; and when the terminal goes away the app exits instead of spinning."""

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, ManualClock
from boardlib import transitions as t
from boardlib.errors import Reason
from tests.tui.conftest import demo_board, loaded, make_app, until
from tui.components.header_bar import HeaderBar

POLL_MS = 100

AGENT = """
import sys
from boardlib import Board
with Board(sys.argv[1]) as board:
    task = board.claim(sys.argv[2], "agent-remote", runtime="sh")
    board.log_progress(task.id, "agent-remote", "started from another process")
"""


@pytest.mark.slow
async def test_another_process_change_shows_within_the_poll_interval(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock, poll_ms=POLL_MS)
    target = ids["flaky"]
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(target)
        assert app.state.tasks[target].status == t.TODO
        subprocess.run([sys.executable, "-c", AGENT, str(path), target], check=True)
        # It arrives by itself (no key pressed, no full re-read). How fast is measured, not
        # asserted: benchmarks/tui.py reports "one agent write to screen" (one poll + a frame);
        # here the bound only says it came from the poll, on a 2-core machine of any load.
        await until(pilot, lambda: app.state.tasks[target].status == t.IN_PROGRESS, timeout=10)
        assert app.state.tasks[target].assignee_agent_id == "agent-remote"
        assert app.is_changed(target)  # highlighted for a few seconds
        # The cursor stayed in todo, on the neighbour that took the task's place; `f` follows.
        assert app.selected_task().status == t.TODO  # type: ignore[union-attr]
        # The note is a message the board view posts after the update: wait for it, not a frame.
        await until(pilot, lambda: app.left_task == target, timeout=3)
        header = app.screen.query_one(HeaderBar).facts
        assert header.in_progress == app.state.counts[t.IN_PROGRESS]


async def test_pause_holds_the_screen_until_resumed(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock, poll_ms=POLL_MS)
    target = ids["flaky"]
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("p")
        header = app.screen.query_one(HeaderBar)
        assert header.facts.paused
        with Board(path, clock=clock) as agent:
            agent.claim(target, "agent-zed")
        await until(pilot, lambda: header.facts.waiting, timeout=3)
        assert app.state.tasks[target].status == t.TODO  # the card under the cursor held still
        await pilot.press("p")
        await until(pilot, lambda: app.state.tasks[target].status == t.IN_PROGRESS, timeout=3)
        assert not header.facts.paused and not header.facts.waiting


def _footer_words(app: Any) -> dict[str, str]:
    """The board footer's hints: key -> its word."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    keys = app.screen.query_one(Footer).query(FooterKey)
    return {key.key: key.description for key in keys}


@pytest.mark.parametrize("remapped", [None, "ctrl+g"])
async def test_the_footer_says_resume_while_paused(demo, remapped: str | None) -> None:  # type: ignore[no-untyped-def]
    """The header said "paused · changes waiting (p)" while the footer still offered `p Pause`:
    the key's word follows the state, on the key as the operator remapped it too."""
    path, clock, _ids = demo
    app = make_app(path, clock, poll_ms=POLL_MS)
    if remapped is not None:
        app.user_keymap = {"board.pause": remapped}
        app.set_keymap(app.user_keymap)
    key = remapped or "p"
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        assert _footer_words(app)[key] == "Pause"
        await pilot.press(key)
        assert app.paused
        await until(pilot, lambda: _footer_words(app).get(key) == "Resume", timeout=3)
        await pilot.press(key)
        assert not app.paused
        await until(pilot, lambda: _footer_words(app).get(key) == "Pause", timeout=3)


async def test_scrolling_done_while_paused_shows_each_task_in_one_column(tmp_path: Path) -> None:
    """Found in tmux (`kanban demo` at 160x48): after `p`, `G` `g` and more, then `p` again,
    finished tasks stayed in todo and in progress as done cards ("311/310 shown") until `r`. A
    page of done read while paused held a task whose move there was not applied yet: it showed in
    both columns, and when its move came its row was the same already, so it never left."""
    from tests.tui.test_paging import finish

    clock = ManualClock(1_800_000_000_000)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        finish(board, clock, 150)  # more than a page of done: `G` and `g` read pages
        target = board.create_task("finishes while the view is paused").id
    app = make_app(path, clock, poll_ms=POLL_MS)
    async with app.run_test(size=(200, 50)) as pilot:  # done unfolded
        await loaded(pilot)
        view, state = app.board_screen.board, app.state
        while view.active_status != t.DONE:
            await pilot.press("l")
        await pilot.press("p")
        header = app.screen.query_one(HeaderBar)
        with Board(path, clock=clock) as agent:
            clock.advance(minutes=1)
            agent.claim(target, "agent-zed")
            agent.move(target, t.DONE)
            counts = agent.status_counts()
        await until(pilot, lambda: header.facts.waiting, timeout=3)
        await pilot.press("G")
        await until(pilot, lambda: state.starts[t.DONE] > 0)
        await pilot.press("g")
        await until(pilot, lambda: state.starts[t.DONE] == 0 and state.id_at(t.DONE, 0))
        assert state.columns[t.TODO].count(target) + state.columns[t.DONE].count(target) == 1
        assert state.shown <= state.total == 151, (state.shown, state.total)
        await pilot.press("p")
        await until(pilot, lambda: not header.facts.waiting, timeout=3)
        await until(pilot, lambda: state.counts[t.DONE] == counts[t.DONE], timeout=3)
        assert target in state.columns[t.DONE] and target not in state.columns[t.TODO]
        assert {status: state.counts[status] for status in counts} == counts


@pytest.mark.slow
async def test_vanished_board_goes_unreadable_and_recovers(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock, poll_ms=POLL_MS)
    moved = path.with_name("elsewhere.db")
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        header = app.screen.query_one(HeaderBar)
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{path}{suffix}")
            if source.exists():
                os.replace(source, f"{moved}{suffix}")
        await until(pilot, lambda: header.facts.unreadable_since is not None, timeout=3)
        assert "gone" in (header.facts.unreadable_reason or "")
        assert "unreadable since" in str(header.render())
        await pilot.press("j", "k")  # still responsive
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{moved}{suffix}")
            if source.exists():
                os.replace(source, f"{path}{suffix}")
        with Board(path, clock=clock) as agent:
            agent.claim(ids["flaky"], "agent-zed")
        await until(pilot, lambda: header.facts.unreadable_since is None, timeout=3)
        await until(pilot, lambda: app.state.tasks[ids["flaky"]].status == t.IN_PROGRESS)


def move_board(source: Path, target: Path) -> None:
    """Move a board file and its -wal/-shm over `target` (what `mv` of a board does)."""
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            os.replace(f"{source}{suffix}", f"{target}{suffix}")
        else:
            Path(f"{target}{suffix}").unlink(missing_ok=True)


async def test_a_write_follows_a_replaced_board_and_a_gone_one_is_refused(demo) -> None:  # type: ignore[no-untyped-def]
    """Found in tmux: the writer's connection kept the file it had opened, so after the board was
    replaced the screen showed the new file (the live reader follows) while `+` wrote into the
    deleted one, and with the file gone a write made a new empty board. Now a write goes to the
    file the path names, and a gone board is `no_board` with nothing created."""
    import shutil

    from boardlib.actors import OPERATOR
    from tests.tui.conftest import Notes

    path, clock, ids = demo
    target = ids["flaky"]
    copy = path.with_name("replacement.db")
    with Board(path, clock=clock) as board:
        board.checkpoint()
    shutil.copy(path, copy)
    with Board(copy, clock=clock) as other:
        other.update_task(target, title="the replacement's own title")
    notes = Notes()
    app = make_app(path, clock, poll_ms=POLL_MS)

    def bump(priority: int) -> None:
        app.write("bump", lambda b: b.update_task(target, priority=priority, actor=OPERATOR))

    def stored() -> tuple[str, int]:
        with Board(path, read_only=True, reconcile_orphans=False) as reader:
            task = reader.get_task(target)
        return task.title, task.priority

    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        bump(7)  # the writer is open on the first file
        await until(pilot, lambda: stored()[1] == 7, timeout=5)
        move_board(copy, path)
        await until(pilot, lambda: app.state.tasks[target].title.startswith("the replacement"))
        bump(8)
        await until(pilot, lambda: stored() == ("the replacement's own title", 8), timeout=5)
        move_board(path, copy)  # gone: refused, and no board is made in its place
        bump(9)
        await until(pilot, lambda: notes.errors(), timeout=5)
        [refusal] = notes.errors()
        assert "refused (no_board)" in refusal and "is gone" in refusal
        assert not path.exists()
        move_board(copy, path)
        bump(10)
        await until(pilot, lambda: stored()[1] == 10, timeout=5)
        assert len(notes.errors()) == 1


async def test_locked_board_goes_unreadable_and_recovers(demo) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    path, clock, ids = demo
    # Another process holds an exclusive lock (WAL in exclusive locking mode shuts everyone
    # else out) while the operator starts the board.
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    locker.execute("UPDATE tasks SET priority = priority + 10 WHERE id = ?", (ids["flaky"],))
    locker.execute("COMMIT")
    app = make_app(path, clock, poll_ms=POLL_MS)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            header = app.screen.query_one(HeaderBar)
            await until(pilot, lambda: header.facts.unreadable_since is not None, timeout=8)
            assert "locked" in (header.facts.unreadable_reason or "")
            await pilot.press("j")  # the event loop never waits on the database
            locker.close()
            await until(pilot, lambda: header.facts.unreadable_since is None, timeout=8)
            await until(pilot, lambda: app.loaded)
            assert app.state.tasks[ids["flaky"]].priority >= 10
    finally:
        locker.close()


def refused_open(app: Any) -> bool:
    said = app.said.newest_first()
    return any(Reason.BUSY.value in s.title for s in said)


async def test_recovery_starts_once_a_board_locked_at_start_reads(
    demo: tuple[Path, ManualClock, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SQLite side of tests/tui/test_server_down.py's: started while another process held
    the board locked, the app's open was refused; once the board reads, its recovery (the
    reconciler releasing expired leases) runs, so a task its agent abandoned goes back to todo
    with only the app left to notice."""
    import sqlite3

    monkeypatch.setenv("KANBAN_RECONCILE_INTERVAL_MS", "100")
    path, clock, ids = demo
    abandoned = ids["flaky"]
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    locker.execute("UPDATE tasks SET priority = priority WHERE id = ?", (abandoned,))
    locker.execute("COMMIT")  # the exclusive lock stays held until the connection closes
    app = make_app(path, clock, poll_ms=POLL_MS)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            header = app.screen.query_one(HeaderBar)
            await until(pilot, lambda: header.facts.unreadable_since is not None, timeout=8)
            await until(pilot, lambda: refused_open(app), timeout=8)  # its retry budget spent
            locker.close()
            await until(pilot, lambda: header.facts.unreadable_since is None, timeout=8)
            with Board(path, clock=clock) as agent:  # its own open releases nothing yet
                agent.claim(abandoned, "agent-ada", lease_ms=1_000)
            await until(pilot, lambda: app.state.tasks[abandoned].status == t.IN_PROGRESS)
            clock.advance(seconds=5)  # the agent is gone; only the app is left to notice
            await until(pilot, lambda: app.state.tasks[abandoned].status == t.TODO, timeout=8)
    finally:
        locker.close()


@pytest.mark.slow  # a real terminal closed under the app
def test_the_app_exits_when_its_terminal_goes_away(tmp_path: Path) -> None:
    path, _clock, _ids = demo_board(tmp_path)
    pid, master = pty.fork()
    if pid == 0:  # the child: the board in a terminal of its own
        os.environ.update(TERM="xterm-256color", TEXTUAL_COLOR_SYSTEM="256")
        os.execv(sys.executable, [sys.executable, "-m", "tui", "--db", str(path)])
    try:
        deadline = time.monotonic() + 15
        seen = b""
        while b"live" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        assert b"live" in seen, seen[-500:]
        os.close(master)  # the SSH session drops
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            done, _status = os.waitpid(pid, os.WNOHANG)
            if done:
                return
            time.sleep(0.1)
        raise AssertionError("the app kept running after its terminal went away")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


async def test_an_abandoned_lease_is_released_while_the_app_runs(
    demo, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The app keeps recovery going: a dead agent's card goes back to todo without any agent
    having to claim first."""
    path, clock, ids = demo
    monkeypatch.setenv("KANBAN_RECONCILE_INTERVAL_MS", "100")
    target = ids["flaky"]
    with Board(path, clock=clock) as board:
        board.claim(target, "ghost")
    app = make_app(path, clock, poll_ms=POLL_MS)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        assert app.state.tasks[target].status == t.IN_PROGRESS
        clock.advance(minutes=16)  # the ghost's 15-minute lease lapses
        await until(pilot, lambda: app.state.tasks[target].status == t.TODO, timeout=5)
        assert app.state.tasks[target].assignee_agent_id is None


async def test_the_collector_paused_for_start_up_runs_again_after_the_first_frame(demo) -> None:  # type: ignore[no-untyped-def]
    """`run_tui` pauses the cyclic garbage collector for start-up; the app turns it back on
    once the first board update is on screen."""
    import gc

    from tui.prefetch import GC_PAUSE_MAX_S

    path, clock, _ = demo
    app = make_app(path, clock, poll_ms=POLL_MS)
    gc.disable()  # as run_tui leaves it
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await loaded(pilot)
            # well before the fallback timer (GC_PAUSE_MAX_S after mount) would turn it on
            await until(pilot, gc.isenabled, timeout=GC_PAUSE_MAX_S / 2)
    finally:
        gc.enable()


async def test_the_prefetched_snapshot_is_adopted_and_followed(demo) -> None:  # type: ignore[no-untyped-def]
    """`tui.launch` reads the board before Textual loads; the reader adopts that connection and
    snapshot, posts it first, and still catches a change committed after the prefetch."""
    from tui.prefetch import Prefetch

    path, clock, ids = demo
    prefetch = Prefetch(path, clock)
    target = ids["flaky"]
    subprocess.run([sys.executable, "-c", AGENT, str(path), target], check=True)  # after it
    app = make_app(path, clock, poll_ms=POLL_MS, prefetch=prefetch)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        assert prefetch.take() is None  # consumed by the reader
        assert len(app.state.tasks) == len(Board(path, read_only=True).all_tasks())
        await until(pilot, lambda: app.state.tasks[target].status == t.IN_PROGRESS, timeout=3)
