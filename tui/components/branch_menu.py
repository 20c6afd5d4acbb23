"""`b` in the land dialog: the branches a task's work may land on, its base first. Branch names
are the repository's, shown inert."""

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from boardlib.inert import inert

from .. import registry
from . import tcss
from .menu_list import MenuList


class BranchMenu(ModalScreen[str | None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.MOVE)  # esc/q back, as in the move menu

    def __init__(self, task_id: str, branches: list[str], *, base: str, current: str) -> None:
        super().__init__()
        self.task_id = task_id
        self.branches = branches
        self.base = base
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(inert(f"Land {self.task_id} onto…")), id="dialog-title")
            yield MenuList(*[self._option(index, name) for index, name in enumerate(self.branches)])

    def _option(self, index: int, name: str) -> Option:
        line = Text(inert(name))
        if name == self.base:
            line.append("  the worktree's base", "dim")
        if name == self.current:
            line.append("  (chosen)", "dim")
        return Option(line, id=str(index))  # an index: a branch name is not an option id

    def on_mount(self) -> None:
        menu = self.query_one(OptionList)
        menu.highlighted = self.branches.index(self.current) if self.current in self.branches else 0
        menu.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.branches[int(event.option.id or 0)])

    def action_cancel(self) -> None:
        self.dismiss(None)
