"""`A`: what just happened on the board, in words, newest first ("10:04:01 agent-ada claimed
TASK-7", "lease of agent-linus on TASK-3 expired → todo"), as lazygit's command log shows what
ran. It is fed by the live feed's events (the reader thread already reads them to know what
changed: no second poll) and told in `boardlib.narration`'s words, made inert. Heartbeats are left
out: on a busy board they would drown the rest.

It repaints only when an event arrives while it is open, and shows absolute times, so an idle
board with the pane open writes nothing to the terminal.
"""

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widget import Widget

from boardlib.events import EventKind, read
from boardlib.inert import inert
from boardlib.narration import ROUTINE, narrate
from boardlib.records import Event

from ..cards import clock_text
from . import tcss

if TYPE_CHECKING:  # types only: see boardlib/payloads.py
    from boardlib.payloads import StatusChanged


TONES: dict[str, str] = {EventKind.LEASE_EXPIRED: "bold red", EventKind.TASK_CREATED: "green"}


def activity_line(event: Event, now_ms: int) -> Text:
    line = Text(f"{clock_text(event.created_at, now_ms)} ", style="dim")
    tone = TONES.get(event.kind, "")
    if event.kind == EventKind.STATUS_CHANGED:
        changed: StatusChanged = read(event.data)
        if changed.get("human_override"):
            tone = "bold yellow"
    line.append(inert(narrate(event)), style=tone)
    return line


class ActivityPane(Widget):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, now_ms: Callable[[], int]) -> None:
        super().__init__(id="activity")
        self.now_ms = now_ms
        self.border_title = "activity · A hides"
        self._events: list[Event] = []  # newest first, routine ones left out

    def show(self, events: Iterable[Event]) -> None:
        """The feed (oldest first, as it arrives); only a change repaints."""
        told = [event for event in events if event.kind not in ROUTINE][::-1]
        if told != self._events:
            self._events = told
            self.refresh()

    def render(self) -> Text:
        height = max(self.size.height, 1)
        if not self._events:
            return Text("nothing has happened yet", style="dim")
        now = self.now_ms()
        lines = [activity_line(event, now) for event in self._events[:height]]
        return Text("\n").join(lines)
