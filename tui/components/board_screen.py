"""The main screen: header, the seven columns, the filter line and the generated footer; on wide
terminals the task drawer docks on its right, and the board beside it stays live and navigable
(the drawer follows the selected card; `tab` moves the keys between them)."""

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Input

from boardlib.records import Task

from .. import registry
from ..actions import TaskActions
from ..board_state import FINISHED
from . import tcss
from .activity_pane import ActivityPane
from .board_view import BoardView
from .column import TaskColumn
from .drawer import TaskDrawer
from .filter_bar import FilterBar
from .footer import HintFooter
from .header_bar import HeaderBar

FOLD_BELOW_COLUMNS = 180  # narrower terminals start with done/cancelled folded to their count


class BoardScreen(TaskActions, Screen[None]):
    DEFAULT_CSS = tcss(__file__)
    SCREEN = registry.BOARD
    BINDINGS = registry.bindings_for(registry.BOARD)
    AUTO_FOCUS = None

    def compose(self) -> ComposeResult:
        app = self.kanban
        yield HeaderBar(app.db_path, read_only=app.read_only, now_ms=app.now_ms)
        # Narrow terminals start with done/cancelled folded; decided before the first paint.
        folded = FINISHED if app.size.width < FOLD_BELOW_COLUMNS else ()
        yield BoardView(
            app.state,
            now_ms=app.now_ms,
            is_changed=app.is_changed,
            notes_of=app.notes_of,
            folded=folded,
        )
        yield ActivityPane(now_ms=app.now_ms)
        yield FilterBar()
        yield HintFooter()

    @property
    def header(self) -> HeaderBar:
        return self.query_one(HeaderBar)

    @property
    def board(self) -> BoardView:
        return self.query_one(BoardView)

    def current_task(self) -> Task | None:
        return self.board.selected_task

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return bool(self.kanban.marked) or self.kanban.state.filter.active
        if action == "focus_drawer":
            return self.drawer is not None or None
        entry = registry.lookup(self.SCREEN, action, parameters)
        if entry is not None and entry.in_column and self.board.active.collapsed:
            return None  # a folded column has no cursor: its key says so (`App.on_key`)
        return super().check_action(action, parameters)

    # -- the drawer beside the board --------------------------------------------------------------

    @property
    def drawer(self) -> TaskDrawer | None:
        found = self.query(TaskDrawer)
        return found.first() if found else None

    def show_drawer(
        self, task_id: str, tab: str | None = None, *, carried: TaskDrawer | None = None
    ) -> TaskDrawer:
        """Open the drawer beside the board on `task_id` (or turn the open one to it), with the
        keys in it; `carried`: the full-screen drawer it replaces, whose data it shows."""
        drawer = self.drawer
        if drawer is None:
            drawer = TaskDrawer(task_id, beside=True, tab=tab or "overview", carried=carried)
            # after the footer: both are split off the screen in this order (board_screen.tcss)
            self.mount(drawer)
        else:
            drawer.show_task(task_id)
            if tab:
                drawer.action_tab(tab)
        self.call_after_refresh(drawer.focus)
        return drawer

    async def hide_drawer(self) -> None:
        drawer = self.drawer
        if drawer is not None:
            await drawer.remove()
            # the board's own resize can come while the drawer is still being removed, and be
            # laid out for the narrow room beside it: lay out again for the room it has now
            self.board.fit_room()
        self.set_focus(None)
        self.refresh_bindings()

    def action_focus_drawer(self) -> None:
        if self.drawer is not None:
            self.drawer.focus()

    def on_resize(self) -> None:
        self.kanban.relayout_drawer()

    def on_task_drawer_resized(self, _message: TaskDrawer.Resized) -> None:
        self.board.fit_room()

    def on_screen_resume(self) -> None:
        self.board.settle()
        # a resize while another screen covered this one (the inbox at 160, then 80 columns)
        # leaves the drawer beside the board: it moves as it does on a resize seen here
        self.call_after_refresh(self.kanban.relayout_drawer)
        if self.drawer is not None:
            self.drawer.visibility_changed()

    def on_screen_suspend(self) -> None:
        self.kanban.drop_follow_note()  # `f` is the board's: the note does not follow a screen
        if self.drawer is not None:
            self.drawer.visibility_changed()

    # -- navigation -----------------------------------------------------------------------------

    def action_cursor(self, step: int) -> None:
        self.board.move_cursor(step)

    def action_column(self, step: int) -> None:
        self.board.move_column(step)

    def action_page(self, step: int) -> None:
        self.board.page(step)

    def action_home(self) -> None:
        self.board.home()

    def action_end(self) -> None:
        self.board.end()

    def action_open_drawer(self) -> None:
        task = self.current_task()
        if task is not None:
            self.kanban.open_drawer(task.id)

    def on_task_column_clicked(self, message: TaskColumn.Clicked) -> None:
        if message.double:
            self.kanban.open_drawer(message.task_id)
        elif self.drawer is not None:
            self.set_focus(None)  # a click on the board gives it the keys back

    def on_board_view_selection_changed(self, _message: BoardView.SelectionChanged) -> None:
        self.kanban.selection_changed()

    def on_board_view_selection_left(self, message: BoardView.SelectionLeft) -> None:
        self.kanban.selection_left(message.task_id, message.to_status)

    def on_board_view_columns_hidden(self, message: BoardView.ColumnsHidden) -> None:
        self.header.update_facts(hidden_left=message.left, hidden_right=message.right)

    def action_inbox(self) -> None:
        self.kanban.open_inbox()

    def action_follow(self) -> None:
        self.kanban.follow_left_task()

    @property
    def activity(self) -> ActivityPane:
        return self.query_one(ActivityPane)

    def action_toggle_activity(self) -> None:
        pane = self.activity
        opening = not pane.has_class("-open")
        if opening:
            pane.show(self.kanban.activity)
        pane.set_class(opening, "-open")

    def action_copy_id(self) -> None:
        task = self.current_task()
        if task is not None:
            self.kanban.copy_to_clipboard(task.id)
            # The terminal never says whether it honoured OSC 52: say what was sent, not "copied".
            self.notify(
                f"Sent {task.id} to the terminal's clipboard (OSC 52). If a paste shows nothing, "
                "this terminal ignores OSC 52 (tmux: set-clipboard on).",
                timeout=5,
            )

    # -- board-wide toggles ---------------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one(FilterBar).open(self.kanban.state.filter.describe())

    def on_input_changed(self, event: Input.Changed) -> None:
        if isinstance(event.input, FilterBar):
            self.kanban.set_filter(event.value)

    def on_filter_bar_done(self, _message: FilterBar.Done) -> None:
        self.query_one(FilterBar).close()
        self.set_focus(None)
        self.refresh_bindings()
        problems = self.kanban.state.filter.problems
        if problems:
            self.notify("\n".join(problems), title="Filter: not understood", severity="warning")

    def action_back(self) -> None:
        if self.kanban.marked:
            self.kanban.clear_marks()
        else:
            self.kanban.set_filter("")
        self.refresh_bindings()

    def action_mark(self) -> None:
        task = self.current_task()
        if task is not None:
            self.kanban.toggle_mark(task.id)
            self.refresh_bindings()

    def action_toggle_dropped(self) -> None:
        self.kanban.toggle_dropped()

    def action_toggle_finished(self) -> None:
        self.kanban.toggle_finished()

    def action_toggle_pause(self) -> None:
        self.kanban.toggle_pause()

    def action_refresh(self) -> None:
        self.kanban.refresh_now()

    def action_show_stats(self) -> None:
        self.kanban.show_stats()
