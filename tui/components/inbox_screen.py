"""`i`: what needs the operator, oldest first (`boardlib.attention`, read by the live feed).

Each row says how long it has waited, which task, why, and the one obvious action, which `a`
does (approve, land, unblock, override the debt, raise a budget, reclaim, release, retry). Enter
opens the task's drawer. Rows are kept by their item key, so an update that adds or removes items
never moves the cursor off the item the operator is on. Agent text (titles, reasons) is inert.
"""

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from boardlib import attention as a
from boardlib import transitions as t
from boardlib.clock import span
from boardlib.inert import inert
from boardlib.records import InboxItem, Task

from .. import registry
from ..actions import TaskActions
from . import tcss

if TYPE_CHECKING:
    pass

KIND_LABEL: dict[str, str] = {
    a.REVIEW: "review",
    a.DEBT: "debt",
    a.VERIFICATION_FAILED: "gate red",
    a.BLOCKED: "blocked",
    a.LEASE_EXPIRED: "lease out",
    a.QUIET_RUN: "silent",
    a.LANDING_REFUSED: "refused",
    a.UNLANDED: "to land",
    a.BUDGET_EXCEEDED: "budget",
    a.WATCH_HELD: "watch",
}
REFRESH_S = 30.0  # the "waited" column, while the screen is open


def waited(item: InboxItem, now_ms: int) -> str:
    gone = max(0, now_ms - item.since)
    return span(gone) if gone >= 1000 else "now"


def row_text(item: InboxItem, now_ms: int) -> Content:
    """One row: waited, task, kind, what `a` does, why. Our markup, the facts inert."""
    who = item.task_id or item.consumer or "-"
    return Content.from_markup(
        "[$text-muted]$waited[/] [b $text-accent]$who[/] [$text-warning]$kind[/] "
        "[b]$action[/] $why",
        waited=f"{waited(item, now_ms):<7}",
        who=inert(f"{who:<8}"),
        kind=f"{KIND_LABEL.get(item.kind, item.kind):<9}",
        action=f"{item.action:<9}",
        why=inert(item.why),
    )


class InboxScreen(TaskActions, Screen[None]):
    DEFAULT_CSS = tcss(__file__)
    SCREEN = registry.INBOX
    BINDINGS = registry.bindings_for(registry.INBOX)
    AUTO_FOCUS = "OptionList"

    def __init__(self) -> None:
        super().__init__()
        self.items: list[InboxItem] = []
        self._keys: list[tuple[str, str, str]] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="inbox-title")
        yield OptionList(id="inbox-list")
        yield Static("", id="inbox-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.show_items(self.kanban.inbox_items, self.kanban.now_ms())
        self.set_interval(REFRESH_S, lambda: self.show_items(self.items, self.kanban.now_ms()))

    # -- what is shown --------------------------------------------------------------------------

    @property
    def options(self) -> OptionList:
        return self.query_one("#inbox-list", OptionList)

    def selected_item(self) -> InboxItem | None:
        index = self.options.highlighted
        if index is None or not 0 <= index < len(self.items):
            return None
        return self.items[index]

    def show_items(self, items: list[InboxItem], now_ms: int) -> None:
        """Replace the rows, the cursor kept on the same item (or the one that took its place)."""
        options = self.options
        current = self.selected_item()
        keep = a.item_key(current) if current is not None else None
        old_index = options.highlighted or 0
        self.items = list(items)
        self._keys = [a.item_key(item) for item in self.items]
        options.clear_options()
        options.add_options([Option(row_text(item, now_ms)) for item in self.items])
        count = len(self.items)
        title = f"{count} need you" if count else "Nothing needs you"
        self.query_one("#inbox-title", Static).update(
            Content.from_markup(
                "[b]$title[/] [$text-muted]oldest first · enter opens · a does the action[/]",
                title=title,
            )
        )
        if self.items:
            index = self._keys.index(keep) if keep in self._keys else min(old_index, count - 1)
            options.highlighted = index
        self._describe()

    def _describe(self) -> None:
        item = self.selected_item()
        detail = self.query_one("#inbox-detail", Static)
        if item is None:
            detail.update("")
            return
        title = inert(item.title or "")
        detail.update(
            Content.from_markup(
                "$title [$text-muted]· a $action: $what[/]\n$why",
                title=title,
                action=item.action,
                what=a.ACTIONS.get(item.action, ""),
                why=inert(item.why),  # whole here: its row may cut it
            )
        )
        self.refresh_bindings()

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self._describe()

    def on_option_list_option_selected(self, _event: OptionList.OptionSelected) -> None:
        self.action_open()

    # -- TaskActions: the row's task -------------------------------------------------------------

    def current_task(self) -> Task | None:
        item = self.selected_item()
        if item is None or item.task_id is None:
            return None
        return self.kanban.state.tasks.get(item.task_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open", "act") and self.selected_item() is None:
            return None
        if action == "open":
            item = self.selected_item()
            return True if item is not None and item.task_id else None
        return super().check_action(action, parameters)

    # -- keys -----------------------------------------------------------------------------------

    def action_cursor(self, step: int) -> None:
        if step > 0:
            self.options.action_cursor_down()
        else:
            self.options.action_cursor_up()

    def action_edge(self, end: int) -> None:
        if end > 0:
            self.options.action_last()
        else:
            self.options.action_first()

    def action_close(self) -> None:
        self.app.pop_screen()

    def action_open(self) -> None:
        item = self.selected_item()
        if item is None or item.task_id is None:
            return
        self.kanban.open_from_inbox(item.task_id)

    def action_act(self) -> None:
        """The row's one obvious action, through the board's own verbs."""
        item = self.selected_item()
        if item is None:
            return
        app = self.kanban
        task_id = item.task_id
        if item.action == a.RETRY and item.consumer is not None:
            name = item.consumer

            def retry(board: object) -> object:
                from boardlib.watch import Consumers

                return Consumers(board).retry(name)  # type: ignore[arg-type]

            app.write(f"retry {name}", retry, success=f"{name}: retrying the held delivery")
            return
        task = self.current_task()
        if task is None or task_id is None:
            app.notify("That task is not on the board any more.", severity="warning")
            return
        if item.action == a.APPROVE:
            self.action_approve()
        elif item.action == a.OVERRIDE:
            self.confirm_override(task)
        elif item.action == a.UNBLOCK:
            app.write(
                f"unblock {task_id}",
                lambda b: b.unblock(task_id, actor=app.operator),
                expect=task,
                success=f"{task_id} unblocked: back to todo",
            )
        elif item.action == a.RECLAIM:
            app.write(
                f"reclaim {task_id}",
                lambda b: b.reclaim(task_id, actor=app.operator),
                success=f"{task_id} reclaimed: back to todo",
            )
        elif item.action == a.RELEASE:
            self.request_move(task, t.TODO)
        elif item.action == a.LAND:
            self.request_landing(task)
        elif item.action == a.RAISE_BUDGET:
            if task.budget_usd is not None and f"the budget of {task_id} " in item.why:
                self.action_set_budget()  # its own dollar budget: the amount, then why
            else:  # an ancestor's, a team's or the board's day: the reason names the command
                app.notify(
                    inert(item.why), title=f"{task_id}: raise the budget, then unblock", timeout=15
                )
