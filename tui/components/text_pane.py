"""A scrolling pane of one renderable (the drawer's Runs and History tabs). Updating it keeps the
scroll position: a live refresh must not throw the reader back to the top."""

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from . import tcss


class TextPane(VerticalScroll, can_focus=False):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, placeholder: str = "loading…", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        yield Static(self.placeholder)

    def show(self, renderable: RenderableType) -> None:
        self.query_one(Static).update(renderable)
