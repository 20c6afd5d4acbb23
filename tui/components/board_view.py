"""The seven columns side by side, and the one selection that moves across them.

The selection is a task id, not a position: when an agent moves the selected task to another
column, the selection follows it there; when it disappears (filtered out, say), the cursor stays on
the same row of its column. Columns never narrower than a readable card scroll horizontally (80x24
shows three at a time) and the focused one is always kept in view.
"""

from collections.abc import Callable

from textual.containers import HorizontalScroll
from textual.message import Message

from boardlib import transitions as t
from boardlib.records import Task

from ..board_state import Applied, BoardState
from . import tcss
from .column import TaskColumn

MIN_COLUMN_WIDTH = 25  # a card stays readable (id, priority, ~20 cells of title); 7 fit in 160
FOLDED_COLUMN_WIDTH = 17
START_ORDER = (t.TODO, t.IN_PROGRESS, t.IN_REVIEW, t.BLOCKED, t.BACKLOG, t.DONE, t.CANCELLED)


class BoardView(HorizontalScroll, can_focus=False):
    DEFAULT_CSS = tcss(__file__)

    class SelectionChanged(Message):
        def __init__(self, task: Task | None) -> None:
            super().__init__()
            self.task = task

    def __init__(
        self,
        state: BoardState,
        *,
        now_ms: Callable[[], int],
        is_changed: Callable[[str], bool],
    ) -> None:
        super().__init__(id="board")
        self.state = state
        self.columns = {
            status: TaskColumn(status, state, now_ms=now_ms, is_changed=is_changed)
            for status in t.STATUSES
        }
        self.active_status = t.TODO
        self._placed = False  # the first data picks the starting column
        self._last_selected: str | None = None

    def compose(self):  # type: ignore[no-untyped-def]
        yield from self.columns.values()

    def on_mount(self) -> None:
        self.columns[self.active_status].set_active(True)

    def on_resize(self) -> None:
        self.layout_columns()
        # Narrowed (a drawer docked beside it): the selected card stays on screen.
        self.call_after_refresh(self.scroll_to_widget, self.active, animate=False, immediate=True)

    def layout_columns(self) -> None:
        """Share the width between open columns, never below a readable card; what does not fit
        scrolls sideways (at 80 columns, three are visible and `h`/`l` bring the others in)."""
        width = self.size.width
        if not width:
            return
        open_columns = [c for c in self.columns.values() if not c.collapsed]
        folded = len(self.columns) - len(open_columns)
        room = width - folded * FOLDED_COLUMN_WIDTH
        count = max(len(open_columns), 1)
        if room >= count * MIN_COLUMN_WIDTH:
            each, extra = divmod(room, count)
        else:  # scroll sideways: as many whole columns as fit fill the screen exactly
            fitting = max(width // MIN_COLUMN_WIDTH, 1)
            each, extra = max(width // fitting, MIN_COLUMN_WIDTH), 0
        for index, column in enumerate(open_columns):
            column.styles.width = each + (1 if index < extra else 0)
        for column in self.columns.values():
            if column.collapsed:
                column.styles.width = FOLDED_COLUMN_WIDTH

    # -- what is selected -----------------------------------------------------------------------

    @property
    def active(self) -> TaskColumn:
        return self.columns[self.active_status]

    @property
    def selected_task(self) -> Task | None:
        return self.active.selected_task

    def _announce(self) -> None:
        task = self.selected_task
        task_id = task.id if task else None
        if task_id != self._last_selected:
            self._last_selected = task_id
            self.post_message(self.SelectionChanged(task))

    # -- navigation -----------------------------------------------------------------------------

    def focus_column(self, status: str) -> None:
        column = self.columns[status]
        if column.collapsed:
            column.set_collapsed(False)
            self.layout_columns()
        if status != self.active_status:
            self.active.set_active(False)
            self.active_status = status
            column.set_active(True)
            if column.selected_id is None and column.ids:
                column.move_to(0)
        self.scroll_to_widget(column, animate=False, immediate=True)
        self._announce()

    def move_column(self, step: int) -> None:
        order = list(t.STATUSES)
        index = order.index(self.active_status) + step
        while 0 <= index < len(order):
            if not self.columns[order[index]].collapsed:
                self.focus_column(order[index])
                return
            index += step

    def move_cursor(self, step: int) -> None:
        column = self.active
        column.move_to(column.cursor + step)
        self._announce()

    def page(self, step: int) -> None:
        self.move_cursor(step * self.active.page_cards)

    def home(self) -> None:
        self.active.move_to(0)
        self._announce()

    def end(self) -> None:
        self.active.move_to(len(self.active.ids) - 1)
        self._announce()

    def select_task(self, task_id: str) -> bool:
        """Focus the column holding `task_id` and put the cursor on it."""
        task = self.state.tasks.get(task_id)
        if task is None or task.status not in self.columns:
            return False
        column = self.columns[task.status]
        if self.state.index_of(task_id) is None:
            return False
        self.focus_column(task.status)
        column.select(task_id)
        self._announce()
        return True

    def set_collapsed(self, statuses: tuple[str, ...], collapsed: bool) -> None:
        for status in statuses:
            self.columns[status].set_collapsed(collapsed)
        self.layout_columns()
        if self.active.collapsed:
            self.move_column(-1)

    # -- updates --------------------------------------------------------------------------------

    def apply(self, applied: Applied) -> None:
        """Hand each column its part of an update, then let the selection follow its task."""
        followed = self.active.selected_id
        for status, change in applied.columns.items():
            self.columns[status].apply(change)
        if not self._placed and self.state.tasks:
            self._placed = True
            for status in START_ORDER:
                if self.state.columns[status] and not self.columns[status].collapsed:
                    self.focus_column(status)
                    break
        if followed is not None and followed in applied.moved:
            task = self.state.tasks[followed]
            if self.state.index_of(followed) is not None:
                self.focus_column(task.status)
                self.columns[task.status].select(followed)
        elif self.active.selected_id is None and self.active.ids:
            self.active.move_to(0)
        self._announce()

    def refresh_changed(self, task_ids: set[str]) -> None:
        """Repaint single cards (their highlight ended, say)."""
        for task_id in task_ids:
            task = self.state.tasks.get(task_id)
            if task is not None and task.status in self.columns:
                self.columns[task.status].refresh_task(task_id)

    def on_task_column_clicked(self, message: TaskColumn.Clicked) -> None:
        self.select_task(message.task_id)
