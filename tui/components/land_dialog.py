"""`W`: the question before a landing, with its choices: the strategy (`s`: squash, rebase,
merge), the branch it lands on (`b`: the worktree's base unless chosen, from the branches read
again when the menu opens; the preview is read again for the chosen branch and strategy: a
replay may conflict where a squash merges) and, for a task with no verify command, the one way
it lands anyway: `u`, land unverified, which asks why (audited as the operator, with those
words). Never the default: `enter` backs out, `y` does not land an unverified task. `x` on done
work: it won't land (asks why; archived, its branch kept, audited), out of the inbox.

A confirmation (`ConfirmDialog`: keys typed before it was painted are dropped). Its answer goes
back to the app as a message (`LandDialog.Decided`); branch names and titles are drawn inert.
"""

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar, cast

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from boardlib import transitions as t
from boardlib.inert import inert
from boardlib.records import LAND_STRATEGIES, Task
from boardlib.worktrees.landing import CONFLICTS, UNAVAILABLE
from boardlib.worktrees.results import ALREADY_ON

from .. import registry
from ..cards import verdict_of
from ..gateway import BOARD_UNREADABLE
from ..keymap import first_key, operator_keymap
from ..landing_data import (
    STRATEGY_WORDS,
    Choices,
    LandChoice,
    Preview,
    landing_words,
    read_choices,
    read_preview,
)
from ..task_view import hanging, plain
from . import question_says, tcss
from .branch_menu import BranchMenu
from .confirm import ConfirmDialog
from .footer import HintFooter
from .prompt import PromptDialog

if TYPE_CHECKING:
    from boardlib import Board

    from ..app import KanbanApp

T = TypeVar("T")

# About two lines of the dialog: the whole title is in the drawer, and a longer one pushed the
# preview and the buttons off an 80x24 screen.
TITLE_SHOWN_CHARS = 130


def clipped(text: str, most: int) -> str:
    """`text`, or its first `most` characters ending in an ellipsis."""
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


