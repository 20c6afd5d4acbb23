"""The drawer's Files tab: the task's system-of-record files as the detail route lists them, in
their fixed order, each shown for what it is.

- `TASK.md`, `REVIEW.md` and `task-progress.md`: Markdown (inert: `safe_markdown`, no links);
- `DECISIONS.json` and `AGENT_HANDOFF.json`: pretty-printed JSON, the handoff's next step and
  blockers called out at the top of the tab;
- `init.sh` and `VERIFICATION.md`: highlighted text (the journal's newest entries are at its end,
  so a long one shows its tail).

Above them, the checkout's true state (checked out, paused with its branch and head, kept,
cleaned); a paused worktree also shows what the cold-resume read rebuilt from its branch. A task
without a workspace says so plainly. Drawn as one line-API pane (`TextPane`): `/` searches it.
"""

from rich.console import RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.text import Text

from boardlib.records import Task
from boardlib.worktrees import SOR_FILES, isolation_for

from ..drawer_data import WorkspaceData
from ..drawer_render import (
    MARKDOWN_MAX,
    checkout_block,
    handoff_callout,
    heading,
    plain,
    pretty_json,
    safe_markdown,
    text_file,
)
from . import tcss
from .text_pane import TextPane

MARKDOWN_FILES = frozenset({"TASK.md", "REVIEW.md", "task-progress.md"})
JSON_FILES = frozenset({"DECISIONS.json", "AGENT_HANDOFF.json"})
LEXERS = {"init.sh": "bash", "VERIFICATION.md": "markdown"}


class FilesPane(TextPane):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("Files: press 2 to read the worktree.", id=id)
        self.shown: dict[str, str] = {}  # file name -> the text on screen

    async def show_workspace(self, data: WorkspaceData, task: Task | None) -> None:
        detail = data.detail
        if detail is None:
            self.shown = {}
            self.show(self._no_workspace(data, task))
            return
        parts: list[RenderableType] = [checkout_block(detail)]
        if data.problem:
            parts.append(plain(f"! {data.problem}", "yellow"))
        handoff = detail.sor_files.get("AGENT_HANDOFF.json")
        if handoff is not None:
            callout = handoff_callout(handoff)
            if callout is not None:
                parts += [heading("Handoff"), callout]
        if not detail.sor_files:
            parts.append(Text("\nNo system-of-record files to show.", style="dim"))
        files = {name: detail.sor_files[name] for name in SOR_FILES if name in detail.sor_files}
        if files == self.shown and self.lines:
            return  # the same files: keep everything as it is, scroll position included
        self.shown = files
        for name, text in files.items():
            parts.append(Text(""))
            parts.append(Text(f" {name} ", style="bold reverse"))
            parts.append(Padding(self._renderable(name, text), (0, 1)))
        self.show_parts(parts)

    @staticmethod
    def _no_workspace(data: WorkspaceData, task: Task | None) -> RenderableType:
        if data.problem:
            return plain(f"The workspace cannot be read: {data.problem}", "yellow")
        if task is not None and isolation_for(task.kind) == "none":
            return Text(
                f"No workspace: {task.id} is a {task.kind} task, which changes no files, so it "
                "has no worktree and nothing to show here.",
                style="dim",
            )
        who = task.id if task is not None else "This task"
        return Text(
            f"No workspace: {who} has no worktree yet. An agent makes one with "
            f"`kanban task workspace provision {who} --repo PATH`.",
            style="dim",
        )

    @staticmethod
    def _renderable(name: str, text: str) -> RenderableType:
        if name in JSON_FILES:
            return text_file(name, pretty_json(text), "json")
        if name in MARKDOWN_FILES and len(text) <= MARKDOWN_MAX:
            return Markdown(safe_markdown(text), hyperlinks=False)
        return text_file(name, text, LEXERS.get(name, "markdown"))
