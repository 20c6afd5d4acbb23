"""Create a task (`n`) or edit one (`e`): title, description and, for a new task, where it starts
(backlog or todo, exactly `transitions.CREATABLE`), priority, role and team.

The form returns only what the operator changed; the board validates and refuses the rest
(an empty title, a too-long description) with a notification, as for every other write.
"""

import time
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static, TextArea

from boardlib import transitions as t
from boardlib.inert import inert
from boardlib.records import Task

from .. import registry
from ..keymap import hint_line, operator_keymap
from . import tcss
from .footer import HintFooter


class TaskForm(ModalScreen[dict[str, Any] | None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.FORM)

    def __init__(self, task: Task | None = None) -> None:
        super().__init__()
        self.task_row = task
        self._early = ""  # keys typed before it ran (`take_early_key`)
        self._title_since: float | None = None  # when the title took the keys (monotonic)

    @property
    def creating(self) -> bool:
        return self.task_row is None

    @property
    def shown_title(self) -> str:
        """The title as the form shows it: inert, like everywhere else. Saving the form unchanged
        changes nothing; editing it saves what the operator saw and edited."""
        return inert(self.task_row.title) if self.task_row else ""

    @property
    def shown_description(self) -> str:
        task = self.task_row
        return inert(task.description or "", multiline=True) if task else ""

    def compose(self) -> ComposeResult:
        task = self.task_row
        heading = "New task" if task is None else f"Edit {task.id}"
        with Vertical(id="dialog"):
            yield Static(Text(inert(heading)), id="dialog-title")
            yield Label("Title")
            yield Input(self.shown_title, id="title")
            yield Label("Description")
            yield TextArea(
                self.shown_description,
                id="description",
                soft_wrap=True,
                show_line_numbers=False,
            )
            if self.creating:
                with Horizontal(id="row"):
                    with Vertical():
                        yield Label("Starts in")
                        creatable = [s for s in t.STATUSES if s in t.CREATABLE]
                        yield Select(
                            [(status, status) for status in creatable],
                            value=t.TODO,
                            allow_blank=False,
                            id="status",
                        )
                    with Vertical():
                        yield Label("Priority")
                        yield Input("0", id="priority", type="integer")
                    with Vertical():
                        yield Label("Role")
                        yield Input("", id="role", placeholder="any")
                    with Vertical():
                        yield Label("Team")
                        yield Input("", id="team", placeholder="none")
            hint = hint_line(registry.FORM, operator_keymap(self.app), also=["tab next field"])
            yield Static(hint, classes="hint")
            yield Static("", id="error")
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def on_mount(self) -> None:
        title = self.query_one("#title", Input)
        title.focus()
        self._title_since = time.monotonic()
        if self._early:
            title.insert_text_at_cursor(self._early)
            self._early = ""

    def take_early_key(self, event: events.Key) -> bool:
        """A key the app got while this form was on top but not yet running (typed in the burst
        that opened it: `n` and the title at once, as tmux sends them): a printable one is the
        title's. They were lost. Judged by when the key was pressed, not when it arrives: under
        load a key handed to the board before the form ran reaches the app after it is painted."""
        if not (event.is_printable and event.character):
            return False
        if self._title_since is not None and event.time >= self._title_since:
            return False  # pressed once the form ran: a key its widgets left is not the title's
        if self.is_mounted:
            self.query_one("#title", Input).insert_text_at_cursor(event.character)
        else:
            self._early += event.character
        return True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def action_submit(self) -> None:
        title = self.query_one("#title", Input).value.strip()
        description = self.query_one("#description", TextArea).text.strip()
        if not title:
            self.query_one("#error", Static).update("A task needs a title.")
            return
        if self.task_row is not None:
            changes: dict[str, Any] = {}
            if title != self.shown_title.strip():
                changes["title"] = title
            if description != self.shown_description.strip():
                changes["description"] = description
            self.dismiss(changes)
            return
        priority_text = self.query_one("#priority", Input).value.strip() or "0"
        try:
            priority = int(priority_text)
        except ValueError:
            self.query_one("#error", Static).update("Priority must be a whole number.")
            return
        self.dismiss(
            {
                "title": title,
                "description": description or None,
                "status": self.query_one("#status", Select).value,
                "priority": priority,
                "role": self.query_one("#role", Input).value.strip() or None,
                "team_id": self.query_one("#team", Input).value.strip() or None,
            }
        )

    def action_cancel(self) -> None:
        self.dismiss(None)
