"""The kanban terminal board: wires the live feed, the board state, the gateway and the screens.

Components draw, `actions` decides what a key does, `live` reads, `gateway` writes; this module
only connects them and holds the few app-wide facts (paused, highlighted cards, the clock).
"""

import asyncio
import contextlib
import getpass
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.screen import Screen
from textual.timer import Timer

from boardlib import Board, BoardError
from boardlib import transitions as t
from boardlib.actors import OPERATOR, is_operator, operator_named
from boardlib.clock import Clock, SystemClock
from boardlib.records import Task

from . import keymap, registry
from .board_state import Applied, BoardState, TaskFilter
from .cards import next_lease_change
from .commands import TaskJumpProvider, board_commands
from .components.board_screen import BoardScreen
from .components.drawer import TaskDrawer
from .components.help_screen import HelpScreen
from .gateway import BoardGateway
from .live import BoardHealth, BoardReader, BoardUpdate, ChangesWaiting
from .prefetch import Prefetch

T = TypeVar("T")

HIGHLIGHT_S = 4.0  # how long a card an agent just changed stays marked
FINISHED = (t.DONE, t.CANCELLED)
DEFAULT_THEME = "textual-dark"


def default_operator() -> str:
    """Who the audit table names for this operator's overrides."""
    explicit = os.environ.get("KANBAN_OPERATOR")
    if explicit:  # always an operator identity: a bare name would be an agent to the board
        return explicit if is_operator(explicit) else operator_named(explicit)
    try:
        return operator_named(getpass.getuser())
    except (KeyError, OSError):
        return OPERATOR


