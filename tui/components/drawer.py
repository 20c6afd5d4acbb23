"""The task drawer: everything about one task, and the work itself, in five tabs.

1 Overview, 2 Files, 3 Diff, 4 Runs, 5 History. One widget serves both layouts (beside the board on
wide terminals, full screen on narrow ones); it follows the live board, and reads the worktree
only while Files or Diff is on screen. How: docs/architecture.md#the-task-drawer
"""

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Static, TabbedContent, TabPane, Tabs

from boardlib import BoardError
from boardlib.records import Task

from .. import registry
from ..actions import TaskActions
from ..drawer_data import TaskData, WorkspaceData, fingerprint, read_task, read_workspace
from ..drawer_render import history_lines, plain, runs_table
from . import tcss
from .diff_view import DiffView, Row, build_rows, listed_files, warm_lexers
from .files_pane import FilesPane
from .link_menu import LinkMenu
from .overview_pane import OverviewPane
from .text_pane import TextPane

TABS = ("overview", "files", "diff", "runs", "history")
TITLES = {
    "overview": "1 Overview",
    "files": "2 Files",
    "diff": "3 Diff",
    "runs": "4 Runs",
    "history": "5 History",
}
WORKTREE_TABS = frozenset({"files", "diff"})
POLL_S = 2.0  # how often a visible Files/Diff tab asks whether the worktree changed


