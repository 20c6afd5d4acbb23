"""A yes/no question that names exactly what will happen (and, for an override, what is being
overridden). `y` confirms, `n`/`esc` backs out; nothing is written before a yes.

The dialog opens with the focus on the safe button, so `enter` (the key a hurried operator
presses to get a dialog out of the way) backs out: only an explicit `y`, or tab then enter, or a
click, says yes. Keys typed before the question was on screen are not answers (`x` `y` in one
burst cancelled a task whose question nobody saw; under load a dialog paints late): the app drops
them and says so. A key the dialog has no use for says what it waits for, instead of vanishing.
A body longer than the room the screen leaves scrolls by keys while the buttons keep the focus,
and a line above the next part says there is more, and where."""

import time
from collections.abc import Mapping

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.scalar import Scalar
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from boardlib.inert import inert

from .. import registry
from ..keymap import first_key, key_names, operator_keymap
from . import question_says, tcss, toasts_back, toasts_gone
from .footer import HintFooter

NOTICE_EVERY_S = 1.5  # the same notice at most this often
# Nobody reads a question and answers it this fast: a key pressed sooner after the first paint
# was typed ahead (tmux showed a `y` sent with `x` in one burst arriving 5 ms after the paint).
READ_S = 0.1
BUTTON_KEYS = frozenset({"enter", "space", "tab", "shift+tab", "left", "right"})
BODY_MAX_LINES = 16  # a longer body scrolls; a short screen gives it less (the buttons stay)
BODY_MIN_LINES = 1


