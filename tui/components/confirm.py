"""A yes/no question that names exactly what will happen (and, for an override, what is being
overridden). `y` confirms, `n`/`esc` backs out; nothing is written before a yes.

The dialog opens with the focus on the safe button, so `enter` (the key a hurried operator
presses to get a dialog out of the way) backs out: only an explicit `y`, or tab then enter, or a
click, says yes."""

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from boardlib.inert import inert

from .. import registry
from . import tcss


class ConfirmDialog(ModalScreen[bool]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.CONFIRM)

    def __init__(
        self, title: str, body: RenderableType, *, confirm: str = "Yes", danger: bool = False
    ) -> None:
        super().__init__(classes="-danger" if danger else "")
        self.title_text = title
        self.body = body
        self.confirm_label = confirm

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(inert(self.title_text)), id="dialog-title")
            yield Static(self.body, id="dialog-body")
            with Horizontal(id="dialog-buttons"):
                yield Button(
                    f"{self.confirm_label} (y)",
                    id="yes",
                    variant="error" if self.has_class("-danger") else "primary",
                )
                yield Button("Back (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
