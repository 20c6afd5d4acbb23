"""The Diff tab's one-line header: where the task's work is checked out, its branch and whether
anything is uncommitted. A long worktree path is shortened from the left
(`…/worktrees/4a82/TASK-1`) to the width it has, never wrapped: the diff below keeps every row
it is given, so its last line stays reachable at any size."""

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from boardlib.inert import inert
from boardlib.worktrees import CheckoutState
from boardlib.worktrees.results import CHECKED_OUT

from . import tcss

ELLIPSIS = "…"


def shorten_left(path: str, width: int) -> str:
    """`path` in at most `width` cells: whole when it fits, else its tail after `…`, cut at a
    `/` when one is in reach so whole folder names show."""
    if cell_len(path) <= width:
        return path
    if width <= 1:
        return ELLIPSIS[:width]
    tail = path
    while tail and cell_len(tail) > width - 1:
        tail = tail[1:]
    cut = tail.find("/")
    if 0 <= cut < len(tail) - 1 and cell_len(tail[cut:]) >= min(width // 2, 8):
        tail = tail[cut:]
    return ELLIPSIS + tail


class CheckoutLine(Widget):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: CheckoutState | None = None
        self.message = ""

    def show(self, state: CheckoutState | None, message: str = "") -> None:
        self.state = state
        self.message = message
        self.refresh()

    def render(self) -> Text:
        width = max(1, self.size.width)
        state = self.state
        if state is None or state.state != CHECKED_OUT or not state.path:
            words = inert(state.summary if state is not None else self.message)
            return Text(words, style="dim", no_wrap=True, overflow="ellipsis")
        after = f" on {state.branch}" if state.branch else ""
        if state.uncommitted is not None:
            after += " (uncommitted changes)" if state.uncommitted else " (all committed)"
        after = inert(after)
        before = "checked out at "
        room = width - cell_len(before) - cell_len(after)
        if room < 12:  # too narrow for the whole sentence: the path comes first
            before, after = "", ""
            room = width
        line = Text(before, style="dim", no_wrap=True, overflow="ellipsis")
        line.append(shorten_left(inert(state.path), room), style="bold")
        line.append(after, style="dim")
        return line
