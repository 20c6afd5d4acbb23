"""`/` in the drawer: the search line at its foot. Enter searches the open tab (diff, files,
runs, history) and returns to the drawer, where `n`/`N` go between the matches; escape leaves the
search as it was.

Textual's Input subscribes to its screen's text-selection signal and never unsubscribes: the
signal held every search line (and what it refers to) of every drawer opened until the operator
next selected text with the mouse. `on_unmount` lets go of it."""

from textual.message import Message
from textual.widgets import Input

from .. import registry
from . import tcss


class SearchBar(Input):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.SEARCH)

    class Searched(Message):
        """Search the open tab for `query` ("" ends the search)."""

        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class Closed(Message):
        """The operator left the search line without searching."""

    def __init__(self) -> None:
        super().__init__(placeholder="search this tab   enter find · esc back", id="drawer-search")
        self.can_focus = False  # only while open: a hidden input must not swallow the drawer's keys

    def on_unmount(self) -> None:
        self.screen.text_selection_started_signal.unsubscribe(self)

    def open(self, tab: str, value: str, *, at: int | None = None) -> None:
        """Open on `tab` with `value`: the query searched there, selected (typing replaces it),
        or the words being typed when the drawer changed layout, the cursor `at` where it was."""
        self.placeholder = f"search {tab}   enter find (n/N next/previous) · esc back"
        self.can_focus = True
        self.display = True
        self.value = value
        self.select_on_focus = at is None
        self.cursor_position = len(value) if at is None else at
        self.focus()

    def close(self) -> None:
        self.display = False
        self.can_focus = False
        self.select_on_focus = True

    def action_cancel(self) -> None:
        self.post_message(self.Closed())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Searched(event.value))
