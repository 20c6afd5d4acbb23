"""`M`: the message log. Toasts vanish after a few seconds; every one is kept here, newest
first, with its time and severity, so a refusal read too late can still be read."""

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from .. import registry
from ..cards import clock_text
from ..messages import Said
from . import tcss
from .footer import HintFooter
from .help_screen import ScrolledDialog

SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow"}
SEVERITY_WORD = {"error": "error", "warning": "warning", "information": "info"}
DEFECT_WORD = "defect"  # an error no handler expected: a bug to report, not a refusal
SEVERITY_WIDTH = max(len(word) for word in [*SEVERITY_WORD.values(), DEFECT_WORD]) + 1


def log_table(said: list[Said], now_ms: int) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(style="dim", no_wrap=True)
    table.add_column(no_wrap=True, min_width=SEVERITY_WIDTH)
    table.add_column()
    for item in said:
        words = Text()
        if item.title:
            words.append(item.title, style="bold")
            words.append(" · ")
        words.append(item.message)
        word = DEFECT_WORD if item.defect else SEVERITY_WORD.get(item.severity, item.severity)
        severity = Text(word.ljust(SEVERITY_WIDTH))
        severity.stylize(SEVERITY_STYLE.get(item.severity, ""))
        table.add_row(clock_text(item.at_ms, now_ms), severity, words)
    return table


class MessageLogScreen(ScrolledDialog):
    DEFAULT_CSS = tcss(__file__)
    SCROLLED = "#messages"
    KEYS = registry.LOG
    NAME = "the message log"
    BINDINGS = registry.bindings_for(registry.LOG)

    def __init__(self, said: list[Said], now_ms: int) -> None:
        super().__init__()
        self.said = said
        self.now_ms = now_ms

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"Messages ({len(self.said)}, newest first)", id="dialog-title")
            with VerticalScroll(id="messages"):
                if self.said:
                    yield Static(log_table(self.said, self.now_ms))
                else:
                    yield Static("Nothing said yet.", classes="hint")
            yield Static(self.hint(), id="dialog-hint", classes="hint")
        yield HintFooter()  # its own keys: the screen behind's do not work here
