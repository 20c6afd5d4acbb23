"""`m`: where the selected card may go. The list is exactly `transitions.legal_targets(current)`,
in column order; a terminal task has nowhere to go and the menu says so."""

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from boardlib import transitions as t
from boardlib.inert import inert
from boardlib.records import Task
from boardlib.transitions import label

from .. import registry
from . import tcss
from .footer import HintFooter
from .menu_list import MenuList

HINTS = {
    t.BACKLOG: "release to triage: owner and lease cleared",
    t.TODO: "release: owner and lease cleared",
    t.BLOCKED: "asks for a reason",
    t.DONE: "through the verification gate",
    t.CANCELLED: "asks to confirm",
    t.IN_PROGRESS: "you take it, with a fresh lease (asks)",
}


class MoveMenu(ModalScreen[str | None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.MOVE)

    def __init__(
        self, task: Task, *, targets: tuple[str, ...] | None = None, count: int = 1
    ) -> None:
        """`targets` and `count` for several marked cards: where all of them may go."""
        super().__init__()
        self.task_row = task
        self.count = count
        self.targets = t.legal_targets(task.status) if targets is None else targets

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            title = f"Move {self.task_row.id} from {label(self.task_row.status)} to…"
            if self.count > 1:
                title = f"Move the {self.count} marked tasks to…"
            yield Static(Text(inert(title)), id="dialog-title")
            if self.targets:
                yield MenuList(
                    *[
                        Option(
                            Text.assemble(f"{label(target):<12} ", (HINTS.get(target, ""), "dim")),
                            id=target,
                        )
                        for target in self.targets
                    ],
                    id="targets",
                )
            else:
                final = (
                    "No move is legal for all the marked tasks."
                    if self.count > 1
                    else f"{label(self.task_row.status)} is final: no move is legal."
                )
                yield Static(Text(inert(final)))
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def on_mount(self) -> None:
        if self.targets:
            self.query_one(OptionList).highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
