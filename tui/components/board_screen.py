"""The main screen: header, the seven columns, the filter line and the generated footer."""

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Input

from boardlib import transitions as t
from boardlib.records import Task

from .. import registry
from ..actions import TaskActions
from . import tcss
from .board_view import BoardView
from .column import TaskColumn
from .filter_bar import FilterBar
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
        yield BoardView(app.state, now_ms=app.now_ms, is_changed=app.is_changed)
        yield FilterBar()
        yield Footer()

    def on_mount(self) -> None:
        if self.kanban.size.width < FOLD_BELOW_COLUMNS:
            self.board.set_collapsed((t.DONE, t.CANCELLED), True)

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
            return self.kanban.state.filter.active
        return super().check_action(action, parameters)

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

    def on_board_view_selection_changed(self, _message: BoardView.SelectionChanged) -> None:
        self.kanban.selection_changed()

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

    def action_back(self) -> None:
        self.kanban.set_filter("")
        self.refresh_bindings()

    def action_toggle_dropped(self) -> None:
        self.kanban.toggle_dropped()

    def action_toggle_finished(self) -> None:
        self.kanban.toggle_finished()

    def action_toggle_pause(self) -> None:
        self.kanban.toggle_pause()

    def action_refresh(self) -> None:
        self.kanban.refresh_now()
