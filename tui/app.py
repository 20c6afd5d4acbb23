"""The kanban terminal board: wires the live feed, the board state, the gateway and the screens.

Components draw, `actions` decides what a key does, `live` reads, `gateway` writes; this module
only connects them and holds the few app-wide facts (paused, highlighted cards, the clock).
"""

import asyncio
import contextlib
import functools
import gc
import getpass
import os
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, ClassVar, TypeVar, cast
from weakref import WeakSet

from rich.terminal_theme import TerminalTheme
from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.filter import LineFilter
from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets._toast import ToastRack
from textual.worker import Worker, WorkerState

from boardlib import Board, BoardError
from boardlib import transitions as t
from boardlib.actors import OPERATOR, is_operator, operator_named
from boardlib.attention import landing_by
from boardlib.clock import Clock, SystemClock
from boardlib.columns import PageRequest
from boardlib.inert import inert
from boardlib.location import BoardLocation, absolute_location, board_location, location_exists
from boardlib.records import Event, InboxItem, Task
from boardlib.transitions import label

from . import keymap, notify, registry, textual_fixes
from .actions import start_abandon, start_landing
from .batch import Outcome
from .board_state import FINISHED, Applied, BoardState, TaskFilter
from .cards import CardNotes, clock_text, next_lease_change, short_clock
from .commands import BoardActionsProvider, TaskJumpProvider
from .components.board_screen import BoardScreen
from .components.column import TaskColumn
from .components.confirm import ConfirmDialog
from .components.drawer import TaskDrawer
from .components.drawer_screen import DrawerScreen
from .components.help_screen import HelpScreen
from .components.inbox_screen import InboxScreen
from .components.land_dialog import LandDialog
from .components.landing_line import LandingLine
from .components.message_log import MessageLogScreen
from .components.prompt import PromptDialog
from .components.stats_screen import StatsScreen
from .gateway import NEWER_SCHEMA, BoardGateway, ChangedMeanwhile
from .legibility import LegibleText, system_named
from .live import (
    BoardHealth,
    BoardReader,
    BoardUpdate,
    ChangesWaiting,
    InboxUpdate,
    SchemaNewer,
    StatsUpdate,
)
from .marks import Marks
from .messages import MessageLog, Said
from .needs_you import NEEDS_YOU_TOAST, ItemKey, NeedsYou
from .prefetch import GC_PAUSE_MAX_S, RECENT_EVENTS, Prefetch
from .settings import load_settings, save_setting

textual_fixes.apply()

T = TypeVar("T")
M = TypeVar("M")


def while_open(handler: Callable[["KanbanApp", M], None]) -> Callable[["KanbanApp", M], None]:
    """A handler of what the reader thread posts (the live feed): a message that arrives while
    the app shuts down finds its screens gone (`board_screen` on an empty stack raised
    IndexError as a test left `run_test` right after a landing), so it is dropped then."""

    @functools.wraps(handler)
    def handle(app: "KanbanApp", message: M) -> None:
        if not app.closing_down():
            handler(app, message)

    return handle


