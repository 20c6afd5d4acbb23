"""The drawer's Overview tab: the task's fields, its description rendered as (inert) Markdown, the
verdict, both dependency directions (`o` goes to one), the workspace's true state, a summary of
its runs and the comments; for reviewed work, whether it would land (or where it landed)."""

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from boardlib.records import AuditEntry, TaskView
from boardlib.worktrees import CheckoutState

from ..drawer_render import heading, overview_head, overview_rest
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
        self.query_one("#overview-head", Static).update(overview_head(view, now_ms, audit or []))
        self.query_one(LandingLine).show_task(task)  # before approving: would it land?
        description = task.description or ""
        self.query_one("#overview-description-heading", Static).display = bool(description)
        markdown = self.query_one(AgentMarkdown)
        markdown.display = bool(description)
        rest_widget = self.query_one("#overview-rest", Static)
        await markdown.show(description)
        if not rest_widget.is_attached:
            return  # the drawer was closed while the description was drawn: its widgets went
        rest_widget.update(overview_rest(view, checkout, now_ms))
