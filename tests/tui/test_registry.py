"""One action registry: every key, footer entry, help line, greying rule and palette entry is
generated from `tui.registry.ACTIONS`, so they cannot drift apart."""

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette

from boardlib import Task
from boardlib import transitions as t
from tests.tui.conftest import loaded, make_app, onto_folded_column, until
from tui import registry
from tui.app import KanbanApp
from tui.commands import board_commands
from tui.components.board_screen import BoardScreen
from tui.components.confirm import ConfirmDialog
from tui.components.dependency_picker import DependencyPicker
from tui.components.drawer import TaskDrawer
from tui.components.filter_bar import FilterBar
from tui.components.help_screen import HelpScreen, help_table
from tui.components.inbox_screen import InboxScreen
from tui.components.info_dialog import InfoDialog
from tui.components.land_dialog import LandDialog
from tui.components.menu_list import MenuList
from tui.components.message_log import MessageLogScreen
from tui.components.move_menu import MoveMenu
from tui.components.prompt import PromptDialog
from tui.components.search_bar import SearchBar
from tui.components.stats_screen import StatsScreen
from tui.components.task_form import TaskForm
from tui.keymap import key_text, load_user_keymap
from tui.registry import SIDE_BY_SIDE_MIN_COLUMNS

OWNERS: dict[str, Any] = {
    registry.APP: KanbanApp,
    registry.BOARD: BoardScreen,
    registry.DRAWER: TaskDrawer,
    registry.MENU: MenuList,
    registry.HELP: HelpScreen,
    registry.CONFIRM: ConfirmDialog,
    registry.LAND: LandDialog,
    registry.INFO: InfoDialog,
    registry.PROMPT: PromptDialog,
    registry.FORM: TaskForm,
    registry.PICKER: DependencyPicker,
    registry.MOVE: MoveMenu,
    registry.FILTER: FilterBar,
    registry.STATS: StatsScreen,
    registry.SEARCH: SearchBar,
    registry.LOG: MessageLogScreen,
    registry.INBOX: InboxScreen,
}


def test_every_entry_runs_a_method_of_each_screen_it_names() -> None:
    for action in registry.ACTIONS:
        assert action.screens and action.section in registry.SECTIONS, action.id
        for screen in action.screens:
            owner = KanbanApp if action.call.startswith("app.") else OWNERS[screen]
            assert hasattr(owner, f"action_{action.name}"), (action.id, screen)


def test_every_binding_of_every_screen_comes_from_the_registry() -> None:
    for screen, owner in OWNERS.items():
        ours = [b for b in owner.BINDINGS if getattr(b, "id", None) in registry.BY_ID]
        foreign = [b for b in owner.BINDINGS if b not in ours]
        if owner is MenuList:  # OptionList's own arrows, enter and paging are kept
            assert all(getattr(b, "id", None) is None for b in foreign)
            continue
        assert not foreign, (screen, foreign)
        assert [b.id for b in ours] == [a.id for a in registry.actions_for(screen)]  # type: ignore[union-attr]


def test_a_key_lives_once_per_screen() -> None:
    """...unless an action says it takes the key over from another while it applies
    (`yields_to`: `n` is the next match during a search, else the next file), and comes first."""
    for screen in OWNERS:
        seen: dict[str, str] = {}
        for action in registry.actions_for(screen):
            for key in action.keys.split(","):
                if key in seen:
                    first = registry.BY_ID[seen[key]]
                    assert first.yields_to == action.id, (
                        f"{screen}: {key} is {seen[key]} and {action.id}"
                    )
                    continue
                seen[key] = action.id
    for action in registry.ACTIONS:
        if action.yields_to is not None:
            other = registry.BY_ID[action.yields_to]
            assert set(action.screens) <= set(other.screens), action.id
            assert registry.ACTIONS.index(action) < registry.ACTIONS.index(other), action.id


def test_dialog_keys_are_remappable_too(tmp_path: Path) -> None:
    """Before the registry, only board/task/drawer ids were known, so a keymap file remapping
    the confirm dialog's `y` was refused as a typo."""
    path = tmp_path / "keymap.toml"
    path.write_text('"confirm.yes" = "enter"\n"drawer.close" = "escape,backspace"\n')
    assert load_user_keymap(path) == {"confirm.yes": "enter", "drawer.close": "escape,backspace"}


