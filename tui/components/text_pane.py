"""A scrolling pane of renderables drawn with the line API (the drawer's Files, Runs and History
tabs): rendered once per width into strips, so its last line is always reachable whatever the
terminal's size, `/` finds text in it (matches highlighted, `n`/`N` between them), and a live
update keeps the scroll position instead of throwing the reader back to the top."""

import bisect
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from . import tcss

# A match: (line, first cell, last cell + 1).
TextMatch = tuple[int, int, int]


class TextPane(ScrollView, can_focus=False):
    DEFAULT_CSS = tcss(__file__)
    COMPONENT_CLASSES = {"text-pane--match", "text-pane--match-current"}

    def __init__(self, placeholder: str = "loading…", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.renderable: RenderableType = Text(placeholder, style="dim")
        self.lines: list[Strip] = []
        self.plain: list[str] = []
        self._width = -1
        self.search_text = ""
        self.matches: list[TextMatch] = []
        self._match_lines: list[int] = []
        self.match_index: int | None = None
        self._kept_top: int | None = None  # carried: the line at the top once lines are drawn

    def carry(self, other: "TextPane") -> None:
        """Keep `other`'s search, its current match and the line at its top (the drawer moved to
        its other layout): applied when this pane draws its lines at its own width."""
        self.search_text, self.match_index = other.search_text, other.match_index
        self._kept_top = int(other.scroll_offset.y)

    def show(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        self._render_lines(force=True)

    def show_parts(self, parts: Sequence[RenderableType]) -> None:
        self.show(Group(*parts))

    def _render_lines(self, *, force: bool = False) -> None:
        width = self.scrollable_content_region.width
        if width <= 0 or (not force and width == self._width):
            return
        self._width = width
        console = self.app.console
        options = console.options.update_width(width)
        rendered = console.render_lines(self.renderable, options, pad=False)
        self.lines = [Strip(line) for line in rendered]
        self.plain = ["".join(segment.text for segment in line) for line in rendered]
        self.virtual_size = Size(width, len(self.lines))
        if self.search_text:
            self._find(keep=True)
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_offset.y) if self._kept_top is None else self._kept_top
        self._kept_top = None
        top = min(top, max(0, len(self.lines) - height))
        self.scroll_to(y=top, animate=False, immediate=True)
        self.refresh()

    def on_resize(self, _event: events.Resize) -> None:
        self._render_lines()

    def on_mount(self) -> None:
        self.call_after_refresh(self._render_lines)

    def text(self) -> str:
        """Everything the pane shows, as plain text (for tests)."""
        self._render_lines()
        return "\n".join(line.rstrip() for line in self.plain)

    # -- search ---------------------------------------------------------------------------------

    def search(self, query: str) -> int:
        self.search_text = query
        self._find(keep=False)
        if self.matches:
            top = int(self.scroll_offset.y)
            after = [i for i, match in enumerate(self.matches) if match[0] >= top]
            self._go_to(after[0] if after else 0)
        self.refresh()
        return len(self.matches)

    def clear_search(self) -> None:
        self.search_text = ""
        self.matches = []
        self._match_lines = []
        self.match_index = None
        self.refresh()

    def _find(self, *, keep: bool) -> None:
        query = self.search_text
        fold = query == query.lower()
        needle = query.lower() if fold else query
        found: list[TextMatch] = []
        for number, line in enumerate(self.plain):
            hay = line.lower() if fold else line
            if len(hay) != len(line):
                hay = line
            position = hay.find(needle) if needle else -1
            while position >= 0:
                start = cell_len(line[:position])
                end = start + cell_len(line[position : position + len(needle)])
                found.append((number, start, end))
                position = hay.find(needle, position + 1)
        self.matches = found
        self._match_lines = [match[0] for match in found]
        if not keep or self.match_index is None or self.match_index >= len(found):
            self.match_index = None

    def next_match(self, step: int) -> bool:
        if not self.matches:
            return False
        if self.match_index is None:
            top = int(self.scroll_offset.y)
            ahead = [i for i, match in enumerate(self.matches) if match[0] >= top]
            index = ahead[0] if step > 0 and ahead else len(self.matches) - 1
        else:
            index = (self.match_index + step) % len(self.matches)
        self._go_to(index)
        return True

    def _go_to(self, index: int) -> None:
        self.match_index = index
        line = self.matches[index][0]
        top = int(self.scroll_offset.y)
        height = max(1, self.scrollable_content_region.height)
        if not top <= line < top + height:
            self.scroll_to(y=max(0, line - height // 3), animate=False, immediate=True)
        self.refresh()

    # -- drawing --------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = int(self.scroll_offset.y) + y
        if index >= len(self.lines):
            return Strip.blank(width, self.rich_style)
        strip = self.lines[index]
        if self.search_text and self.matches:
            strip = self._highlighted(strip, index)
        return strip.adjust_cell_length(width, self.rich_style)

    def _highlighted(self, strip: Strip, index: int) -> Strip:
        lines = self._match_lines
        first = bisect.bisect_left(lines, index)
        last = bisect.bisect_right(lines, index)
        if first == last:
            return strip
        match_style = self.get_component_rich_style("text-pane--match")
        current_style = self.get_component_rich_style("text-pane--match-current")
        pieces: list[Strip] = []
        at = 0
        for number in range(first, last):
            _line, start, end = self.matches[number]
            if start < at:
                continue
            pieces.append(strip.crop(at, start))
            style: Style = current_style if number == self.match_index else match_style
            pieces.append(strip.crop(start, end).apply_style(style))
            at = end
        pieces.append(strip.crop(at))
        return Strip.join(pieces)
