"""The Overview's "Landing" section: before the operator approves, would the task's work land
cleanly, and onto which base (`lands cleanly onto main@abc1234`, `conflicts with main in x.py`,
`main has moved 3 commits since the worktree was made`); after, where it landed.

The preview is git work, so it is read in a worker thread through the library, and read again
only when `Worktrees.landing_stamp` (one rev-parse, one `git status`, polled while the section is
on screen, one check at a time) says the base or the worktree moved, or when the last read failed
for a reason that passes (a held lock, git failing). Agent text (file names) is drawn inert.
"""

from typing import TYPE_CHECKING, cast

from rich.console import Group
from rich.text import Text
from textual import work
from textual.timer import Timer
from textual.widgets import Static

from boardlib import Reason
from boardlib import transitions as t
from boardlib.records import Task
from boardlib.worktrees.landing import CLEAN, CONFLICTS, UNAVAILABLE

from .. import registry
from ..gateway import BOARD_UNREADABLE
from ..keymap import key_text
from ..landing_data import (
    STEP_WORDS,
    Preview,
    landed_words,
    landing_words,
    read_preview,
    read_stamp,
)
from ..registry import has_work_to_land
from ..task_view import hanging, plain
from . import tcss

if TYPE_CHECKING:
    from ..app import KanbanApp

TITLE = Text("Landing", style="bold underline")
POLL_S = 2.0  # how often a visible section asks whether the base or the worktree moved
MORE_FILES = 12  # conflicting files listed below the summary


def passing_failure(shown: Preview) -> bool:
    """A preview that failed for a reason that passes: git or the board failed, or the task's
    lock was held (a landing, the worktree janitor) past the read's wait."""
    preview = shown.preview
    if preview is None:
        return True
    return preview.state == UNAVAILABLE and preview.why == Reason.BUSY.value


