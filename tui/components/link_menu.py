"""`o` in the drawer: the tasks this one waits on and the tasks waiting on it; choosing one goes
there (the board selects it, the drawer shows it)."""

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from boardlib.records import TaskView
from boardlib.transitions import label

from .. import registry
from ..drawer_render import plain
from . import tcss
from .footer import HintFooter
from .menu_list import MenuList


class LinkMenu(ModalScreen[str | None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.MOVE)  # esc/q back, as in the move menu

    def __init__(self, view: TaskView) -> None:
        super().__init__()
        self.view = view
        self.links = [("waits on", linked) for linked in view.dependencies] + [
            ("blocks", linked) for linked in view.dependents
        ]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(plain(f"Go from {self.view.task.id} to…"), id="dialog-title")
            if self.links:
                options = []
                for relation, linked in self.links:
                    prompt = plain(f"{relation:<9} {linked.id:<10} {label(linked.status):<12} ")
                    prompt.append_text(plain(linked.title, "dim"))
                    options.append(Option(prompt, id=linked.id))
                yield MenuList(*options, id="links")
            else:
                yield Static("Nothing waits on it, and it waits on nothing.")
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def on_mount(self) -> None:
        if self.links:
            self.query_one(OptionList).highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
