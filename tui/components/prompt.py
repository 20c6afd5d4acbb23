"""Ask for one piece of text: a block reason, a comment. Required text cannot be submitted empty
(the board would refuse it anyway; saying so here saves a round trip)."""

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static, TextArea

from boardlib.inert import inert

from .. import registry
from ..keymap import hint_line, operator_keymap
from . import question_says, tcss, toasts_back, toasts_gone
from .footer import HintFooter


class OneLineInput(Input):
    """A one-line answer. Textual's Input keeps only the first line of a paste, so the rest of a
    pasted reason was lost with no word: the lines are joined with spaces, and it says so."""

    def _on_paste(self, event: events.Paste) -> None:
        lines = [line.strip() for line in event.text.splitlines() if line.strip()]
        if len(lines) > 1:  # else Input's own handler, next in the class chain, takes it
            event.prevent_default()
            event.stop()
            selection = self.selection
            joined = " ".join(lines)
            if selection.is_empty:
                self.insert_text_at_cursor(joined)
            else:
                self.replace(joined, *selection)
            said = f"Pasted {len(lines)} lines as one: this answer is one line."
            question_says(self.screen, said, timeout=4)


class PromptDialog(ModalScreen[str | None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.PROMPT)

    def __init__(
        self,
        title: str,
        label: str | Text,
        *,
        initial: str = "",
        multiline: bool = False,
        required: bool = True,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.label_text = label
        self.initial = initial
        self.multiline = multiline
        self.required = required

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(inert(self.title_text)), id="dialog-title")
            # A Static wraps to the dialog's width (a Label is as wide as its text: it was cut)
            label = self.label_text  # a `Text` is the caller's, made inert line by line
            shown = label if isinstance(label, Text) else Text(inert(label))
            yield Static(shown, id="dialog-label")
            if self.multiline:
                yield TextArea(self.initial, id="answer", soft_wrap=True, show_line_numbers=False)
                yield Static(hint_line(registry.PROMPT, operator_keymap(self.app)), classes="hint")
            else:
                yield OneLineInput(self.initial, id="answer")
                enter = {"prompt.submit": "enter"}  # the one-line Input submits on enter
                hint = hint_line(registry.PROMPT, operator_keymap(self.app), widget_keys=enter)
                yield Static(hint, classes="hint")
            yield Static("", id="error")
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def on_mount(self) -> None:
        toasts_gone(self)
        self.query_one("#answer").focus()

    def on_unmount(self) -> None:
        toasts_back(self)

    def _value(self) -> str:
        widget = self.query_one("#answer")
        return str(widget.text if isinstance(widget, TextArea) else widget.value)  # type: ignore[attr-defined]

    def action_submit(self) -> None:
        value = self._value().strip()
        if self.required and not value:
            self.query_one("#error", Static).update("This cannot be empty.")
            return
        self.dismiss(value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_cancel(self) -> None:
        self.dismiss(None)
