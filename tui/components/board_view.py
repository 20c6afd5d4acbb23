"""The seven columns side by side, and the one selection that moves across them.

The view stays where the operator put it:
- the cursor stays in its column. When the selected task leaves (an agent moved it, or the
  operator did), the cursor lands on the neighbour that took its place, as in a triage list, and
  `SelectionLeft` lets the app say where the task went (with a key to follow it);
- columns never get narrower than a readable card; when they do not all fit, empty ones shrink
  to a count strip, so review and blocked get room; the rest scrolls sideways by whole columns,
  `ColumnsHidden` counting what is off. The first view is the same every time (`_place`);
- `h`/`l` reach every column, folded ones included; a column folds or unfolds only when the
  operator asks (`z`, or jumping to a task in it);
- a new filter scrolls every column to its first match, and focuses the first column that has
  one when the focused column has none.
"""

from collections.abc import Callable

from textual.containers import HorizontalScroll
from textual.message import Message
from textual.widgets import Static

from boardlib import transitions as t
from boardlib.records import Task

from ..board_state import Applied, BoardState
from ..cards import CardNotes
from . import tcss
from .column import TaskColumn

MIN_COLUMN_WIDTH = 25  # a card stays readable (id, priority, ~20 cells of title); 7 fit in 160
FOLDED_COLUMN_WIDTH = 17
STRIP_WIDTH = 5  # an empty column on a board too narrow for every column: its count
START_ORDER = (t.TODO, t.IN_PROGRESS, t.IN_REVIEW, t.BLOCKED, t.BACKLOG, t.DONE, t.CANCELLED)


