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
from ..keymap import key_text
from . import tcss

FILTER_HELP = (
    "Filter syntax: words match id, title and description; team:NAME role:NAME "
    "assignee:NAME (or @NAME) status:NAME narrow further. Cards: P = priority, deps:N = waits on "
    "N unfinished tasks, lease→time (yellow ! = about to run out, red = expired), ♥ last "
    "heartbeat, ✓ pass / ✗ fail / ≈ debt = verdict, $ = cost."
)


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


class HelpScreen(ModalScreen[None]):
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

    def action_scroll(self, step: int) -> None:
        self.query_one("#keys", VerticalScroll).scroll_relative(y=step * 3, animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
