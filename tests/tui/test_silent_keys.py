"""Keys that did nothing in silence (found driving the TUI in tmux) each act or say why not:
`j`/`G` on a folded column, `h`/`G`/Enter on the stats screen (its empty table too), and an
action's name typed in the command palette for a task it does not apply to ("No matches found"
said nothing of why)."""

import hashlib
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable

from boardlib import Board, ManualClock
from boardlib import transitions as t
from tests.tui.conftest import Notes, loaded, onto_folded_column, until
from tests.tui.test_drawer import screen_text
from tui.app import KanbanApp
from tui.components.stats_screen import NO_AGENT_ROWS, ROW_OPENS_NOTHING, StatsScreen
from tui.stats_board import build_stats_board

START = 1_800_000_000_000


def board_with_a_folded_column(tmp_path: Path) -> tuple[Path, ManualClock]:
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        board.create_task("only todo")
        board.cancel(board.create_task("dropped idea").id)
    return path, clock


async def test_cursor_keys_on_a_folded_column_say_it_is_folded(tmp_path: Path) -> None:
    path, clock = board_with_a_folded_column(tmp_path)
    app = KanbanApp(path, poll_ms=30, clock=clock, operator="olivia", user_keymap={})
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await loaded(pilot)
        await onto_folded_column(pilot, t.CANCELLED)
        view = app.board_screen.board
        for count, key in enumerate(("j", "G"), start=1):
            await pilot.press(key)
            await until(pilot, lambda n=count: len(notes.warnings()) == n)
        assert notes.warnings() == [
            ": Down: the cancelled column is folded (z unfolds it).",
            ": Last card: the cancelled column is folded (z unfolds it).",
        ]
        assert view.active_status == t.CANCELLED and view.columns[t.CANCELLED].collapsed
        while view.active_status != t.TODO:  # an open column: `j` moves, and says nothing
            await pilot.press("h")
        await pilot.press("j")
        await pilot.pause(0.1)
        assert len(notes.warnings()) == 2


async def test_keys_the_stats_screen_has_no_use_for_say_which_it_has(tmp_path: Path) -> None:
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    build_stats_board(path, clock)
    app = KanbanApp(path, poll_ms=30, clock=clock, operator="olivia", user_keymap={})
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await loaded(pilot)
        await pilot.press("S")
        assert isinstance(app.screen, StatsScreen)
        await until(pilot, lambda: app.screen.stats is not None)
        keys = "w changes the window, r reads the figures again"
        for count, key in enumerate(("h", "G", "enter"), start=1):
            await pilot.press(key)
            await until(pilot, lambda n=count: len(notes.warnings()) >= n)
        said = notes.warnings()
        assert said[0].startswith(": h: not a stats key. Here ") and keys in said[0], said
        assert said[1].startswith(": G: not a stats key. Here ") and keys in said[1], said
        assert said[2].startswith(f": {ROW_OPENS_NOTHING} ") and keys in said[2]
        assert isinstance(app.screen, StatsScreen) and len(said) == 3


def highlighted_hit(app: KanbanApp) -> str:
    """The plain text of the command palette's highlighted entry ("" when none is)."""
    results = app.screen.query_one(CommandList)
    if results.highlighted is None:
        return ""
    option = results.get_option_at_index(results.highlighted)
    return str(getattr(getattr(option, "hit", None), "text", "") or "")


async def test_the_palette_says_why_an_action_named_does_not_apply(tmp_path: Path) -> None:
    """Typing "approve" with a todo task selected said "No matches found"; it lists the action
    as not applying, with the key's own reason, and choosing it changes nothing."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        task = board.create_task("only todo")
    app = KanbanApp(path, poll_ms=30, clock=clock, operator="olivia", user_keymap={})
    notes = Notes()
    async with app.run_test(size=(100, 30), message_hook=notes) as pilot:
        await loaded(pilot)
        await until(pilot, lambda: app.selected_task() is not None)
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"approve")
        why = f"Approve: only for tasks in review ({task.id} is todo)."
        # the entry and its help line, both drawn (the help line may come a frame later)
        await until(pilot, lambda: f"Approve {task.id} (not now)" in screen_text(app))
        await until(pilot, lambda: why in screen_text(app))
        assert "No matches found" not in screen_text(app)
        # Enter only once that entry is the highlighted one: the palette's hits come in batches,
        # and an Enter while a batch rebuilt the list chose nothing (seen under load, 1 run in 4)
        await until(pilot, lambda: highlighted_hit(app) == f"Approve {task.id} (not now)")
        await pilot.press("enter")
        await until(pilot, lambda: notes.warnings())
        assert notes.warnings() == [f": {why}"]
        with Board(path, read_only=True) as reader:
            assert reader.get_task(task.id).status == t.TODO
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before


async def test_enter_on_an_empty_agents_table_says_there_is_no_row(tmp_path: Path) -> None:
    """A board no agent has worked on: Enter on the stats screen's empty table did nothing and
    said nothing (the table posts no row selected without a row)."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        board.create_task("nobody has run this")
    app = KanbanApp(path, poll_ms=30, clock=clock, operator="olivia", user_keymap={})
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await loaded(pilot)
        await pilot.press("S")
        assert isinstance(app.screen, StatsScreen)
        await until(pilot, lambda: app.screen.stats is not None)
        assert app.screen.query_one(DataTable).row_count == 0
        await pilot.press("enter")
        await until(pilot, lambda: notes.warnings())
        [said] = notes.warnings()
        assert said.startswith(f": {NO_AGENT_ROWS.format(window='24h')} Here "), said
        assert "w changes the window" in said and isinstance(app.screen, StatsScreen)


@pytest.mark.parametrize("case", ["read-only", "cancelled"])
async def test_the_palette_says_why_move_is_not_now(tmp_path: Path, case: str) -> None:
    """ "move" typed in the palette on a read-only board, or for a cancelled task (no move leads
    out), listed no move at all, and what it did list ("Mark … done with a human override (not
    now)", a fuzzy match) said nothing of why the task cannot move."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        task = board.create_task("only one")
        if case == "cancelled":
            board.cancel(task.id)
    app = KanbanApp(
        path, poll_ms=30, clock=clock, operator="olivia", user_keymap={},
        read_only=case == "read-only",
    )  # fmt: skip
    notes = Notes()
    async with app.run_test(size=(100, 30), message_hook=notes) as pilot:
        await loaded(pilot)
        if case == "cancelled":
            await pilot.press("z")  # unfold done and cancelled
            view = app.board_screen.board
            while view.active_status != t.CANCELLED:
                await pilot.press("l")
        await until(pilot, lambda: app.selected_task() is not None)
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"move to another")  # the one entry it names
        why = {
            "read-only": "Move: the board is open read-only.",
            "cancelled": f"Move: {task.id} is cancelled: the transition table has no move "
            "from there.",
        }[case]
        await until(pilot, lambda: f"Move {task.id} (not now)" in screen_text(app))
        await until(pilot, lambda: why in " ".join(screen_text(app).split()))
        assert "No matches found" not in screen_text(app)
        await until(pilot, lambda: highlighted_hit(app) == f"Move {task.id} (not now)")
        await pilot.press("enter")
        await until(pilot, lambda: notes.warnings())
        assert notes.warnings() == [f": {why}"]
        status = t.CANCELLED if case == "cancelled" else t.TODO
        with Board(path, read_only=True) as reader:
            assert reader.get_task(task.id).status == status
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before
