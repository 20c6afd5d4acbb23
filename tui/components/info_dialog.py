"""A result to read and dismiss: what cancel-dependents cancelled, say."""

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from boardlib.inert import inert

from .. import registry
from ..keymap import hint_line, operator_keymap
from . import tcss
from .footer import HintFooter


class InfoDialog(ModalScreen[None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.INFO)

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(inert(self.title_text)), id="dialog-title")
            with VerticalScroll(id="dialog-body"):
                yield Static(self.body)
            yield Static(hint_line(registry.INFO, operator_keymap(self.app)), classes="hint")
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def action_close(self) -> None:
        self.dismiss(None)
