"""`D`: pick the task the selected one should wait on. Type to narrow (id, title); the list shows
at most a screenful of matches, so it stays instant on a board of 10,000 tasks. The board refuses a
link that would close a cycle and says which; the picker does not guess."""

from collections.abc import Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from boardlib.inert import inert
from boardlib.records import Task
from boardlib.transitions import label

from .. import registry
from ..keymap import hint_line, operator_keymap
from . import tcss
from .footer import HintFooter
from .menu_list import MenuList

SHOWN = 50


class DependencyPicker(ModalScreen[str | None]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.PICKER)

    def __init__(self, task: Task, candidates: Iterable[Task]) -> None:
        super().__init__()
        self.task_row = task
        self.candidates = [c for c in candidates if c.id != task.id and not c.dropped]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(inert(f"{self.task_row.id} waits on…")), id="dialog-title")
            yield Input(placeholder="type an id or words of a title", id="query")
            yield MenuList(id="matches")
            hint = hint_line(registry.PICKER, operator_keymap(self.app), before=["enter link"])
            yield Static(hint, classes="hint")
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def on_mount(self) -> None:
        self._show("")
        self.query_one("#query", Input).focus()

    def matches(self, query: str) -> list[Task]:
        words = query.lower().split()
        found: list[Task] = []
        for task in self.candidates:
            haystack = f"{task.id} {task.title}".lower()
            if all(word in haystack for word in words):
                if task.id.lower() == query.lower().strip():
                    found.insert(0, task)
                else:
                    found.append(task)
                if len(found) >= SHOWN and not words:
                    break
        return found[:SHOWN]

    def _show(self, query: str) -> None:
        options = self.query_one("#matches", OptionList)
        options.clear_options()
        options.add_options(
            Option(
                Text.assemble(
                    (inert(task.id), "bold"),
                    " ",
                    (label(task.status), "dim"),
                    "  ",
                    inert(task.title),
                ),
                id=task.id,
            )
            for task in self.matches(query)
        )
        if options.option_count:
            options.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        self._show(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one("#matches", OptionList)
        if options.highlighted is not None and options.option_count:
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_focus_list(self) -> None:
        self.query_one("#matches", OptionList).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
