"""What an operator must be able to trust (issue 10): safe defaults (enter never destroys, one
key never takes work, the palette never writes on the wrong task) and nothing silent (a write on
a card that changed meanwhile, or a no-op, says why, overrides and expired leases leave a mark,
`r` and `n` say what they did, a newer schema and a misunderstood filter are said in words).
Each against a real board file."""

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette

from boardlib import Board, BoardError, Reason
from boardlib import transitions as t
from tests.tui.conftest import (
    OPERATOR,
    Notes,
    answer,
    fresh,
    loaded,
    make_app,
    shown_question,
    until,
)
from tui.app import KanbanApp
from tui.cards import OVERRIDE_MARK
from tui.components.confirm import ConfirmDialog
from tui.components.header_bar import HeaderBar
from tui.components.move_menu import MoveMenu


def everything(path: Path) -> tuple[Any, ...]:
    with Board(path, read_only=True) as board:
        return board.all_tasks(), board.audit(), board.last_event_seq()


def card_text(app: KanbanApp, task_id: str) -> str:
    """The card's three lines as drawn (plain text)."""
    task = app.state.tasks[task_id]
    column = app.board_screen.board.columns[task.status]
    index = app.state.index_of(task_id)
    assert index is not None
    lines = column._card(task, index, column.line_width)
    return "\n".join(strip.text for strip in lines)


def header(app: KanbanApp) -> Any:
    return app.board_screen.query_one(HeaderBar).facts


# -- safe defaults --------------------------------------------------------------------------------


DESTRUCTIVE = [("x", "flaky"), ("d", "api"), ("X", "cli"), ("delete", "flaky"), ("t", "parser")]


@pytest.mark.slow
async def test_enter_on_a_destructive_dialog_backs_out(demo) -> None:  # type: ignore[no-untyped-def]
    """Each destructive key in turn, in one app session: Enter on its question is No."""
    path, clock, ids = demo
    before = everything(path)
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        for key, story in DESTRUCTIVE:
            app.jump_to(ids[story])
            await pilot.press(key)
            await shown_question(pilot)
            focused = app.screen.focused
            assert focused is not None and focused.id == "no", (key, story, focused)
            await pilot.press("enter")
            await until(pilot, lambda: not isinstance(app.screen, ConfirmDialog))
            await pilot.pause(0.3)
            assert everything(path) == before, (key, story)
    assert everything(path) == before


@pytest.mark.slow
async def test_capital_l_into_in_progress_asks_first(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    target = ids["flaky"]
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(target)
        await pilot.press("L")
        assert "Take" in (await shown_question(pilot)).title_text
        await pilot.press("enter")  # the safe default
        await pilot.pause(0.3)
        assert fresh(path, target).status == t.TODO
        await pilot.press("L")
        await answer(pilot, "y")
        await until(pilot, lambda: fresh(path, target).status == t.IN_PROGRESS)
        assert fresh(path, target).assignee_agent_id == OPERATOR


async def palette_results(pilot: Any, query: str) -> list[str]:
    app = pilot.app
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*query)
    results = app.screen.query_one(CommandList)
    await until(pilot, lambda: results.option_count > 0)
    await pilot.pause(0.4)  # every provider has answered
    return [
        str(results.get_option_at_index(i).prompt).split("\n")[0]
        for i in range(results.option_count)
    ]


@pytest.mark.slow  # a long scripted session of the app (over 10 s under load)
async def test_an_id_query_jumps_to_exactly_that_id_and_offers_no_write(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    before = everything(path)
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        selected = ids["flaky"]  # TASK-14, like the TASK-71 next to TASK-7
        app.jump_to(selected)
        await pilot.pause()
        shown = await palette_results(pilot, "TASK-1")
        assert shown[0].startswith("TASK-1 "), shown  # TASK-10..16 also contain "task-1"
        assert not any(line.startswith(("Move", "Cancel", "Release", "Drop")) for line in shown)
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, CommandPalette))
        await until(pilot, lambda: app.selected_task() is not None)
        assert app.selected_task().id == "TASK-1"  # type: ignore[union-attr]
        # With the selection on TASK-14, "TASK-7" offers the jump, never "Move TASK-14 ...".
        app.jump_to(selected)
        await pilot.pause()
        shown = await palette_results(pilot, "TASK-7")
        assert shown[0].startswith("TASK-7 ")
        assert not any(selected in line for line in shown), shown
        await pilot.press("escape")
        # Words still find the actions, each naming its task.
        shown = await palette_results(pilot, "cancel")
        assert f"Cancel {selected}" in shown
        await pilot.press("escape")
    assert everything(path) == before


