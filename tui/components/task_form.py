"""Create a task (`n`) or edit one (`e`): title, description and, for a new task, where it starts
(backlog or todo, exactly `transitions.CREATABLE`), priority, role and team.

The form returns only what the operator changed; the board validates and refuses the rest
(an empty title, a too-long description) with a notification, as for every other write.
"""

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static, TextArea

from boardlib import transitions as t
from boardlib.records import Task

from .. import registry
from . import tcss


class TaskForm(ModalScreen[dict[str, Any] | None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.FORM)

    def __init__(self, task: Task | None = None) -> None:
        super().__init__()
        self.task_row = task

    @property
    def creating(self) -> bool:
        return self.task_row is None

    def compose(self) -> ComposeResult:
        task = self.task_row
        heading = "New task" if task is None else f"Edit {task.id}"
        with Vertical(id="dialog"):
            yield Static(heading, id="dialog-title")
            yield Label("Title")
            yield Input(task.title if task else "", id="title")
            yield Label("Description")
            yield TextArea(
                (task.description or "") if task else "",
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
            yield Static("ctrl+s save · tab next field · esc back", classes="hint")
            yield Static("", id="error")

    def on_mount(self) -> None:
        self.query_one("#title", Input).focus()

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
            if title != self.task_row.title:
                changes["title"] = title
            if description != (self.task_row.description or ""):
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
