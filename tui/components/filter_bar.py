"""`/`: the filter line at the bottom, k9s style. Typing filters as you go; enter keeps the filter
and returns to the board; escape clears it."""

from textual.message import Message
from textual.widgets import Input

from .. import registry
from . import tcss

PLACEHOLDER = "filter: text  team:x  role:x  assignee:x (or @x)  status:x   enter keep · esc clear"


class FilterBar(Input):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.FILTER)

    class Done(Message):
        """The operator left the filter line (the filter itself was already applied)."""

    def __init__(self) -> None:
        super().__init__(placeholder=PLACEHOLDER, id="filter")
        self.can_focus = False  # only while open: a hidden input must not swallow the board's keys

    def open(self, value: str) -> None:
        self.can_focus = True
        self.display = True  # inline, so the focus below lands before the next key arrives
        self.value = value
        self.cursor_position = len(value)
        self.focus()

    def close(self) -> None:
        self.display = False
        self.can_focus = False

    def action_clear_filter(self) -> None:
        self.value = ""
        self.post_message(self.Done())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Done())