def test_help_is_generated_with_the_remapped_keys() -> None:
    cancel = registry.BY_ID["task.cancel"]
    assert key_text(cancel, {}) == "x"
    assert key_text(cancel, {"task.cancel": "ctrl+x"}) == "ctrl+x"
    assert key_text(registry.BY_ID["app.help"], {}) == "?"
    from rich.console import Console

    console = Console(width=100, record=True)
    console.print(help_table({"task.cancel": "ctrl+x"}))
    text = console.export_text()
    for action in registry.ACTIONS:
        assert action.title in text, action.id
    assert "ctrl+x  Cancel" in text
    for section in registry.SECTIONS:
        assert section in text


@pytest.mark.slow
async def test_check_action_follows_the_registry(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, _ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.toggle_finished()
        for status in t.STATUSES:
            app.jump_to(app.state.columns[status][0])
            await pilot.pause()
            task = app.selected_task()
            assert task is not None and task.status == status
            for action in registry.actions_for(registry.BOARD):
                expected = registry.availability(action, read_only=False, task=task)
                got = app.screen.check_action(action.name, action.parameters)
                if action.id in ("board.back", "board.drawer"):
                    continue  # depends on the filter or an open drawer, not on the task
                assert got == expected, (status, action.id)
        # A done task: nothing moves it, so the move keys are greyed (shown, disabled).
        app.jump_to(app.state.columns[t.DONE][0])
        await pilot.pause()
        assert app.screen.check_action("move_menu", ()) is None
        assert app.screen.check_action("move_step", (1,)) is None
        assert app.screen.check_action("filter", ()) is True


@pytest.mark.slow
async def test_palette_entries_come_from_the_registry_and_name_their_task(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(ids["flaky"])
        await pilot.pause()
        titles = [command.title for command in board_commands(app, app.screen)]
        flaky = ids["flaky"]
        for target in t.legal_targets(t.TODO):
            assert f"Move {flaky} to {t.label(target)}" in titles
        assert f"Cancel {flaky}" in titles
        assert "New task" in titles and "Refresh now" in titles
        assert f"Drop or restore {flaky}" in titles
        # Nothing written by a palette command offers a task other than the selected one.
        for title in titles:
            assert not any(
                task_id in title.split() for task_id in app.state.tasks if task_id != flaky
            )
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("escape")


async def test_read_only_palette_offers_no_write(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock, read_only=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(ids["flaky"])
        await pilot.pause()
        titles = {command.title for command in board_commands(app, app.screen)}
        writes = {
            a.palette_title(app.selected_task()) for a in registry.ACTIONS if a.writes and a.palette
        }
        assert titles and not titles & writes
        assert not any(title.startswith("Move ") for title in titles)
        assert f"Open {ids['flaky']}" in titles


@pytest.mark.slow
async def test_drawer_footer_is_generated_and_q_goes_back(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock)
    app.set_keymap({"drawer.close": "escape,q,backspace"})
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(ids["api"])  # in review: the review keys apply too
        await pilot.press("enter")
        await until(pilot, lambda: app.drawer_task_id() is not None)
        await until(pilot, lambda: app.focused is app.drawers()[0])
        drawer = app.screen
        shown = {
            binding.id
            for (_node, binding, enabled, _tip) in drawer.active_bindings.values()
            if binding.show and enabled
        }
        widget = app.drawers()[0]
        expected = {
            a.id
            for a in registry.actions_for(registry.DRAWER)
            if registry.DRAWER in a.footer and widget.check_action(a.name, a.parameters) is True
        }  # (not on this tab: hidden, `c` on a line; not for this task: greyed, no branch to land)
        assert "task.approve" in expected and "task.approve_land" not in expected
        assert expected <= shown
        assert "task.create" not in {b.id for b in TaskDrawer.BINDINGS}  # type: ignore[union-attr]
        await pilot.press("q")  # as help says: back, not quit
        await until(pilot, lambda: app.drawer_task_id() is None)
        assert app.is_running
        await pilot.press("enter")
        await until(pilot, lambda: app.drawer_task_id() is not None)
        await until(pilot, lambda: app.focused is app.drawers()[0])
        await pilot.press("backspace")  # the remapped key
        await until(pilot, lambda: app.drawer_task_id() is None)


def test_side_by_side_under_its_width_says_what_it_needs() -> None:
    """`s` at 80x24 said "Side by side: does not apply here", though the registry knew why ("from
    160 columns")."""
    task = Task(id="TASK-1", title="t", status="in_review", created_at=0, updated_at=0)
    action = registry.BY_ID["drawer.side_by_side"]
    said = registry.unavailable_because(action, read_only=False, task=task)
    assert said == f"side by side: needs a terminal {SIDE_BY_SIDE_MIN_COLUMNS} columns wide or more"


def test_a_shared_key_with_no_task_is_said_as_its_columns_action() -> None:
    """`W` on an empty or folded done column said "Approve and land: no task selected." In done, `W`
    lands."""
    approve_land = registry.BY_ID["task.approve_land"]

    def said(column: str | None) -> str:
        return registry.unavailable_because(approve_land, read_only=False, task=None, column=column)

    assert said(t.DONE) == "land: no task selected in the done column"
    assert said(t.IN_REVIEW) == "approve and land: no task selected in the in review column"
    assert said(None) == "approve and land: no task selected"


async def test_w_on_the_folded_done_column_says_land(tmp_path: Path) -> None:
    from boardlib import Board, ManualClock
    from tests.tui.conftest import Notes

    clock = ManualClock(1_800_000_000_000)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        board.create_task("only todo")
    app = make_app(path, clock)
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await loaded(pilot)
        await onto_folded_column(pilot, t.DONE)
        await pilot.press("W")
        await until(pilot, lambda: notes.warnings())
        assert notes.warnings() == [": Land: no task selected in the done column."]


@pytest.mark.parametrize("status", t.STATUSES)
def test_land_is_offered_exactly_when_the_board_takes_reviewed_work(status: str) -> None:
    """The TUI restated `landings.check_reviewed` (landed, dropped, in review or done) in its
    own `has_work_to_land`, so the two could drift: it now asks the board's predicate. Over every
    status, landed or not, dropped or not: `w`/`W` apply to a task with a branch exactly when
    `check_reviewed` lets its work land."""
    from boardlib import BoardError
    from boardlib.landings import check_reviewed, may_land_reviewed

    land, approve_land = registry.BY_ID["task.land"], registry.BY_ID["task.approve_land"]
    for landed in (None, "0123456789abcdef"):
        for dropped in (0, 1):
            task = Task(
                id="TASK-1", title="t", status=status, created_at=0, updated_at=0,
                branch_ref="refs/heads/kanban/TASK-1", landed_commit=landed, dropped=dropped,
            )  # fmt: skip
            try:
                check_reviewed(task)
            except BoardError:
                taken = False
            else:
                taken = True
            assert land.applies is not None and approve_land.applies is not None
            offered = land.applies(task) or approve_land.applies(task)
            assert offered == taken == may_land_reviewed(task), (landed, dropped)
            assert registry.has_work_to_land(task) == taken


async def test_a_key_on_a_folded_column_of_tasks_says_it_is_folded(tmp_path: Path) -> None:
    """In tmux on a 100,000-task board, Enter on the folded cancelled column (15,000 tasks) said
    "Open: no task selected in the cancelled column.": true of the fold, not of the column. A
    key that needs a task there says the column is folded and which key unfolds it (as
    remapped)."""
    from boardlib import Board, ManualClock
    from tests.tui.conftest import Notes

    clock = ManualClock(1_800_000_000_000)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        board.create_task("only todo")
        board.cancel(board.create_task("dropped idea").id)
    app = KanbanApp(
        path, poll_ms=30, clock=clock, operator="olivia", user_keymap={"board.fold": "Z"}
    )
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await loaded(pilot)
        await onto_folded_column(pilot, t.CANCELLED)
        await pilot.press("enter")
        await until(pilot, lambda: notes.warnings())
        assert notes.warnings() == [": Open: the cancelled column is folded (Z unfolds it)."]
