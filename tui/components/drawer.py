"""`enter`: everything about one task, in a drawer over the right of the board. It re-reads the
task (`Board.view`) whenever the live feed says something about it changed, comments included, so
it never shows a stale picture; the same task keys as on the board act on this task."""

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from boardlib import Board, BoardError
from boardlib.inert import inert
from boardlib.records import AuditEntry, Event, Task, TaskView
from boardlib.transitions import label

from .. import registry
from ..actions import TaskActions
from ..task_view import render_task_view
from . import tcss

HISTORY_READ = 60  # events read for the history (heartbeats among them are left out)


class TaskDrawer(TaskActions, ModalScreen[None]):
    DEFAULT_CSS = tcss(__file__)
    SCREEN = registry.DRAWER
    BINDINGS = registry.bindings_for(registry.DRAWER)

    def __init__(self, task_id: str) -> None:
        super().__init__()
        self.task_id = task_id
        self.view: TaskView | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="drawer"):
            yield Static(Text(inert(self.task_id)), id="drawer-title")
            with VerticalScroll(id="drawer-body"):
                yield Static("loading…", id="drawer-view")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    def current_task(self) -> Task | None:
        return self.kanban.state.tasks.get(self.task_id) or (self.view.task if self.view else None)

    @work(thread=True, exclusive=True, group="drawer")
    def reload(self) -> None:
        def read(board: Board) -> tuple[TaskView, list[AuditEntry], list[Event]]:
            return (
                board.view(self.task_id),
                board.audit(self.task_id),
                board.recent_events(task_id=self.task_id, limit=HISTORY_READ),
            )

        try:
            view, audit, history = self.kanban.gateway.read(read)
        except BoardError as error:
            self.kanban.call_from_thread(self._failed, error)
            return
        self.kanban.call_from_thread(self._show, view, audit, history)

    def _show(self, view: TaskView, audit: list[AuditEntry], history: list[Event]) -> None:
        self.view = view
        task = view.task
        title = Text.assemble((inert(task.id), "bold"), "  ", inert(label(task.status)))
        self.query_one("#drawer-title", Static).update(title)
        body = render_task_view(view, self.kanban.now_ms(), audit=audit, history=history)
        self.query_one("#drawer-view", Static).update(body)
        self.refresh_bindings()

    def _failed(self, error: BoardError) -> None:
        message = Text(inert(f"Cannot read {self.task_id}: {error.message}"))
        self.query_one("#drawer-view", Static).update(message)

    def action_scroll(self, step: int) -> None:
        self.query_one("#drawer-body", VerticalScroll).scroll_relative(y=step * 2, animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
