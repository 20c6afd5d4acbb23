"""The terminal board driven by Textual's pilot against a real board file: navigation, the move
menu against the transition table, every override (row and audit checked in the database),
refusals (a notification, nothing changed) and read-only mode (nothing written, writes greyed)."""

import pytest
from textual.widgets import Input, OptionList, TextArea

from boardlib import Board, BoardError, Reason
from boardlib import transitions as t
from tests.tui.conftest import OPERATOR, Notes, answer, fresh, loaded, make_app, text_of, until
from tui import registry
from tui.app import KanbanApp
from tui.components.confirm import ConfirmDialog
from tui.components.dependency_picker import DependencyPicker
from tui.components.drawer import TaskDrawer
from tui.components.info_dialog import InfoDialog
from tui.components.move_menu import MoveMenu


def task_in(app: KanbanApp, status: str) -> str:
    """Some visible task in `status`."""
    ids = app.state.columns[status]
    assert ids, f"the demo board has no {status} task"
    return ids[0]


@pytest.mark.slow
async def test_navigation_moves_one_selection_across_columns(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, _ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        todo = app.state.columns[t.TODO]
        assert app.selected_task().id == todo[0]  # type: ignore[union-attr]
        await pilot.press("j", "j")
        assert app.selected_task().id == todo[2]  # type: ignore[union-attr]
        await pilot.press("G")
        assert app.selected_task().id == todo[-1]  # type: ignore[union-attr]
        await pilot.press("g", "l")
        assert app.selected_task().status == t.IN_PROGRESS  # type: ignore[union-attr]
        await pilot.press("h", "h")
        assert app.selected_task().status == t.BACKLOG  # type: ignore[union-attr]
        await pilot.press("enter")
        await until(pilot, lambda: app.drawer_task_id() is not None)
        [drawer] = app.drawers()
        assert isinstance(drawer, TaskDrawer) and drawer.beside  # 160 wide: beside the board
        await until(pilot, lambda: drawer.data is not None)
        await pilot.press("escape")
        await until(pilot, lambda: app.drawer_task_id() is None)
        await pilot.press("slash", *"schema", "enter")
        assert app.state.filter.text == "schema"
        assert app.state.shown == 1
        await pilot.press("escape")
        assert not app.state.filter.active


@pytest.mark.slow  # a long scripted session of the app
async def test_move_menu_lists_exactly_the_legal_targets(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, _ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.toggle_finished()  # unfold done and cancelled
        for status in t.STATUSES:
            app.jump_to(task_in(app, status))
            await pilot.pause()
            assert app.selected_task().status == status  # type: ignore[union-attr]
            await pilot.press("m")
            await pilot.pause()
            if not t.legal_targets(status):
                assert app.screen.check_action("move_menu", ()) is None  # greyed, not hidden
                assert not isinstance(app.screen, MoveMenu)
                continue
            menu = app.screen
            assert isinstance(menu, MoveMenu)
            offered = [option.id for option in menu.query_one(OptionList).options]
            assert tuple(offered) == t.legal_targets(status)
            await pilot.press("escape")


@pytest.mark.slow  # a long scripted session of the app
async def test_release_block_cancel_and_priority(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        # Release an agent's task to todo: asks first, then clears owner and lease.
        held = ids["parser"]
        app.jump_to(held)
        await pilot.press("t")
        assert isinstance(app.screen, ConfirmDialog)
        await answer(pilot, "y")
        await until(pilot, lambda: fresh(path, held).status == t.TODO)
        row = fresh(path, held)
        assert row.assignee_agent_id is None and row.lease_until is None
        # The cursor stayed in in-progress (a triage list); `f` follows the task to todo.
        await until(pilot, lambda: app.left_task == held)
        await pilot.press("f")
        await until(pilot, lambda: app.selected_task().id == held)  # type: ignore[union-attr]
        # Block with a reason.
        await pilot.press("b")
        await pilot.press(*"waiting on ops", "enter")
        await until(pilot, lambda: fresh(path, held).status == t.BLOCKED)
        assert fresh(path, held).blocked_reason == "waiting on ops"
        await until(pilot, lambda: app.state.tasks[held].status == t.BLOCKED)
        await pilot.press("f")
        await until(pilot, lambda: app.selected_task().id == held)  # type: ignore[union-attr]
        # Two quick priority bumps add up (each reads the fresh row inside the write lock).
        before = fresh(path, held).priority
        await pilot.press("plus", "plus")
        await until(pilot, lambda: fresh(path, held).priority == before + 2)
        await pilot.press("minus")
        await until(pilot, lambda: fresh(path, held).priority == before + 1)
        # Cancel asks; "n" backs out and changes nothing.
        await pilot.press("x")
        await answer(pilot, "n")
        await pilot.pause(0.2)
        assert fresh(path, held).status == t.BLOCKED
        await pilot.press("x")
        await answer(pilot, "y")
        await until(pilot, lambda: fresh(path, held).status == t.CANCELLED)


@pytest.mark.slow
async def test_done_with_human_override_writes_the_audit_row(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock)
    reviewed = ids["api"]  # in review with a completed_with_debt verdict whose gate failed
    verdict = fresh(path, reviewed).verification
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(reviewed)
        await pilot.press("m")
        menu = app.screen
        assert isinstance(menu, MoveMenu)
        menu.query_one(OptionList).highlighted = list(menu.targets).index(t.DONE)
        await pilot.press("enter")
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)  # the gate would refuse: the override is asked
        assert "human override" in dialog.title_text
        await answer(pilot, "y")
        await until(pilot, lambda: fresh(path, reviewed).status == t.DONE)
    with Board(path, read_only=True) as board:
        (entry,) = [a for a in board.audit(reviewed) if a.action == "human_override"]
    assert entry.actor == OPERATOR
    assert (entry.from_status, entry.to_status) == (t.IN_REVIEW, t.DONE)
    assert entry.verdict_overridden == verdict


async def test_the_override_question_names_the_agent_whose_claim_it_ends(demo) -> None:  # type: ignore[no-untyped-def]
    """`d` on a task an agent holds said only that no verdict is recorded; `y` then ended the
    agent's live claim. Cancel and release named the holder."""
    path, clock, ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(ids["ui"])  # held by agent-linus, its lease live
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog) and "human override" in dialog.title_text
        lead = dialog.body.renderables[0].plain
        assert "agent-linus holds it now (in progress, with a live lease)" in lead, lead
        await pilot.press("escape")
    assert fresh(path, ids["ui"]).status == t.IN_PROGRESS  # asked, not done


@pytest.mark.slow
async def test_cancel_dependents_lists_what_it_cancelled(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(ids["cli"])  # docs waits on cli (and api)
        await pilot.press("X")
        assert isinstance(app.screen, ConfirmDialog)
        await answer(pilot, "y")
        await until(pilot, lambda: isinstance(app.screen, InfoDialog))
        assert fresh(path, ids["docs"]).status == t.CANCELLED
        assert f"  {ids['docs']}  " in text_of(app.screen.body)  # type: ignore[attr-defined]


@pytest.mark.slow  # a long scripted session of the app
async def test_an_edit_never_overwrites_a_change_made_while_the_form_was_open(demo) -> None:  # type: ignore[no-untyped-def]
    """Found in tmux: `e`, an agent renames the task meanwhile, the operator saves: the agent's
    title was lost without a word. A field someone else changed is refused (nothing written);
    a field nobody else touched is still saved."""
    path, clock, ids = demo
    notes = Notes()
    app = make_app(path, clock)
    target = ids["bench"]
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        app.jump_to(target)
        await pilot.press("e")
        with Board(path, clock=clock) as elsewhere:
            elsewhere.update_task(target, title="renamed elsewhere")
        title = app.screen.query_one("#title", Input)
        title.value += " X2"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: notes.warnings(), timeout=5)
        [warning] = notes.warnings()
        assert (
            "its title changed since you opened it" in warning and "Nothing was written" in warning
        )
        assert fresh(path, target).title == "renamed elsewhere"
        # The description nobody else touched is saved over the rename, which stays.
        await pilot.press("e")
        with Board(path, clock=clock) as elsewhere:
            elsewhere.update_task(target, title="renamed again")
        app.screen.query_one("#description", TextArea).text = "measured on 2 cores"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: fresh(path, target).description == "measured on 2 cores")
        assert fresh(path, target).title == "renamed again" and len(notes.warnings()) == 1


