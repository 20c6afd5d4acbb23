"""The drawer's Files tab: the task's system-of-record files as the detail route lists them, in
their fixed order, each shown for what it is.

- `TASK.md` and `task-progress.md`: Markdown (inert: see `AgentMarkdown`);
- `DECISIONS.json` and `AGENT_HANDOFF.json`: pretty-printed JSON, the handoff's next step and
  blockers called out at the top of the tab;
- `init.sh` and `VERIFICATION.md`: highlighted text (the journal's newest entries are at its end,
  so a long one shows its tail).

Above them, the checkout's true state (checked out, paused with its branch and head, kept,
cleaned); a paused worktree also shows what the cold-resume read rebuilt from its branch. A task
without a workspace says so plainly.
"""

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

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
    text_file,
)
from . import tcss
from .agent_markdown import AgentMarkdown

MARKDOWN_FILES = frozenset({"TASK.md", "task-progress.md"})
JSON_FILES = frozenset({"DECISIONS.json", "AGENT_HANDOFF.json"})
LEXERS = {"init.sh": "bash", "VERIFICATION.md": "markdown"}


def _body_id(name: str) -> str:
    return "sor-" + name.replace(".", "-").lower()


class FilesPane(VerticalScroll, can_focus=False):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: dict[str, str] = {}  # file name -> the text on screen

    def compose(self) -> ComposeResult:
        yield Static("Files: press 2 to read the worktree.", id="files-top")

    def show_message(self, message: RenderableType) -> None:
        self.query_one("#files-top", Static).update(message)

    async def show(self, data: WorkspaceData, task: Task | None) -> None:
        detail = data.detail
        if detail is None:
            await self._set_files({})
            self.show_message(self._no_workspace(data, task))
            return
        top: list[RenderableType] = [checkout_block(detail)]
        if data.problem:
            top.append(plain(f"! {data.problem}", "yellow"))
        handoff = detail.sor_files.get("AGENT_HANDOFF.json")
        if handoff is not None:
            callout = handoff_callout(handoff)
            if callout is not None:
                top += [heading("Handoff"), callout]
        if not detail.sor_files:
            top.append(Text("\nNo system-of-record files to show.", style="dim"))
        self.show_message(Group(*top))
        await self._set_files(detail.sor_files)

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

    async def _set_files(self, files: dict[str, str]) -> None:
        """Show exactly `files`, in the fixed SoR order, touching only what changed (so the
        scroll position holds across live refreshes)."""
        if list(files) != list(self.shown):
            y = self.scroll_y
            await self.remove_children(".sor-part")
            self.shown = {}
            parts: list[Widget] = []
            for name in SOR_FILES:
                if name in files:
                    parts.append(Static(heading_text(name), classes="sor-part sor-heading"))
                    parts.append(self._body(name, files[name]))
                    self.shown[name] = files[name]
            if parts:
                await self.mount_all(parts)
            self.call_after_refresh(self.scroll_to, y=y, animate=False)
            return
        for name, text in files.items():
            if self.shown.get(name) == text:
                continue
            self.shown[name] = text
            body = self.query_one(f"#{_body_id(name)}")
            if isinstance(body, AgentMarkdown):
                await body.show(text)
            elif isinstance(body, Static):
                body.update(self._renderable(name, text))

    def _body(self, name: str, text: str) -> Widget:
        if name in MARKDOWN_FILES and len(text) <= MARKDOWN_MAX:
            return AgentMarkdown(text, id=_body_id(name)).set_classes("sor-part sor-body")
        return Static(self._renderable(name, text), id=_body_id(name), classes="sor-part sor-body")

    @staticmethod
    def _renderable(name: str, text: str) -> RenderableType:
        if name in JSON_FILES:
            return text_file(name, pretty_json(text), "json")
        return text_file(name, text, LEXERS.get(name, "markdown"))


def heading_text(name: str) -> Text:
    return Text(name)
