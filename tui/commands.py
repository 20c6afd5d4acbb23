"""`ctrl+p`: the command palette. Two providers: jump to a task by id or title words, and the
board's actions from the registry (including "move to <status>" for exactly the legal targets of
the selected task), next to Textual's own commands (themes, such as `ansi-dark` for terminals
reached over SSH, quit, keys).

Safety rules, because a palette entry can write to the board:
- a query that looks like a task id (`TASK-7`) jumps to exactly that task when it exists (its hit
  outranks everything), and no action is offered at all for such a query;
- actions are matched on their words only, never on the task id in their title, so a write can
  never be chosen through a fuzzy match of an id; every write's title names its task;
- what is shown is plain text: titles are made inert and never parsed as markup (Textual's own
  `Matcher.highlight` parses its candidate as markup, so it is not used for task text).
"""

import asyncio
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content
from textual.markup import escape
from textual.screen import Screen
from textual.widget import Widget

from boardlib import Board, BoardError
from boardlib import transitions as t
from boardlib.columns import TaskSearch
from boardlib.inert import inert
from boardlib.records import Task
from boardlib.store.base import StoreError
from boardlib.transitions import label

from . import registry
from .keymap import key_text

if TYPE_CHECKING:
    from .app import KanbanApp

T = TypeVar("T")

MAX_HITS = 30
EXACT_ID = 100.0  # fuzzy scores reach 2.0 for a substring; an exact id must outrank them all
FUZZY_CEILING = 0.9
REFUSED_CEILING = 0.3  # an entry saying why an action does not apply ranks below those that do
ID_QUERY = re.compile(r"[A-Za-z][A-Za-z0-9_]*-\d+")


def looks_like_id(query: str) -> bool:
    return ID_QUERY.fullmatch(query.strip()) is not None


def plain_highlight(matcher: Matcher, text: str) -> Content:
    """`text` as plain content with the fuzzy match marked (no markup parsing)."""
    content = Content(text)
    score, offsets = matcher.fuzzy_search.match(matcher.query, text)
    if not score:
        return content
    for offset in offsets:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class TaskJumpProvider(Provider):
    """ "TASK-42" or words of a title: select that task on the board. The store is searched (a
    task finished two years ago is found as a task of today), off the event loop."""

    @property
    def kanban(self) -> "KanbanApp":
        return self.app  # type: ignore[return-value]

    def _hit(self, task: Task, score: float, matcher: Matcher) -> Hit:
        text = inert(f"{task.id}  {task.title}")
        return Hit(
            score,
            plain_highlight(matcher, text),
            partial(self.kanban.jump_to, task.id),
            text=text,
            help=escape(inert(f"go to {task.id} ({label(task.status)})")),
        )

    async def _ask(self, work: Callable[[Board], T]) -> T | None:
        try:
            return await asyncio.to_thread(self.kanban.gateway.read, work)
        except (BoardError, StoreError):
            return None  # the header says the board is unreadable

    async def search(self, query: str) -> Hits:
        words = tuple(query.lower().split())
        if not words:
            return
        matcher = self.matcher(query)
        if looks_like_id(query):
            wanted = query.strip().upper()
            exact = await self._ask(lambda board: board.find_task(wanted))
            if exact is not None:
                yield self._hit(exact, EXACT_ID, matcher)
            else:
                yield Hit(
                    EXACT_ID,
                    Content(inert(f"{wanted} is not on this board")),
                    partial(self.kanban.notify, f"{wanted} is not on this board."),
                    text=wanted,
                )
            search = TaskSearch(words=(wanted.lower(),), include_dropped=True)
            longer = await self._ask(lambda board: board.find_tasks(search, limit=MAX_HITS * 4))
            found = 0
            for task in longer or []:  # longer ids that start with it, below the exact one
                if task.id.upper().startswith(wanted) and task.id.upper() != wanted:
                    yield self._hit(task, 0.5, matcher)
                    found += 1
                    if found >= MAX_HITS:
                        return
            return
        search = TaskSearch(words=words, include_dropped=True)
        for task in await self._ask(lambda board: board.find_tasks(search, limit=MAX_HITS)) or []:
            score = min(max(matcher.match(inert(f"{task.id}  {task.title}")), 0.1), FUZZY_CEILING)
            yield self._hit(task, score, matcher)