async def test_edit_comment_link_and_create(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        target = ids["bench"]
        app.jump_to(target)
        await pilot.press("e")
        title = app.screen.query_one("#title", Input)
        title.value = "Benchmark claim throughput at 16 workers"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: fresh(path, target).title.endswith("16 workers"))

        await pilot.press("c")
        app.screen.query_one(TextArea).text = "Looks good to me."
        await pilot.press("ctrl+s")
        with Board(path, read_only=True) as board:
            await until(pilot, lambda: len(board.comments(target)) == 1)
            (comment,) = board.comments(target)
        assert (comment.author_type, comment.author_agent_id) == ("user", OPERATOR)

        # Link: bench waits on ssh.
        await pilot.press("D")
        picker = app.screen
        assert isinstance(picker, DependencyPicker)
        await pilot.press(*ids["ssh"].lower(), "enter")
        with Board(path, read_only=True) as board:
            await until(pilot, lambda: [d.id for d in board.dependencies(target)] == [ids["ssh"]])

        # Create: the new task appears and is selected.
        await pilot.press("n")
        app.screen.query_one("#title", Input).value = "Write the release notes"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.selected_task().title == "Write the release notes")  # type: ignore[union-attr]
        assert not notes.errors()


@pytest.mark.slow
async def test_refusals_notify_and_change_nothing(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await loaded(pilot)
        # A cycle: schema <- parser already; schema waits on parser would close it.
        app.toggle_finished()
        app.jump_to(ids["schema"])
        await pilot.press("D")
        await pilot.press(*ids["parser"].lower(), "enter")
        await until(pilot, lambda: notes.errors())
        assert "dependency_cycle" in notes.errors()[-1]
        assert ids["parser"] in notes.errors()[-1]
        with Board(path, read_only=True) as board:
            assert board.dependencies(ids["schema"]) == []

        # A race: the menu was opened on a todo task, an agent claimed it meanwhile.
        racing = ids["flaky"]
        app.jump_to(racing)
        await pilot.press("m")
        menu = app.screen
        assert isinstance(menu, MoveMenu)
        with Board(path, clock=clock) as agent:
            agent.claim(racing, "agent-zed")
        menu.query_one(OptionList).highlighted = list(menu.targets).index(t.BACKLOG)
        await pilot.press("enter")
        # Not a silent no-op, not a raw refusal: it says what the task is now.
        await until(pilot, lambda: notes.warnings())
        assert "changed while you decided" in notes.warnings()[-1]
        assert "in progress" in notes.warnings()[-1] and "agent-zed" in notes.warnings()[-1]
        row = fresh(path, racing)
        assert (row.status, row.assignee_agent_id) == (t.IN_PROGRESS, "agent-zed")
        # ...and the screen shows what the database says.
        await until(pilot, lambda: app.state.tasks[racing].status == t.IN_PROGRESS)


async def test_read_only_writes_nothing_and_greys_every_write(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    with Board(path, read_only=True) as board:
        before = (board.all_tasks(), board.audit(), board.comments(ids["flaky"]))
    app = make_app(path, clock, read_only=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(ids["flaky"])
        screen = app.screen
        writes = [action for action in registry.actions_for(registry.BOARD) if action.writes]
        assert len(writes) >= 13
        for action in writes:
            assert screen.check_action(action.name, action.parameters) is None, action.id
        for key in ("t", "b", "x", "d", "X", "plus", "e", "c", "D", "n", "m", "L", "delete"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, key  # no dialog opened
        with pytest.raises(BoardError) as refused:
            app.gateway.write(lambda board: board.cancel(ids["flaky"]))
        assert refused.value.reason is Reason.READ_ONLY
        assert app.reader._board is None or app.reader._board.read_only
    with Board(path, read_only=True) as board:
        after = (board.all_tasks(), board.audit(), board.comments(ids["flaky"]))
    assert after == before


@pytest.mark.slow
async def test_move_menu_takes_j_and_k_like_the_board(demo) -> None:  # type: ignore[no-untyped-def]
    """Keyboard-only, k9s style: j/k move inside the menu too, enter picks."""
    path, clock, _ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("l", "l", "l")  # from todo: in_progress, in_review, blocked
        task_id = app.selected_task().id  # type: ignore[union-attr]
        assert fresh(path, task_id).status == t.BLOCKED
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, MoveMenu))
        # blocked -> backlog, todo, in_progress, cancelled: j, j, k = todo; then confirm it
        await pilot.press("j", "j", "k", "enter")
        await answer(pilot, "y")
        await until(pilot, lambda: fresh(path, task_id).status == t.TODO)
