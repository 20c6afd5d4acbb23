"""`ctrl+p`: the command palette. Two sources: jump to any task by id or title words, and the
board's actions (including "move to <status>" for exactly the legal targets of the selected task),
next to Textual's own commands (themes, such as `ansi-dark` for terminals reached over SSH, quit,
keys).
"""

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from boardlib import transitions as t
from boardlib.transitions import label

if TYPE_CHECKING:
    from .app import KanbanApp

MAX_HITS = 30


class TaskJumpProvider(Provider):
    """ "TASK-42" or words of a title: select that task on the board."""

    @property
    def kanban(self) -> "KanbanApp":
        return self.app  # type: ignore[return-value]

    async def search(self, query: str) -> Hits:
        words = query.lower().split()
        if not words:
            return
        matcher = self.matcher(query)
        exact = query.strip().upper()
        found = 0
        for task in self.kanban.state.tasks.values():
            haystack = f"{task.id} {task.title}".lower()
            if task.id.upper() != exact and not all(word in haystack for word in words):
                continue
            text = f"{task.id}  {task.title}"
            score = 1.0 if task.id.upper() == exact else max(matcher.match(text), 0.1)
            yield Hit(
                score,
                matcher.highlight(text),
                partial(self.kanban.jump_to, task.id),
                text=text,
                help=f"go to {task.id} ({label(task.status)})",
            )
            found += 1
            if found >= MAX_HITS:
                return

    async def discover(self) -> Hits:
        task = self.kanban.selected_task()
        if task is not None:
            yield DiscoveryHit(
                f"Open {task.id}", partial(self.kanban.open_drawer, task.id), help=task.title
            )


def board_commands(app: "KanbanApp", screen: Screen[Any]) -> Iterator[SystemCommand]:
    """The board's own commands, only those that apply right now (as the footer greys them)."""

    def allowed(action: str, *parameters: object) -> bool:
        return screen.check_action(action, parameters) is True

    task = app.selected_task()
    if task is not None and allowed("move_menu"):
        for target in t.legal_targets(task.status):
            yield SystemCommand(
                f"Move {task.id} to {label(target)}",
                f"from {label(task.status)} (legal move)",
                partial(screen.request_move, task, target),  # type: ignore[attr-defined]
            )
    entries = (
        ("force_done", "Mark done with human override", "written to the audit table"),
        ("release", "Release to todo", "owner, lease and verdict cleared"),
        ("block", "Block", "asks for a reason"),
        ("cancel", "Cancel task", "asks to confirm"),
        ("cancel_dependents", "Cancel dependents", "pending tasks waiting on this one"),
        ("edit", "Edit title/description", ""),
        ("comment", "Comment as operator", ""),
        ("link_dependency", "Add a dependency", "pick the task this one waits on"),
        ("drop", "Drop or restore task", ""),
        ("create", "New task", ""),
    )
    for action, title, help_text in entries:
        if allowed(action):
            name = f"{title} ({task.id})" if task is not None and action != "create" else title
            yield SystemCommand(name, help_text, partial(screen.run_action, action))
    yield SystemCommand("Filter tasks", "text, team:, role:, assignee:", app.start_filter)
    yield SystemCommand(
        "Resume live updates" if app.paused else "Pause live updates",
        "p",
        app.toggle_pause,
    )
    yield SystemCommand("Refresh now", "re-read the whole board", app.refresh_now)
    yield SystemCommand("Show or hide dropped tasks", ".", app.toggle_dropped)
    yield SystemCommand("Fold or unfold done and cancelled", "z", app.toggle_finished)
    yield SystemCommand(
        "Use the terminal's colours",
        "theme ansi-dark (for SSH)",
        partial(setattr, app, "theme", "ansi-dark"),
    )
