"""Markdown an agent wrote (a description, `TASK.md`, `task-progress.md`), rendered as Markdown
but inert: the text goes through `drawer_render.safe_markdown` first (controls made visible, links
and images reduced to words with their target as code, raw HTML shown as text), and links never
open anything (`open_links=False`; a click is ignored)."""

from textual.widgets import Markdown

from ..drawer_render import safe_markdown
from . import tcss


class AgentMarkdown(Markdown):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        self.agent_text = text
        super().__init__(safe_markdown(text), id=id, open_links=False)

    async def show(self, text: str) -> bool:
        """Render `text` (agent Markdown) unless it is what is shown already; True if redrawn."""
        if text == self.agent_text:
            return False
        self.agent_text = text
        await self.update(safe_markdown(text))
        return True

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()  # links in agent text are words, never actions
