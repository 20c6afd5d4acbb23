"""The task drawer: everything about one task, and the work itself, in five tabs.

1 Overview, 2 Files, 3 Diff, 4 Runs, 5 History. One widget serves both layouts (beside the board on
wide terminals, full screen on narrow ones); it follows the live board, and reads the worktree
only while Files or Diff is on screen. Reviewing in depth: `/` searches the open tab, the diff
wraps (`w`) or pans (`<` `>`), goes side by side (`s`), comments on a line (`c`), and opens the
operator's own editor, pager and shell (`o` `O` `!`) with the app suspended.
How: docs/architecture.md#the-task-drawer and docs/tui.md#reviewing-in-depth
"""

import asyncio
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static, TabbedContent, TabPane, Tabs

from boardlib import BoardError
from boardlib.inert import inert
from boardlib.records import Comment, Task
from boardlib.review import LINE_TEXT_MAX, review_comments
from boardlib.review import anchor as review_anchor
from boardlib.worktrees.results import CHECKED_OUT, CheckoutState

from .. import registry, tools
from ..actions import TaskActions
from ..diff_rows import DiffRows, ListedFile
from ..drawer_data import TaskData, WorkspaceData, fingerprint, read_task, read_workspace
from ..drawer_render import history_block, plain, runs_table
from ..gateway import BOARD_UNREADABLE
from ..registry import SIDE_BY_SIDE_MIN_COLUMNS
from . import tcss
from .checkout_line import CheckoutLine
from .diff_view import DiffView, warm_lexers
from .files_pane import FilesPane
from .landing_line import LandingLine
from .link_menu import LinkMenu
from .overview_pane import OverviewPane
from .prompt import PromptDialog
from .search_bar import SearchBar
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
SEARCHABLE = ("files", "diff", "runs", "history")
POLL_S = 2.0  # how often a visible Files/Diff tab asks whether the worktree changed


