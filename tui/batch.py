"""Several cards at once: what the operator marked (`space`), and how a batch's outcome is told.

A batch is one confirmation that lists every task, then one write per task, each checked on its
own against the task's fresh row (the gateway's `expect`, then the board's own guards), so a task
that changed while the operator decided is left alone and named. Plain bookkeeping: the app runs
the writes (`KanbanApp.write_each`), the actions decide what to ask.
"""

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.text import Text

from boardlib.inert import inert
from boardlib.records import Task

from .task_view import Hanging


@dataclass(slots=True)
class Outcome:
    """What became of each task of a batch."""

    done: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # changed while the operator decided
    refused: list[tuple[str, str]] = field(default_factory=list)  # (task id, reason)

    def summary(self, past: str) -> str:
        """ "4 approved, 1 changed while you decided: nothing written for TASK-9"."""
        parts = [f"{len(self.done)} {past}"]
        if self.changed:
            ids = ", ".join(self.changed)
            parts.append(
                f"{len(self.changed)} changed while you decided: nothing written for {ids}"
            )
        if self.refused:
            said = ", ".join(f"{task_id} ({reason})" for task_id, reason in self.refused)
            parts.append(f"{len(self.refused)} refused: {said}")
        return ", ".join(parts)

    @property
    def clean(self) -> bool:
        return not self.changed and not self.refused


def listing(tasks: list[Task], *, limit: int = 12) -> RenderableType:
    """The tasks a batch confirmation names, one a row: each title made inert on its own (a
    U+2028 in a title was a line break here, so one title could list tasks that were never
    marked), and a long one wrapped under its first character, not at the dialog's edge."""
    rows = [(Text(f"  {inert(task.id)}"), Text(inert(task.title))) for task in tasks[:limit]]
    listed = Hanging(rows, gap=2)
    if len(tasks) <= limit:
        return listed
    return Group(listed, Text(f"  and {len(tasks) - limit} more"))
