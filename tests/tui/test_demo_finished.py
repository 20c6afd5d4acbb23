"""The demo's finished note in the header: its figures are the demo's, dated, and stay true while
the operator goes on finishing tasks on the board (docs/tui.md)."""

from pathlib import Path

from boardlib import Board, ManualClock
from boardlib import transitions as t
from kanban.demo.runner import board_announcer
from tests.tui.conftest import make_app, until, utc
from tests.tui.test_drawer import screen_text

START_MS = 1_795_000_000_000  # 2026-11-18 11:06:40 UTC


def finish(board: Board, task_id: str) -> None:
    """Claimed, built and approved: done as an agent and its reviewer take it there."""
    board.claim(task_id, "agent-ada")
    board.complete(task_id, "agent-ada")
    board.approve(task_id, "agent-cy")


async def test_the_finished_note_says_when_its_figures_were_true(tmp_path: Path) -> None:
    """Found driving `kanban demo` in tmux: after the demo, a task created, claimed and finished
    left the header saying "demo finished: 35 done, 1 cancelled" with 36 in done."""
    utc()
    path, clock = tmp_path / "board.db", ManualClock(START_MS)
    with Board(path, clock=clock) as board:
        first, second = (board.create_task(title).id for title in ("one", "two"))
        finish(board, first)
        board.cancel(second)
    announce = board_announcer(clock.now_ms, keep=False, folder=tmp_path, created=True)
    app = make_app(path, clock, announce=announce)
    async with app.run_test(size=(80, 24)) as pilot:
        header = app.board_screen.header
        await until(pilot, lambda: header.facts.note)
        said = "demo ended 11:06: 1 done, 1 cancelled"
        assert header.facts.note == f"{said}; q quits, the folder is removed"
        clock.advance(minutes=5)
        with Board(path, clock=clock) as operator:  # the operator's own work, after the demo
            later = operator.create_task("x").id
            finish(operator, later)
        await until(pilot, lambda: app.state.counts.get(t.DONE) == 2)
        await pilot.pause(0.1)
        assert header.facts.note.startswith(said)  # dated: still true at 11:11
        assert said in screen_text(app).splitlines()[0]
        # The demo ends with work to land: beside "30 need you" at 80 columns the date still fits.
        header.update_facts(inbox=30, inbox_new="", note=header.facts.note.replace("1 d", "35 d"))
        await until(pilot, lambda: "30 need you │ demo ended 11:06: 35 done" in screen_text(app))
        assert "30 need you │ demo ended 11:06: 35 done, 1 cancelled" in screen_text(app)
