"""`?`: every key, generated from the keymap (with the operator's remappings applied), so the help
can never disagree with what the keys do."""

from collections.abc import Mapping

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .. import keymap
from . import tcss

FILTER_HELP = (
    "Filter syntax: words match id, title and description; team:NAME role:NAME "
    "assignee:NAME (or @NAME) status:NAME narrow further. Cards: P = priority, deps:N = waits on "
    "N unfinished tasks, lease→time (yellow ! = about to run out, red = expired), ♥ last "
    "heartbeat, ✓ pass / ✗ fail / ≈ debt = verdict, $ = cost."
)


def key_text(binding: Binding, remapped: Mapping[str, str]) -> str:
    keys = remapped.get(binding.id or "", binding.key)
    if binding.key_display and binding.id not in remapped:
        shown = [binding.key_display, *keys.split(",")[1:]]
    else:
        shown = keys.split(",")
    names = {
        "question_mark": "?",
        "slash": "/",
        "full_stop": ".",
        "plus": "+",
        "minus": "-",
        "equals_sign": "=",
        "escape": "esc",
    }
    return " ".join(names.get(key, key) for key in shown)


def help_table(remapped: Mapping[str, str]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="right", style="bold")
    table.add_column()
    for title, bindings in keymap.SECTIONS:
        table.add_row(Text(title, style="bold underline"), "")
        for binding in bindings:
            table.add_row(key_text(binding, remapped), binding.description)
        table.add_row("", "")
    return table


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = [
        Binding("escape,q,question_mark", "close", "Close", id="help.close"),
        Binding("j,down", "scroll(1)", "Down", show=False, id="help.down"),
        Binding("k,up", "scroll(-1)", "Up", show=False, id="help.up"),
    ]

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