# -- nothing silent -------------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_take_on_a_changed_card_says_why_and_writes_nothing(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    notes = Notes()
    racing = ids["flaky"]
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        app.jump_to(racing)
        await pilot.press("m")
        menu = app.screen
        assert isinstance(menu, MoveMenu)
        with Board(path, clock=clock) as agent:
            agent.claim(racing, "agent-zed")
        seq = everything(path)[2]
        menu.query_one("#targets").highlighted = list(menu.targets).index(t.IN_PROGRESS)  # type: ignore[attr-defined]
        await pilot.press("enter")  # "in progress: you take it"
        await answer(pilot, "y")  # it asks, as H does
        await until(pilot, lambda: notes.warnings())
        said = notes.warnings()[-1]
        assert racing in said and "in progress" in said and "agent-zed" in said
        assert "Nothing was written" in said
        assert fresh(path, racing).assignee_agent_id == "agent-zed"
        assert everything(path)[2] == seq  # not even an event


@pytest.mark.slow
async def test_an_override_leaves_a_mark_on_card_and_drawer(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    reviewed = ids["api"]
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.toggle_finished()
        app.jump_to(reviewed)
        assert OVERRIDE_MARK not in card_text(app, reviewed)
        await pilot.press("d")
        await answer(pilot, "y")
        await until(pilot, lambda: app.state.tasks[reviewed].status == t.DONE)
        await until(pilot, lambda: OVERRIDE_MARK in card_text(app, reviewed))
        app.jump_to(reviewed)
        await pilot.press("enter")
        await until(pilot, lambda: _drawer_read(app, reviewed))
        await pilot.pause(0.1)
        assert f"⚑ human override: {OPERATOR} moved it from in_review to done" in _text(app)
    # A new session reads the mark from the audit table.
    again = make_app(path, clock)
    async with again.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        again.toggle_finished()
        assert OVERRIDE_MARK in card_text(again, reviewed)
        assert OVERRIDE_MARK not in card_text(again, ids["schema"])  # approved, not overridden


def _drawer_read(app: KanbanApp, task_id: str) -> bool:
    drawers = app.drawers()
    return bool(drawers) and drawers[0].data is not None and drawers[0].data.task_id == task_id


def _text(app: KanbanApp) -> str:
    """The drawer's Overview head (fields, override marks) and its History, as text."""
    from rich.console import Console

    console = Console(width=120, record=True, file=__import__("io").StringIO())
    from tui.components.text_pane import TextPane

    drawer = app.drawers()[0]
    console.print(drawer.query_one("#overview-head").content)  # type: ignore[attr-defined]
    console.print(drawer.query_one("#history-pane", TextPane).renderable)
    return console.export_text()


@pytest.mark.slow
async def test_an_expired_lease_leaves_a_short_lived_mark_and_history(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    target = ids["flaky"]
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        with Board(path, clock=clock) as agent:
            agent.claim(target, "agent-ada", lease_ms=1_000)
        await until(pilot, lambda: app.state.tasks[target].status == t.IN_PROGRESS)
        clock.advance(seconds=5)
        with Board(path, clock=clock) as recovery:  # (or the app's own reconciler, first)
            recovery.reconcile_orphans()
        await until(pilot, lambda: app.state.tasks[target].status == t.TODO)
        await until(pilot, lambda: "lease expired: ag" in card_text(app, target))
        app.jump_to(target)
        await pilot.press("enter")
        await until(pilot, lambda: _drawer_read(app, target))
        await pilot.pause(0.1)
        assert f"lease of agent-ada on {target} expired → todo" in _text(app)
        await pilot.press("escape")
        # It is short-lived: once its time is up the card is an ordinary todo card again.
        app.marks.expired_leases[target] = ("agent-ada", 0.0)
        app._expire_marks()
        await pilot.pause(0.1)
        assert "expired" not in card_text(app, target)


@pytest.mark.slow
async def test_refresh_and_create_say_what_they_did(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, _ids = demo
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        await pilot.press("r")
        await until(pilot, lambda: any("Re-read" in note for note in notes.infos()))
        assert f"Re-read {app.state.total} tasks" in notes.infos()[-1]
        await pilot.press("n")
        app.screen.query_one("#title").value = "Write the release notes"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any("Created TASK-" in note for note in notes.infos()))
        created = next(n for n in notes.infos() if "Created" in n).split("Created ")[1].rstrip(".")
        assert fresh(path, created).title == "Write the release notes"


async def test_a_newer_schema_opens_read_only_and_says_so(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 999")
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        await until(pilot, lambda: header(app).schema_newer)
        assert app.read_only and header(app).read_only
        assert not any("RuntimeError" in note for note in notes.seen_text())
        app.jump_to(ids["flaky"])
        assert app.screen.check_action("cancel", ()) is None  # greyed
        with pytest.raises(BoardError) as refused:
            app.gateway.write(lambda board: board.cancel(ids["flaky"]))
        assert refused.value.reason is Reason.READ_ONLY
        assert "newer kanban" in refused.value.message
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 999


@pytest.mark.slow  # a long scripted session of the app (over 10 s under load)
async def test_a_filter_it_does_not_understand_is_said(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, _ids = demo
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        await pilot.press("slash", *"status:dnoe foo:bar", "enter")
        problems = header(app).filter_problems
        assert any("dnoe" in problem for problem in problems)
        assert any("foo:" in problem for problem in problems)
        assert any("dnoe" in note and "foo:" in note for note in notes.warnings())
        await pilot.press("escape")
        await pilot.press("slash", *"status:in_progress", "enter")
        assert header(app).filter_problems == ()
        assert app.state.shown == app.state.counts[t.IN_PROGRESS]


# -- what k9s and lazygit users expect ------------------------------------------------------------


@pytest.mark.slow
async def test_the_activity_pane_tells_the_live_feed_in_words(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock, poll_ms=50)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        pane = app.board_screen.activity
        assert not pane.display
        await until(pilot, lambda: app.gateway._janitor is not None)  # recovery threads are up
        threads = {thread.name for thread in threading.enumerate()}
        await pilot.press("A")
        assert pane.display
        # What happened before the app started is already there, newest first.
        first = str(pane.render()).splitlines()[0]
        assert f"lease of agent-barbara on {ids['retry']} expired → todo" in first
        target = ids["flaky"]
        with Board(path, clock=clock) as agent:
            agent.claim(target, "agent-remote")
            agent.heartbeat(target, "agent-remote")
            agent.block(target, "agent-remote", "waiting on \x1b[2Jops")
        await until(pilot, lambda: "blocked" in str(pane.render()).splitlines()[0])
        lines = str(pane.render()).splitlines()
        assert lines[0].endswith(f"agent-remote blocked {target}: waiting on ␛[2Jops")
        assert lines[1].endswith(f"agent-remote claimed {target}")  # the heartbeat is left out
        # Fed by the reader thread that was already there: no thread (no second poll) started.
        assert {thread.name for thread in threading.enumerate()} <= threads
        await pilot.press("A")
        assert not pane.display


async def test_y_copies_the_selected_id(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        app.jump_to(ids["bench"])
        await pilot.press("y")
        assert app.clipboard == ids["bench"]
        # The terminal may drop OSC 52 without a word: the note says what was sent, not "Copied".
        said = [note for note in notes.infos() if ids["bench"] in note]
        assert said and "OSC 52" in said[-1] and "ignores OSC 52" in said[-1]
        assert not any("Copied" in note for note in notes.infos())
