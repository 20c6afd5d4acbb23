"""One status column drawn with Textual's line API: no widget per card.

`TaskColumn` is a `ScrollView` whose `render_line(y)` maps a screen line to (card, line of card)
and returns a cached `Strip`. With 10,000 tasks only the visible lines are ever rendered; a change
to one card repaints its four lines (`refresh_lines`), a card arriving or leaving repaints from its
row down. Scroll position and selection are kept by task id, so an update that inserts cards above
the viewport does not move what the operator is looking at; a column scrolled to its top stays at
its top (new urgent work arrives in view), and a scrolled one counts what arrived above it in its
title ("↑2 new") until the operator scrolls up to it. A finished column is as tall as its count
and holds a window of it: a row not loaded yet draws as a blank card and asks for its page
(`RowsWanted`), which repaints it when it arrives.
"""

from collections.abc import Callable
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.color import Color
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from boardlib.columns import PageRequest
from boardlib.records import Task
from boardlib.transitions import label

from ..board_state import BoardState, ColumnChange
from ..cards import CARD_HEIGHT, CardNotes, CardPalette, CardTones, card_lines, lease_state
from ..legibility import distinct, system_named
from . import tcss

# A border title's cells besides its words, in the width inside the border: a line and a space
# on each side. A folded column 17 cells wide read `cancelled …` on a board of 15,000 cancelled
# (or of 12): its count went unseen.
TITLE_FRAME = 4