class TaskDrawer(TaskActions, Vertical, can_focus=True):
    DEFAULT_CSS = tcss(__file__)
    SCREEN = registry.DRAWER
    BINDINGS: ClassVar = registry.bindings_for(registry.DRAWER)

    def __init__(self, task_id: str, *, beside: bool, tab: str = "overview") -> None:
        super().__init__(id="drawer", classes="-beside" if beside else "-full")
        self.task_id = task_id
        self.beside = beside
        self.initial_tab = tab if tab in TABS else "overview"
        self.data: TaskData | None = None
        self.workspace: WorkspaceData | None = None
        self._workspace_outdated = True  # read the worktree next time Files/Diff is on screen
        self._reading_workspace = False
        self._poll_timer: Timer | None = None

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(plain(self.task_id, "bold"), id="drawer-title")
        with TabbedContent(initial=self.initial_tab, id="drawer-tabs"):
            with TabPane(TITLES["overview"], id="overview"):
                yield OverviewPane(id="overview-pane")
            with TabPane(TITLES["files"], id="files"):
                yield FilesPane(id="files-pane")
            with TabPane(TITLES["diff"], id="diff"):
                yield Static("", id="diff-note")
                yield DiffView(id="diff-view")
            with TabPane(TITLES["runs"], id="runs"):
                yield TextPane(id="runs-pane")
            with TabPane(TITLES["history"], id="history"):
                yield TextPane(id="history-pane")

    def on_mount(self) -> None:
        for tabs in self.query(Tabs):
            tabs.can_focus = False  # the drawer is one focus stop; 1-5 and [ ] pick tabs
        self._poll_timer = self.set_interval(POLL_S, self._poll, pause=True)
        self.reload()
        self._tab_changed()

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one(TabbedContent)

    @property
    def active_tab(self) -> str:
        return self.tabs.active or "overview"

    def current_task(self) -> Task | None:
        return self.kanban.state.tasks.get(self.task_id) or (
            self.data.view.task if self.data is not None else None
        )

    # -- following a task -----------------------------------------------------------------------

    def show_task(self, task_id: str) -> None:
        """Show another task (the board's selection moved, or a link was followed)."""
        if task_id == self.task_id:
            return
        self.task_id = task_id
        self.data = None
        self.workspace = None
        self._workspace_outdated = True
        self.query_one("#drawer-title", Static).update(plain(task_id, "bold"))
        self.query_one(DiffView).show([], signature=("empty", task_id))
        self.reload()
        self._tab_changed()

    @work(thread=True, exclusive=True, group="drawer-task")
    def reload(self) -> None:
        """Read the task again (the live feed said it changed); the worktree too when its tab is
        on screen, since a move (complete, the gate) changes the worktree as well."""
        task_id = self.task_id
        try:
            data = self.kanban.gateway.read(lambda board: read_task(board, task_id))
        except BoardError as error:
            self.kanban.call_from_thread(self._failed, task_id, error)
            return
        self.kanban.call_from_thread(self._show_task_data, data)  # type: ignore[arg-type]

    async def _show_task_data(self, data: TaskData) -> None:
        if data.task_id != self.task_id or not self.is_mounted:
            return  # the drawer moved on while this was read
        self.data = data
        task = data.view.task
        title = plain(task.id, "bold")
        title.append(" ")
        title.append(f" {task.status.replace('_', ' ')} ", style="reverse")
        title.append(" ")
        title.append_text(plain(task.title))
        self.query_one("#drawer-title", Static).update(title)
        now = self.kanban.now_ms()
        await self.query_one(OverviewPane).show(data.view, data.checkout, now, data.audit)
        self.query_one("#runs-pane", TextPane).show(runs_table(data.view.executions, now))
        lines = history_lines(data.events, data.audit, now, comments=data.view.comments)
        history = Text("\n").join(lines) if lines else Text("Nothing recorded yet.", "dim")
        self.query_one("#history-pane", TextPane).show(history)
        # A board change may come with a worktree change (a commit, a pause): on screen, the
        # cheap fingerprint decides whether to read it again; hidden, it is read when shown.
        if self._worktree_visible():
            self._poll()
        else:
            self._workspace_outdated = True
        self.screen.refresh_bindings()

    def _failed(self, task_id: str, error: BoardError) -> None:
        if task_id == self.task_id and self.is_mounted:
            self.query_one("#drawer-title", Static).update(
                plain(f"Cannot read {task_id}: {error.message}", "bold red")
            )

    # -- the worktree ---------------------------------------------------------------------------

    def _worktree_visible(self) -> bool:
        """Files or Diff is the open tab and the drawer is on the current screen."""
        return (
            self.is_mounted
            and self.active_tab in WORKTREE_TABS
            and self.display
            and self.app.screen is self.screen
        )

    def read_workspace(self) -> None:
        if self._reading_workspace:
            self._workspace_outdated = True  # read again when this read is in
            return
        self._reading_workspace = True
        self._workspace_outdated = False
        if self.workspace is None:
            self.query_one("#diff-note", Static).update(Text("reading the worktree…", "dim"))
        self._read_workspace(self.task_id)

    @work(thread=True, exclusive=True, group="drawer-worktree")
    def _read_workspace(self, task_id: str) -> None:
        try:
            data = self.kanban.gateway.read(lambda board: read_workspace(board, task_id))
        except BoardError as error:
            data = WorkspaceData(task_id, "", None, problem=error.message)
        warm_lexers([file.path for file in data.files])  # here, not on the event loop
        self.kanban.call_from_thread(self._show_workspace, data)  # type: ignore[arg-type]

    async def _show_workspace(self, data: WorkspaceData) -> None:
        self._reading_workspace = False
        if data.task_id != self.task_id or not self.is_mounted:
            if self._worktree_visible():
                self.read_workspace()
            return
        self.workspace = data
        await self.query_one(FilesPane).show(data, self.current_task())
        self._show_diff(data)
        if self.data is not None and data.detail is not None:  # the Overview's workspace line
            await self.query_one(OverviewPane).show(
                self.data.view, data.detail.checkout, self.kanban.now_ms(), self.data.audit
            )
        if self._workspace_outdated and self._worktree_visible():
            self.read_workspace()

    def _show_diff(self, data: WorkspaceData) -> None:
        note = self.query_one("#diff-note", Static)
        view = self.query_one(DiffView)
        detail = data.detail
        if detail is None:
            task = self.current_task()
            kind = f" ({task.kind} task: no files)" if task is not None else ""
            message = data.problem or f"No workspace{kind}: there is no diff to show."
            note.update(plain(message, "dim"))
            view.show([], signature=("none", data.task_id))
            return
        parts = []
        if detail.checkout is not None:
            parts.append(detail.checkout.summary)
        parts += detail.warnings
        if data.problem:
            parts.append(data.problem)
        note.update(plain("\n".join(parts), "dim"))
        rows: list[Row] = build_rows(
            data.files,
            listed_files(detail.diff_files),
            truncated=detail.diff_truncated,
            limit_bytes=detail.diff_limit_bytes,
        )
        view.show(
            rows,
            signature=(data.task_id, detail.diff, tuple(detail.diff_files)),
            paths=[file.path for file in data.files],
        )

    def _poll(self) -> None:
        if not self._worktree_visible() or self._reading_workspace:
            return
        self._check_fingerprint(self.task_id, self.workspace.fingerprint if self.workspace else "")

    @work(thread=True, exclusive=True, group="drawer-poll")
    def _check_fingerprint(self, task_id: str, known: str) -> None:
        current = self.kanban.gateway.read(lambda board: fingerprint(board, task_id))
        if current != known:
            self.kanban.call_from_thread(self._worktree_changed, task_id)

    def _worktree_changed(self, task_id: str) -> None:
        if task_id == self.task_id and self._worktree_visible():
            self.read_workspace()

    # -- tabs -----------------------------------------------------------------------------------

    def on_tabbed_content_tab_activated(self, _event: TabbedContent.TabActivated) -> None:
        self._tab_changed()

    def _tab_changed(self) -> None:
        """Poll the worktree only while its tab is on screen; read it when it is outdated."""
        if self._poll_timer is None:
            return
        if self.active_tab in WORKTREE_TABS:
            self._poll_timer.resume()
            if self._workspace_outdated or self.workspace is None:
                self.read_workspace()
        else:
            self._poll_timer.pause()
        self.screen.refresh_bindings()

    def visibility_changed(self) -> None:
        """The drawer's screen came back on top (a dialog closed, the layout changed)."""
        if self._poll_timer is not None and not self._worktree_visible():
            self._poll_timer.pause()
        else:
            self._tab_changed()

    def action_tab(self, name: str) -> None:
        if name in TABS:
            self.tabs.active = name

    def action_cycle(self, step: int) -> None:
        index = TABS.index(self.active_tab) if self.active_tab in TABS else 0
        self.tabs.active = TABS[(index + step) % len(TABS)]

    # -- scrolling ------------------------------------------------------------------------------

    def _scroller(self) -> DiffView | OverviewPane | FilesPane | TextPane:
        tab = self.active_tab
        if tab == "files":
            return self.query_one(FilesPane)
        if tab == "diff":
            return self.query_one(DiffView)
        if tab in ("runs", "history"):
            return self.query_one(f"#{tab}-pane", TextPane)
        return self.query_one(OverviewPane)

    def action_scroll(self, step: int) -> None:
        self._scroller().scroll_relative(y=step, animate=False, immediate=True)

    def action_page(self, step: int) -> None:
        scroller = self._scroller()
        height = max(1, scroller.scrollable_content_region.height - 1)
        scroller.scroll_relative(y=step * height, animate=False, immediate=True)

    def action_top(self) -> None:
        self._scroller().scroll_home(animate=False, immediate=True)

    def action_end(self) -> None:
        self._scroller().scroll_end(animate=False, immediate=True)

    def action_next_file(self) -> None:
        self._file_step(1)

    def action_previous_file(self) -> None:
        self._file_step(-1)

    def _file_step(self, step: int) -> None:
        """`n`/`p`: the next or previous file of the diff (from another tab: to the Diff tab)."""
        if self.active_tab != "diff":
            self.tabs.active = "diff"
            return
        view = self.query_one(DiffView)
        moved = view.next_file() if step > 0 else view.previous_file()
        if not moved and view.file_rows:
            self.kanban.notify("No more files that way.", timeout=2)

    # -- the rest of the drawer's keys ----------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_board":
            return self.beside
        if action == "links":
            return self.data is not None or None
        return super().check_action(action, parameters)

    def action_links(self) -> None:
        if self.data is None:
            return

        def chosen(task_id: str | None) -> None:
            if task_id:
                self.kanban.go_to_linked(task_id)

        self.kanban.push_screen(LinkMenu(self.data.view), chosen)

    def action_focus_board(self) -> None:
        self.screen.set_focus(None)

    def action_close(self) -> None:
        self.kanban.close_drawer()