DRAWER_BESIDE_MIN_COLUMNS = 140  # from this width the drawer sits beside the board
MOVE_BOUND_S = 2.0  # a drawer moving layout is drawn in the other one within this, or shown as is
MOVE_SETTLE_S = 0.05  # the board shown again beside the drawer settles its scroll meanwhile
FOLLOW_DELAY_S = 0.12  # the side drawer follows the selection once the cursor rests
DEFAULT_THEME = "textual-dark"
# An announcement (the demo finished) is a toast this long, then a header fact: a toast that
# stayed covered the drawer's diff at 80x24.
ANNOUNCED_TOAST_S = 15
TOAST_GONE_REPAINT_S = 0.1
# Toasts on screen at once: one per this many rows (two at 80x24, four at 160x48), the oldest
# going first. A busy demo at 80x24 piled five over the board; the message log keeps them all.
ROWS_PER_TOAST = 12
QUESTIONS = (ConfirmDialog, PromptDialog)  # the screens that cover the toasts (`cover_toasts`)
FOLLOW_TOAST = "follow"  # the `f` hint: only the newest applies, so it replaces the one before
DEMO_NOTE = (
    "This is a demo: simulated agents work a throwaway board. Nothing here is real work; "
    "every key works as on a real board."
)  # after its timeout, once Textual has removed it


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
    COMMANDS = App.COMMANDS | {TaskJumpProvider, BoardActionsProvider}

    def __init__(
        self,
        db_path: BoardLocation | str,
        *,
        poll_ms: int = 500,
        read_only: bool = False,
        theme: str | None = None,
        clock: Clock | None = None,
        operator: str | None = None,
        user_keymap: dict[str, str] | None = None,
        view_settings: dict[str, Any] | None = None,
        prefetch: Prefetch | None = None,
        on_terminal_gone: Callable[[], object] | None = None,
        open_task: str | None = None,
        announce: Callable[[dict[str, int]], str | None] | None = None,
        demo: bool = False,
        notify_mode: str = notify.OFF,
    ) -> None:
        super().__init__()
        self.demo = demo  # `kanban demo`: the header says so, always
        self.notify_mode = notify_mode  # bell, osc, osc777 or off: a new inbox item, outside
        self.inbox_items: list[InboxItem] = []
        self._inbox_keys: set[tuple[str, str, str]] | None = None  # None until the first read
        self._inbox_said: set[tuple[str, str, str]] = set()  # what the header's "new:" names
        self._budget_blocks: set[str] = set()  # tasks the board blocked over a spent budget
        self._verifying: dict[str, int] = {}  # tasks their gate judges now: since when (ms)
        self._landing: dict[str, tuple[str, int]] = {}  # tasks being landed: by whom, since when
        # A question on its way (the land dialog waits for git's preview): its title, and how
        # many keys no screen had a use for were typed meanwhile (they were meant for it).
        self.question_coming: str | None = None
        self._typed_while_coming = 0
        self.announce = announce  # asked after each update; its first sentence stays on screen
        self._open_on_load = open_task  # `kanban tui --open TASK-ID`
        self.on_terminal_gone = on_terminal_gone
        self.db_path = absolute_location(board_location(db_path))
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
        self.marks = Marks()
        self.said = MessageLog()  # every notification, for the message log (`M`)
        self._defects_said: set[tuple[str, str]] = set()  # what `report_defect` said once
        self.marked: set[str] = set()  # `space`: the cards a batch action applies to
        self._marks_timer: Timer | None = None
        self._refresh_asked = False
        self.schema_newer = False
        self.activity: deque[Event] = deque(maxlen=RECENT_EVENTS)  # the feed, oldest first
        self.left_task: str | None = None  # the selected task that last left its column
        self._last_actors: dict[str, str] = {}  # task -> who acted on it in the last update
        self._acted_here: set[str] = set()  # of those, the tasks this app's own write changed
        self._lease_timer: Timer | None = None
        self._lease_checked_ms = self.clock.now_ms()
        self._pending_select: str | None = None
        self._seeking: str | None = None  # a task asked of the store, not held here (yet)
        self._follow_timer: Timer | None = None
        # a toast's kind (with the toast), while it may be on screen
        self._toast_kinds: dict[str, tuple[str, Notification]] = {}
        self._said_of_kind: dict[str, Said] = {}  # the message log's line of each kind's last toast
        self.needs_you = NeedsYou(self)  # the "Needs you" toast's pacing
        # the "Needs you" toast a question covered: it, its time left, the items it stood for
        self._covered_news: tuple[Notification, float, frozenset[ItemKey]] | None = None
        self._news_back: tuple[Notification, frozenset[ItemKey]] | None = None  # and given back
        self._question_toasts: set[str] = set()  # the toasts the open questions raised
        self._questions_pushed: WeakSet[Screen[Any]] = WeakSet()  # their toasts gone at push
        self._binding_signature: object = None
        self.landing_steps: dict[str, str] = {}  # task -> the last step of its landing under way
        self.user_keymap = keymap.load_user_keymap() if user_keymap is None else user_keymap
        self.set_keymap(self.user_keymap)
        # The operator's view preferences (`tui.settings`); given ones (a test's) are not saved.
        self._saves_settings = view_settings is None
        self._moving_beside = False  # a full-screen drawer is moving beside the board
        self.view_settings = load_settings() if view_settings is None else dict(view_settings)
        self.theme = theme or DEFAULT_THEME
        # The floor under every text: lifted to 4.5:1 as this terminal will show it.
        self._legible_palette: tuple[int, TerminalTheme] | None = None
        self.legible = LegibleText(system_named(self.console.color_system), self._terminal_palette)

    def _terminal_palette(self) -> TerminalTheme:
        """`ansi_theme`, looked up again only after Textual counted a theme or ANSI palette
        change: the line filter asks for it on every line drawn, and the lookup is not free."""
        count = self._css_update_count
        if self._legible_palette is None or self._legible_palette[0] != count:
            self._legible_palette = (count, self.ansi_theme)
        return self._legible_palette[1]

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), self.legible]

    async def on_event(self, event: events.Event) -> None:
        # A question is answered only by keys pressed once it was on screen. Also a key that
        # comes back up (bubbled): `x` `y` in one burst forwards the y to the board before the
        # x opens the question, and the y then bubbles to the app's bindings, now the dialog's.
        screen = self.screen if self.screen_stack else None
        if (
            isinstance(event, events.Key)
            and isinstance(screen, ConfirmDialog)
            and screen.typed_before_shown(event)
        ):
            return
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """A key bound to an action that does not apply here says why, in one line, instead of
        doing nothing in silence (its binding was tried first and refused)."""
        if not self.screen_stack:
            return
        take = getattr(self.screen, "take_early_key", None)
        if callable(take) and take(event):  # a form's keys, typed as it opened
            event.stop()
            return
        active = self.active_bindings.get(event.key)
        if active is None:
            self._key_without_use(event)
            return
        action = registry.BY_ID.get(active.binding.id or "")
        if active.enabled or action is None:
            return
        marked = len(self.marked) if action.id in registry.BATCH else 0
        # The task of whatever bound the key (the drawer's own, once its card left the column),
        # as its check judged it; the board's selection otherwise.
        owner = getattr(active.node, "current_task", None)
        task = owner() if callable(owner) else self.selected_task()
        on_board = self.screen is self.board_screen and active.node is self.board_screen
        column = self.board_screen.board.active_status if on_board and task is None else None
        unfold = None
        if (
            column is not None
            and self.board_screen.board.active.collapsed
            and (self.state.counts.get(column) or action.in_column)
        ):
            unfold = keymap.first_key("board.fold", keymap.operator_keymap(self))
        # The node that bound the key may know why better than the registry's sentence can (the
        # drawer: what its task's checkout is, for the editor and the shell).
        explain = getattr(active.node, "why_not", None)
        said = explain(action.id) if callable(explain) and not self.read_only else None
        why = f"{action.title.lower()}: {said}" if said else registry.unavailable_because(
            action, read_only=self.read_only, task=task, marked=marked, column=column,
            unfold=unfold,
        )  # fmt: skip
        self.notify(why[0].upper() + why[1:] + ".", severity="warning", timeout=4)

    def _key_without_use(self, event: events.Key) -> None:
        """A printable key nothing here is bound to: typed while a question was on its way, it
        was meant for the question (counted and dropped, as the question's own early keys are);
        else a screen that lists its keys (`keys_hint`) says them, in one line."""
        if not (event.is_printable and event.character):
            return
        if self.question_coming is not None:
            self._typed_while_coming += 1
            self.notify(
                f"{self._typed_while_coming} key(s) typed before “{self.question_coming}” was on "
                "screen were ignored.",
                severity="warning",
                timeout=4,
            )
            return
        hint = getattr(self.screen, "keys_hint", None)
        if callable(hint):
            self.notify(f"{event.character}: {hint()}", severity="warning", timeout=4)

    def expect_question(self, title: str) -> None:
        """A question is on its way (read first, then asked): keys typed meanwhile are its."""
        self.question_coming, self._typed_while_coming = title, 0

    def question_came(self) -> int:
        """The question expected is on its way to the screen: how many keys were typed early."""
        typed, self.question_coming, self._typed_while_coming = self._typed_while_coming, None, 0
        return typed

    # -- wiring ---------------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        return BoardScreen()

    def call_from_thread(
        self, callback: Callable[..., T | Awaitable[T]], *args: Any, **kwargs: Any
    ) -> T:
        """A worker thread's result, handed to the app. A worker that finishes while the app
        shuts down (a test leaving `run_test` as a landing or a drawer read ends) would run its
        callback against screens already taken down: `board_screen` on an empty stack raised
        IndexError, a drawer's query NoMatches. Once the app is closing, such a callback is
        dropped (nothing is left to show it on)."""

        def unless_closing() -> T | Awaitable[T]:
            if not self.closing_down():
                return callback(*args, **kwargs)
            return cast(T, None)

        return super().call_from_thread(unless_closing)

    def closing_down(self) -> bool:
        """The app exits or shuts down: its screens are going or gone."""
        return self._exit or not self._running or not self.screen_stack

    @property
    def board_screen(self) -> BoardScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, BoardScreen)
        return screen

    def now_ms(self) -> int:
        return self.clock.now_ms()

    def is_changed(self, task_id: str) -> bool:
        return self.marks.is_changed(task_id)

    def notes_of(self, task_id: str) -> CardNotes:
        notes = self.marks.notes_of(task_id)
        if task_id in self.marked:
            notes = replace(notes, marked=True)
        if task_id in self._budget_blocks:
            notes = replace(notes, budget_block=True)
        if task_id in self._verifying:
            notes = replace(notes, verifying_since=self._verifying[task_id])
        if task_id in self._landing:
            notes = replace(notes, landing=self._landing[task_id])
        return notes

    # -- several cards at once ----------------------------------------------------------------

    def toggle_mark(self, task_id: str) -> None:
        if task_id in self.marked:
            self.marked.discard(task_id)
        else:
            self.marked.add(task_id)
        self.board_screen.board.refresh_changed({task_id})
        keys = " ".join(
            keymap.key_text(registry.BY_ID[name], self.user_keymap)
            for name in ("task.approve", "task.cancel", "task.move", "task.unblock")
        )
        if self.marked:
            self.notify(
                f"{len(self.marked)} marked: {keys} act on all of them · esc clears", timeout=3
            )
        else:
            self.notify("Nothing marked.", timeout=2)

    def clear_marks(self) -> None:
        cleared, self.marked = self.marked, set()
        self.board_screen.board.refresh_changed(cleared)

    def marked_tasks(self) -> list[Task]:
        """The marked tasks as the board shows them now, in column order."""
        state = self.state
        found = [state.tasks[task_id] for task_id in self.marked if task_id in state.tasks]
        order = {status: index for index, status in enumerate(t.STATUSES)}
        return sorted(found, key=lambda task: (order.get(task.status, 99), task.id))

    @work(thread=True, group="writes", exit_on_error=False)
    def write_each(
        self,
        tasks: list[Task],
        work: Callable[[Board, Task], object],
        *,
        past: str,
        label: str,
    ) -> None:
        """One write per task, each checked against its fresh row (nothing is written for one
        that changed meanwhile, and the board's guards still judge each), then one summary."""
        outcome = Outcome()
        for task in tasks:
            try:
                self.gateway.write(partial(_one, work, task), expect=task)
            except ChangedMeanwhile:
                outcome.changed.append(task.id)
            except BoardError as error:
                outcome.refused.append((task.id, error.reason.value))
            else:
                outcome.done.append(task.id)
        self.reader.poke()
        severity: SeverityLevel = "information" if outcome.clean else "warning"
        self.call_from_thread(
            self.notify, outcome.summary(past), title=label, severity=severity, timeout=10
        )
        self.call_from_thread(self.clear_marks)

    def selected_task(self) -> Task | None:
        screen = self.screen
        if isinstance(screen, DrawerScreen):
            return screen.drawer.current_task()
        return self.board_screen.current_task()

    def on_mount(self) -> None:
        self.set_timer(GC_PAUSE_MAX_S, gc.enable)  # `run_tui` paused it for the first frame
        self.screen_change_signal.subscribe(self, self._question_pushed, immediate=True)
        self._open_board()
        if not self.is_headless:
            self._watch_terminal()

    def _open_board(self) -> None:
        """Start the live feed at once on an existing board; a new one is created (off the event
        loop) before the feed starts, so it does not flash "unreadable" while the file appears."""
        if self.read_only or location_exists(self.db_path):
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
        if self.gateway.read_only and not self.read_only:
            because = self.gateway.read_only_because
            if because == NEWER_SCHEMA:
                self.call_from_thread(self.open_read_only_for_newer_schema)
            else:
                self.call_from_thread(self.open_read_only, because)

    @while_open
    def on_schema_newer(self, _message: SchemaNewer) -> None:
        self.open_read_only_for_newer_schema()

    def open_read_only_for_newer_schema(self) -> None:
        """A board written by a newer kanban: say so in the header and stop writing (every write
        would fail), instead of showing "live" and refusing each write with a raw error."""
        if self.schema_newer:
            return
        self.schema_newer = True
        self.open_read_only(NEWER_SCHEMA, schema_newer=True)

    def open_read_only(self, because: str, *, schema_newer: bool = False) -> None:
        """The board cannot be written from here (a newer schema, a file this user may not
        write): the header says read-only, every write is greyed out, one notification says why."""
        if not self.gateway.read_only:
            self.gateway.refuse_writes(because)
        self.read_only = True
        self.board_screen.header.update_facts(read_only=True, schema_newer=schema_newer)
        self.screen.refresh_bindings()
        self.notify(because[0].upper() + because[1:] + ".", severity="warning", timeout=15)

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

    @while_open
    def on_board_update(self, message: BoardUpdate) -> None:
        first = not self.loaded
        read = message.read
        applied = self.state.load(read) if read.full else self.state.apply(read)
        self.reader.set_anchors(self.state.anchors())
        self.loaded = True
        self.marked &= set(self.state.tasks)  # a mark on a task no longer shown goes
        if message.last_change_ms is not None:
            self.last_change_ms = max(self.last_change_ms or 0, message.last_change_ms)
        if message.full and message.events:
            self.activity.clear()
        self.activity.extend(message.events)
        now = time.monotonic()
        last = {e.task_id: e for e in message.events if e.task_id and e.actor}
        self._last_actors = {task_id: event.actor or "" for task_id, event in last.items()}
        self._acted_here = {
            task_id
            for task_id, event in last.items()
            if event.actor == self.operator and self.gateway.made_here(event.seq)
        }
        marked: set[str] = set()
        if message.overridden is not None:
            marked |= self.marks.set_overridden(message.overridden)
        if message.wont_land is not None:
            marked |= self.marks.set_wont_land(message.wont_land)
        marked |= self.marks.note_events(message.events, now_ms=self.now_ms(), now=now)
        if not first and applied.changed:
            self.marks.highlight(applied.changed, now)
        self._schedule_marks()
        with self.batch_update():
            self.board_screen.board.apply(applied)
            self.board_screen.board.refresh_changed(marked - applied.changed)
            self._update_header()
            if message.events and self.board_screen.activity.has_class("-open"):
                self.board_screen.activity.show(self.activity)
        if first:
            self.call_after_refresh(gc.enable)  # the first frame is drawn: collect again
        if message.full and self._refresh_asked:
            self._refresh_asked = False
            state, now_ms = self.state, self.now_ms()
            shown = "" if state.shown == state.total else f", {state.shown} shown"
            at = clock_text(now_ms, now_ms)
            self.notify(f"Re-read {state.total} tasks{shown} at {at}.", timeout=3)
        self._sought(applied)
        if self._pending_select and self.state.row_of(self._pending_select) is not None:
            # selected, the drawer left open: `--open TASK-1` (or a drawer's link) to a task
            # far down done closed its own drawer when the page came (a palette jump closed the
            # drawer as it asked)
            self._select_on_board(self._pending_select)
            self._pending_select = None
        if first and self.demo:
            self.board_screen.header.update_facts(demo=True)
            self.notify(DEMO_NOTE, title="kanban demo", timeout=ANNOUNCED_TOAST_S)
        if self.announce is not None:
            note = self.announce(dict(self.state.counts))
            if note:  # said once as a toast, then kept in the header, where it covers nothing
                self.announce = None
                self.notify(note, title="kanban demo", timeout=ANNOUNCED_TOAST_S)
                self.board_screen.header.update_facts(note=note)
        if first and self._open_on_load:
            task_id, self._open_on_load = self._open_on_load, None
            self._select_on_board(task_id)
            self.open_drawer(task_id)
        touched = set(message.touched) | applied.changed
        for drawer in self.drawers():
            if message.full or drawer.task_id in touched:
                drawer.reload()
        self.selection_changed()
        self._schedule_lease_check()

    @while_open
    def on_stats_update(self, message: StatsUpdate) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, StatsScreen):
                screen.show(message.stats, message.error, message.budgets)

    def show_stats(self) -> None:
        if not isinstance(self.screen, StatsScreen):
            self.push_screen(StatsScreen())

    @while_open
    def on_board_health(self, message: BoardHealth) -> None:
        self.board_screen.header.update_facts(
            unreadable_since=message.unreadable_since, unreadable_reason=message.reason
        )
        if message.unreadable_since is None and self.gateway.awaits_open:
            self._open_writer(start_reader=False)  # refused at start: recovery starts now

    # -- the inbox: counted in the header, new items said once ------------------------------------

    @while_open
    def on_inbox_update(self, message: InboxUpdate) -> None:
        """Keep the list, count it in the header, and say each new item once (a toast, the
        header, and the bell or desktop notification when asked for); the view never moves."""
        from boardlib.attention import BUDGET_EXCEEDED, item_key

        self.inbox_items = message.items
        keys = {item_key(item) for item in message.items}
        blocks = {
            item.task_id
            for item in message.items
            if item.kind == BUDGET_EXCEEDED and item.task_id is not None
        }
        if blocks != self._budget_blocks:  # their cards say the board blocked them
            changed, self._budget_blocks = blocks ^ self._budget_blocks, blocks
            self.board_screen.board.refresh_changed(changed)
        self._verifying_is({gate.task_id: gate.since for gate in message.verifying})
        self._landing_is({run.task_id: (run.lander, run.since) for run in message.landing})
        # What the operator's own write here put in the inbox (approved: now to land; a landing
        # refused, which the refusal's own notification said) is not news to them; the same
        # action from another TUI or the CLI is.
        new = [] if self._inbox_keys is None else [
            item
            for item in message.items
            if item_key(item) not in self._inbox_keys and not self.put_here(item)
        ]  # fmt: skip
        self._inbox_keys = keys
        header = self.board_screen.header
        by_status = Counter(item.status for item in message.items if item.status is not None)
        changes: dict[str, object] = {
            "inbox": len(message.items),
            "inbox_by_status": tuple(sorted(by_status.items())),
            "verifying": len(message.verifying),  # beside the count: "· 1 verifying"
        }
        self.needs_you.inbox_is(keys)
        self._drop_news_back_gone(keys)
        if new:
            newest = new[-1]
            said = notify.sentence(newest.kind, newest.task_id)
            more = "" if len(new) == 1 else f" (+{len(new) - 1})"
            if not isinstance(self.screen, InboxScreen):  # its list shows them: no hint there
                changes["inbox_new"] = f"{said}{more}"
                short = notify.named(newest.task_id)
                changes["inbox_new_short"] = f"{short}{more}" if short else ""
                self._inbox_said = {item_key(item) for item in new}
            self.needs_you.new([(item_key(item), item) for item in new])
            # One bell or desktop notification for what one read found, as the header says it:
            # three items at once were three notifications stacked in the same instant.
            self.tell_terminal(
                notify.sequence(
                    self.notify_mode,
                    newest.kind,
                    newest.task_id,
                    in_tmux=notify.inside_tmux(),
                    more=len(new) - 1,
                )
            )
        elif self._inbox_said and not self._inbox_said & keys:
            # what "new:" names has left the inbox (approved and landed, say): it goes too
            changes["inbox_new"] = changes["inbox_new_short"] = ""
            self._inbox_said = set()
        header.update_facts(**changes)
        for screen in self.screen_stack:
            if isinstance(screen, InboxScreen):
                screen.show_items(message.items, message.now_ms)

    def _verifying_is(self, verifying: dict[str, int]) -> None:
        """The tasks whose gate judges them now: their cards say "verifying since", and an open
        drawer of one that started or stopped reads it again (a gate dead on another machine
        writes nothing the live feed would see)."""
        old, self._verifying = self._verifying, verifying
        self._cards_read_again(old, verifying)

    def _landing_is(self, landing: dict[str, tuple[str, int]]) -> None:
        """The tasks a landing of which is under way: their cards say "landing by X since", and
        an open drawer of one that began or ended reads it again (a refusal, or a lander dead on
        another machine, writes no event the live feed would see)."""
        old, self._landing = self._landing, landing
        self._cards_read_again(old, landing)

    def _cards_read_again(self, old: Mapping[str, object], new: Mapping[str, object]) -> None:
        """The cards of the tasks whose entry changed from `old` to `new` drawn again, and an
        open drawer of one read again."""
        changed = {key for key in old.keys() | new.keys() if old.get(key) != new.get(key)}
        if not changed:
            return
        self.board_screen.board.refresh_changed(changed)
        for drawer in self.drawers():
            if drawer.task_id in changed:
                drawer.reload()

    def put_here(self, item: InboxItem) -> bool:
        """Whether this app's own write put `item` in the inbox. A refused landing writes no
        event of the operator's, only its refusal (when: the item's `since`), so it is told by
        the landing write running here then; a refusal during another write of the task here is
        taken as its own too."""
        from boardlib.attention import LANDING_REFUSED

        if item.task_id is None:
            return False
        if item.kind == LANDING_REFUSED:
            return self.gateway.wrote_on(item.task_id, item.since)
        return item.task_id in self._acted_here

    def tell_terminal(self, text: str) -> None:
        """Write our own escape sequence (`tui.notify`: fixed words and an id) to the terminal."""
        if text and self._driver is not None:
            self._driver.write(text)

    def open_inbox(self) -> None:
        self.board_screen.header.update_facts(inbox_new="", inbox_new_short="")
        self._inbox_said = set()
        self._drop_toasts(NEEDS_YOU_TOAST)  # "i opens the inbox", over its detail line at 80x24
        if not isinstance(self.screen, InboxScreen):
            self.push_screen(InboxScreen())

    def open_from_inbox(self, task_id: str) -> None:
        """Enter on an inbox row: the task's drawer (full screen over the inbox when narrow, so
        Escape comes back to it; beside the board when wide)."""
        if self.size.width >= DRAWER_BESIDE_MIN_COLUMNS:
            while isinstance(self.screen, InboxScreen):
                self.pop_screen()
        self.open_drawer(task_id)

    @while_open
    def on_changes_waiting(self, _message: ChangesWaiting) -> None:
        self.board_screen.header.update_facts(waiting=True)

    def _update_header(self) -> None:
        state = self.state
        self.board_screen.header.update_facts(
            loaded=self.loaded,
            total=state.total,
            shown=state.shown,
            in_progress=state.counts[t.IN_PROGRESS],
            in_review=state.counts[t.IN_REVIEW],
            blocked=state.counts[t.BLOCKED],
            column_counts=tuple(state.counts.items()),  # the columns off screen are counted
            last_change_ms=self.last_change_ms,
            filter=state.filter.describe() + (" +dropped" if state.show_dropped else ""),
            filter_problems=state.filter.problems,
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
        if task is not None and task.id == self.left_task:  # on it already: `f` has no use
            self.drop_follow_note()
        signature = None if task is None else (task.status, task.dropped)
        if signature != self._binding_signature:
            self._binding_signature = signature
            self.screen.refresh_bindings()
        side = self.board_screen.drawer if self.screen_stack else None
        if side is not None and task is not None and task.id != side.task_id:
            if self._follow_timer is not None:
                self._follow_timer.stop()
            self._follow_timer = self.set_timer(FOLLOW_DELAY_S, self._follow_selection)

    def _follow_selection(self) -> None:
        """The drawer beside the board shows the selected card (once the cursor rests, so running
        down a column does not read every task on the way)."""
        self._follow_timer = None
        if not self.screen_stack:
            return
        side = self.board_screen.drawer
        task = self.board_screen.current_task()
        if side is not None and task is not None:
            side.show_task(task.id)

    # -- highlights and lease states: the only repaints that time alone causes -----------------

    def _schedule_marks(self) -> None:
        """One timer, for the next mark to run out (none while nothing is marked)."""
        if self._marks_timer is not None:
            self._marks_timer.stop()
            self._marks_timer = None
        deadline = self.marks.next_deadline()
        if deadline is not None:
            delay = max(deadline - time.monotonic(), 0.05)
            self._marks_timer = self.set_timer(delay, self._expire_marks)

    def _expire_marks(self) -> None:
        self._marks_timer = None
        if not self.screen_stack:  # a timer that fired while the app was closing
            return
        expired = self.marks.expire(time.monotonic() + 0.05)
        with self.batch_update():
            self.board_screen.board.refresh_changed(expired)
        self._schedule_marks()

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
        if not self.screen_stack:
            return
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
        success: str | Callable[[T], str] | None = None,
        expect: Task | None = None,
        fields: tuple[str, ...] = (),
        explain: Callable[[BoardError], str] | None = None,
        serial: bool = True,
    ) -> None:
        """Run one board call off the event loop. A refusal becomes a notification (`explain`
        words it); so does a task that changed under the operator's decision (`expect`, and an
        edit's `fields`: nothing is written then). `serial=False` for a long call that queues on
        its own (a landing). The screen is never changed here: the live feed (poked right away)
        shows what the database says."""
        try:
            result = self.gateway.write(work, expect=expect, fields=fields, serial=serial)
        except BoardError as error:
            self.call_from_thread(self.refused, label, error, explain)
            return
        except ChangedMeanwhile as changed:
            self.call_from_thread(
                self.notify, changed.describe(), title=label, severity="warning", timeout=10
            )
            return
        except Exception as error:  # a defect, but the operator must still see it
            self.report_defect_from_thread(label, error)
            return
        finally:
            self.reader.poke()
        if success:
            said = success(result) if callable(success) else success
            self.call_from_thread(self.notify, said, timeout=3)
        if then is not None:
            self.call_from_thread(then, result)

    @work(thread=True, group="reads", exit_on_error=False)
    def read_then(self, work: Callable[[Board], T], then: Callable[[T | None], object]) -> None:
        """One board read off the event loop, then `then(result)` on it (None if the read
        failed: the caller asks its question without that fact rather than not at all)."""
        try:
            result: T | None = self.gateway.read(work)
        except (BoardError, OSError):
            result = None
        self.call_from_thread(then, result)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
        defect: bool = False,
        kind: str | None = None,
        reword: bool = False,
        question: bool = False,
    ) -> None:
        """Every notification of the app passes here: a refusal's message or a title can quote
        agent text, so both are made inert and shown as plain text, never markup. `reword`: the
        words of the last toast of `kind` change, so its line in the message log is rewritten
        (as the newest) rather than one more added. `question`: an open question raised it, and
        it goes when the question closes (`question_says`)."""
        del markup
        message, title = inert(message, multiline=True), inert(title)
        said = Said(self.now_ms(), severity, title, message, defect=defect)
        self.said.add(said, replacing=self._said_of_kind.get(kind) if reword and kind else None)
        if kind is not None:
            self._said_of_kind[kind] = said
        shown_for = self.NOTIFICATION_TIMEOUT if timeout is None else timeout
        toast = Notification(message, title, severity, shown_for, markup=False)
        if kind is not None:
            self._toast_kinds[toast.identity] = (kind, toast)
        if question:
            self._question_toasts.add(toast.identity)
        self.post_message(Notify(toast))
        self.set_timer(shown_for + TOAST_GONE_REPAINT_S, self._repaint_where_toasts_were)

    def on_notify(self, event: Notify) -> None:
        """Fewer toasts at once: a toast of a kind replaces the one before it, the same words
        shown again replace themselves, and beyond what the screen's height allows the oldest
        go (errors last). Every notification stays in the message log."""
        new = event.notification
        kind = self._kind_of(new)
        older = [shown for shown in self._notifications if shown.identity != new.identity]
        gone = [
            shown
            for shown in older
            if (kind is not None and self._kind_of(shown) == kind)
            or (shown.title, shown.message) == (new.title, new.message)
        ]
        kept = [shown for shown in older if shown not in gone]
        most = max(1, self.size.height // ROWS_PER_TOAST)
        excess = len(kept) + 1 - most
        if excess > 0:
            gone += sorted(kept, key=lambda shown: shown.severity == "error")[:excess]
        for shown in gone:
            self._toast_kinds.pop(shown.identity, None)
            self._unnotify(shown, refresh=False)
        if gone:
            self._refresh_notifications()
        self._toast_kinds = {
            key: (kind, toast)
            for key, (kind, toast) in self._toast_kinds.items()
            if not toast.has_expired
        }

    def _refresh_notifications(self) -> None:
        """Textual shows the live toasts on the top screen; a screen under a dialog kept the ones
        it showed, so with a dialog's toasts at the top of the screen (app.tcss) each toast
        showed twice, over the dialog and at the foot of the board (found in tmux at 80x24: the
        move menu). The screens under the top one show none; each shows the live ones again
        when it is on top again (Textual refreshes them on its resume)."""
        super()._refresh_notifications()
        for screen in self.screen_stack[:-1]:
            for rack in screen.query_children(ToastRack):
                if rack.children:
                    rack.remove_children()

    def _drop_toasts(self, kind: str) -> None:
        """The toasts of `kind` on screen go now (the message log keeps what they said)."""
        showing = [toast for toast in self._notifications if self._kind_of(toast) == kind]
        for toast in showing:
            self._toast_kinds.pop(toast.identity, None)
            self._unnotify(toast, refresh=False)
        if showing:
            self._refresh_notifications()

    def cover_toasts(self) -> None:
        """A question opens: the toasts go (`components.toasts_gone`), but the "Needs you" one
        is kept, with the time it had left and the items it stood for, to show again once the
        question is answered: over a question it hid the words (at 80x24 the title), and gone
        for good it left the header counting news no toast had said long enough to read."""
        news = [toast for toast in self._notifications if self._kind_of(toast) == NEEDS_YOU_TOAST]
        if news:
            self._covered_news = (news[-1], news[-1].time_left, self.needs_you.standing_for())
        self._toast_kinds.clear()
        self._question_toasts.clear()
        self.clear_notifications()

    def question_says(self, message: str, *, severity: SeverityLevel, timeout: float) -> None:
        """A toast of the question on screen (`components.question_says`): it goes with it."""
        self.notify(message, severity=severity, timeout=timeout, question=True)

    def _question_pushed(self, screen: Screen[Any]) -> None:
        """A question is pushed: the toasts go now (`immediate`: in the push itself, not on the
        next idle), so their removal ends before its first frame. Its mount
        (`components.toasts_gone`, still the way for a plain app) was too late: at 160x48 a
        board toast showed, tinted, at the board's foot under the question for ~0.3 s."""
        if not isinstance(screen, QUESTIONS) or screen in self._questions_pushed:
            return  # on top again (a prompt over it closed): its toasts are its own
        self._questions_pushed.add(screen)
        self.cover_toasts()

    def uncover_toasts(self) -> None:
        """A question closed: its own toasts go (a prompt over the land question has the only
        ones on screen: opening it cleared the others), and the covered "Needs you" toast shows
        again for the time it had left, once no dialog is on top, if every item it named still
        waits and no newer one shows."""
        own = [toast for toast in self._notifications if toast.identity in self._question_toasts]
        self._question_toasts.clear()
        for toast in own:
            self._toast_kinds.pop(toast.identity, None)
            self._unnotify(toast, refresh=False)
        if own:
            self._refresh_notifications()
        self.call_after_refresh(self._show_covered_news)

    def _show_covered_news(self) -> None:
        covered = self._covered_news
        if covered is None or not self.screen_stack or isinstance(self.screen, ModalScreen):
            return
        self._covered_news = None
        toast, left, items = covered
        if left <= 0 or not items <= (self._inbox_keys or set()):
            return  # its time had run out, or what it named has left the inbox meanwhile
        if any(self._kind_of(shown) == NEEDS_YOU_TOAST for shown in self._notifications):
            return
        again = Notification(toast.message, toast.title, toast.severity, left, markup=False)
        self._toast_kinds[again.identity] = (NEEDS_YOU_TOAST, again)  # the log has its line
        self._news_back = (again, items)
        self.post_message(Notify(again))
        self.set_timer(left + TOAST_GONE_REPAINT_S, self._repaint_where_toasts_were)

    def _drop_news_back_gone(self, keys: set[ItemKey]) -> None:
        """A given-back toast goes once what it named leaves the inbox: answering the land
        question `y` lands the task its "ready to land" named, and the toast came back for it."""
        back = self._news_back
        if back is None or back[1] <= keys:
            return
        self._news_back = None
        if back[0] in self._notifications:
            self._toast_kinds.pop(back[0].identity, None)
            self._unnotify(back[0])

    def _kind_of(self, toast: Notification) -> str | None:
        kept = self._toast_kinds.get(toast.identity)
        return None if kept is None else kept[0]

    def _repaint_where_toasts_were(self) -> None:
        """Repaint the screen once a toast has gone. Over a still board, the place a toast had
        covered kept showing it after Textual removed it (seen in tmux at 80x24 and 160x48: the
        "demo finished" toast and a "follows it" toast stayed on screen for minutes; a bare
        Textual app did not show it), so a toast's end repaints once, as a board change would."""
        if self.screen_stack:
            self.screen.refresh()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker of the app's that raised what it did not catch: with `exit_on_error` off it
        would end in silence (the rest stop the app, which shows the traceback)."""
        worker = event.worker
        if event.state is WorkerState.ERROR and not worker.exit_on_error:
            error = worker.error
            if isinstance(error, Exception):
                self.report_defect(worker.name or worker.group, error)

    def report_defect(self, label: str, error: Exception, *, again: bool = True) -> None:
        """An exception no handler expected: the operator sees it (the app goes on), and the
        message log keeps it marked as a defect. `again=False` is for a reader that polls: the
        same defect from the same place is said once, not at every poll."""
        message = f"{type(error).__name__}: {error}"
        if not again:
            if (label, message) in self._defects_said:
                return
            self._defects_said.add((label, message))
        self.notify(message, title=label, severity="error", defect=True)

    def report_defect_from_thread(
        self, label: str, error: Exception, *, again: bool = True
    ) -> None:
        """`report_defect` for a worker thread: the one door readers and writers off the event
        loop use, so none of them touches the screen from its own thread."""
        self.call_from_thread(self.report_defect, label, error, again=again)

    def refused(
        self, label: str, error: BoardError, explain: Callable[[BoardError], str] | None = None
    ) -> None:
        self.notify(
            explain(error) if explain is not None else error.message,
            title=f"{label}: refused ({error.reason.value})",
            severity="error",
            timeout=10,
        )

    def on_land_dialog_decided(self, message: LandDialog.Decided) -> None:
        start_landing(self, message.task, message.choice, message.into_label)

    def on_land_dialog_abandoned(self, message: LandDialog.Abandoned) -> None:
        start_abandon(self, message.task, message.reason)

    def landing_step(self, task_id: str, step: str | None) -> None:
        """A landing started from here moved on a step (None: it ended); the drawer says so."""
        if step is None:
            self.landing_steps.pop(task_id, None)
        else:
            self.landing_steps[task_id] = step
        for drawer in self.drawers():
            if drawer.task_id == task_id:
                drawer.query_one(LandingLine).landing_step()

    # -- commands -------------------------------------------------------------------------------

    def set_filter(self, text: str) -> None:
        new = TaskFilter.parse(text)
        if new != self.state.filter:
            self.state.filter = new
            self._ask_search()

    def _ask_search(self) -> None:
        """The store answers a new filter (every column, with the next read); the header says
        the filter at once."""
        self.reader.search(self.state.search)
        self._update_header()

    @while_open
    def on_task_column_rows_wanted(self, message: TaskColumn.RowsWanted) -> None:
        self.reader.ask(message.request)

    def start_filter(self) -> None:
        self.board_screen.action_filter()

    def toggle_dropped(self) -> None:
        self.state.show_dropped = not self.state.show_dropped
        self._ask_search()
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
        self.board_screen.refresh_bindings()  # the footer's `p` says Resume while paused

    def refresh_now(self) -> None:
        self._refresh_asked = True  # the full read, when it arrives, says what it read
        self.reader.poke(full=True)

    def jump_to(self, task_id: str) -> None:
        if isinstance(self.screen, DrawerScreen):
            self.pop_screen()
        self._select_on_board(task_id)

    def _select_on_board(self, task_id: str) -> None:
        """Select a task on the board: at once when its card is held; else the store is asked
        for the page that holds it (finished work far down its column), the filter cleared first
        if it hides the task, and the task selected when that page arrives."""
        task = self.state.tasks.get(task_id)
        if task is not None and self.state.row_of(task_id) is not None:
            self.board_screen.board.select_task(task_id)
            return
        if task is not None and not self.state.visible(task):
            self._unhide(task)
        self._seeking = self._pending_select = task_id
        self.reader.ask(PageRequest(None, around=task_id))

    def _unhide(self, task: Task) -> None:
        if task.dropped:
            self.state.show_dropped = True
        self.state.filter = TaskFilter()
        self._ask_search()

    def _sought(self, applied: Applied) -> None:
        """The page of a task asked for arrived: it is selected (on_board_update), or it is not on
        the board, or the filter hides it (cleared, and asked again)."""
        wanted = self._seeking
        if wanted is None:
            return
        if wanted in applied.missing:
            self._seeking = self._pending_select = None
            self.notify(f"{wanted} is not on this board.", severity="warning")
            return
        target = next((task for task in applied.targets if task.id == wanted), None)
        if target is None:
            return
        self._seeking = None
        if not self.state.visible(target):
            self._unhide(target)
            self._seeking = wanted
            self.reader.ask(PageRequest(None, around=wanted))

    def selection_left(self, task_id: str, to_status: str) -> None:
        """The selected task left the focused column: the cursor stayed; say where it went."""
        self.left_task = task_id
        if self.screen is not self.board_screen:  # the inbox, a dialog: `f` is not theirs
            return
        keys = keymap.key_text(registry.BY_ID["board.follow"], self.user_keymap)
        self.notify(
            f"{task_id} → {label(to_status)}{self._moved_by(task_id)} · {keys} follows it",
            timeout=5,
            kind=FOLLOW_TOAST,
        )

    def acted_here(self, task_id: str) -> bool:
        """Whether this app's own write (`BoardGateway.made_here`) made the task's last change."""
        return task_id in self._acted_here

    def _moved_by(self, task_id: str) -> str:
        """` by agent-ada`, ` (you)`, or nothing: who acted on the task in the last update."""
        actor = self._last_actors.get(task_id)
        if actor is None:
            return ""
        return " (you)" if self.acted_here(task_id) else f" by {actor}"

    def where_it_went(self, task_id: str) -> str:
        """` (→ todo by agent-ada)`, ` (landed as 1a2b3c4 on main (you))`: where a task (or its
        work) is now and who moved it, as far as the board held here knows (nothing when it is
        not held: a finished task further down)."""
        task = self.state.tasks.get(task_id)
        if task is None:
            return ""
        if task_id in self._landing and not task.landed_commit:  # left while a landing runs
            lander, since = self._landing[task_id]
            return f" ({landing_by(inert(lander), short_clock(since, self.now_ms()))})"
        if task.landed_commit:  # it was done already: what moved is its work, onto its base
            onto = f" on {inert(task.landed_into)}" if task.landed_into else ""
            return f" (landed as {inert(task.landed_commit[:7])}{onto}{self._moved_by(task_id)})"
        return f" (→ {label(task.status)}{self._moved_by(task_id)})"

    def follow_left_task(self) -> None:
        if self.left_task is None:
            self.notify("No task left the column yet.", timeout=2)
            return
        self.drop_follow_note()
        self.jump_to(self.left_task)

    def drop_follow_note(self) -> None:
        """The `f` note goes once it no longer applies: the task was followed or selected, or
        another screen covers the board (Textual would show it again on that screen, and on
        the board after it, where it had run its time already)."""
        self._drop_toasts(FOLLOW_TOAST)

    def select_when_shown(self, task_id: str) -> None:
        if self.state.row_of(task_id) is not None:
            self.jump_to(task_id)
        else:
            self._pending_select = task_id

    # -- the task drawer: beside the board when there is room, else full screen ------------------

    def drawers(self) -> list[TaskDrawer]:
        found: list[TaskDrawer] = []
        for screen in self.screen_stack:
            found += list(screen.query(TaskDrawer))
        return found

    def drawer_task_id(self) -> str | None:
        """The task the drawer on top shows (None when no drawer is open)."""
        if not self.screen_stack:  # starting or stopping
            return None
        if isinstance(self.screen, DrawerScreen):
            return self.screen.drawer.task_id
        side = self.board_screen.drawer
        return side.task_id if side is not None else None

    def open_drawer(self, task_id: str, tab: str | None = None) -> None:
        if self.size.width >= DRAWER_BESIDE_MIN_COLUMNS:
            self._select_on_board(task_id)
            self.board_screen.show_drawer(task_id, tab)
        elif isinstance(self.screen, DrawerScreen):
            self.screen.drawer.show_task(task_id)
            if tab:
                self.screen.drawer.action_tab(tab)
        else:
            self.push_screen(DrawerScreen(task_id, tab=tab or "overview"))

    def close_drawer(self) -> None:
        if isinstance(self.screen, DrawerScreen):
            self.pop_screen()
        else:
            self.run_worker(self.board_screen.hide_drawer(), group="drawer-close")

    def go_to_linked(self, task_id: str) -> None:
        """From the drawer to a task it waits on or that waits on it: the board selects it and
        the drawer shows it."""
        self._select_on_board(task_id)
        if isinstance(self.screen, DrawerScreen):
            self.screen.drawer.show_task(task_id)
        elif self.board_screen.drawer is not None:
            self.board_screen.drawer.show_task(task_id)

    def relayout_drawer(self) -> None:
        """Crossing `DRAWER_BESIDE_MIN_COLUMNS` moves an open drawer between its two layouts,
        keeping its task and tab (the screens call this when they are resized)."""
        if not self.screen_stack or not isinstance(self.screen_stack[0], BoardScreen):
            return
        wide = self.size.width >= DRAWER_BESIDE_MIN_COLUMNS
        side = self.board_screen.drawer
        if side is not None and (wide or self._under_dialogs()):
            # under a question the screens cannot change: the drawer covers the board as the
            # full-screen one would (found in tmux: 160 to 80 columns with the land question
            # open left it squeezed beside the board), and moves once the question closes
            side.set_class(not wide, "-covering")
        if not wide and side is not None and self.screen is self.board_screen:
            # the new drawer draws what the old one holds; no frame is sent until it has (the
            # board squeezed beside the side drawer, or alone once that went, showed meanwhile)
            screen = DrawerScreen(side.task_id, tab=side.active_tab, carried=side)
            self._begin_batch()
            self.push_screen(screen)
            self.run_worker(self._move_full_screen(screen), group="drawer-close")
        elif wide and isinstance(self.screen, DrawerScreen) and not self._moving_beside:
            self._moving_beside = True
            self.run_worker(self._move_beside(self.screen), group="drawer-move")

    def _under_dialogs(self) -> bool:
        """The board screen is covered by dialogs only (the board shows around them)."""
        above = self.screen_stack[1:]
        return bool(above) and all(isinstance(screen, ModalScreen) for screen in above)

    async def _move_full_screen(self, screen: DrawerScreen) -> None:
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(screen.drawer.drawn.wait(), MOVE_BOUND_S)
        finally:
            self._end_batch()
            self.screen.refresh()
        await self.board_screen.hide_drawer()

    async def _move_beside(self, screen: DrawerScreen) -> None:
        """The full-screen drawer stays on top until the one beside the board is drawn (with
        its data) under it: one switch, not the board alone, then a drawer reading its task."""
        try:
            old = screen.drawer
            self._select_on_board(old.task_id)
            drawer = self.board_screen.show_drawer(old.task_id, old.active_tab, carried=old)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(drawer.drawn.wait(), MOVE_BOUND_S)
            if self.screen is not screen:
                return
            # Lay the covered board out with the drawer in it, and fit its columns to the room
            # left: its first frame is the final one, not one board too wide, then the right one.
            # Textual 8.2 has no public call for it: `refresh(layout=True)` lays out only the
            # screen on top, after this one's first frame.
            self.board_screen._refresh_layout(self.size)
            self.board_screen.board.fit_room()
            self.pop_screen()
            # its scroll is applied once it is shown (`BoardView.settle`): that frame is not sent
            self.delay_update(MOVE_SETTLE_S)
        finally:
            self._moving_beside = False

    def remember_setting(self, key: str, value: Any) -> None:
        """Keep a view preference for next time (`tui.settings`, beside the keymap)."""
        self.view_settings[key] = value
        if self._saves_settings:
            problem = save_setting(key, value)
            if problem:
                self.notify(f"Not saved for next time: {problem}", severity="warning", timeout=5)

    def action_messages(self) -> None:
        if not isinstance(self.screen, MessageLogScreen):
            self.push_screen(MessageLogScreen(self.said.newest_first(), self.now_ms()))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.user_keymap))

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Use the terminal's colours",
            "theme ansi-dark (for SSH)",
            partial(setattr, self, "theme", "ansi-dark"),
        )
        # Found in tmux: "light" found nothing, the themes being only behind "Theme". Each is
        # found by its name (not listed before a query: the picker lists them).
        for name in sorted(self.available_themes):
            yield SystemCommand(
                f"Theme: {name}", "use this theme", partial(setattr, self, "theme", name), False
            )
        if not isinstance(screen, BoardScreen | DrawerScreen):
            yield SystemCommand("Back to the board", "", self.pop_screen)


def _one(work: Callable[[Board, Task], object], task: Task, board: Board) -> object:
    return work(board, task)


TERMINAL_GONE = 129  # 128 + SIGHUP, as a shell reports a hang-up
TERMINAL_GONE_BACKSTOP_S = 2.0
# The owner's clean-up gets this long: one that hangs (the demo's stop did, on an agent killed
# while asleep on a multiprocessing Event) must not keep the process alive for good.
CLEAN_UP_BOUND_S = 10.0


def _exit_soon(delay: float, clean_up: Callable[[], object] | None) -> None:
    time.sleep(delay)
    if clean_up is not None:
        cleaning = threading.Thread(target=_quietly, args=(clean_up,), daemon=True)
        cleaning.start()
        cleaning.join(CLEAN_UP_BOUND_S)
    os._exit(TERMINAL_GONE)


def _quietly(work: Callable[[], object]) -> None:
    with contextlib.suppress(Exception):
        work()


def run_app(
    db_path: BoardLocation,
    *,
    poll_ms: int = 500,
    read_only: bool = False,
    theme: str | None = None,
    operator: str | None = None,
    prefetch: Prefetch | None = None,
    on_terminal_gone: Callable[[], object] | None = None,
    open_task: str | None = None,
    announce: Callable[[dict[str, int]], str | None] | None = None,
    demo: bool = False,
    notify_mode: str = notify.OFF,
    user_keymap: dict[str, str] | None = None,
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
        open_task=open_task,
        announce=announce,
        demo=demo,
        notify_mode=notify_mode,
        user_keymap=user_keymap,
    )
    app.run()
    if app.return_code == TERMINAL_GONE:
        raise SystemExit(TERMINAL_GONE)  # the terminal went away: unwind, cleaning up on the way
