"""The "Needs you" toast: one at a time, the newest new inbox item and how many more still wait.

A busy demo at 80x24 filled both toast rows with them, over a dialog's question; then each new item
replacing the toast anew kept it on screen for good (over the drawer's foot and the inbox's detail
line), counting "+38 more" with 23 in the inbox. So a newer item while it shows changes its words,
not its end (and its one line in the message log, not a line per item); the next toast comes
NEEDS_YOU_EVERY_S after it began, saying what came meanwhile and still waits. None over a dialog:
the header's count and "new:" line wait for the operator instead; one on screen when a question
opens comes back when it is answered (`KanbanApp.cover_toasts`). The app hands this the new items
and the inbox's keys; this asks the app to say the words (`KanbanApp.notify`).
"""

import time
from typing import TYPE_CHECKING

from textual.screen import ModalScreen
from textual.timer import Timer

from boardlib.records import InboxItem

from . import keymap, notify, registry
from .components.inbox_screen import InboxScreen

if TYPE_CHECKING:
    from .app import KanbanApp

ItemKey = tuple[str, str, str]

NEEDS_YOU_TOAST = "needs-you"  # the toast's kind: one of it on screen (`KanbanApp.on_notify`)
NEEDS_YOU_TITLE = "Needs you"
NEEDS_YOU_S = 6
NEEDS_YOU_EVERY_S = 30


class NeedsYou:
    """The pacing: the new items the toast stands for (said, or to say next) that still wait,
    when the last toast began, and the timer of the next one."""

    def __init__(self, app: "KanbanApp") -> None:
        self.app = app
        self._waiting: dict[ItemKey, InboxItem] = {}
        self._shown: set[ItemKey] = set()  # what the toast on screen has stood for
        self._began: float | None = None
        self._next: Timer | None = None

    def inbox_is(self, keys: set[ItemKey]) -> None:
        """The inbox as read now: an item that left it is no news any more."""
        self._waiting = {key: item for key, item in self._waiting.items() if key in keys}

    def new(self, items: list[tuple[ItemKey, InboxItem]]) -> None:
        """Items new to the inbox, oldest first: said now, or counted by the next toast."""
        self._waiting.update(items)
        self._say()

    def _say(self) -> None:
        if not self._waiting:
            return
        app = self.app
        if isinstance(app.screen, ModalScreen):
            self._waiting = {}
            return
        now = time.monotonic()
        since = None if self._began is None else now - self._began
        if since is not None and NEEDS_YOU_S <= since < NEEDS_YOU_EVERY_S:
            if self._next is None:
                self._next = app.set_timer(NEEDS_YOU_EVERY_S - since, self._due)
            return
        if since is not None and since < NEEDS_YOU_S:
            reword = True  # the toast on screen: its words change, not its end
        else:
            reword, self._began, since = False, now, 0.0
            app.set_timer(NEEDS_YOU_S, self._said)
        items = list(self._waiting.values())
        self._shown.update(self._waiting)
        newest = items[-1]
        more = "" if len(items) == 1 else f" (+{len(items) - 1} more)"
        hint = ""
        if not isinstance(app.screen, InboxScreen):  # its list shows them: no hint there
            inbox_key = keymap.key_text(registry.BY_ID["board.inbox"], app.user_keymap)
            hint = f" {inbox_key} opens the inbox."
        app.notify(
            f"{notify.sentence(newest.kind, newest.task_id)}{more}.{hint}",
            title=NEEDS_YOU_TITLE,
            timeout=NEEDS_YOU_S - since,
            kind=NEEDS_YOU_TOAST,
            reword=reword,
        )

    def standing_for(self) -> frozenset[ItemKey]:
        """The items the toast on screen names (or counts)."""
        return frozenset(self._shown)

    def _due(self) -> None:
        self._next = None
        self._say()

    def _said(self) -> None:
        """The toast's time is up: what it said is said; the next counts what came after."""
        shown, self._shown = self._shown, set()
        self._waiting = {key: item for key, item in self._waiting.items() if key not in shown}
