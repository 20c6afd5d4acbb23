"""The drawer's Diff tab: the diff-stat, the changed files, then the whole diff, drawn with
Textual's line API over `tui.diff_rows` (a diff of any size is indexed, never copied into
widgets; only the lines on screen are built, each once).

A cursor line (what `o` opens and `c` comments on), `w` wrap or a horizontal offset with edge
markers for lines that go on, search matches highlighted, side by side (old | new), and
review comments shown under their line. git's `+`/`-` stay in a gutter so it reads without
colour; every drawn line goes through `boardlib.inert`. Why: docs/tui.md#reviewing-in-depth
"""

import bisect
from array import array
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from boardlib.inert import inert
from boardlib.records import Comment

from ..diff_rows import (
    BLANK,
    HEADER,
    HUNK_ROW,
    LINE,
    LISTED,
    NOTE,
    ODD,
    STAT,
    DiffRows,
    Match,
    Row,
    RowSource,
    SideBySideRows,
    display,
    find_all,
    text_cells,
)
from . import tcss

_BOLD = Style(bold=True)
_ITALIC = Style(italic=True)
_DIM_ITALIC = Style(dim=True, italic=True)
MORE_RIGHT = "\u203a"  # single right-pointing angle quotation mark
MORE_LEFT = "\u2039"
DIVIDER = "│"


