"""`?`: every key, generated from the action registry (with the operator's remappings applied),
so the help can never disagree with what the keys do."""

from collections.abc import Mapping

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .. import registry
from ..keymap import first_key, key_text, operator_keymap
from . import tcss
from .footer import HintFooter

FILTER_HELP = (
    "Filter syntax: words match id, title and description; team:NAME role:NAME "
    "assignee:NAME (or @NAME) status:NAME narrow further. Cards: P = priority, deps:N = waits on "
    "N tasks not done, lease→time (yellow ! = about to run out, red = expired), ♥ last "
    "heartbeat, ✓ pass / ✗ fail / ≈ debt = verdict, $ = cost."
)


class ScrolledDialog(ModalScreen[None]):
    """A dialog that is one scrolled text (the help, the message log): its keys scroll it by
    lines, by pages and to either end, as they move the board. Its foot says them and how to
    close it, and a key it has no use for says so (the app asks `keys_hint`)."""

    SCROLLED = "#keys"  # the VerticalScroll the keys move
    KEYS = registry.HELP  # the registry screen whose actions are its keys
    NAME = "the help"  # what a key with no use here is told it is in

    def hint(self) -> str:
        """Its keys in one line that fits 80 columns (a hint per action did not: 80 cells),
        generated from the registry with the operator's remappings: `j/k scroll · …`."""
        remapped = operator_keymap(self.app)

        def first(step: str) -> str:
            return first_key(f"{self.KEYS}.{step}", remapped)

        return (
            f"{first('down')}/{first('up')} scroll · {first('page_down')}/{first('page_up')} "
            f"page · {first('top')}/{first('bottom')} top/bottom · {first('close')} close"
        )

    def keys_hint(self) -> str:
        """What a key this dialog has no use for is told (the app says it, `_key_without_use`)."""
        return f"does nothing in {self.NAME}. {self.hint()}"

    def _scrolled(self) -> VerticalScroll:
        return self.query_one(self.SCROLLED, VerticalScroll)

    def action_scroll(self, step: int) -> None:
        self._scrolled().scroll_relative(y=step * 3, animate=False)

    def action_page(self, step: int) -> None:
        scrolled = self._scrolled()
        if step > 0:
            scrolled.scroll_page_down(animate=False)
        else:
            scrolled.scroll_page_up(animate=False)

    def action_edge(self, end: int) -> None:
        scrolled = self._scrolled()
        if end > 0:
            scrolled.scroll_end(animate=False)
        else:
            scrolled.scroll_home(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)


def help_table(remapped: Mapping[str, str]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="right", style="bold")
    table.add_column()
    for title, actions in registry.help_sections():
        table.add_row(Text(title, style="bold underline"), "")
        for action in actions:
            table.add_row(key_text(action, remapped), action.title)
        table.add_row("", "")
    return table


class HelpScreen(ScrolledDialog):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.HELP)

    def __init__(self, remapped: Mapping[str, str]) -> None:
        super().__init__()
        self.remapped = remapped

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Keys", id="dialog-title")
            with VerticalScroll(id="keys"):
                yield Static(help_table(self.remapped))
                yield Static(FILTER_HELP, classes="hint")
            yield Static(self.hint(), id="dialog-hint", classes="hint")
        yield HintFooter()  # its own keys: the screen behind's do not work here
