"""`b` in the land dialog: the branches a task's work may land on, its base first. Branch names
are the repository's, shown inert. It opens at once and lists the branches once the dialog has
read them again (off the UI thread): keys typed after `b` are the menu's, and a branch made or
deleted since the dialog opened is listed as the repository has it now."""

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from boardlib.inert import inert

from .. import registry
from . import tcss
from .footer import HintFooter
from .menu_list import MenuList

READING = "reading the repository's branches…"


class BranchMenu(ModalScreen[str | None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.MOVE)  # esc/q back, as in the move menu

    def __init__(
        self, task_id: str, branches: list[str] | None, *, base: str, current: str
    ) -> None:
        """`branches` None: still being read (`show` lists them)."""
        super().__init__()
        self.task_id = task_id
        self.branches = branches
        self.base = base
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(inert(f"Land {self.task_id} onto…")), id="dialog-title")
            yield Static(Text(READING, "dim"), id="branches-reading")
            yield MenuList()
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def _option(self, index: int, name: str) -> Option:
        line = Text(inert(name))
        if name == self.base:
            line.append("  the worktree's base", "dim")
        if name == self.current:
            line.append("  (chosen)", "dim")
        return Option(line, id=str(index))  # an index: a branch name is not an option id

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        if self.branches is not None:
            self.show(self.branches, base=self.base)

    def show(self, branches: list[str], *, base: str) -> None:
        """The branches, as just read."""
        self.branches, self.base = branches, base
        self.query_one("#branches-reading").display = False
        menu = self.query_one(OptionList)
        menu.clear_options()
        menu.add_options([self._option(index, name) for index, name in enumerate(branches)])
        menu.highlighted = branches.index(self.current) if self.current in branches else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.branches is not None:
            self.dismiss(self.branches[int(event.option.id or 0)])

    def action_cancel(self) -> None:
        self.dismiss(None)