class LandDialog(ConfirmDialog):
    DEFAULT_CSS = tcss(__file__)
    BINDINGS = registry.bindings_for(registry.LAND)

    class Decided(Message):
        """The operator said land, with these choices (`into_label`: the branch, for words)."""

        def __init__(self, task: Task, choice: LandChoice, into_label: str) -> None:
            super().__init__()
            self.task = task
            self.choice = choice
            self.into_label = into_label

    class Abandoned(Message):
        """The operator said the done work won't land, and why."""

        def __init__(self, task: Task, reason: str) -> None:
            super().__init__()
            self.task = task
            self.reason = reason

    @staticmethod
    def verb_for(task: Task) -> str:
        return "Approve and land" if task.status == t.IN_REVIEW else "Land"

    @classmethod
    def question_for(cls, task: Task) -> str:
        """The dialog's title, known before its preview is read (keys typed meanwhile are its)."""
        return f"{cls.verb_for(task)} {task.id}?"

    def __init__(self, task: Task, shown: Preview, choices: Choices, *, operator: str) -> None:
        self.task_row = task
        self.approving = task.status == t.IN_REVIEW
        self.verb = self.verb_for(task)
        self.shown: Preview | None = shown
        self.choices = choices
        self.operator = operator
        self.strategy = LAND_STRATEGIES[0]
        self.into: str | None = None  # None: the worktree's base
        self.decided: LandChoice | None = None
        self._reads = 0  # previews asked for; only the last one's answer is shown
        self._compact = False  # the body without its blank lines: it fits the screen so
        super().__init__(self.question_for(task), self._body(), confirm=self.verb)

    @property
    def kanban(self) -> "KanbanApp":
        return cast("KanbanApp", self.app)

    @property
    def unverified_only(self) -> bool:
        """No verify command: only `u` (with a reason) lands it."""
        return self.choices.unverified

    @property
    def target(self) -> str:
        """The branch it lands on, in words."""
        if self.into is not None:
            return self.into
        if self.choices.choices is not None:
            return self.choices.choices.base
        preview = self.shown.preview if self.shown is not None else None
        return preview.into if preview is not None and preview.into else "its base branch"

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(inert(self.title_text)), id="dialog-title")
            yield from self.scrolled_body()
            yield Static(self._choices_text(), id="land-choices")
            with Horizontal(id="dialog-buttons"):
                if self.unverified_only:
                    keys = self._keys("land.unverified")
                    yield Button(f"Land unverified… ({keys})", id="unverified", variant="error")
                else:
                    yes = f"{self.verb} ({self._keys('confirm.yes')})"
                    yield Button(yes, id="yes", variant="primary")
                yield Button(f"Back ({self._keys('confirm.no')})", id="no")
        yield HintFooter()  # its own keys: the screen behind's do not work here

    def footer_words(self) -> Mapping[str, str | None]:
        """Its footer says the keys that act on this landing: `u` only with no verify command
        (then `y` does not land), `x` only on done work, `b` only with another branch."""
        left_out = {
            "confirm.yes": self.unverified_only,
            "land.unverified": not self.unverified_only,
            "land.abandon": self.task_row.status != t.DONE,
            "land.into": not self._other_branches(),
        }
        words: dict[str, str | None] = dict(super().footer_words())  # `y`: the verb
        words.update({action_id: None for action_id, out in left_out.items() if out})
        return words

    def _keys(self, action_id: str) -> str:
        return first_key(action_id, operator_keymap(self.app))

    # -- what it says ---------------------------------------------------------------------------

    def _body(self) -> RenderableType:
        task, into = self.task_row, self.target
        if self.approving:
            lead = (
                f"One decision: {task.id}'s work is verified on the merged tree and lands on "
                f"{into}, and only then is it done. If it does not land, it stays in review "
                "with a comment saying why."
            )
        else:
            lead = f"{task.id} is done: its work is verified and lands on {into}."
        if self.unverified_only:
            lead = lead.replace("is verified on the merged tree and lands", "lands unverified")
            lead = lead.replace("is verified and lands", "lands unverified")
        known = self.shown.preview if self.shown is not None else None
        if known is not None and known.landing:  # found in tmux: it offered a second landing
            lead = f"{task.id} is {known.landing}: a second landing is refused until it ends."
        elif known is not None and known.state == CONFLICTS:
            # who may sync: its builder once a reject gives it back; done, only an operator
            who = (
                "Reject it, and its builder syncs and resolves it"
                if self.approving
                else f"An operator syncs it (kanban task workspace sync {task.id}) and resolves it"
            )
            elsewhere = (
                f", or land on another branch ({self._keys('land.into')})"
                if self._other_branches()
                else ""  # `b` would only say there is none
            )
            lead = (
                f"{task.id} does not land on {into} as it is: the landing would be refused "
                f"(merge_conflict). {who}{elsewhere}."
            )
        elif known is not None and known.why == ALREADY_ON:
            lead = (
                f"{task.id}'s change is already on {into}: landing records it as landed there; "
                f"{into} does not move and nothing is verified."
            )
        elif known is not None and known.state == UNAVAILABLE and not self.unverified_only:
            # found in tmux: "its work is verified and lands on main" above "cannot land TASK-9:
            # its change is already on main", and `y` was refused
            lead = f"{task.id} does not land on {into} as it is: the landing would be refused."
        shown = self.shown
        preview = (
            hanging(landing_words(shown))
            if shown is not None
            else plain(f"  checking whether it lands on {into}…", "dim")
        )
        gap: list[RenderableType] = [] if self._compact else [Text("")]
        failed: list[RenderableType] = []
        if verdict_of(task) == "fail" and task.status == t.DONE and not self.unverified_only:
            # found in tmux: done by an override over a failing gate, `W` said "its work is
            # verified and lands", then waited for the same command to fail on the merged tree
            failed = [
                *gap,
                hanging(
                    plain(
                        "⚠ Its verify command failed at the gate (done by an override): the "
                        "landing runs it again on the merged tree and is refused if it fails "
                        f"again ({self._keys('land.abandon')}: it won't land, asks why).",
                        "bold yellow",
                    )
                ),
            ]
        return Group(
            plain(lead),
            *gap,
            plain(clipped(task.title, TITLE_SHOWN_CHARS), "bold"),
            preview,
            *failed,
            *gap,
            plain(
                f"As {self.operator}. Afterwards the worktree is archived and the task branch "
                "deleted.",
                "dim",
            ),
        )

    def fit_body(self) -> None:
        """The body without its blank lines when it would not fit whole: at 80x24 the failing
        verdict's warning pushed "As operator... deleted" out of view (the buttons stayed)."""
        super().fit_body()
        width = self.query_one("#dialog-body", Static).content_region.width
        room = self.query_one("#dialog-scroll").styles.max_height
        if not width or room is None:
            return
        full = self._body_lines(width, compact=False)
        compact = full > int(room.value)
        if compact != self._compact:
            self._compact = compact
            self.update_body(self._body())

    def _body_lines(self, width: int, *, compact: bool) -> int:
        """How many lines the body takes `width` cells wide, with or without its blank lines."""
        kept, self._compact = self._compact, compact
        try:
            body = self._body()
        finally:
            self._compact = kept
        console = self.app.console
        return len(console.render_lines(body, console.options.update_width(width), pad=False))

    def _choices_text(self) -> RenderableType:
        strategies = Text("Strategy  ", "bold")
        for name in LAND_STRATEGIES:
            chosen = name == self.strategy
            strategies.append(f"{'●' if chosen else '○'} {name}  ", "bold" if chosen else "dim")
        strategies.append(f"{self._keys('land.strategy')}: next", "dim")
        if self.task_row.status == t.DONE:  # done work may be decided not to land (`x`)
            strategies.append(f"   {self._keys('land.abandon')}: won't land", "dim")
        words = Text(f"          {STRATEGY_WORDS.get(self.strategy, '')}", "dim")
        onto = Text("Onto      ", "bold")
        onto.append_text(plain(self.target, "bold"))
        found = self.choices.choices
        if found is not None:
            base = " (the worktree's base)" if self.target == found.base else ""
            others = self._other_branches()
            more = f"; {others} other branch{'es' if others != 1 else ''}" if others else ""
            onto.append_text(plain(f"{base}{more}  ", "dim"))
            if others:
                onto.append(f"{self._keys('land.into')}: choose", "dim")
        elif self.choices.problem:
            onto.append_text(plain(f"  (branches unreadable: {self.choices.problem})", "dim"))
        lines: list[RenderableType] = [strategies, words, onto]
        if self.unverified_only:
            lines.append(  # wrapped under its words, as the body's warning and preview
                hanging(
                    Text(
                        "⚠ No verify command: nothing checks the merged tree. Only "
                        f"{self._keys('land.unverified')} lands it, unverified, with your "
                        "reason (audited).",
                        "bold yellow",
                    )
                )
            )
        return Group(*lines)

    def _other_branches(self) -> int:
        """How many branches besides the one it lands on now `b` may choose."""
        found = self.choices.choices
        return len(found.branches) - 1 if found is not None and found.branches else 0

    def _redraw(self) -> None:
        self.refresh_bindings()  # the footer: `b` once there is another branch, or not
        self.update_body(self._body())
        for shown in self.query("#land-choices").results(Static):
            shown.update(self._choices_text())

    # -- the choices ----------------------------------------------------------------------------

    def action_strategy(self) -> None:
        index = LAND_STRATEGIES.index(self.strategy)
        self.strategy = LAND_STRATEGIES[(index + 1) % len(LAND_STRATEGIES)]
        self._read_preview()  # a replay may conflict where the work as one change merges

    def action_choose_into(self) -> None:
        """`b`: the menu opens at once and lists the branches as the repository has them now,
        read again off the UI thread (the ones read when the dialog opened may be stale)."""
        found = self.choices.choices
        if found is None:
            why = self.choices.problem or "the repository has no other branch"
            question_says(self, f"{self.task_row.id} lands on {self.target}: {why}.", timeout=4)
            return
        menu = BranchMenu(self.task_row.id, None, base=found.base, current=self.target)
        self.app.push_screen(menu, self._chosen_into)
        task_id = self.task_row.id
        self._read_off_thread(
            "land branches",
            lambda board: read_choices(board, task_id),
            lambda error: Choices.unreadable(task_id, error),
            lambda fresh: self._got_branches(menu, fresh),
        )

    def _got_branches(self, menu: BranchMenu, fresh: Choices) -> None:
        """The branches read for `b`: kept (the verify command stays the one the dialog opened
        with: its buttons were made for it) and listed, or why there is nothing to choose."""
        found, read = self.choices.choices, fresh.choices
        if found is None or not self.is_attached or not menu.is_attached:
            return
        if read is not None:
            self.choices = replace(
                self.choices, choices=replace(found, base=read.base, branches=read.branches)
            )
            self._redraw()
        if read is None or not self._other_branches():
            menu.dismiss(None)
            why = fresh.problem or "the repository has no other branch"
            question_says(self, f"{self.task_row.id} lands on {self.target}: {why}.", timeout=4)
            return
        menu.show(read.branches, base=read.base)

    def _chosen_into(self, name: str | None) -> None:
        if name is None or name == self.target:
            return
        found = self.choices.choices
        self.into = None if found is not None and name == found.base else name
        self._read_preview()

    def _read_preview(self) -> None:
        """Read the preview again for the branch and strategy now chosen (off the UI thread)."""
        self.shown = None
        self._redraw()
        self._reads += 1
        reads, task_id, into, strategy = self._reads, self.task_row.id, self.into, self.strategy
        self._read_off_thread(
            "land preview",
            lambda board: read_preview(board, task_id, into, strategy),
            lambda error: Preview.unreadable(task_id, error),
            lambda shown: self._got_preview(reads, shown),
        )

    def _read_off_thread(
        self,
        what: str,
        work: "Callable[[Board], T]",
        unreadable: Callable[[Exception], T],
        got: Callable[[T], None],
    ) -> None:
        """`work` on a worker thread, its answer handed to `got` on the UI thread: an unreadable
        board is said in the answer (`unreadable`), and the land still decides; anything else is
        also reported as the app's defect."""
        app = self.kanban

        def read() -> None:
            try:
                answer = app.gateway.read(work)
            except BOARD_UNREADABLE as error:
                answer = unreadable(error)
            except Exception as error:
                app.report_defect_from_thread(what, error)
                answer = unreadable(error)
            app.call_from_thread(got, answer)

        self.run_worker(read, thread=True, group=what, exit_on_error=False)

    def _got_preview(self, reads: int, shown: Preview) -> None:
        if reads == self._reads and self.is_attached:
            self.shown = shown
            self._redraw()

    # -- the answers ----------------------------------------------------------------------------

    def action_answer(self, answer: bool) -> None:
        if not answer:
            self.dismiss(False)
        elif self.unverified_only:
            question_says(
                self,
                f"{self.task_row.id} has no verify command: "
                f"{self._keys('land.unverified')} lands it unverified (asks why), "
                f"{self._keys('confirm.no')} backs out.",
                severity="warning",
                timeout=6,
            )
        else:
            self._decide(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        event.prevent_default()  # the confirmation's own handler would answer a second time
        if event.button.id == "yes":
            self.action_answer(True)
        elif event.button.id == "unverified":
            self.action_land_unverified()
        else:
            self.dismiss(False)

    def action_land_unverified(self) -> None:
        if not self.unverified_only:
            found = self.choices.choices
            command = found.verify_command if found is not None else None
            said = f"`{command}` verifies it" if command else "the landing looks for its command"
            question_says(
                self,
                f"{self.task_row.id} lands verified ({said}): "
                f"{self._keys('confirm.yes')} {self.verb.lower()}.",
                timeout=5,
            )
            return
        prompt = PromptDialog(
            f"Land {self.task_row.id} without verification?",
            f"{self.task_row.id} has no verify command: nothing checks the merged tree before it "
            f"reaches {self.target}. Why land it anyway? Your words go to the audit table with "
            f"your name ({self.operator}).",
        )
        self.app.push_screen(prompt, self._reason_given)

    def action_abandon(self) -> None:
        """`x`: done work that won't land (its verify command fails on the merged tree): asks
        why; the app archives it, its branch kept, audited."""
        task = self.task_row
        if task.status != t.DONE:
            question_says(
                self,
                f"{task.id} is {task.status}: only done work is decided not to land; "
                f"{self._keys('confirm.no')} backs out.",
                timeout=5,
            )
            return
        prompt = PromptDialog(
            f"{task.id} won't land?",
            f"Its worktree is archived, its work kept on its branch; {self.target} does not "
            "move, and it leaves the inbox. Why won't it land? Your words go to the audit table "
            f"with your name ({self.operator}).",
        )
        self.app.push_screen(prompt, self._abandon_given)

    def _abandon_given(self, reason: str | None) -> None:
        if reason and reason.strip():
            self.app.post_message(self.Abandoned(self.task_row, reason.strip()))
            self.dismiss(False)

    def _reason_given(self, reason: str | None) -> None:
        if reason and reason.strip():
            self._decide(reason.strip())

    def _decide(self, reason: str | None) -> None:
        preview = self.shown.preview if self.shown is not None else None
        self.decided = LandChoice(
            strategy=self.strategy,
            into=self.into,
            expect_source=preview.source_tree if preview is not None else None,
            unverified_reason=reason,
        )
        self.app.post_message(self.Decided(self.task_row, self.decided, self.target))
        self.dismiss(True)