class TaskDrawer(TaskActions, Vertical, can_focus=True):
    DEFAULT_CSS = tcss(__file__)
    SCREEN = registry.DRAWER
    BINDINGS: ClassVar = registry.bindings_for(registry.DRAWER)

    class Resized(Message):
        """The drawer beside the board took its width (or a new one): the board fits the rest.
        The board cannot see this itself: its width is its own, so the split does not resize it,
        and a resize it gets for other reasons may come before the drawer has a size."""

    def __init__(
        self,
        task_id: str,
        *,
        beside: bool,
        tab: str = "overview",
        carried: "TaskDrawer | None" = None,
    ) -> None:
        super().__init__(id="drawer", classes="-beside" if beside else "-full")
        self.task_id = task_id
        self.beside = beside
        self.initial_tab = tab if tab in TABS else "overview"
        self.data: TaskData | None = None
        self.workspace: WorkspaceData | None = None
        self._workspace_outdated = True  # read the worktree next time Files/Diff is on screen
        self._reading_workspace = False
        self._fingerprinting = False  # a worktree check under way
        self._poll_again = False
        self._poll_timer: Timer | None = None
        self.searches: dict[str, str] = {}  # tab -> the query searched on it
        self._state_shown: str | None = None  # what the header's right says now
        self.drawn = asyncio.Event()  # mounted, and what it carried is drawn
        self._drawing_carried = False  # drawn as it mounts: not mounted yet, nor taken down
        self._task_read_pending = False  # a read of the task asked for and not shown yet
        self._side_by_side_kept = False  # asked for (`s`), off while the terminal is too narrow
        # The drawer this one replaces (the layout changed): its data is drawn at once, not
        # read again, unless a read of it was still under way.
        self._carried = carried if carried is not None and carried.task_id == task_id else None
        if self._carried is not None:
            self.data, self.workspace = self._carried.data, self._carried.workspace
            self._workspace_outdated = self._carried._workspace_outdated

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="drawer-head"):
            yield Static(plain(self.task_id, "bold"), id="drawer-title")
            yield Static("", id="drawer-state")
        with TabbedContent(initial=self.initial_tab, id="drawer-tabs"):
            with TabPane(TITLES["overview"], id="overview"):
                yield OverviewPane(id="overview-pane")
            with TabPane(TITLES["files"], id="files"):
                yield FilesPane(id="files-pane")
            with TabPane(TITLES["diff"], id="diff"):
                yield CheckoutLine(id="diff-note")
                yield DiffView(id="diff-view")
            with TabPane(TITLES["runs"], id="runs"):
                yield TextPane(id="runs-pane")
            with TabPane(TITLES["history"], id="history"):
                yield TextPane(id="history-pane")
        yield SearchBar()

    def on_focus(self, _event: events.Focus) -> None:
        """A search line still open keeps the keys: the drawer is focused when its layout
        changes (a resize), and its screen gives it the focus back."""
        if self.query(SearchBar) and self.query_one(SearchBar).display:
            self.query_one(SearchBar).focus()

    def on_resize(self, event: events.Resize) -> None:
        if self.beside:
            self.post_message(self.Resized())

    async def on_mount(self) -> None:
        for tabs in self.query(Tabs):
            tabs.can_focus = False  # the drawer is one focus stop; 1-5 and [ ] pick tabs
        self._poll_timer = self.set_interval(POLL_S, self._poll, pause=True)
        view = self.query_one(DiffView)
        view.wrap = bool(self.kanban.view_settings.get("diff_wrap", False))
        carried, self._carried = self._carried, None
        if carried is not None and carried.is_mounted and carried.query(LandingLine):
            self.query_one(LandingLine).carry(carried.query_one(LandingLine))
        if carried is not None and carried.is_mounted and carried.query(SearchBar):
            self._carry_view(carried)
        self.start_landing_preview()
        if carried is None or not await self._draw_carried(carried):
            self.reload()
            self._tab_changed()
        self.drawn.set()

    def _carry_view(self, carried: "TaskDrawer") -> None:
        """Keep what the operator was doing in the drawer this one replaces (a resize lost it):
        each tab's search and place, the diff's cursor and side by side (kept for when the
        terminal is wide enough again), and a search line still being typed."""
        self.searches = dict(carried.searches)
        self.diff.carry(carried.diff)
        for pane in self.query(TextPane):
            pane.carry(carried.query_one(f"#{pane.id}", TextPane))
        self._side_by_side_kept = carried._side_by_side_kept
        self._fit_side_by_side()
        bar = carried.query_one(SearchBar)
        if bar.display:
            value, at = bar.value, bar.cursor_position
            # after the layout's own focus (the drawer's), which would take the keys from it
            self.call_after_refresh(self._reopen_search, value, at)

    def _reopen_search(self, value: str, at: int) -> None:
        if not self._taken_down():
            self.query_one(SearchBar).open(self.active_tab, value, at=at)

    async def _draw_carried(self, carried: "TaskDrawer") -> bool:
        """Draw what the replaced drawer held, before the first frame; False when it held
        nothing to draw yet (then this drawer reads the task as a new one does)."""
        data, workspace, outdated = self.data, self.workspace, self._workspace_outdated
        if data is None or not self.query("#overview-head"):
            return False
        self._drawing_carried = True
        try:
            await self._show_task_data(data)
            if workspace is not None and not self._taken_down():
                await self._show_workspace(workspace)
        finally:
            self._drawing_carried = False
        self._workspace_outdated = outdated or workspace is None
        if carried._task_read_pending:
            self.reload()  # what it showed was being read again: read it here
        self._tab_changed()
        return True

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one(TabbedContent)

    @property
    def active_tab(self) -> str:
        return self.tabs.active or "overview"

    @property
    def diff(self) -> DiffView:
        return self.query_one(DiffView)

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
        self.searches = {}
        self.query_one("#drawer-title", Static).update(plain(task_id, "bold"))
        self.diff.clear_search()
        self.diff.show(DiffRows(None), signature=("empty", task_id))
        self.diff.set_comments([])
        for pane in self.query(TextPane):
            pane.clear_search()
        self.start_landing_preview()
        self.reload()
        self._tab_changed()
        self._update_state()

    def start_landing_preview(self) -> None:
        """The Landing section starts its preview from the board's copy of the task, beside
        the drawer's own read instead of after it."""
        task = self.kanban.state.tasks.get(self.task_id)
        if task is not None and self.query(LandingLine):
            self.query_one(LandingLine).show_task(task)

    def reload(self) -> None:
        """Read the task again (the live feed said it changed); the worktree too when its tab is
        on screen, since a move (complete, the gate) changes the worktree as well."""
        self._task_read_pending = True
        self._reload(self.task_id)

    @work(thread=True, exclusive=True, group="drawer-task")
    def _reload(self, task_id: str) -> None:
        try:
            data = self.kanban.gateway.read(lambda board: read_task(board, task_id))
        except BoardError as error:
            self.kanban.call_from_thread(self._failed, task_id, error)
            return
        self.kanban.call_from_thread(self._show_task_data, data)  # type: ignore[arg-type]

    def _taken_down(self) -> bool:
        """Gone, or going: a drawer being removed (Escape, or a resize moving it to a screen of
        its own) is still mounted a moment after its children have gone."""
        mounted = self.is_mounted or self._drawing_carried
        return not mounted or not self.query("#drawer-title")

    async def _show_task_data(self, data: TaskData) -> None:
        if data.task_id != self.task_id or self._taken_down():
            return  # the drawer moved on while this was read, or is being taken down
        self.data = data
        self._task_read_pending = False
        task = data.view.task
        title = plain(task.id, "bold")
        title.append(" ")
        title.append(f" {task.status.replace('_', ' ')} ", style="reverse")
        title.append(" ")
        title.append_text(plain(task.title))
        self.query_one("#drawer-title", Static).update(title)
        now = self.kanban.now_ms()
        await self.query_one(OverviewPane).show(data.view, data.checkout, now, data.audit)
        if self._taken_down() or self.kanban.closing_down():
            return  # the app closed, or the drawer went, while the Overview was drawn
        self.query_one("#runs-pane", TextPane).show(runs_table(data.view.executions, now))
        history = history_block(data.events, data.audit, now, comments=data.view.comments)
        self.query_one("#history-pane", TextPane).show(history)
        self.diff.set_comments(data.view.comments)
        # A board change may come with a worktree change (a commit, a pause): on screen, the
        # cheap fingerprint decides whether to read it again; hidden, it is read when shown.
        if self._worktree_visible():
            self._poll()
        else:
            self._workspace_outdated = True
        self._update_state()
        self.screen.refresh_bindings()

    def _failed(self, task_id: str, error: BoardError) -> None:
        if task_id == self.task_id and not self._taken_down():
            self._task_read_pending = False
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
            self.query_one(CheckoutLine).show(None, "reading the worktree…")
        self._read_workspace(self.task_id)

    @work(thread=True, exclusive=True, group="drawer-worktree")
    def _read_workspace(self, task_id: str) -> None:
        try:
            data = self.kanban.gateway.read(lambda board: read_workspace(board, task_id))
        except BoardError as error:
            data = WorkspaceData(task_id, "", None, problem=error.message)
        self.kanban.call_from_thread(self._show_workspace, data)  # type: ignore[arg-type]
        # After the first screen, not before it: the first look-up of a file type's lexer costs
        # 0.1 s of CPU (Pygments' file patterns); the lines show unmarked until it is done.
        if warm_lexers(data.paths):
            self.kanban.call_from_thread(self._lexers_warmed, task_id)

    def _lexers_warmed(self, task_id: str) -> None:
        if task_id == self.task_id and not self._taken_down():
            self.diff.lexers_warmed()

    async def _show_workspace(self, data: WorkspaceData) -> None:
        self._reading_workspace = False
        if data.task_id != self.task_id or self._taken_down():
            if not self._taken_down() and self._worktree_visible():
                self.read_workspace()
            return
        self.workspace = data
        await self.query_one(FilesPane).show_workspace(data, self.current_task())
        self._show_diff(data)
        if self.data is not None and data.detail is not None:  # the Overview's workspace line
            await self.query_one(OverviewPane).show(
                self.data.view, data.detail.checkout, self.kanban.now_ms(), self.data.audit
            )
        if self._drawing_carried:
            self._update_state()  # the carried searches stand as they were, current match kept
        else:
            self._rerun_searches()
        if self._workspace_outdated and self._worktree_visible():
            self.read_workspace()
        self.screen.refresh_bindings()

    def _show_diff(self, data: WorkspaceData) -> None:
        line = self.query_one(CheckoutLine)
        view = self.diff
        detail = data.detail
        if detail is None:
            task = self.current_task()
            kind = f" ({task.kind} task: no files)" if task is not None else ""
            line.show(None, data.problem or f"No workspace{kind}: there is no diff to show.")
            view.show(DiffRows(None), signature=("none", data.task_id))
            return
        line.show(detail.checkout)
        notes = [*detail.warnings, *([data.problem] if data.problem else [])]
        listed = [
            ListedFile(item.path, item.insertions, item.deletions, item.old_path, item.size,
                       item.omitted)
            for item in detail.diff_files
        ]  # fmt: skip
        unread = None
        if detail.diff_stat is None:  # no checkout or branch to read it from: say so
            task = self.current_task()
            if task is not None and task.landed_commit:  # where the work is now, and its diff
                short = task.landed_commit[:7]
                unread = f"the work landed as {short}: git show {short} shows it"
            else:
                unread = detail.checkout.summary if detail.checkout else "the work cannot be read"
        rows = DiffRows(
            data.index, listed, truncated=detail.diff_truncated,
            limit_bytes=detail.diff_limit_bytes, notes=notes, unread=unread,
        )  # fmt: skip
        view.show(rows, signature=(data.task_id, detail.diff, tuple(detail.diff_files)))
        self._update_state()

    def _poll(self) -> None:
        if self._fingerprinting:
            self._poll_again = True  # a board change came during the check: check once more
            return
        if not self._worktree_visible() or self._reading_workspace:
            return
        # One check at a time: on a loaded machine a slow git must not pile threads up.
        self._fingerprinting, self._poll_again = True, False
        self._check_fingerprint(self.task_id, self.workspace.fingerprint if self.workspace else "")

    @work(thread=True, exclusive=True, group="drawer-poll")
    def _check_fingerprint(self, task_id: str, known: str) -> None:
        try:
            current = self.kanban.gateway.read(lambda board: fingerprint(board, task_id))
        except BOARD_UNREADABLE:
            current = known  # unreadable now: the next poll asks again
        except Exception as error:  # a defect: said once, not at every poll
            app = self.kanban
            app.report_defect_from_thread("worktree check", error, again=False)
            current = known
        self.kanban.call_from_thread(self._fingerprinted, task_id, current != known)

    def _fingerprinted(self, task_id: str, changed: bool) -> None:
        self._fingerprinting = False
        if changed and task_id == self.task_id and self._worktree_visible():
            self.read_workspace()
        elif self._poll_again and self.is_mounted:
            self._poll()

    def _checkout(self) -> CheckoutState | None:
        workspace = self.workspace
        checkout = workspace.detail.checkout if workspace and workspace.detail else None
        if checkout is None and self.data is not None:
            checkout = self.data.checkout
        return checkout

    def checked_out(self) -> bool:
        """The task's worktree is on disk (what the editor and the shell open)."""
        checkout = self._checkout()
        return checkout is not None and checkout.state == CHECKED_OUT

    def why_not(self, action_id: str) -> str | None:
        """Why the editor or the shell cannot open for this task, in what the drawer knows of
        its checkout (found in tmux: `!` on a landed task said only "does not apply here");
        None: the registry's sentence says it."""
        if action_id == "drawer.pager":  # found in tmux: `O` on a landed task paged one note
            unread = self.diff.unified.unread
            return f"no diff of {self.task_id} to page through: {unread}" if unread else None
        if action_id not in ("drawer.editor", "drawer.shell") or self.checked_out():
            if action_id == "drawer.editor" and self.active_tab == "diff":
                return "put the cursor on a line of a file first"
            return None
        checkout = self._checkout()
        if checkout is None:
            return f"{self.task_id} has no worktree"
        return f"no checkout of {self.task_id} to open: {checkout.summary}"

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
        self._update_state()
        self.screen.refresh_bindings()

    def visibility_changed(self) -> None:
        """The drawer's screen came back on top (a dialog closed, the layout changed)."""
        if not self.query(DiffView):
            return  # opened as its screen came back (Enter in the inbox): mounting does the rest
        if self._poll_timer is not None and not self._worktree_visible():
            self._poll_timer.pause()
        else:
            self._tab_changed()
        self._fit_side_by_side()

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
            return self.diff
        if tab in ("runs", "history"):
            return self.query_one(f"#{tab}-pane", TextPane)
        return self.query_one(OverviewPane)

    def action_scroll(self, step: int) -> None:
        scroller = self._scroller()
        if isinstance(scroller, DiffView):
            scroller.move(step)
        else:
            scroller.scroll_relative(y=step, animate=False, immediate=True)
        self._update_state()

    def action_page(self, step: int) -> None:
        scroller = self._scroller()
        if isinstance(scroller, DiffView):
            scroller.page(step)
        else:
            height = max(1, scroller.scrollable_content_region.height - 1)
            scroller.scroll_relative(y=step * height, animate=False, immediate=True)
        self._update_state()

    def action_top(self) -> None:
        scroller = self._scroller()
        if isinstance(scroller, DiffView):
            scroller.home()
        else:
            scroller.scroll_home(animate=False, immediate=True)

    def action_end(self) -> None:
        scroller = self._scroller()
        if isinstance(scroller, DiffView):
            scroller.end()
        else:
            scroller.scroll_end(animate=False, immediate=True)

    def action_next_file(self) -> None:
        self._file_step(1)

    def action_previous_file(self) -> None:
        self._file_step(-1)

    def _file_step(self, step: int) -> None:
        """`n`/`p`: the next or previous file of the diff (from another tab: to the Diff tab)."""
        if self.active_tab != "diff":
            self.tabs.active = "diff"
            return
        view = self.diff
        moved = view.next_file() if step > 0 else view.previous_file()
        if not moved and view.file_rows:
            self.kanban.notify("No more files that way.", timeout=2)

    def action_pan(self, step: int) -> None:
        """`<` `>`: the diff's text sideways. On other tabs the keys do nothing (they never
        reach the board behind the drawer)."""
        if self.active_tab == "diff" and not self.diff.wrap:
            self.diff.pan(step)
            self._update_state()

    def action_toggle_wrap(self) -> None:
        view = self.diff
        view.set_wrap(not view.wrap)
        self.kanban.remember_setting("diff_wrap", view.wrap)
        self._update_state()

    def _wide_enough(self) -> bool:
        return self.app.size.width >= SIDE_BY_SIDE_MIN_COLUMNS

    def action_toggle_side_by_side(self) -> None:
        if not self._wide_enough():
            self.kanban.notify(
                f"Side by side needs {SIDE_BY_SIDE_MIN_COLUMNS} columns or more.", timeout=3
            )
            return
        self._set_side_by_side(not self.diff.side_by_side)

    def _fit_side_by_side(self) -> None:
        """Side by side as the operator asked for it, where the terminal is wide enough: a
        narrower one turns it off until a wide one turns it back on."""
        wanted = self.diff.side_by_side or self._side_by_side_kept
        on = wanted and self._wide_enough()
        self._side_by_side_kept = wanted and not on
        self._set_side_by_side(on)

    def _set_side_by_side(self, on: bool) -> None:
        """Side by side takes the terminal's whole width (the board returns when it ends)."""
        self.set_class(on and self.beside, "-wide")
        self.diff.set_side_by_side(on)
        self._update_state()

    # -- search ---------------------------------------------------------------------------------

    def _searchable(self) -> DiffView | TextPane | None:
        scroller = self._scroller()
        return scroller if isinstance(scroller, DiffView | TextPane) else None

    def action_search(self) -> None:
        if self.active_tab not in SEARCHABLE:
            self.kanban.notify("Search works in the Files, Diff, Runs and History tabs.", timeout=3)
            return
        self.query_one(SearchBar).open(self.active_tab, self.searches.get(self.active_tab, ""))

    def on_search_bar_searched(self, message: SearchBar.Searched) -> None:
        message.stop()
        self.query_one(SearchBar).close()
        self.focus()
        target = self._searchable()
        if target is None:
            return
        query = message.query
        if not query:
            self.searches.pop(self.active_tab, None)
            target.clear_search()
        else:
            self.searches[self.active_tab] = query
            found = target.search(query)
            if not found:
                self.kanban.notify(f"No match for {query!r} in this tab.", timeout=3)
        self._update_state()
        self.screen.refresh_bindings()

    def on_search_bar_closed(self, message: SearchBar.Closed) -> None:
        message.stop()
        self.query_one(SearchBar).close()
        self.focus()

    def action_next_match(self, step: int) -> None:
        target = self._searchable()
        if target is not None and target.next_match(step):
            self._update_state()

    def _rerun_searches(self) -> None:
        """The worktree changed under a search: find its matches in the new text."""
        query = self.searches.get("files")
        if query:
            self.query_one(FilesPane).search(query)
        self._update_state()

    def _update_state(self) -> None:
        """The right of the header: the search and the diff's view (`match 3/17 · wrap`)."""
        if not self.is_mounted:
            return
        parts: list[str] = []
        target = self._searchable()
        query = self.searches.get(self.active_tab)
        if target is not None and query:
            count = len(target.matches)
            many = "+" if count >= 100_000 else ""
            if target.match_index is not None:
                parts.append(f"match {target.match_index + 1}/{count}{many}")
            else:
                parts.append(f"{count}{many} match{'es' if count != 1 else ''}")
        if self.active_tab == "diff":
            view = self.diff
            if view.side_by_side:
                parts.append("side by side")
            if view.wrap:
                parts.append("wrap")
            elif view.pan_x:
                parts.append(f"→{view.pan_x}")
        shown = " · ".join(parts)
        if shown == self._state_shown:
            return  # each keystroke asks: an update lays the screen out again
        self._state_shown = shown
        state = self.query_one("#drawer-state", Static)
        state.update(Text(shown, style="bold") if parts else "")
        state.display = bool(parts)

    # -- the operator's own tools ---------------------------------------------------------------

    def action_open_editor(self) -> None:
        anchor = self.diff.cursor_anchor()
        if anchor is None:
            self.kanban.notify("Put the cursor on a line of a file first.", timeout=3)
            return
        path, line, side, _text = anchor
        row = self.diff.cursor_row()
        files = self.diff.source.files
        file = files[row.file] if row is not None and row.file is not None else None
        if file is not None and file.change == "deleted":
            self.kanban.notify(f"{path} is deleted in this diff: O shows it in your pager.")
            return
        if side == "old":
            line = None  # a removed line is in no file on disk: open the file at its top
        task_id = self.task_id
        self._resolve_then(
            lambda trees: trees.checkout_file(task_id, path),
            lambda target: self._suspend_and_run(
                tools.editor_command(target, line, os.environ), cwd=target.parent
            ),
            f"open {path}",
        )

    def action_open_shell(self) -> None:
        task_id = self.task_id
        self._resolve_then(
            lambda trees: trees.checkout_path(task_id),
            lambda root: self._suspend_and_run(tools.shell_command(os.environ), cwd=root),
            f"a shell in the worktree of {task_id}",
        )

    def action_open_pager(self) -> None:
        rows = self.diff.unified
        if not len(rows) or rows.unread is not None:
            why = self.why_not("drawer.pager") or "there is no diff to page through"
            self.kanban.notify(why[0].upper() + why[1:] + ".", timeout=4)
            return
        with tools.pager_file(rows, self.task_id) as path:
            self._suspend_and_run(tools.pager_command(path, os.environ), cwd=path.parent)

    @work(thread=True, group="drawer-tool")
    def _resolve_then(
        self, resolve: Callable[..., Path], then: Callable[[Path], None], label: str
    ) -> None:
        """Ask the core where the file or checkout is (it refuses anything outside the state
        folder), then run the tool on the event loop, which suspends the app."""
        from boardlib.worktrees import Worktrees

        try:
            target = self.kanban.gateway.read(lambda board: resolve(Worktrees(board)))
        except BoardError as error:
            self.kanban.call_from_thread(self.kanban.refused, label, error)
            return
        self.kanban.call_from_thread(then, target)

    def _suspend_and_run(self, argv: list[str], *, cwd: Path) -> None:
        """Run `argv` in the terminal with the app suspended; the board comes back where it was
        (and reads the worktree again: the tool may have changed it)."""
        try:
            with self.app.suspend():
                try:
                    subprocess.run(argv, cwd=cwd, check=False)
                except OSError as error:
                    print(f"kanban: cannot run {argv[0]}: {error}")
        except SuspendNotSupported:
            self.kanban.notify("This terminal cannot be handed to another program.", timeout=5)
            return
        self.app.refresh()
        self.kanban.reader.poke()
        if self._worktree_visible():
            self._check_fingerprint(self.task_id, "")

    # -- review comments on lines ---------------------------------------------------------------

    def action_comment_line(self) -> None:
        anchor = self.diff.cursor_anchor()
        if anchor is None:
            return
        path, line, side, line_text = anchor
        # A side belongs to a line: a file's header anchors the comment to the file alone. The
        # check below and the write take the same anchor (the check once refused a header's).
        anchored_side = side if line is not None else None
        app = self.kanban
        task_id = self.task_id
        where = path if line is None else f"{path}:{line}" + (" (old)" if side == "old" else "")
        quoted = (line_text or "")[:LINE_TEXT_MAX]
        try:  # asked before the prompt: a refusal after it lost what was typed (found in tmux)
            review_anchor(path, line, anchored_side)
        except BoardError as refused:
            app.notify(
                f"A comment cannot be anchored to {inert(where)}: {refused.message}. "
                "c comments on the task as a whole (name the file in it).",
                severity="warning",
                timeout=6,
            )
            return

        def written(body: str | None) -> None:
            if not body:
                return
            from boardlib.worktrees import Worktrees

            app.write(
                f"comment on {where}",
                lambda board: Worktrees(board).add_comment(
                    task_id, body, author_agent_id=app.operator, author_type="user",
                    path=path, line=line, side=anchored_side,
                    line_text=quoted if line is not None and line_text is not None else None,
                ),
                success=f"Comment on {where} added to {task_id}",
            )  # fmt: skip

        # the quoted line is agent text, one inert line; the blank line after it is ours
        label = Text((f"{inert(quoted.strip())}\n\n" if quoted.strip() else "") + (
            f"As {inert(app.operator)}. The agent sees it on this "
            f"{'line' if line is not None else 'file'}, in REVIEW.md in its "
            "worktree and in `kanban task workspace resume`."
        ))  # fmt: skip
        app.push_screen(PromptDialog(f"Comment on {where}", label, multiline=True), written)

    def review_round(self) -> list[Comment]:
        """The line comments made since the last rejection: what a reject now sends back."""
        if self.data is None:
            return []
        comments = self.data.view.comments
        rejections = [
            i for i, c in enumerate(comments) if c.path is None and c.body.startswith("rejected:")
        ]
        last = rejections[-1] if rejections else -1
        return review_comments(comments[last + 1 :])

    # -- the rest of the drawer's keys ----------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        tab = self.active_tab if self.is_mounted else "overview"
        if action == "focus_board":
            return self.beside
        if action == "links":
            return (self.data is not None or None) if tab not in ("diff", "files") else False
        if action == "next_match":
            target = self._searchable() if self.is_mounted else None
            return bool(target is not None and target.matches) if self.searches.get(tab) else False
        if action in ("toggle_wrap", "pan", "toggle_side_by_side", "open_pager"):
            if tab != "diff":
                return action == "pan"  # never let < > left right reach the board
            if action == "toggle_side_by_side":
                return self._wide_enough() or None
            if action == "open_pager":  # a note alone is no diff to page through
                rows = self.diff.unified
                return bool(len(rows) and rows.unread is None) or None
        if action == "comment_line" and (tab != "diff" or self.diff.cursor_anchor() is None):
            return False
        if action == "open_editor":
            if tab != "diff":
                return False
            if self.diff.cursor_anchor() is None or not self.checked_out():
                return None
        if action == "open_shell" and not self.checked_out():
            return None
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
        if self.diff.side_by_side:
            self._set_side_by_side(False)
        self.kanban.close_drawer()