class TaskColumn(ScrollView, can_focus=False):
    """The cards of one status, in the board's display order."""

    DEFAULT_CSS = tcss(__file__)
    COMPONENT_CLASSES = {
        "task-column--card",
        "task-column--selected",
        "task-column--cursor",
        "task-column--gap",
        "task-column--id",
        "task-column--title",
        "task-column--muted",
        "task-column--accent",
        "task-column--success",
        "task-column--warning",
        "task-column--error",
        "task-column--changed",
        "task-column--collapsed",
    }

    class RowsWanted(Message):
        """A row on screen has no card yet: its page, to read."""

        def __init__(self, request: PageRequest) -> None:
            super().__init__()
            self.request = request

    class Clicked(Message):
        def __init__(self, column: "TaskColumn", task_id: str, double: bool) -> None:
            super().__init__()
            self.column = column
            self.task_id = task_id
            self.double = double

    def __init__(
        self,
        status: str,
        state: BoardState,
        *,
        now_ms: Callable[[], int],
        is_changed: Callable[[str], bool],
        notes_of: Callable[[str], CardNotes],
    ) -> None:
        super().__init__(id=f"column-{status}", classes="task-column")
        self.status = status
        self.state = state
        self.now_ms = now_ms
        self.is_changed = is_changed
        self.notes_of = notes_of
        self.cursor = 0
        self.selected_id: str | None = None
        self.active = False
        self.collapsed = False
        self.strip = False  # drawn as a narrow strip (empty, or folded, on a narrow board)
        self._folded_count = -1  # the count a folded column's body says, when its title cannot
        self.new_above: set[str] = set()  # arrived above the viewport since the operator looked
        self._drawn_width = 0
        self._palette: CardPalette | None = None
        self._cache: LRUCache[str, tuple[tuple[Any, ...], list[Strip]]] = LRUCache(1024)

    # -- geometry -------------------------------------------------------------------------------

    @property
    def ids(self) -> list[str]:
        """The ids loaded, from row `state.starts[status]` (0 but in a finished column)."""
        return self.state.columns[self.status]

    @property
    def rows(self) -> int:
        """How many cards the column shows, loaded or not."""
        return self.state.row_count(self.status)

    def id_at(self, row: int) -> str | None:
        return self.state.id_at(self.status, row)

    @property
    def line_width(self) -> int:
        return self.scrollable_content_region.width

    def on_mount(self) -> None:
        self._sync()

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._drawn_width:  # a card's strips depend on the width only
            self._drawn_width = event.size.width
            self._cache.clear()
        self._sync()
        if self.rows and not (self.collapsed or self.strip):
            self.call_after_refresh(self._cursor_into_view)

    def _cursor_into_view(self) -> None:
        """The selected card stays on screen through a resize: at 160x48 `G` on the 40th card,
        then 80x24, had left it below the column's edge, Enter opening a card nobody saw."""
        if self.rows and not (self.collapsed or self.strip):
            row = min(self.cursor, self.rows - 1)
            self.scroll_to_region(
                Region(0, row * CARD_HEIGHT, 1, CARD_HEIGHT - 1),
                animate=False,
                force=True,
                immediate=True,
            )

    def _sync(self) -> None:
        """Virtual height and border title from the current ids."""
        height = 0 if self.collapsed or self.strip else self.rows * CARD_HEIGHT
        size = Size(0, height)
        if self.virtual_size != size:
            self.virtual_size = size
        count = self.state.counts.get(self.status, 0)
        shown = self.rows
        if self.strip:
            title, subtitle = "", ""
        elif self.collapsed:
            title = f"{label(self.status)} {count}"
            if self.size.width and len(title) > self.size.width - TITLE_FRAME:
                title = label(self.status)  # the count is said in the body (`_collapsed_line`)
                if count != self._folded_count:
                    self._folded_count = count
                    self.refresh()
            # a filter's matches folded away: `31/100000 shown` with 2 cards on screen said
            # nothing of the 29 in done and cancelled
            subtitle = f"{shown} shown" if shown != count else ""
        else:
            title = f"{label(self.status)} · {count}"
            if self.new_above:
                title += f" ↑{len(self.new_above)} new"
            subtitle = f"{shown} shown" if shown != count else ""
        if self.border_title != title:
            self.border_title = title
            if self.collapsed:
                self.refresh()  # the body says the count, or stops saying it
        if (self.border_subtitle or "") != subtitle:
            self.border_subtitle = subtitle

    # -- styles ---------------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._palette = None
        self._cache.clear()

    @property
    def palette(self) -> CardPalette:
        if self._palette is None:
            card = self.get_component_rich_style("task-column--card")
            cursor = self.get_component_rich_style("task-column--cursor")
            selected = self.get_component_rich_style("task-column--selected")
            self._palette = CardPalette(
                card=self._tones(card),
                selected=self._tones(self._apart(selected, card, cursor)),
                cursor=self._tones(cursor),
                gap=self.rich_style,
            )
        return self._palette

    def _apart(self, selected: Style, *others: Style) -> Style:
        """The selection's background, strengthened towards `$primary` (then the theme's other
        colours, then its text colour: drawn reversed) until the terminal's colour system shows
        it apart from a plain card and a remembered one."""
        if selected.bgcolor is None or any(other.bgcolor is None for other in others):
            return selected
        app = self.app
        behind = Color.from_rich_color(others[0].bgcolor)
        colour = app.theme_variables
        primary = Color.parse(colour["primary"])
        stronger = [behind.blend(primary, share).rich_color for share in (0.6, 0.8, 1.0)]
        stronger += [Color.parse(colour[name]).rich_color for name in ("accent", "foreground")]
        system = system_named(app.console.color_system)
        taken = [other.bgcolor for other in others if other.bgcolor is not None]
        chosen = distinct([selected.bgcolor, *stronger], taken, system, app.ansi_theme)
        return selected if chosen is selected.bgcolor else selected + Style(bgcolor=chosen)

    def _tones(self, base: Style) -> CardTones:
        """Each part's colour over one card background, as Textual would blend it there."""
        behind = Color.from_rich_color(base.bgcolor) if base.bgcolor else self.background_colors[1]

        def part(name: str) -> Style:
            styles = self.get_component_styles(f"task-column--{name}")
            color = styles.color
            if styles.auto_color:  # `auto 60%`: the contrasting colour of *this* background
                color = behind.get_contrast_text(color.a)
            return Style(color=(behind + color).rich_color) + styles.text_style

        return CardTones(
            base=base,
            ident=part("id"),
            title=part("title"),
            muted=part("muted"),
            accent=part("accent"),
            success=part("success"),
            warning=part("warning"),
            error=part("error"),
            changed=part("changed"),
        )

    # -- drawing --------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.line_width
        if self.strip:
            return self._strip_line(y, width)
        if self.collapsed:
            return self._collapsed_line(y, width)
        line = self.scroll_offset.y + y
        index, row = divmod(line, CARD_HEIGHT)
        if index >= self.rows:
            return Strip.blank(width, self.rich_style)
        task_id = self.id_at(index)
        if task_id is None:  # not loaded yet: ask for its page, draw a blank card meanwhile
            request = self.state.want(self.status, index)
            if request is not None:
                # To the app itself: a message made while the screen renders has the screen for
                # its sender, and bubbling stops there.
                self.app.post_message(self.RowsWanted(request))
            return self._loading_line(row, width)
        return self._card(self.state.tasks[task_id], index, width)[row]

    def _loading_line(self, row: int, width: int) -> Strip:
        if row == CARD_HEIGHT - 1:
            return Strip.blank(width, self.rich_style)
        text = "…" if row == 0 else ""
        return Strip([Segment(f" {text}".ljust(width)[:width], self.palette.card.base)], width)

    def _card(self, task: Task, index: int, width: int) -> list[Strip]:
        now = self.now_ms()
        selected = index == self.cursor and self.active
        cursor = index == self.cursor and not self.active
        changed = self.is_changed(task.id)
        notes = self.notes_of(task.id)
        key = (width, selected, cursor, changed, lease_state(task, now), notes)
        cached = self._cache.get(task.id)
        if cached is not None and cached[0][0] is task and cached[0][1:] == key:
            return cached[1]
        lines = card_lines(
            task,
            width,
            self.palette,
            now_ms=now,
            selected=selected,
            cursor=cursor,
            changed=changed,
            notes=notes,
        )
        self._cache[task.id] = ((task, *key), lines)
        return lines

    def _strip_line(self, y: int, width: int) -> Strip:
        """A narrow strip: the count (of the matches, while a filter narrows the board), then
        the status written downwards (`r e v i e w`)."""
        state = self.state
        filtered = state.matching is not None
        count = state.row_count(self.status) if filtered else state.counts.get(self.status, 0)
        shown = str(count) if count < 1000 else f"{count // 1000}k"
        lines = [shown, "", *label(self.status).replace(" ", "")]
        text = lines[y] if y < len(lines) else ""
        style = self.get_component_rich_style("task-column--collapsed")
        if not text:
            return Strip.blank(width, self.rich_style)
        return Strip([Segment(text.center(width)[:width], style)], width)

    def set_strip(self, strip: bool) -> None:
        if self.strip != strip:
            self.strip = strip
            self.set_class(strip, "-strip")
            self._sync()
            self.refresh()

    def _collapsed_line(self, y: int, width: int) -> Strip:
        texts = {1: "folded", 2: "z opens"}
        if self.border_title == label(self.status):  # a count too long for the title
            texts = {0: f"{self.state.counts.get(self.status, 0):,}", **texts}  # under the title
        text = texts.get(y, "")
        style = self.get_component_rich_style("task-column--collapsed")
        if not text:
            return Strip.blank(width, self.rich_style)
        return Strip([Segment(text.center(width)[:width], style)], width)

    def refresh_card(self, index: int) -> None:
        if 0 <= index < self.rows:
            self.refresh_lines(index * CARD_HEIGHT, CARD_HEIGHT)

    def refresh_task(self, task_id: str) -> None:
        index = self.state.row_of(task_id)
        task = self.state.tasks.get(task_id)
        if index is not None and task is not None and task.status == self.status:
            self.refresh_card(index)

    # -- selection ------------------------------------------------------------------------------

    @property
    def selected_task(self) -> Task | None:
        if self.selected_id is None:
            return None
        return self.state.tasks.get(self.selected_id)

    def set_active(self, active: bool) -> None:
        if self.active != active:
            self.active = active
            self.set_class(active, "-active")
            self.refresh_card(self.cursor)

    def set_collapsed(self, collapsed: bool) -> None:
        if self.collapsed != collapsed:
            self.collapsed = collapsed
            self.set_class(collapsed, "-collapsed")
            self._sync()
            self.refresh()

    def move_to(self, index: int) -> None:
        """Put the cursor on row `index` (clamped) and scroll it into view (a row whose page is
        still on its way is selected when it arrives: `settle`)."""
        rows = self.rows
        if not rows:
            self.cursor, self.selected_id = 0, None
            return
        index = max(0, min(index, rows - 1))
        if index != self.cursor:
            old = self.cursor
            self.cursor = index
            self.refresh_card(old)
            self.refresh_card(index)
        self.selected_id = self.id_at(index)
        self.scroll_to_region(
            Region(0, index * CARD_HEIGHT, 1, CARD_HEIGHT - 1),
            animate=False,
            force=True,
            immediate=True,
        )

    def settle(self) -> None:
        """Select the card under the cursor once it is there (first load, a page arrived)."""
        if self.selected_id is None and self.rows:
            if self.cursor >= self.rows:
                self.move_to(self.rows - 1)
            else:
                self.selected_id = self.id_at(self.cursor)

    def select(self, task_id: str) -> bool:
        index = self.state.row_of(task_id)
        if index is None or self.state.tasks[task_id].status != self.status:
            return False
        self.move_to(index)
        return True

    @property
    def page_cards(self) -> int:
        return max(1, self.scrollable_content_region.height // CARD_HEIGHT)

    # -- updates --------------------------------------------------------------------------------

    def apply(self, change: ColumnChange, *, to_top: bool = False) -> None:
        """Repaint what `change` says changed, keeping the selection and the view on their
        tasks (or, `to_top`, showing the first card: a new filter asks a new question)."""
        if to_top:
            self.new_above.clear()
            self.cursor, self.selected_id = 0, self.id_at(0)
            self._sync()
            self.scroll_to(y=0, animate=False, immediate=True)
            self._top_id = self.id_at(0)
            self.refresh()
            return
        if change.reset or change.shifted_from is not None:
            self._restructure(change)
            return
        self._sync()
        if change.paged:  # blank cards that now have their tasks
            self.settle()
            self._top_id = self.id_at(int(self.scroll_offset.y) // CARD_HEIGHT)
            self.refresh()
        for task_id in change.rows:
            self.refresh_task(task_id)

    def _mine(self, task_id: str | None) -> int | None:
        """Row of `task_id` if it is (still) shown in this column."""
        if task_id is None:
            return None
        task = self.state.tasks.get(task_id)
        if task is None or task.status != self.status:
            return None
        return self.state.row_of(task_id)

    def _restructure(self, change: ColumnChange) -> None:
        rows = self.rows
        scroll_y = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height
        selected_row = self.cursor * CARD_HEIGHT - scroll_y  # where the selection was on screen
        top_index, top_offset = divmod(scroll_y, CARD_HEIGHT)
        top_id = self._top_id
        # The selection stays on its task; if that task left the column, on the same row (the
        # neighbour that took its place), as in a triage list. A column the operator is not in,
        # at its top with the cursor on its first card, keeps the cursor on the first card: done's
        # first task had kept it, and `l` to done showed the oldest of 36.
        index = self._mine(self.selected_id)
        if index is None or (not self.active and scroll_y == 0 and self.cursor == 0):
            index = min(self.cursor, max(rows - 1, 0))
        self.cursor = index
        self.selected_id = self.id_at(index)
        # The view: at the top it stays at the top, so what arrives there is seen; otherwise on
        # the selected card (active column) or on the card that was on top.
        if scroll_y == 0:
            target = 0
        elif self.active and 0 <= selected_row < height:
            target = self.cursor * CARD_HEIGHT - selected_row
        else:
            anchor = self._mine(top_id)
            target = (top_index if anchor is None else anchor) * CARD_HEIGHT + top_offset
        max_y = max(0, rows * CARD_HEIGHT - height)
        target = max(0, min(target, max_y))
        for task_id in change.inserted:
            row = self._mine(task_id)
            if row is not None and (row + 1) * CARD_HEIGHT <= target:
                self.new_above.add(task_id)
        self._prune_new_above(target)
        self._sync()
        if change.reset or change.paged or target != scroll_y:
            self.scroll_to(y=target, animate=False, immediate=True)
            self.refresh()
        elif change.shifted_from is not None:
            start = change.shifted_from * CARD_HEIGHT
            end = scroll_y + self.scrollable_content_region.height
            if start < end:
                self.refresh_lines(start, end - start)
        self._top_id = self.id_at(min(target // CARD_HEIGHT, rows - 1)) if rows else None
        for task_id in change.rows:
            self.refresh_task(task_id)

    _top_id: str | None = None

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._top_id = self.id_at(int(new_value) // CARD_HEIGHT)
        if self.new_above and self._prune_new_above(int(new_value)):
            self._sync()

    def _prune_new_above(self, scroll_y: int) -> bool:
        """Forget the arrivals now in view (or gone); returns whether the count changed."""
        keep = {
            task_id
            for task_id in self.new_above
            if (row := self._mine(task_id)) is not None and (row + 1) * CARD_HEIGHT <= scroll_y
        }
        changed = keep != self.new_above
        self.new_above = keep
        return changed

    def refresh_lease_cards(self, now_ms: int, previous_ms: int) -> None:
        """Repaint the visible cards whose lease state changed between two moments."""
        top = int(self.scroll_offset.y) // CARD_HEIGHT
        bottom = top + self.page_cards + 1
        for index in range(top, min(bottom, self.rows)):
            task_id = self.id_at(index)
            task = self.state.tasks[task_id] if task_id is not None else None
            if task is not None and lease_state(task, now_ms) != lease_state(task, previous_ms):
                self.refresh_card(index)

    # -- mouse ----------------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        if self.collapsed:
            return
        task_id = self.id_at((int(self.scroll_offset.y) + event.y) // CARD_HEIGHT)
        if task_id is not None:
            self.post_message(self.Clicked(self, task_id, event.chain >= 2))
