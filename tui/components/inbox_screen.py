"""`i`: what needs the operator, oldest first (`boardlib.attention`, read by the live feed).

Each row says how long it has waited, which task (its id and title), why, and the one obvious
action, which `a` does (approve, land, unblock, override the debt, raise a budget, reclaim,
release, retry). Enter opens the task's drawer. Rows are kept by their item key, so an update
that adds or removes items never moves the cursor off the item the operator is on. When that
item itself leaves (another process unblocked or landed it), the cursor lands on the neighbour,
a note says where the task went, and `a` asks before acting on a row the operator never chose
(an operator unblocked TASK-10 believing it was TASK-7). Agent text (titles, reasons) is inert.
"""

from functools import partial

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.css.styles import RulesMap
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets._toast import ToastRack
from textual.widgets.option_list import Option

from boardlib import attention as a
from boardlib import transitions as t
from boardlib.clock import span
from boardlib.inert import inert
from boardlib.records import InboxItem, Task

from .. import registry
from ..actions import TaskActions
from ..cards import fit
from ..keymap import first_key, operator_keymap
from . import tcss
from .confirm import ConfirmDialog
from .footer import HintFooter

# The "waited" column while the screen is open: looked at this often, and a row repainted only
# when its words changed (a row in seconds each second, one in minutes once a minute).
WAITED_TICK_S = 1.0

# A row's title is cut to this many cells: 300 rows of "passed its gate, not landed: its work
# wai…" at 80x24 (a busy demo) said which task only by its id; the why keeps some room. A wider
# screen gives the title what the longest why leaves (at 160 columns titles were cut at 24 cells
# beside a blank band).
TITLE_CELLS = 24
# A row's cells besides its kind, action, title and why: the waited and task columns, the spaces
# between, the option list's padding and a scrollbar.
ROW_CELLS = 7 + 1 + 8 + 1 + 1 + 1 + 1 + 2 + 2

# The actions whose `a` opens a question naming the task anyway (the land dialog, the override's
# confirmation, the release's, the budget's prompt): an unchosen row asks nothing more for them.
ASKS_ITSELF = frozenset({a.LAND, a.OVERRIDE, a.RELEASE, a.RAISE_BUDGET})


def waited(item: InboxItem, now_ms: int) -> str:
    gone = max(0, now_ms - item.since)
    return span(gone) if gone >= 1000 else "now"


def who_of(item: InboxItem) -> str:
    """What a row names: its task, else the held delivery's consumer."""
    return item.task_id or item.consumer or "-"


def title_of(item: InboxItem) -> str:
    return inert(item.title or "")


