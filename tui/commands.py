"""`ctrl+p`: the command palette. Two sources: jump to any task by id or title words, and the
board's actions from the registry (including "move to <status>" for exactly the legal targets of
the selected task), next to Textual's own commands (themes, such as `ansi-dark` for terminals
reached over SSH, quit, keys).
"""

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from boardlib import transitions as t
from boardlib.transitions import label

from . import registry
from .keymap import key_text

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
    """The registry's palette entries for this screen, only those that apply right now (as the
    footer greys them), each naming the task it acts on; "move" offers exactly the legal
    targets of the selected task."""
    name = getattr(screen, "SCREEN", None)
    if name is None:
        return
    task = app.selected_task()
    move = registry.BY_ID["task.move"]
    if task is not None and screen.check_action(move.name, move.parameters) is True:
        for target in t.legal_targets(task.status):
            yield SystemCommand(
                f"Move {task.id} to {label(target)}",
                f"{_keys(app, move)} · from {label(task.status)}, {move.palette_help}",
                partial(screen.request_move, task, target),  # type: ignore[attr-defined]
            )
    for action in registry.palette_entries(name):
        runner = app if registry.APP in action.screens else screen
        if runner.check_action(action.name, action.parameters) is not True:
            continue
        help_text = " · ".join(part for part in (_keys(app, action), action.palette_help) if part)
        yield SystemCommand(
            action.palette_title(task), help_text, partial(runner.run_action, action.call)
        )
    yield SystemCommand(
        "Use the terminal's colours",
        "theme ansi-dark (for SSH)",
        partial(setattr, app, "theme", "ansi-dark"),
    )


def _keys(app: "KanbanApp", action: registry.Action) -> str:
    return key_text(action, app.user_keymap)
