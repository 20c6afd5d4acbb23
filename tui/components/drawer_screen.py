"""The task drawer full screen, for terminals too narrow to show it beside the board (below
`DRAWER_BESIDE_MIN_COLUMNS`). The drawer widget brings its own keys; this screen only holds it and
the footer generated from them."""

from textual.app import ComposeResult
from textual.screen import Screen

from . import tcss
from .drawer import TaskDrawer
from .footer import HintFooter


class DrawerScreen(Screen[None]):
    DEFAULT_CSS = tcss(__file__)
    AUTO_FOCUS = "TaskDrawer"

    def __init__(
        self, task_id: str, *, tab: str = "overview", carried: TaskDrawer | None = None
    ) -> None:
        super().__init__()
        self.drawer = TaskDrawer(task_id, beside=False, tab=tab, carried=carried)

    def compose(self) -> ComposeResult:
        yield self.drawer
        yield HintFooter()

    def on_resize(self) -> None:
        self.app.relayout_drawer()  # type: ignore[attr-defined]

    def on_screen_resume(self) -> None:
        if self.drawer.is_mounted:
            self.drawer.visibility_changed()

    def on_screen_suspend(self) -> None:
        if self.drawer.is_mounted:
            self.drawer.visibility_changed()