def column_widths(items: list[InboxItem], width: int = 0) -> tuple[int, int, int]:
    """The kind, action and title columns' widths: the widest shown (a title at most
    TITLE_CELLS and half the room it shares with the why, or what the longest why leaves of
    `width`), so the columns after them line up
    (a fixed action width let `raise_budget` push its row's why three cells right)."""
    kinds = max((len(item.kind) for item in items), default=0)
    actions = max((len(item.action) for item in items), default=0)
    titles = max((cell_len(title_of(item)) for item in items), default=0)
    whys = max((cell_len(inert(item.why)) for item in items), default=0)
    free = width - ROW_CELLS - kinds - actions  # the title's and the why's
    # At 80x24 a long kind and action (`budget_exceeded`, `raise_budget`) left the why 5 cells
    # beside a 24-cell title: the title gets at most half of what they share, unless the whys
    # leave it more.
    share = TITLE_CELLS if width <= 0 else max(0, min(TITLE_CELLS, free // 2))
    return kinds, actions, min(titles, max(share, free - whys))


class RowContent(Content):
    """A row of the list, one line (the list is `text-wrap: nowrap`): measured as one without
    wrapping it. The option list measured each of 2,142 rows by cutting it to the width, twice
    or more per open, most of what `i` took on a large board."""

    def get_height(self, rules: RulesMap, width: int) -> int:
        return 1


def row_text(item: InboxItem, now_ms: int, widths: tuple[int, int, int] = (0, 0, 0)) -> Content:
    """One row: waited, task, kind, what `a` does, the task's title, why. Our markup, the facts
    inert. The kind is the board's own name for it (`attention.KINDS`), as `kanban inbox` and
    docs/inbox.md say it: the TUI called a `verification_failed` item "gate red"."""
    kind_cells, action_cells, title_cells = widths
    who = who_of(item)
    # Assembled, not parsed from markup: 15 times cheaper, and `i` on a board with 2,142 items
    # took 1.5 s, most of it parsing the same markup once a row.
    return RowContent.assemble(
        (f"{waited(item, now_ms):<7}", "$text-muted"),
        " ",
        (inert(f"{who:<8}"), "b $text-accent"),
        " ",
        (f"{item.kind:<{kind_cells}}", "$text-warning"),
        " ",
        (f"{item.action:<{action_cells}}", "b"),
        " ",
        fit(title_of(item), title_cells) + " " if title_cells else "",
        inert(item.why),
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
        self._waited: list[str] = []  # each row's "waited" words as drawn
        self._widths = (0, 0, 0)  # the kind, action and title columns' widths (`column_widths`)
        # The row the cursor was put on when the operator's row left the inbox: `a` asks before
        # acting on it, until the operator moves the cursor (chooses a row).
        self.unchosen: tuple[str, str, str] | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="inbox-title")
        yield OptionList(id="inbox-list")
        yield Static("", id="inbox-detail")
        yield HintFooter()

    def on_mount(self) -> None:
        self.show_items(self.kanban.inbox_items, self.kanban.now_ms())
        self.set_interval(WAITED_TICK_S, self.refresh_waited)
        self.screen_layout_refresh_signal.subscribe(self, self._toasts_above_detail)

    def on_unmount(self) -> None:
        self.screen_layout_refresh_signal.unsubscribe(self)

    def _toasts_above_detail(self, _screen: Screen[None]) -> None:
        """Toasts sit above the detail line, as many lines as it takes after each layout: at
        80x24 one lay over it (the selected row's title and what `a` does), where Textual puts
        them, just above the footer. The list's last rows it may cover are said whole there."""
        detail = self.query_one("#inbox-detail")
        below = self.size.height - detail.region.y if detail.region.height else 1
        for rack in self.query_children(ToastRack):
            if rack.styles.margin.bottom != below:
                rack.styles.margin = (0, 0, below, 0)

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
        """Replace the rows, the cursor kept on the same item. When that item left, the cursor
        lands on the same task's new item, else on the neighbour, and the operator is told."""
        options = self.options
        current = self.selected_item()
        keep = a.item_key(current) if current is not None else None
        old_index = options.highlighted or 0
        self.items = list(items)
        self._keys = [a.item_key(item) for item in self.items]
        self._waited = [waited(item, now_ms) for item in self.items]
        self._widths = column_widths(self.items, self.size.width)
        # Only the operator's own moves are "highlighted" messages: they choose a row.
        with self.prevent(OptionList.OptionHighlighted):
            options.clear_options()
            options.add_options(
                [Option(row_text(item, now_ms, self._widths)) for item in self.items]
            )
            if self.items:
                index = self._keys.index(keep) if keep in self._keys else self._same_task(current)
                options.highlighted = (
                    min(old_index, len(self.items) - 1) if index is None else index
                )
        count = len(self.items)
        title = f"{count} need you" if count else "Nothing needs you"
        self.query_one("#inbox-title", Static).update(
            Content.from_markup(
                "[b]$title[/] [$text-muted]oldest first · enter opens · a does the action[/]",
                title=title,
            )
        )
        if current is not None and keep not in self._keys:
            self._left(current)
        self._describe()

    def _same_task(self, gone: InboxItem | None) -> int | None:
        """The row of the same task (or held delivery) under another kind, if it has one."""
        if gone is None:
            return None
        for index, item in enumerate(self.items):
            if (item.task_id, item.consumer) == (gone.task_id, gone.consumer):
                return index
        return None

    def _left(self, gone: InboxItem) -> None:
        """The operator's row left the inbox: say where its task went and where the cursor is,
        and make `a` ask before acting on a row the operator did not choose."""
        now = self.selected_item()
        own = gone.task_id is not None and self.kanban.acted_here(gone.task_id)
        if now is not None and (now.task_id, now.consumer) == (gone.task_id, gone.consumer):
            if now.action == gone.action:  # the same task, the same action: the choice holds
                if self.unchosen == a.item_key(gone):
                    self.unchosen = a.item_key(now)
                return
            if own or self.kanban.put_here(now):
                # The operator's own action here moved the row on (approved: now to land; a
                # landing refused): the cursor stays on it, and the row and its detail line say
                # what `a` does now; `a` still asks before a second action they have not seen yet.
                self.unchosen = a.item_key(now)
                return
            said = f"{who_of(now)} is now “{now.kind}” in the inbox"
        else:
            went = self.kanban.where_it_went(gone.task_id) if gone.task_id else ""
            said = f"{who_of(gone)} left the inbox{went}"
        if now is None:
            self.unchosen = None
            self.kanban.notify(f"{said}. Nothing else needs you.", timeout=6)
            return
        self.unchosen = a.item_key(now)
        asks = (
            ""
            if now.action in ASKS_ITSELF
            else f": {self._act_key()} asks before acting on it until you move the cursor"
        )
        self.kanban.notify(
            f"{said}. The cursor is on {who_of(now)} ({now.action.replace('_', ' ')}){asks}.",
            severity="information" if own else "warning",  # the operator's own doing: no alarm
            timeout=8,
        )

    def on_resize(self) -> None:
        """A title gets what the whys leave of the new width: the rows are drawn again."""
        widths = column_widths(self.items, self.size.width)
        if widths != self._widths:
            self._widths = widths
            self._redraw_rows()

    def _redraw_rows(self) -> None:
        now_ms = self.kanban.now_ms()
        with self.prevent(OptionList.OptionHighlighted):  # no row is chosen by a repaint
            for index, item in enumerate(self.items):
                self.options.replace_option_prompt_at_index(
                    index, row_text(item, now_ms, self._widths)
                )

    def refresh_waited(self) -> None:
        """Time alone moves the "waited" column: repaint the rows whose words changed."""
        now_ms = self.kanban.now_ms()
        options = self.options
        with self.prevent(OptionList.OptionHighlighted):  # no row is chosen by a repaint
            for index, item in enumerate(self.items):
                words = waited(item, now_ms)
                if index < len(self._waited) and words != self._waited[index]:
                    self._waited[index] = words
                    options.replace_option_prompt_at_index(
                        index, row_text(item, now_ms, self._widths)
                    )

    def _act_key(self) -> str:
        return first_key("inbox.act", operator_keymap(self.app))

    def keys_hint(self) -> str:
        """What a key the inbox has no use for is told (the app says it, `_key_without_use`)."""
        first = partial(first_key, remapped=operator_keymap(self.app))
        return (
            f"not an inbox key. Here {first('inbox.down')}/{first('inbox.up')} move, "
            f"{first('inbox.open')} opens the task, {first('inbox.act')} does the row's action, "
            f"{first('inbox.close')} goes back, {first('app.help')} lists every key."
        )

    def _describe(self) -> None:
        item = self.selected_item()
        detail = self.query_one("#inbox-detail", Static)
        if item is None:
            detail.update("")
            return
        title = inert(item.title or "")
        detail.update(
            Content.from_markup(
                "$title [$text-muted]· $key: $what[/]\n$why",
                title=title,
                key=self._act_key(),
                what=a.ACTIONS.get(item.action, item.action),  # the action's words name it
                why=inert(item.why),  # whole here: its row may cut it
            )
        )
        self.refresh_bindings()

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self.unchosen = None  # the operator moved the cursor: the row is chosen
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
        """The row's one obvious action, through the board's own verbs; on a row the cursor was
        put on when the operator's row left, only after asking."""
        item = self.selected_item()
        if item is None:
            return
        if self.unchosen == a.item_key(item) and item.action not in ASKS_ITSELF:
            self._confirm_unchosen(item)
            return
        self._act_on(item)

    def _confirm_unchosen(self, item: InboxItem) -> None:
        who, key = who_of(item), a.item_key(item)
        verb = item.action.replace("_", " ")
        body = Text.assemble(
            f"The row you were on left the inbox and the cursor moved to {who}; you have not "
            f"chosen it. {a.ACTIONS.get(item.action, verb).capitalize()}?\n\n",
            (inert(item.why), "dim"),
        )

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            now = self.selected_item()
            if now is None or a.item_key(now) != key:
                self.kanban.notify(f"{who} left the row meanwhile: nothing done.", timeout=5)
                return
            self.unchosen = None
            self._act_on(now)

        self.kanban.push_screen(
            ConfirmDialog(f"{verb.capitalize()} {who}?", body, confirm=verb.capitalize()),
            answered,
        )

    def _act_on(self, item: InboxItem) -> None:
        """The selected row's action (`item` is that row)."""
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
                self.ask_budget(task, raising=True)  # its own dollar budget: amount, why
            else:  # an ancestor's, a team's or the board's day: the reason names the command
                app.notify(
                    inert(item.why), title=f"{task_id}: raise the budget, then unblock", timeout=15
                )