class ConfirmDialog(ModalScreen[bool]):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.CONFIRM)

    def __init__(
        self, title: str, body: RenderableType, *, confirm: str = "Yes", danger: bool = False
    ) -> None:
        super().__init__(classes="-danger" if danger else "")
        self.title_text = title
        self.body = body
        self.confirm_label = confirm
        self.shown_at: float | None = None  # monotonic, once the question was painted
        self.ignored = 0  # keys typed before it was shown
        self._noticed, self._noticed_at = "", 0.0

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(inert(self.title_text)), id="dialog-title")
            yield from self.scrolled_body()
            with Horizontal(id="dialog-buttons"):
                yield Button(
                    f"{self.confirm_label} (y)",
                    id="yes",
                    variant="error" if self.has_class("-danger") else "primary",
                )
                yield Button("Back (n)", id="no")
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def scrolled_body(self) -> ComposeResult:
        """The body, in a box that scrolls (a Static alone clips its overflow: at 80x24 a long
        conflict line hid the land question's last lines, and no key or wheel reached them),
        and the line that says there is more."""
        with VerticalScroll(id="dialog-scroll", can_focus=False):  # the buttons keep the focus
            yield Static(self.body, id="dialog-body")
        yield Static("", id="dialog-more")

    def footer_words(self) -> Mapping[str, str | None]:
        """Its footer's `y` says what yes does (as its button): "y Cancel task"."""
        return {"confirm.yes": self.confirm_label}

    def on_mount(self) -> None:
        toasts_gone(self)
        body = self.query_one("#dialog-body", Static)
        body.update(self.body)
        scroll = self.query_one("#dialog-scroll")
        scroll.styles.max_height = BODY_MAX_LINES  # until the first layout says what fits
        self.watch(scroll, "scroll_y", self._say_more, init=False)
        self.watch(scroll, "virtual_size", self._say_more, init=False)
        self.call_after_refresh(self.fit_body)
        self.query_one("#no", Button).focus()
        # The moment of the first paint: the layout refresh that drew the question publishes this
        # signal right after writing to the terminal. An after-refresh callback (the fallback)
        # can run well after that under load: keys pressed once the question was visible were
        # dropped as "typed before" (seen in tmux at 160x48).
        self.screen_layout_refresh_signal.subscribe(self, self._laid_out)
        self.call_after_refresh(self._painted)

    def on_unmount(self) -> None:
        toasts_back(self)

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit_body)

    def fit_body(self) -> None:
        """The body gets the lines the rest of the dialog leaves on screen, so the buttons are
        always on it (a ~250-character title at 80x24 pushed them off)."""
        dialog = self.query_one("#dialog")
        scroll = self.query_one("#dialog-scroll")
        rest = dialog.styles.gutter.height + sum(
            part.outer_size.height for part in dialog.children if part is not scroll
        )
        footer = sum(shown.outer_size.height for shown in self.query(HintFooter))
        room = max(BODY_MIN_LINES, min(BODY_MAX_LINES, self.size.height - footer - rest))
        if scroll.styles.max_height != Scalar.from_number(room):
            scroll.styles.max_height = room
        self.call_after_refresh(self._say_more)

    def _say_more(self) -> None:
        """`▼ more below: ↓/↑ scroll, pgdn/pgup page` while part of the body is out of view. It
        takes the blank line over the part after it, so the room the body has does not change."""
        if not self.is_attached:
            return
        scroll = self.query_one("#dialog-scroll", VerticalScroll)
        more = self.query_one("#dialog-more", Static)
        dialog = self.query_one("#dialog")
        after = dialog.children[dialog.children.index(more) + 1]
        above, below = scroll.scroll_y > 0, scroll.scroll_y < _hidden_lines(scroll)
        more.display = above or below
        after.set_class(above or below, "-under-more")
        if not (above or below):
            return
        where = "above and below" if above and below else "above" if above else "below"
        mark = "▲▼" if above and below else "▲" if above else "▼"
        remapped = operator_keymap(self.app)

        def key(step: str) -> str:
            return first_key(f"confirm.{step}", remapped)

        more.update(
            f"{mark} more {where}: {key('down')}/{key('up')} scroll, "
            f"{key('page_down')}/{key('page_up')} page"
        )

    def _scrolled(self) -> VerticalScroll | None:
        """The body's box, or None and the operator told the question is all on screen (the
        keys said "is waiting" before they scrolled: they do not go silent where it fits)."""
        scroll = self.query_one("#dialog-scroll", VerticalScroll)
        if _hidden_lines(scroll) > 0:
            return scroll
        self._notice(f"“{self.title_text}” is all on screen")
        return None

    def action_scroll(self, step: int) -> None:
        if scroll := self._scrolled():
            scroll.scroll_relative(y=step, animate=False)

    def action_page(self, step: int) -> None:
        scroll = self._scrolled()
        if scroll is None:
            return
        if step > 0:
            scroll.scroll_page_down(animate=False)
        else:
            scroll.scroll_page_up(animate=False)

    def action_edge(self, step: int) -> None:
        scroll = self._scrolled()
        if scroll is None:
            return
        if step > 0:  # after a refresh: the end is known once laid out
            scroll.scroll_end(animate=False, x_axis=False)
        else:
            scroll.scroll_home(animate=False, x_axis=False)

    def _laid_out(self, _screen: object) -> None:
        if self.is_current:
            self._painted()

    def _painted(self) -> None:
        if self.shown_at is None:
            self.shown_at = time.monotonic()

    @property
    def answerable_at(self) -> float | None:
        """From when (monotonic) a key answers the question: shortly after it was painted."""
        return None if self.shown_at is None else self.shown_at + READ_S

    def typed_before_shown(self, key: events.Key) -> bool:
        """True (and the operator told, once in a while) for a key that reached the dialog but
        was pressed before it was on screen: the app then drops it."""
        if self.answerable_at is not None and key.time >= self.answerable_at:
            return False
        self.ignored += 1
        self._notice(
            f"{self.ignored} key(s) typed before “{self.title_text}” was on screen were ignored"
        )
        return True

    def on_key(self, event: events.Key) -> None:
        if event.key in BUTTON_KEYS or self._bound(event.key):
            return
        event.stop()
        event.prevent_default()
        self._notice(f"“{self.title_text}” is waiting")

    def _bound(self, key: str) -> bool:
        binding = self.app.active_bindings.get(key)
        return binding is not None and binding.node is self

    def _notice(self, what: str) -> None:
        now = time.monotonic()
        if what == self._noticed and now - self._noticed_at < NOTICE_EVERY_S:
            return
        self._noticed, self._noticed_at = what, now
        remapped = operator_keymap(self.app)
        yes = "/".join(key_names(registry.BY_ID["confirm.yes"], remapped))
        no = "/".join(key_names(registry.BY_ID["confirm.no"], remapped))
        keys = f"{yes} {self.confirm_label.lower()}, {no} backs out"
        question_says(self, f"{what}: {keys}.", severity="warning", timeout=4)

    def update_body(self, body: RenderableType) -> None:
        """A fact that arrived after the question was shown (git's word on a worktree)."""
        self.body = body  # on_mount shows it if it came before the body was composed
        for shown in self.query("#dialog-body").results(Static):
            shown.update(body)
            self.call_after_refresh(self.fit_body)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


def _hidden_lines(scroll: VerticalScroll) -> int:
    """How many of the body's lines its box cannot show. Not `max_scroll_y`: on the first
    layout its container size is still 0 when the virtual size is known, and a question that
    fits said "▼ more below" for a frame."""
    return max(0, scroll.virtual_size.height - scroll.size.height)