class LandingLine(Static):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.task_id: str | None = None
        self.status: str | None = None
        self.shown: Preview | None = None  # the preview on screen, for the task it names
        self._reading = False
        self._outdated = False
        self._stamping = False
        self._timer: Timer | None = None
        self._shown_task: Task | None = None

    @property
    def kanban(self) -> "KanbanApp":
        return cast("KanbanApp", self.app)

    def on_mount(self) -> None:
        self._timer = self.set_interval(POLL_S, self._poll, pause=True)

    def preview_for(self, task_id: str) -> Preview | None:
        """The preview on screen for `task_id`, if that is the task shown."""
        shown = self.shown
        return shown if shown is not None and shown.task_id == task_id else None

    def carry(self, other: "LandingLine") -> None:
        """Show what `other` shows (the drawer moved to its other layout): its preview is not
        read again unless the task changed since."""
        self.task_id, self.status, self._shown_task = other.task_id, other.status, other._shown_task
        self.shown = other.shown
        if self._shown_task is not None:
            self._draw()

    def show_task(self, task: Task) -> None:
        """The drawer read the task again: show where it landed, or (re)read its preview when
        the task or its status changed (a status change may change what would land)."""
        changed = (task.id, task.status) != (self.task_id, self.status)
        if task.id != self.task_id:
            self.shown = None
        self.task_id, self.status, self._shown_task = task.id, task.status, task
        if task.landed_commit is not None:
            self._stop()
            self.display = True
            self._draw()
            return
        if not has_work_to_land(task):
            self._stop()
            self.shown = None
            self.display = False
            return
        self.display = True
        if self._timer is not None:
            self._timer.resume()
        if changed or (self.shown is None and not self._reading):
            self._draw()
            self._read()

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.pause()

    # -- reading ----------------------------------------------------------------------------

    def _read(self) -> None:
        if self.task_id is None:
            return
        if self._reading:
            self._outdated = True
            return
        self._reading, self._outdated = True, False
        self._read_preview(self.task_id)

    @work(thread=True, exclusive=True, group="landing-preview")
    def _read_preview(self, task_id: str) -> None:
        try:
            result = self.kanban.gateway.read(lambda board: read_preview(board, task_id))
        except BOARD_UNREADABLE as error:  # the board itself is unreadable: say so, keep polling
            result = Preview.unreadable(task_id, error)
        except Exception as error:  # a defect: reported once, and the line keeps polling
            self.kanban.report_defect_from_thread("landing preview", error, again=False)
            result = Preview.unreadable(task_id, error)
        self.kanban.call_from_thread(self._got, result)

    def _got(self, result: Preview) -> None:
        self._reading = False
        if not self.is_mounted:
            return
        if result.task_id == self.task_id:
            self.shown = result
            self._draw()
        if self._outdated:
            self._read()

    def _poll(self) -> None:
        if self._reading or self._stamping or self.task_id is None or not self._on_screen():
            return
        shown = self.preview_for(self.task_id)
        if shown is not None and passing_failure(shown):
            self._read()  # its stamp need not change when the failure passes: read again
            return
        self._stamping = True  # one check at a time: a slow git must not pile threads up
        self._check_stamp(self.task_id, shown.stamp if shown is not None else "")

    def _on_screen(self) -> bool:
        return self.is_mounted and self.app.screen is self.screen and self.is_on_screen

    @work(thread=True, exclusive=True, group="landing-stamp")
    def _check_stamp(self, task_id: str, known: str) -> None:
        try:
            stamp = self.kanban.gateway.read(lambda board: read_stamp(board, task_id))
        except BOARD_UNREADABLE as error:
            stamp = f"unreadable: {error}"
        except Exception as error:
            self.kanban.report_defect_from_thread("landing preview", error, again=False)
            stamp = f"unreadable: {error}"
        self.kanban.call_from_thread(self._stamped, task_id, stamp != known)

    def _stamped(self, task_id: str, moved: bool) -> None:
        self._stamping = False
        if moved and task_id == self.task_id and self.is_mounted:
            self._read()

    # -- drawing ----------------------------------------------------------------------------

    def _draw(self) -> None:
        task = self._shown_task
        if task is not None and task.landed_commit is not None:  # the board's record says it
            self.update(Group(TITLE, hanging(landed_words(task, self.kanban.now_ms()))))
            return
        self.update(Group(TITLE, *map(hanging, self._lines())))  # wrapped under their words

    def _lines(self) -> list[Text]:
        shown = self.preview_for(self.task_id or "")
        step = self.kanban.landing_steps.get(self.task_id or "")
        lines = [landing_words(shown)]
        if step is not None:
            lines.append(Text(f"  ⋯ landing: {STEP_WORDS.get(step, step)}…", "bold cyan"))
            return lines
        preview = shown.preview if shown is not None else None
        if preview is None or preview.state not in (CLEAN, CONFLICTS):
            return lines
        if preview.state == CONFLICTS:
            if len(preview.conflicts) > 5:
                lines += [plain(f"      {name}", "red") for name in preview.conflicts[:MORE_FILES]]
            lines.append(
                plain(
                    f"    `kanban task workspace sync {preview.task_id}` brings "
                    f"{preview.into or 'the base'} into the worktree to resolve them",
                    "dim",
                )
            )
        lines.append(self._hint())
        return lines

    def landing_step(self) -> None:
        """A landing of the shown task moved on (or ended): redraw, and after its end read the
        preview again."""
        task = self._shown_task
        if task is None or task.id != self.task_id or not self.display:
            return
        self._draw()
        if task.landed_commit is None and task.id not in self.kanban.landing_steps:
            self._read()

    def _hint(self) -> Text:
        task = self._shown_task
        wanted = "task.approve_land" if task is not None and task.status != t.DONE else "task.land"
        action = registry.BY_ID[wanted]
        keys = key_text(action, self.kanban.user_keymap)
        words = f"    {keys}: {action.title.lower()} (verified on the merged tree first)"
        return plain(words, "dim")