class KanbanApp(App[None]):
    TITLE = "kanban"
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = registry.bindings_for(registry.APP)
    COMMANDS = App.COMMANDS | {TaskJumpProvider}

    def __init__(
        self,
        db_path: Path | str,
        *,
        poll_ms: int = 500,
        read_only: bool = False,
        theme: str | None = None,
        clock: Clock | None = None,
        operator: str | None = None,
        user_keymap: dict[str, str] | None = None,
        prefetch: Prefetch | None = None,
        on_terminal_gone: Callable[[], object] | None = None,
    ) -> None:
        super().__init__()
        self.on_terminal_gone = on_terminal_gone
        self.db_path = Path(db_path).expanduser().absolute()
        self.poll_ms = poll_ms
        self.read_only = read_only
        self.clock = clock or SystemClock()
        self.operator = operator or default_operator()
        self.state = BoardState()
        self.gateway = BoardGateway(
            self.db_path, read_only=read_only, clock=self.clock, operator=self.operator
        )
        self.reader = BoardReader(
            self.db_path,
            poll_ms=poll_ms,
            post=self.post_message,
            clock=self.clock,
            prefetch=prefetch,
        )
        self.loaded = False
        self.paused = False
        self.last_change_ms: int | None = None
        self.changed_until: dict[str, float] = {}
        self._highlight_timer: Timer | None = None
        self._lease_timer: Timer | None = None
        self._lease_checked_ms = self.clock.now_ms()
        self._pending_select: str | None = None
        self._binding_signature: object = None
        self.user_keymap = keymap.load_user_keymap() if user_keymap is None else user_keymap
        self.set_keymap(self.user_keymap)
        self.theme = theme or DEFAULT_THEME

    # -- wiring ---------------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        return BoardScreen()

    @property
    def board_screen(self) -> BoardScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, BoardScreen)
        return screen

    def now_ms(self) -> int:
        return self.clock.now_ms()

    def is_changed(self, task_id: str) -> bool:
        return task_id in self.changed_until

    def selected_task(self) -> Task | None:
        screen = self.screen
        if isinstance(screen, TaskDrawer):
            return screen.current_task()
        return self.board_screen.current_task()

    def on_mount(self) -> None:
        self._open_board()
        if not self.is_headless:
            self._watch_terminal()

    def _open_board(self) -> None:
        """Start the live feed at once on an existing board; a new one is created (off the event
        loop) before the feed starts, so it does not flash "stale" while the file appears."""
        if self.read_only or self.db_path.exists():
            self.reader.start()
            if not self.read_only:
                self._open_writer(start_reader=False)
        else:
            self._open_writer(start_reader=True)

    @work(thread=True, group="open", exit_on_error=False)
    def _open_writer(self, *, start_reader: bool) -> None:
        try:
            self.gateway.open()
        except BoardError as error:
            self.call_from_thread(self.refused, "open the board", error)
        finally:
            if start_reader:
                self.reader.start()

    def on_unmount(self) -> None:
        self.reader.stop()
        self.gateway.close()

    def _watch_terminal(self) -> None:
        """A dropped SSH session sends SIGHUP: leave instead of spinning on a dead terminal."""
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self._terminal_gone)

    def _terminal_gone(self) -> None:
        self.reader.stop(timeout=0.5)
        # Try to leave normally. Restoring a terminal that is gone can block on its writes, so a
        # backstop ends the process soon after, first running the owner's clean-up (the demo
        # stops its agents and removes its folder), which the blocked unwind would never reach.
        threading.Thread(
            target=_exit_soon,
            args=(TERMINAL_GONE_BACKSTOP_S, self.on_terminal_gone),
            daemon=True,
        ).start()
        self.exit(return_code=TERMINAL_GONE)

    # -- the live feed --------------------------------------------------------------------------

    def on_board_update(self, message: BoardUpdate) -> None:
        first = not self.loaded
        if message.full:
            applied = self.state.load(message.tasks)
        else:
            applied = self.state.apply(message.tasks)
        self.loaded = True
        if message.last_change_ms is not None:
            self.last_change_ms = max(self.last_change_ms or 0, message.last_change_ms)
        if not first and applied.changed:
            self._highlight(applied.changed)
        with self.batch_update():
            self.board_screen.board.apply(applied)
            self._update_header()
        if self._pending_select and self._pending_select in self.state.tasks:
            self.jump_to(self._pending_select)
            self._pending_select = None
        touched = set(message.touched) | applied.changed
        for screen in self.screen_stack:
            if isinstance(screen, TaskDrawer) and (message.full or screen.task_id in touched):
                screen.reload()
        self.selection_changed()
        self._schedule_lease_check()

    def on_board_health(self, message: BoardHealth) -> None:
        self.board_screen.header.update_facts(
            stale_since=message.stale_since, stale_reason=message.reason
        )

    def on_changes_waiting(self, _message: ChangesWaiting) -> None:
        self.board_screen.header.update_facts(waiting=True)

    def _update_header(self) -> None:
        state = self.state
        self.board_screen.header.update_facts(
            loaded=self.loaded,
            total=state.total,
            shown=state.shown,
            in_progress=state.counts[t.IN_PROGRESS],
            blocked=state.counts[t.BLOCKED],
            last_change_ms=self.last_change_ms,
            filter=state.filter.describe() + (" +dropped" if state.show_dropped else ""),
            paused=self.paused,
        )

    def _apply_view_change(self, applied: Applied) -> None:
        with self.batch_update():
            self.board_screen.board.apply(applied)
            self._update_header()
        self.selection_changed()

    def selection_changed(self) -> None:
        """Re-evaluate which keys apply, only when the selected task's kind of state changed (so
        moving the cursor does not repaint the footer)."""
        task = self.selected_task()
        signature = None if task is None else (task.status, task.dropped)
        if signature != self._binding_signature:
            self._binding_signature = signature
            self.screen.refresh_bindings()

    # -- highlights and lease states: the only repaints that time alone causes -----------------

    def _highlight(self, task_ids: set[str]) -> None:
        until = time.monotonic() + HIGHLIGHT_S
        for task_id in task_ids:
            self.changed_until[task_id] = until
        if self._highlight_timer is None:
            self._highlight_timer = self.set_timer(HIGHLIGHT_S, self._expire_highlights)

    def _expire_highlights(self) -> None:
        self._highlight_timer = None
        now = time.monotonic()
        expired = {task_id for task_id, until in self.changed_until.items() if until <= now + 0.05}
        for task_id in expired:
            del self.changed_until[task_id]
        with self.batch_update():
            self.board_screen.board.refresh_changed(expired)
        if self.changed_until:
            delay = max(min(self.changed_until.values()) - now, 0.05)
            self._highlight_timer = self.set_timer(delay, self._expire_highlights)

    def _schedule_lease_check(self) -> None:
        if self._lease_timer is not None:
            self._lease_timer.stop()
            self._lease_timer = None
        now = self.now_ms()
        upcoming = [
            moment
            for task_id in self.state.columns[t.IN_PROGRESS]
            if (moment := next_lease_change(self.state.tasks[task_id], now)) is not None
        ]
        if upcoming:
            delay = max((min(upcoming) - now) / 1000, 0.05) + 0.02
            self._lease_timer = self.set_timer(delay, self._lease_tick)

    def _lease_tick(self) -> None:
        self._lease_timer = None
        now = self.now_ms()
        self.board_screen.board.columns[t.IN_PROGRESS].refresh_lease_cards(
            now, self._lease_checked_ms
        )
        self._lease_checked_ms = now
        self._schedule_lease_check()

    # -- writes ---------------------------------------------------------------------------------

    @work(thread=True, group="writes", exit_on_error=False)
    def write(
        self,
        label: str,
        work: Callable[[Board], T],
        *,
        then: Callable[[T], object] | None = None,
        success: str | None = None,
    ) -> None:
        """Run one board call off the event loop. A refusal becomes a notification; the screen is
        never changed here: the live feed (poked right away) shows what the database says."""
        try:
            result = self.gateway.write(work)
        except BoardError as error:
            self.call_from_thread(self.refused, label, error)
            return
        except Exception as error:  # a defect, but the operator must still see it
            self.call_from_thread(
                self.notify, f"{type(error).__name__}: {error}", title=label, severity="error"
            )
            return
        finally:
            self.reader.poke()
        if success:
            self.call_from_thread(self.notify, success, timeout=3)
        if then is not None:
            self.call_from_thread(then, result)

    def refused(self, label: str, error: BoardError) -> None:
        self.notify(
            error.message,
            title=f"{label}: refused ({error.reason.value})",
            severity="error",
            timeout=10,
        )

    # -- commands -------------------------------------------------------------------------------

    def set_filter(self, text: str) -> None:
        new = TaskFilter.parse(text)
        if new != self.state.filter:
            self.state.filter = new
            self._apply_view_change(self.state.refilter())

    def start_filter(self) -> None:
        self.board_screen.action_filter()

    def toggle_dropped(self) -> None:
        self.state.show_dropped = not self.state.show_dropped
        self._apply_view_change(self.state.refilter())
        shown = "shown" if self.state.show_dropped else "hidden"
        self.notify(f"Dropped tasks {shown}.", timeout=2)

    def toggle_finished(self) -> None:
        board = self.board_screen.board
        fold = not any(board.columns[status].collapsed for status in FINISHED)
        board.set_collapsed(FINISHED, fold)

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        self.reader.pause(self.paused)
        self.board_screen.header.update_facts(paused=self.paused, waiting=False)

    def refresh_now(self) -> None:
        self.reader.poke(full=True)

    def jump_to(self, task_id: str) -> None:
        task = self.state.tasks.get(task_id)
        if task is None:
            self.notify(f"{task_id} is not on this board.", severity="warning")
            return
        if isinstance(self.screen, TaskDrawer):
            self.screen.dismiss(None)
        if not self.state.visible(task):
            if task.dropped:
                self.state.show_dropped = True
            self.state.filter = TaskFilter()
            self._apply_view_change(self.state.refilter())
        self.board_screen.board.select_task(task_id)

    def select_when_shown(self, task_id: str) -> None:
        if task_id in self.state.tasks:
            self.jump_to(task_id)
        else:
            self._pending_select = task_id

    def open_drawer(self, task_id: str) -> None:
        self.push_screen(TaskDrawer(task_id))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.user_keymap))

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        yield from super().get_system_commands(screen)
        if isinstance(screen, BoardScreen | TaskDrawer):
            yield from board_commands(self, screen)
        else:
            yield SystemCommand("Back to the board", "", self.pop_screen)


TERMINAL_GONE = 129  # 128 + SIGHUP, as a shell reports a hang-up
TERMINAL_GONE_BACKSTOP_S = 2.0


def _exit_soon(delay: float, clean_up: Callable[[], object] | None) -> None:
    time.sleep(delay)
    if clean_up is not None:
        with contextlib.suppress(Exception):
            clean_up()
    os._exit(TERMINAL_GONE)


def run_app(
    db_path: Path,
    *,
    poll_ms: int = 500,
    read_only: bool = False,
    theme: str | None = None,
    operator: str | None = None,
    prefetch: Prefetch | None = None,
    on_terminal_gone: Callable[[], object] | None = None,
) -> None:
    """Run the app (the CLI goes through `tui.launch.run_tui`, which prefetches first)."""
    app = KanbanApp(
        db_path,
        poll_ms=poll_ms,
        read_only=read_only,
        theme=theme,
        operator=operator,
        prefetch=prefetch,
        on_terminal_gone=on_terminal_gone,
    )
    app.run()
    if app.return_code == TERMINAL_GONE:
        raise SystemExit(TERMINAL_GONE)  # the terminal went away: unwind, cleaning up on the way