class DiffView(ScrollView, can_focus=False):
    """A diff, line by line. The drawer's keys call `move`, `page`, `home`, `end`, `next_file`,
    `previous_file`, `pan`, `set_wrap`, `set_side_by_side`, `search`, `next_match`."""

    DEFAULT_CSS = tcss(__file__)
    COMPONENT_CLASSES = {
        "diff-view--gutter",
        "diff-view--added",
        "diff-view--removed",
        "diff-view--context",
        "diff-view--hunk",
        "diff-view--header",
        "diff-view--stat",
        "diff-view--listed",
        "diff-view--note",
        "diff-view--cursor",
        "diff-view--match",
        "diff-view--match-current",
        "diff-view--marker",
        "diff-view--comment",
        "diff-view--comment-head",
        "diff-view--divider",
        "diff-view--empty",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unified = DiffRows(None)
        self.source: RowSource = self.unified
        self.wrap = False
        self.side_by_side = False
        self.pan_x = 0  # cells of every line's text scrolled off to the left (no wrap)
        self.cursor = 0
        self.comments: list[Comment] = []
        self.search_text = ""
        self.matches: list[Match] = []
        self.match_index: int | None = None
        self._signature: object = None
        self._placed: dict[int, list[Comment]] = {}
        self._starts: array[int] | None = None  # each row's first display row (None: one each)
        self._total = 0
        self._layout_width = -1
        self._relayout_asked = False
        self._comment_lines: dict[int, list[Text]] = {}
        self._content: LRUCache[tuple[int, int], tuple[Strip, int]] = LRUCache(4096)
        self._styles: dict[str, Style] | None = None
        self._lexers: dict[int, Any] = {}
        # The row the operator had at the top, kept while a resize moves the view (a taller one
        # cannot scroll as far down): the way back to the size shows it again.
        self._kept_top = 0
        self._placing = False  # the view puts the kept row at its top: no move of the operator's
        self._cursor_kept = False  # carried: the cursor is brought in view once sized

    # -- content --------------------------------------------------------------------------------

    @property
    def rows(self) -> RowSource:
        return self.source

    @property
    def file_rows(self) -> list[int]:
        return self.source.file_rows

    def show(self, rows: DiffRows, *, signature: object = None) -> None:
        """Replace the diff, keeping the cursor and scroll position (clamped): a live refresh of
        the same task must not throw the reader back to the top. Rows with the same `signature`
        as the current ones are not redrawn at all."""
        if signature is not None and signature == self._signature:
            return
        same_task = self._signature is not None and _task_of(signature) == _task_of(self._signature)
        self._signature = signature
        self.unified = rows
        self.source = SideBySideRows(rows) if self.side_by_side else rows
        self._lexers = {}
        if not same_task:
            self.cursor = 0
            self.pan_x = 0
            self.scroll_to(y=0, animate=False, immediate=True)
        self.cursor = min(self.cursor, max(0, len(self.source) - 1))
        if self.search_text:
            self.matches = find_all(self.source, self.search_text)
            self.match_index = None
        self._relayout()

    def carry(self, other: "DiffView") -> None:
        """Show what `other` shows, as the operator left it (the drawer moved to its other
        layout): the rows, side by side or not, the search and its current match, the cursor,
        the sideways offset and the line at the top; the cursor is kept in view once this view
        has its size."""
        self.unified, self.source, self._signature = other.unified, other.source, other._signature
        self.side_by_side, self.wrap, self.pan_x = other.side_by_side, other.wrap, other.pan_x
        self.cursor, self.comments = other.cursor, other.comments
        self.search_text, self.matches = other.search_text, list(other.matches)
        self.match_index = other.match_index
        self._kept_top = other._kept_top
        self._cursor_kept = True
        self._place_kept_top()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Up to exactly the new foot is Textual clamping the view to a taller size: the operator
        # did not move (from the foot, a line up is above it).
        clamped = new_value < old_value and round(new_value) == self.max_scroll_y
        if not self._placing and not clamped:
            self._kept_top = self._locate(int(new_value))[0] if len(self.source) else 0

    def _place_kept_top(self) -> None:
        """Lay out at this width with the kept row at the top, as far as the view can scroll."""
        self._placing = True
        try:
            self._relayout(keep_row=self._kept_top)
        finally:
            self._placing = False

    def _cursor_in_view(self) -> None:
        """Scroll the least that shows the cursor's line (a view shorter than the one it was left
        in may have it below its foot)."""
        if not len(self.source):
            return
        first = self.display_row(self.cursor)
        last = first + self._height_of(self.cursor) - 1
        top, height = int(self.scroll_offset.y), self._view_height()
        if first < top or last >= top + height:
            y = first if first < top else min(first, last - height + 1)
            self.scroll_to(y=y, animate=False, immediate=True)

    def set_comments(self, comments: Sequence[Comment]) -> None:
        anchored = [comment for comment in comments if comment.path is not None]
        if [c.id for c in anchored] == [c.id for c in self.comments]:
            return
        self.comments = anchored
        self._relayout()

    def set_wrap(self, wrap: bool) -> None:
        if wrap == self.wrap:
            return
        self.wrap = wrap
        self.pan_x = 0
        self._relayout()
        self.move_cursor(self.cursor)  # the line the reader was on stays on screen

    def set_side_by_side(self, on: bool) -> None:
        if on == self.side_by_side:
            return
        current = self.source.row(self.cursor) if len(self.source) else None
        self.side_by_side = on
        self.source = SideBySideRows(self.unified) if on else self.unified
        self.cursor = 0
        if current is not None and current.line is not None:
            found = self.source.row_of_line(current.line)
            self.cursor = found if found is not None else 0
        elif current is not None and current.kind == HEADER and current.file is not None:
            # a file's header (where `n` leaves the cursor) is found again, not the top
            headers = self.source.file_rows
            self.cursor = headers[current.file] if current.file < len(headers) else 0
        if self.search_text:
            self.matches = find_all(self.source, self.search_text)
            self.match_index = None
        self.pan_x = 0
        self._relayout(keep_row=self.cursor)

    # -- layout: which display rows each row takes --------------------------------------------

    def _relayout(self, keep_row: int | None = None) -> None:
        self._content.clear()
        self._placed = self.source.anchor_rows(self.comments)
        width = self._content_width()
        self._layout_width = self._width()
        self._comment_lines = {
            row: self._comment_text(found, self._width()) for row, found in self._placed.items()
        }
        count = len(self.source)
        if not self.wrap and not self._placed:
            self._starts = None
            self._total = count
        else:
            wrap = self.wrap and width > 0
            if not wrap:
                heights = array("l", [1]) * count
            elif isinstance(self.source, SideBySideRows):
                heights = array("l", (self._wrapped_height(row, width) for row in range(count)))
            else:
                heights = self.source.wrapped_heights(width)
            for row, lines in self._comment_lines.items():
                if row < count:  # rows still being read have none yet
                    heights[row] += len(lines)
            starts = array("l", accumulate(heights, initial=0))
            self._starts = starts
            self._total = starts[count]
        self.virtual_size = Size(self._width(), self._total)
        height = max(1, self.scrollable_content_region.height)
        if keep_row is not None:
            self.scroll_to(y=self.display_row(keep_row), animate=False, immediate=True)
        else:
            self.scroll_to(y=min(self.scroll_offset.y, max(0, self._total - height)),
                           animate=False, immediate=True)  # fmt: skip
        self.refresh()

    def _wrapped_height(self, row: int, width: int) -> int:
        source = self.source
        if isinstance(source, SideBySideRows):
            pair = source.pair(row)
            if pair.full is not None:
                return 1
            cells = max(_cells(pair.left), _cells(pair.right))
            half = self._half_text_width()
            return max(1, -(-cells // half)) if half > 0 else 1
        found = source.row(row)
        if found.kind != LINE:
            return 1
        return max(1, -(-_cells(found) // width))

    def display_row(self, row: int) -> int:
        """The first display row of `row`."""
        if self._starts is None:
            return row
        return int(self._starts[min(row, len(self.source))])

    def _locate(self, y: int) -> tuple[int, int]:
        """(row, which of its display rows) at display row `y`."""
        if self._starts is None:
            return y, 0
        row = bisect.bisect_right(self._starts, y, 0, len(self.source)) - 1
        return row, y - int(self._starts[row])

    def _height_of(self, row: int) -> int:
        if self._starts is None:
            return 1
        return int(self._starts[row + 1] - self._starts[row])

    def _row_at_top(self) -> int:
        return self._locate(int(self.scroll_offset.y))[0] if len(self.source) else 0

    def _relayout_after_width_change(self) -> None:
        self._relayout_asked = False
        if self._width() != self._layout_width:
            self._relayout(keep_row=self._row_at_top())

    def on_resize(self, _event: events.Resize) -> None:
        if self._width() != self._layout_width or self._kept_top != self.top_row:
            self._place_kept_top()
        if self._cursor_kept and self.scrollable_content_region.height > 0:
            self._cursor_kept = False
            self._cursor_in_view()

    # -- the gutter ------------------------------------------------------------------------------

    @property
    def number_width(self) -> int:
        return max(1, len(str(self.source.highest)))

    def _width(self) -> int:
        """The columns the text has (the vertical scrollbar takes one)."""
        return max(0, self.scrollable_content_region.width)

    def _gutter_width(self) -> int:
        return 2 * self.number_width + 4  # "old new + "

    def _content_width(self) -> int:
        return max(1, self._width() - self._gutter_width())

    def _half_width(self) -> int:
        return max(1, (self._width() - 1) // 2)

    def _half_text_width(self) -> int:
        return max(1, self._half_width() - (self.number_width + 3))

    # -- moving ---------------------------------------------------------------------------------

    @property
    def top_row(self) -> int:
        return self._row_at_top()

    def _view_height(self) -> int:
        return max(1, self.scrollable_content_region.height)

    def move_cursor(self, row: int, *, to_top: bool = False) -> None:
        count = len(self.source)
        if not count:
            return
        row = max(0, min(row, count - 1))
        was = self.cursor
        self.cursor = row
        first = self.display_row(row)
        last = first + self._height_of(row) - 1
        top = int(self.scroll_offset.y)
        height = self._view_height()
        # Out of view, the row comes in at the top, its start shown: a wrapped line taller than
        # the view once came in showing its end, its number and sign off screen.
        if to_top or first < top or last >= top + height:
            self.scroll_to(y=first, animate=False, immediate=True)
            self.refresh()
        else:  # the view stays: only the lines the cursor left and came to are drawn again
            self._refresh_row(was)
            self._refresh_row(row)

    def _refresh_row(self, row: int) -> None:
        if row < len(self.source):
            self.refresh_lines(self.display_row(row), self._height_of(row))

    def move(self, step: int) -> None:
        self.move_cursor(self.cursor + step)

    def page(self, step: int) -> None:
        height = max(1, self._view_height() - 1)
        row, _ = self._locate(int(self.scroll_offset.y) + step * height)
        self.scroll_to(y=int(self.scroll_offset.y) + step * height, animate=False, immediate=True)
        target = self.cursor + step * height if self._starts is None else row
        self.move_cursor(target)

    def home(self) -> None:
        self.scroll_home(animate=False, immediate=True)
        self.move_cursor(0)

    def end(self) -> None:
        self.scroll_end(animate=False, immediate=True)
        self.move_cursor(len(self.source) - 1)
        self.scroll_end(animate=False, immediate=True)

    def next_file(self) -> bool:
        """Put the next file's header at the top; False when there is none below."""
        for row in self.file_rows:
            if row > self.cursor:
                self.move_cursor(row, to_top=True)
                return True
        return False

    def previous_file(self) -> bool:
        for row in reversed(self.file_rows):
            if row < self.cursor:
                self.move_cursor(row, to_top=True)
                return True
        return False

    def pan(self, step: int) -> bool:
        """Scroll every line's text sideways by its width less 8 columns (kept for context), up
        to where the longest line on screen ends; False at either end."""
        if self.wrap:
            return False
        width = self._half_text_width() if self.side_by_side else self._content_width()
        longest = self._longest_on_screen()
        furthest = max(0, longest - width + 1)
        new = max(0, min(self.pan_x + step * max(4, width - 8), furthest))  # 8 columns overlap
        if new == self.pan_x:
            return False
        self.pan_x = new
        self.refresh()
        return True

    def _longest_on_screen(self) -> int:
        top = int(self.scroll_offset.y)
        longest = 0
        seen: set[int] = set()
        for y in range(top, min(self._total, top + self._view_height())):
            row, _ = self._locate(y)
            if row in seen:
                continue
            seen.add(row)
            if isinstance(self.source, SideBySideRows):
                pair = self.source.pair(row)
                longest = max(longest, _cells(pair.left), _cells(pair.right))
            else:
                found = self.source.row(row)
                if found.kind == LINE:
                    longest = max(longest, _cells(found))
        return longest

    # -- search ---------------------------------------------------------------------------------

    def search(self, query: str) -> int:
        """Find every match of `query`; the cursor goes to the first at or after it. Returns the
        number of matches."""
        self.search_text = query
        self.matches = find_all(self.source, query) if query else []
        self.match_index = None
        self._content.clear()
        if self.matches:
            rows = [match[0] for match in self.matches]
            at = bisect.bisect_left(rows, self.cursor)
            self._go_to_match(at % len(self.matches))
        self.refresh()
        return len(self.matches)

    def clear_search(self) -> None:
        self.search_text = ""
        self.matches = []
        self.match_index = None
        self._content.clear()
        self.refresh()

    def next_match(self, step: int) -> bool:
        if not self.matches:
            return False
        if self.match_index is None:
            rows = [match[0] for match in self.matches]
            at = bisect.bisect_right(rows, self.cursor) if step > 0 else (
                bisect.bisect_left(rows, self.cursor) - 1
            )  # fmt: skip
        else:
            at = self.match_index + step
        self._go_to_match(at % len(self.matches))
        return True

    def _go_to_match(self, index: int) -> None:
        self.match_index = index
        row, column, _side = self.matches[index]
        self._content.clear()
        self.move_cursor(row)
        if not self.wrap:  # bring the match's column on screen
            width = self._half_text_width() if self.side_by_side else self._content_width()
            if column < self.pan_x or column + len(self.search_text) > self.pan_x + width:
                self.pan_x = max(0, column - width // 3)
        self.refresh()

    # -- what the cursor is on ------------------------------------------------------------------

    def cursor_row(self) -> Row | None:
        return self.source.row(self.cursor) if len(self.source) else None

    def cursor_anchor(self) -> tuple[str, int | None, str, str | None] | None:
        """(path, line, side, the line's text) of the cursor's line, for `c` and `o`: a diff line
        names its own number (the new side, or the old for a removed line); a file's header or a
        hunk header names the file (and the hunk's first new line)."""
        row = self.cursor_row()
        if row is None or row.file is None:
            return None
        path = self.source.paths[row.file]
        if row.kind == LINE and row.sign != "\\":
            if row.new_no is not None:
                return path, row.new_no, "new", row.text
            return path, row.old_no, "old", row.text
        if row.kind == HUNK_ROW and row.line is not None:
            next_row = self.unified.line_row(row.line + 1, row.file) if row.line + 1 < len(
                self.unified.index
            ) else None  # fmt: skip
            if next_row is not None and next_row.kind == LINE and next_row.new_no:
                return path, next_row.new_no, "new", None
        return path, None, "new", None

    # -- drawing --------------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._content.clear()

    @property
    def styles_by_kind(self) -> dict[str, Style]:
        if self._styles is None:
            get = self.get_component_rich_style
            self._styles = {
                name: get(f"diff-view--{name}")
                for name in ("gutter", "added", "removed", "context", "hunk", "header", "stat",
                             "listed", "note", "cursor", "match", "match-current", "marker",
                             "comment", "comment-head", "divider", "empty")
            }  # fmt: skip
        return self._styles

    def render_line(self, y: int) -> Strip:
        width = self._width()
        if self.wrap and width != self._layout_width and not self._relayout_asked:
            self._relayout_asked = True  # a scrollbar came or went: wrap to the new width
            self.call_after_refresh(self._relayout_after_width_change)
        dy = int(self.scroll_offset.y) + y
        if dy >= self._total or width <= 0:
            return Strip.blank(width, self.rich_style)
        row, sub = self._locate(dy)
        extra = self._comment_lines.get(row)
        main = self._height_of(row) - (len(extra) if extra else 0)
        if extra and sub >= main:
            strip = self._comment_strip(extra[sub - main], width)
        elif isinstance(self.source, SideBySideRows):
            strip = self._pair_strip(row, sub, width)
        else:
            strip = self._row_strip(self.source.row(row), row, sub, width)
        if row == self.cursor:
            strip = strip.apply_style(self.styles_by_kind["cursor"])
        return strip.adjust_cell_length(width, self.rich_style)

    def _row_strip(self, found: Row, row: int, sub: int, width: int) -> Strip:
        styles = self.styles_by_kind
        base = self.rich_style
        if found.kind == LINE:
            text_width = self._content_width()
            gutter = self._gutter(found, sub, self.number_width, both=True)
            content, cells = self._content_strip(found, row, 0)
            body = self._window(content, cells, sub, text_width)
            return Strip.join([gutter, body])
        if found.kind == BLANK:
            return Strip.blank(width, base)
        style = base + styles.get(found.kind, styles["note"]) if found.kind != ODD else base + (
            styles["gutter"]
        )  # fmt: skip
        text = display(found.text)
        strip = Strip([Segment(text, style)])
        if found.kind == HEADER:
            return strip.adjust_cell_length(width, style)
        return self._clip(strip, cell_len(text), width)

    def _pair_strip(self, row: int, sub: int, width: int) -> Strip:
        assert isinstance(self.source, SideBySideRows)
        pair = self.source.pair(row)
        if pair.full is not None:
            return self._row_strip(pair.full, row, sub, width)
        styles = self.styles_by_kind
        half = self._half_width()
        text_width = self._half_text_width()
        parts: list[Strip] = []
        for side, found in enumerate((pair.left, pair.right)):
            if found is None:
                parts.append(Strip.blank(half, self.rich_style + styles["empty"]))
            else:
                gutter = self._gutter(found, sub, self.number_width, both=False, side=side)
                content, cells = self._content_strip(found, row, side)
                parts.append(
                    Strip.join([gutter, self._window(content, cells, sub, text_width)])
                    .adjust_cell_length(half, self.rich_style)
                )  # fmt: skip
            if side == 0:
                parts.append(Strip([Segment(DIVIDER, self.rich_style + styles["divider"])]))
        return Strip.join(parts)

    def _gutter(self, found: Row, sub: int, width: int, *, both: bool, side: int = 0) -> Strip:
        styles = self.styles_by_kind
        base = self.rich_style
        sign = found.sign if found.sign in "+-" else " "
        style = styles["added" if sign == "+" else "removed" if sign == "-" else "context"]
        if sub > 0:  # a wrapped line's continuation: no numbers
            numbers = " " * ((2 * width + 2) if both else (width + 1))
            return Strip([Segment(numbers, base + styles["gutter"]), Segment("  ", base + style)])
        old = "" if found.old_no is None else str(found.old_no)
        new = "" if found.new_no is None else str(found.new_no)
        if both:
            numbers = f"{old:>{width}} {new:>{width}} "
        else:
            numbers = f"{(old if side == 0 else new):>{width}} "
        return Strip(
            [
                Segment(numbers, base + styles["gutter"]),
                Segment(f"{sign} ", base + style + Style(bold=sign != " ")),
            ]
        )

    def _window(self, content: Strip, cells: int, sub: int, width: int) -> Strip:
        """The part of a line's text on screen: its `sub`-th piece when wrapping, else from the
        horizontal offset, with a marker at an edge the text goes on past."""
        styles = self.styles_by_kind
        if self.wrap:
            return content.crop(sub * width, (sub + 1) * width)
        start = self.pan_x
        piece = content.crop(start, start + width)
        marker = self.rich_style + styles["marker"]
        if cells > start + width and width > 1:
            piece = Strip.join([piece.crop(0, width - 1), Strip([Segment(MORE_RIGHT, marker)])])
        if start > 0 and cells > 0 and width > 1:
            rest = piece.crop(1, width)
            piece = Strip.join([Strip([Segment(MORE_LEFT, marker)]), rest])
        return piece

    def _clip(self, strip: Strip, cells: int, width: int) -> Strip:
        if cells <= width or width < 2:
            return strip
        marker = self.rich_style + self.styles_by_kind["marker"]
        return Strip.join([strip.crop(0, width - 1), Strip([Segment(MORE_RIGHT, marker)])])

    def _content_strip(self, found: Row, row: int, side: int) -> tuple[Strip, int]:
        """A diff line's whole text, styled (syntax by weight and slant, search matches), and
        its width in cells; cached."""
        key = (row, side)
        cached = self._content.get(key)
        if cached is not None:
            return cached
        styles = self.styles_by_kind
        base = self.rich_style
        sign = found.sign
        style = base + styles["added" if sign == "+" else "removed" if sign == "-" else "context"]
        if found.sign == "\\":
            text = Text("\\ no newline at end of file", style=base + styles["note"])
        else:
            text = self._marked(display(found.text), found.file, style)
        if self.search_text:
            self._highlight(text, row, side, found)
        # Rich's Text.render drops the text's own style when it has no spans (a plain line of a
        # .txt file): drawn in the terminal's default colours, not the theme's (found in tmux)
        base_style = text.style if isinstance(text.style, Style) else Style.parse(text.style)
        segments = list(Segment.apply_style(text.render(self.app.console), base_style))
        strip = Strip(segments)
        result = (strip, strip.cell_length)
        self._content[key] = result
        return result

    def _highlight(self, text: Text, row: int, side: int, found: Row) -> None:
        query = self.search_text
        fold = query == query.lower()
        hay = text.plain.lower() if fold else text.plain
        needle = query.lower() if fold else query
        styles = self.styles_by_kind
        current_column = None
        if self.match_index is not None:
            m_row, m_column, m_side = self.matches[self.match_index]
            if m_row == row and m_side == side:
                current_column = len(display(found.text[:m_column]))
        position = hay.find(needle)
        while position >= 0 and needle:
            current = current_column is not None and position == current_column
            text.stylize(
                styles["match-current" if current else "match"], position, position + len(needle)
            )
            position = hay.find(needle, position + 1)

    def _marked(self, plain: str, file: int | None, style: Style) -> Text:
        """The line's text, its syntax marked by weight and slant only (colour is the sign's)."""
        text = Text(style=style, no_wrap=True, end="")
        lexer = self._lexer(file)
        if lexer is None or not plain or len(plain) > 2000:
            text.append(plain)
            return text
        from pygments.token import Comment as CommentToken  # type: ignore[import-untyped]
        from pygments.token import Keyword, String

        for token, value in lexer.get_tokens(plain):
            value = value.replace("\n", "")
            if not value:
                continue
            if token in Keyword:
                text.append(value, _BOLD)
            elif token in CommentToken:
                text.append(value, _DIM_ITALIC)
            elif token in String:
                text.append(value, _ITALIC)
            else:
                text.append(value)
        return text

    def _lexer(self, file: int | None) -> Any:
        """The file's lexer once `warm_lexers` has looked it up; until then None (the line is
        drawn unmarked): the look-up costs 0.1 s the first time, never paid on the event loop."""
        if file is None or file >= len(self.source.paths):
            return None
        if file not in self._lexers:
            known, lexer = looked_up_lexer(self.source.paths[file])
            if not known:
                return None
            self._lexers[file] = lexer
        return self._lexers[file]

    def lexers_warmed(self) -> None:
        """`warm_lexers` has looked up this diff's lexers: the lines drawn unmarked are drawn
        again, marked."""
        self._lexers = {}
        self._content.clear()
        self.refresh()

    def _comment_text(self, comments: Sequence[Comment], width: int) -> list[Text]:
        """A review comment under its line: who and where, then its words, wrapped."""
        styles = self.styles_by_kind
        lines: list[Text] = []
        indent = self._gutter_width() if not self.side_by_side else 2
        room = max(8, width - indent - 3)  # a column spare: the scrollbar may come after
        for comment in comments:
            where = comment.path or ""
            if comment.line is not None:
                where += f":{comment.line}" + (" (old)" if comment.side == "old" else "")
            who = comment.author_agent_id or comment.author_type
            head = Text(" " * indent + "┃ ", style=styles["comment-head"])
            head.append(inert(f"{who} on {where}"), styles["comment-head"])
            lines.append(head)
            for part in inert(comment.body, multiline=True).splitlines() or [""]:
                for piece in Text(part).wrap(self.app.console, room):
                    line = Text(" " * indent + "┃ ", style=styles["comment-head"])
                    line.append_text(Text(piece.plain, style=styles["comment"]))
                    lines.append(line)
        return lines

    def _comment_strip(self, text: Text, width: int) -> Strip:
        segments = list(text.render(self.app.console))
        return Strip(segments).crop(0, width)

    def text_of_screen(self) -> list[str]:
        """The visible rows as plain text (for tests and for reading aloud)."""
        height = self.scrollable_content_region.height
        return [
            "".join(segment.text for segment in self.render_line(y)).rstrip() for y in range(height)
        ]

    def on_click(self, event: events.Click) -> None:
        y = int(self.scroll_offset.y) + event.y
        if 0 <= y < self._total:
            self.move_cursor(self._locate(y)[0])


def _task_of(signature: object) -> object:
    return signature[0] if isinstance(signature, tuple) and signature else signature


def _cells(row: Row | None) -> int:
    """A row's text width in cells (the plain length for the usual ASCII line)."""
    if row is None or row.kind != LINE:
        return 0
    return text_cells(row.text)


_LEXERS: dict[str, Any] = {}


def lexer_for(path: str) -> Any:
    """The Pygments lexer for a file name, or None; cached. The first call imports Pygments'
    lexer (tens of ms): `warm_lexers` does that in the worker that read the diff, off the event
    loop."""
    name = path.rsplit("/", 1)[-1]
    if name not in _LEXERS:
        from pygments.lexers import get_lexer_for_filename  # type: ignore[import-untyped]
        from pygments.util import ClassNotFound  # type: ignore[import-untyped]

        try:
            _LEXERS[name] = get_lexer_for_filename(name, stripnl=False, ensurenl=False)
        except ClassNotFound:
            _LEXERS[name] = None
    return _LEXERS[name]


def looked_up_lexer(path: str) -> tuple[bool, Any]:
    """(whether `lexer_for` has looked the file's name up, its lexer): without the look-up."""
    name = path.rsplit("/", 1)[-1]
    return name in _LEXERS, _LEXERS.get(name)


def warm_lexers(paths: Sequence[str]) -> bool:
    """Look up and set up the lexers of `paths` (the first 200), off the event loop; whether any
    was new (the view then draws its lines again, marked)."""
    new = False
    for path in paths[:200]:
        if looked_up_lexer(path)[0]:
            continue
        new = True
        lexer = lexer_for(path)
        if lexer is not None:
            for _ in lexer.get_tokens("x = 1"):  # the lexer's own first-use set-up
                pass
    return new


__all__ = [
    "HEADER",
    "LINE",
    "LISTED",
    "NOTE",
    "STAT",
    "DiffView",
    "lexer_for",
    "looked_up_lexer",
    "warm_lexers",
]