@dataclass(frozen=True, slots=True)
class BoardCommand:
    """One palette entry: `title` is shown (naming its task), `words` is what a query matches."""

    title: str
    words: str
    help: str
    run: Callable[[], object]
    writes: bool
    why_not: str | None = None  # it does not apply now: why (the entry only says so)


def board_commands(
    app: "KanbanApp", screen: Widget, *, refused: bool = False
) -> Iterator[BoardCommand]:
    """The registry's palette entries for this screen (or, for a full-screen drawer, the drawer
    widget that holds its keys), only those that apply right now (as the
    footer greys them), each naming the task it acts on; "move" offers exactly the legal
    targets of the selected task. `refused`: the greyed ones too, each saying why it does not
    apply (its key's words, `unavailable_because`), so a query naming one is not "No matches";
    a greyed move is one entry, `Move TASK-1 (not now)`, with the reason."""
    name = getattr(screen, "SCREEN", None)
    if name is None:
        return
    task = app.selected_task()
    move = registry.BY_ID["task.move"]
    movable = screen.check_action(move.name, move.parameters)
    if task is not None and movable is True:
        for target in t.legal_targets(task.status):
            yield BoardCommand(
                inert(f"Move {task.id} to {label(target)}"),
                f"Move to {label(target)}",
                f"{_keys(app, move)} · from {label(task.status)}, {move.palette_help}",
                partial(screen.request_move, task, target),  # type: ignore[attr-defined]
                writes=True,
            )
    elif movable is None and refused:
        title = f"Move {task.id}" if task is not None else "Move"
        yield _not_now(app, move, task, title, "Move to another column")
    for action in registry.palette_entries(name):
        runner = app if registry.APP in action.screens else screen
        available = runner.check_action(action.name, action.parameters)
        assert action.palette is not None
        if available is None and refused:  # greyed out (False: its key is another action's)
            words = action.palette.replace("{task}", "").replace("  ", " ").strip()
            title = " ".join(action.palette_title(task).split())  # "Mark  done": no task
            yield _not_now(app, action, task, title, words)
        if available is not True:
            continue
        help_text = " · ".join(part for part in (_keys(app, action), action.palette_help) if part)
        yield BoardCommand(
            inert(action.palette_title(task)),
            action.palette.replace("{task}", "").replace("  ", " ").strip(),
            help_text,
            partial(runner.run_action, action.call),
            writes=action.writes,
        )


def _not_now(
    app: "KanbanApp", action: registry.Action, task: Task | None, title: str, words: str
) -> BoardCommand:
    """An action greyed out now, listed as such: its help is why, in its key's words
    (`unavailable_because`), and choosing it only says that."""
    marked = len(app.marked) if action.id in registry.BATCH else 0
    why = registry.unavailable_because(action, read_only=app.read_only, task=task, marked=marked)
    why = why[0].upper() + why[1:] + "."
    return BoardCommand(
        inert(f"{title} (not now)"),
        words,
        why,
        partial(app.notify, why, severity="warning", timeout=4),
        writes=False,
        why_not=why,
    )


def _keys(app: "KanbanApp", action: registry.Action) -> str:
    return key_text(action, app.user_keymap)


def _runner(screen: Screen[Any]) -> Widget:
    """Who runs the palette's actions: the screen, or the drawer widget of a full-screen drawer
    (its keys live on the widget, so it serves both layouts)."""
    from .components.drawer_screen import DrawerScreen

    return screen.drawer if isinstance(screen, DrawerScreen) else screen


class BoardActionsProvider(Provider):
    """The board's actions. Nothing at all for an id-looking query: that is a jump."""

    @property
    def kanban(self) -> "KanbanApp":
        return self.app  # type: ignore[return-value]

    async def search(self, query: str) -> Hits:
        if not query.strip() or looks_like_id(query):
            return
        matcher = self.matcher(query)
        for command in board_commands(self.kanban, _runner(self.screen), refused=True):
            score = matcher.match(command.words)
            if score > 0:
                ceiling = FUZZY_CEILING if command.why_not is None else REFUSED_CEILING
                yield Hit(
                    min(score, ceiling),
                    plain_highlight(matcher, command.title),
                    command.run,
                    text=command.title,
                    help=escape(command.help),
                )

    async def discover(self) -> Hits:
        for command in board_commands(self.kanban, _runner(self.screen)):
            yield DiscoveryHit(
                Content(command.title), command.run, text=command.title, help=escape(command.help)
            )