class BoardView(HorizontalScroll, can_focus=False):
    DEFAULT_CSS = tcss(__file__)

    class SelectionChanged(Message):
        def __init__(self, task: Task | None) -> None:
            super().__init__()
            self.task = task

    class SelectionLeft(Message):
        """The selected task left the focused column; the cursor stayed."""

        def __init__(self, task_id: str, from_status: str, to_status: str) -> None:
            super().__init__()
            self.task_id = task_id
            self.from_status = from_status
            self.to_status = to_status

    class ColumnsHidden(Message):
        """The statuses of the columns off screen on each side, in board order."""

        def __init__(self, left: tuple[str, ...], right: tuple[str, ...]) -> None:
            super().__init__()
            self.left = left
            self.right = right

    def __init__(
        self,
        state: BoardState,
        *,
        now_ms: Callable[[], int],
        is_changed: Callable[[str], bool],
        notes_of: Callable[[str], CardNotes],
        folded: tuple[str, ...] = (),
    ) -> None:
        super().__init__(id="board")
        self.state = state
        self.columns = {
            status: TaskColumn(
                status, state, now_ms=now_ms, is_changed=is_changed, notes_of=notes_of
            )
            for status in t.STATUSES
        }
        for status in folded:
            self.columns[status].set_collapsed(True)
        self.active_status = t.TODO
        self._placed = False  # the first data picks the starting column
        self._last_selected: str | None = None
        self._widths: list[int] = []
        self._hidden: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        # Room after the last column, so that scrolling to the far right still starts at a
        # column's edge (folded columns are narrower than the others).
        self._spacer = Static("", id="board-end")
        self._spacer_width = 0
        self._capacity = 0  # the widest the view may be (the terminal)
        self._laid_out_for = 0
        self._sideways = False  # not every column fits: the view scrolls by whole columns
        self._empty: frozenset[str] = frozenset()  # the columns showing no card, at last layout

    def compose(self):  # type: ignore[no-untyped-def]
        yield from self.columns.values()
        yield self._spacer

    def on_mount(self) -> None:
        self.columns[self.active_status].set_active(True)
        # The terminal's width is known before the first paint: lay out now, so the first frame
        # is already the final one (not CSS widths re-laid out a moment later).
        self.layout_columns(self.app.size.width)

    def on_resize(self) -> None:
        self.fit_room()

    def settle(self) -> None:
        """Lay out and scroll again once this screen is shown: while another screen covered it
        (the drawer at 80 columns), a change of columns was laid out but its scroll was not
        applied, and the board came back clipped, its header naming the wrong columns off
        screen."""
        self.layout_columns()
        self.call_after_refresh(self._snap, self.active)

    def fit_room(self) -> None:
        """A taller or shorter board keeps its widths; a drawer docking beside it narrows it, and
        the selected card stays on screen."""
        if self._room() != self._laid_out_for:
            self.layout_columns()
            self._snap(self.active)

    def _room(self) -> int:
        """The board's width: the terminal's, less a task drawer docked beside it."""
        width = self.app.size.width
        for drawer in self.screen.query(".-beside"):
            width -= drawer.outer_size.width
        return max(width, 0)

    def layout_columns(self, width: int | None = None) -> None:
        """Share the width between open columns, never below a readable card; what does not fit
        scrolls sideways (at 80 columns, three are visible and `h`/`l` bring the others in)."""
        width = width or self._room()  # the terminal, less a drawer beside the board
        if not width:
            return
        self._empty = frozenset(s for s, c in self.columns.items() if not c.rows)
        open_columns = [c for c in self.columns.values() if not c.collapsed]
        folded = len(self.columns) - len(open_columns)
        room = width - folded * FOLDED_COLUMN_WIDTH
        fits = room >= max(len(open_columns), 1) * MIN_COLUMN_WIDTH
        # Too narrow for every column: empty ones become strips, never hiding work (not before
        # the first data, so the first paint of a board with work in every column is final).
        loaded = bool(self.state.tasks)
        for column in self.columns.values():
            column.set_strip(loaded and not fits and not column.collapsed and not column.rows)
        strips = [c for c in self.columns.values() if c.strip]
        open_columns = [c for c in self.columns.values() if not c.collapsed and not c.strip]
        folded = len(self.columns) - len(open_columns) - len(strips)
        room = width - folded * FOLDED_COLUMN_WIDTH - len(strips) * STRIP_WIDTH
        count = max(len(open_columns), 1)
        self._sideways = room < count * MIN_COLUMN_WIDTH
        if not self._sideways:
            each, extra = divmod(room, count)
        else:  # as many whole columns as fit, each as wide as they can share
            fitting = max(width // MIN_COLUMN_WIDTH, 1)
            each, extra = max(width // fitting, MIN_COLUMN_WIDTH), 0
            if strips:  # leave the spare cells to the strips between the columns
                each = MIN_COLUMN_WIDTH
        self._capacity = self._laid_out_for = width
        widths = []
        index = 0
        for column in self.columns.values():
            if column.strip:
                widths.append(STRIP_WIDTH)
            elif column.collapsed:
                widths.append(FOLDED_COLUMN_WIDTH)
            else:
                widths.append(each + (1 if index < extra else 0))
                index += 1
        self._widths = widths  # the columns' own widths; `_clip` gives the spare room to some
        # Room after the last column, so the far right also starts at a column's edge.
        total = sum(widths)
        starts = [sum(widths[:i]) for i in range(len(widths))]
        last_start = next((x for x in starts if total - x <= width), 0)
        self._spacer_width = max(0, last_start - (total - width)) if self._sideways else 0
        self._spacer.styles.width = self._spacer_width
        self._clip(int(self.scroll_offset.x))

    # -- whole columns sideways -----------------------------------------------------------------

    def _edges(self) -> list[tuple[int, int]]:
        edges, x = [], 0
        for width in self._widths:
            edges.append((x, x + width))
            x += width
        return edges

    def _snap(self, column: TaskColumn, *, from_x: int | None = None) -> None:
        """Scroll sideways so `column` is in view and the left edge is a column's edge, from the
        edge the view is at (or `from_x`)."""
        width = self._capacity
        edges = self._edges()
        if not edges or not width:
            return
        index = list(self.columns.values()).index(column)
        left, right = edges[index]
        x = int(self.scroll_offset.x) if from_x is None else from_x
        starts = [start for start, _end in edges]
        if not self._sideways:
            x = 0
        elif left < x or right - left >= width:
            x = left
        elif right > x + width:
            x = next((start for start in starts if right - start <= width), left)
        elif x not in starts:
            x = max((start for start in starts if start <= x), default=0)
        if self._sideways:
            x = self._fullest(x, left, right, edges, width)
        if x != int(self.scroll_offset.x):
            self.scroll_to(x=x, animate=False, immediate=True)
            if x > self.max_scroll_x:
                # Widths set just now are not laid out yet, so the scroll stopped short (at 160
                # columns `--open` left the task's column behind the drawer): again after.
                self.call_after_refresh(self.scroll_to, x=x, animate=False, immediate=True)
        self._clip(x)

    @staticmethod
    def _fullest(x: int, left: int, right: int, edges: list[tuple[int, int]], width: int) -> int:
        """Of the column edges from which the active column (`left`..`right`) is in view, the
        one that shows the most of the board in whole columns; `x` when none shows more, so the
        view never moves for nothing. From an empty column's strip at the far left, `l` had
        kept the strip in view and the room a column with work needed empty."""

        def shown(start: int) -> int:
            return sum(end - s for s, end in edges if s >= start and end <= start + width)

        best = x
        for start, _end in edges:
            if start <= left and right <= start + width and shown(start) > shown(best):
                best = start
        return best

    def _clip(self, x: int) -> None:
        """The view is as wide as the whole columns it shows from `x`: never a sliver at the
        right edge either. Then say how many columns are off screen on each side."""
        edges = self._edges()
        if self._sideways:
            shown = [end for start, end in edges if start >= x and end <= x + self._capacity]
        else:
            shown = [end for _start, end in edges]
        visible = (max(shown) - x) if self._sideways and shown else self._capacity
        self._fill(x, self._capacity - (max(shown) - x) if shown else 0)
        self.styles.width = "1fr"
        statuses = list(self.columns)
        left = tuple(statuses[i] for i, (start, _end) in enumerate(edges) if start < x)
        right = tuple(statuses[i] for i, (_start, end) in enumerate(edges) if end > x + visible)
        if (left, right) != self._hidden:
            self._hidden = (left, right)
            self.post_message(self.ColumnsHidden(left, right))

    def _fill(self, x: int, spare: int) -> None:
        """Share the `spare` cells the whole columns from `x` leave at the right edge between
        them: to the open ones on screen, else the folded ones, else the strips. At 80 columns the
        demo's board had ended 15 cells short, done (folded) not fitting in what was left. Only
        columns from `x` grow, so each column's start up to `x` stays a start of `_edges`."""
        shown = [
            (column, start)
            for column, (start, end) in zip(self.columns.values(), self._edges(), strict=True)
            if start >= x and end <= x + self._capacity
        ]
        growing = next(
            (
                group
                for group in (
                    [c for c, _ in shown if not (c.collapsed or c.strip)],
                    [c for c, _ in shown if c.collapsed],
                    [c for c, _ in shown],
                )
                if group
            ),
            [],
        )
        each, extra = divmod(max(spare, 0), max(len(growing), 1))
        index = 0
        for column, width in zip(self.columns.values(), self._widths, strict=True):
            if column in growing:
                width += each + (1 if index < extra else 0)
                index += 1
            column.styles.width = width

    # -- what is selected -----------------------------------------------------------------------

    @property
    def active(self) -> TaskColumn:
        return self.columns[self.active_status]

    @property
    def selected_task(self) -> Task | None:
        """The task under the cursor; none on a folded column (its cards are not on screen)."""
        if self.active.collapsed or self.active.strip:
            return None
        return self.active.selected_task

    def _announce(self) -> None:
        task = self.selected_task
        task_id = task.id if task else None
        if task_id != self._last_selected:
            self._last_selected = task_id
            self.post_message(self.SelectionChanged(task))

    # -- navigation -----------------------------------------------------------------------------

    def focus_column(self, status: str, *, unfold: bool = False) -> None:
        column = self.columns[status]
        if unfold and column.collapsed:
            column.set_collapsed(False)
            self.layout_columns()
        if status != self.active_status:
            self.active.set_active(False)
            self.active_status = status
            column.set_active(True)
            if column.selected_id is None and column.rows:
                column.move_to(column.cursor)
        self._snap(column)
        self._announce()

    def move_column(self, step: int) -> None:
        """The next column on that side, folded or not."""
        order = list(t.STATUSES)
        index = order.index(self.active_status) + step
        if 0 <= index < len(order):
            self.focus_column(order[index])

    def move_cursor(self, step: int) -> None:
        column = self.active
        if column.collapsed:
            return
        column.move_to(column.cursor + step)
        self._announce()

    def page(self, step: int) -> None:
        self.move_cursor(step * self.active.page_cards)

    def home(self) -> None:
        if not self.active.collapsed:
            self.active.move_to(0)
        self._announce()

    def end(self) -> None:
        if not self.active.collapsed:
            self.active.move_to(self.active.rows - 1)
        self._announce()

    def select_task(self, task_id: str) -> bool:
        """Focus the column holding `task_id` and put the cursor on it: the operator asked for
        this task, so a folded column opens."""
        task = self.state.tasks.get(task_id)
        if task is None or task.status not in self.columns:
            return False
        column = self.columns[task.status]
        if self.state.index_of(task_id) is None:
            return False
        self.focus_column(task.status, unfold=True)
        column.select(task_id)
        self._announce()
        return True

    def set_collapsed(self, statuses: tuple[str, ...], collapsed: bool) -> None:
        for status in statuses:
            self.columns[status].set_collapsed(collapsed)
        self.layout_columns()
        self._snap(self.active)
        self._announce()

    # -- updates --------------------------------------------------------------------------------

    def apply(self, applied: Applied) -> None:
        """Hand each column its part of an update; the cursor stays in its column."""
        selected = self.active.selected_id
        for status, change in applied.columns.items():
            self.columns[status].apply(change, to_top=applied.refiltered)
        empty = frozenset(s for s, c in self.columns.items() if not c.rows)
        if empty != self._empty:  # a column gained its first card or lost its last: re-share
            self.layout_columns()
            self._snap(self.active)
        if not self._placed and self.state.tasks:
            self._placed = True
            self._place()
        elif applied.refiltered and not self.active.rows:
            # Bring the first match into view: the focused column has none.
            first = next((s for s in t.STATUSES if self.state.row_count(s)), None)
            if first is not None:
                self.focus_column(first, unfold=True)
        if selected is not None and selected in applied.moved:
            from_status, to_status = applied.moved[selected]
            if to_status != self.active_status:
                self.post_message(self.SelectionLeft(selected, from_status, to_status))
        self.active.settle()
        self._announce()

    def _place(self) -> None:
        """The first view: the first column of `START_ORDER` with work under the cursor, and the
        window `_snap` gives it from the far left (the leftmost edge showing the most of the
        board). Any later `_snap` keeps that edge, so the first view is the same every time: a
        scroll of its own here (leading strips away), done after a refresh, raced `_snap`'s."""
        for status in START_ORDER:
            if self.state.columns[status] and not self.columns[status].collapsed:
                self.focus_column(status)
                break
        self._snap(self.active, from_x=0)

    def refresh_changed(self, task_ids: set[str]) -> None:
        """Repaint single cards (their highlight ended, say)."""
        for task_id in task_ids:
            task = self.state.tasks.get(task_id)
            if task is not None and task.status in self.columns:
                self.columns[task.status].refresh_task(task_id)

    def on_task_column_clicked(self, message: TaskColumn.Clicked) -> None:
        self.select_task(message.task_id)
