"""The drawer's Overview tab: the task's fields, its description rendered as (inert) Markdown, the
verdict, both dependency directions (`o` goes to one), the workspace's true state, a summary of
its runs and the comments; for reviewed work, whether it would land (or where it landed)."""

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from boardlib.records import AuditEntry, TaskView
from boardlib.worktrees import CheckoutState

from ..drawer_render import (
    comments_block,
    heading,
    links_table,
    plain,
    review_block,
    runs_summary,
    workspace_line,
)
from ..task_view import _facts, _overrides, describe_verdict
from . import tcss
from .agent_markdown import AgentMarkdown
from .landing_line import LandingLine


class OverviewPane(VerticalScroll, can_focus=False):
    DEFAULT_CSS = tcss(__file__)

    def compose(self) -> ComposeResult:
        yield LandingLine(id="overview-landing")  # on top: what the operator decides on
        yield Static("loading…", id="overview-head")
        yield Static(heading("Description"), id="overview-description-heading")
        yield AgentMarkdown(id="overview-description")
        yield Static("", id="overview-rest")

    async def show(
        self,
        view: TaskView,
        checkout: CheckoutState | None,
        now_ms: int,
        audit: list[AuditEntry] | None = None,
    ) -> None:
        task = view.task
        head: list[RenderableType] = [plain(task.title, "bold"), _facts(task, now_ms)]
        head += _overrides(audit or [], now_ms)  # a human override is marked
        if task.blocked_reason:
            head += [heading("Blocked because"), plain(f"  {task.blocked_reason}", "yellow")]
        self.query_one("#overview-head", Static).update(Group(*head))
        self.query_one(LandingLine).show_task(task)  # before approving: would it land?
        description = task.description or ""
        self.query_one("#overview-description-heading", Static).display = bool(description)
        markdown = self.query_one(AgentMarkdown)
        markdown.display = bool(description)
        rest_widget = self.query_one("#overview-rest", Static)
        await markdown.show(description)
        if not rest_widget.is_attached:
            return  # the drawer was closed while the description was drawn: its widgets went
        rest: list[RenderableType] = [
            heading("Verdict"),
            describe_verdict(task.verification, now_ms),
        ]
        rest += [heading("Dependencies"), links_table(view)]
        if view.ancestors:
            chain = " ← ".join(f"{a.id} ({a.status})" for a in view.ancestors)
            rest += [heading("Parent chain"), plain(f"  {chain}")]
        rest += [heading("Workspace"), workspace_line(view, checkout)]
        rest += [heading("Runs"), runs_summary(view.executions)]
        rest += review_block(view, now_ms)
        rest += comments_block(view, now_ms)
        rest.append(Text(""))
        rest_widget.update(Group(*rest))
