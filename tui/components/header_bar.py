"""The one-line header: which board, how much is on it, whether it is live, when it last changed.

Every field is an absolute fact (a path, counts, a state, a wall-clock time), so the header is
repainted only when one of them changes: an idle board writes nothing, there is no clock here.
"""

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from textual.content import Content
from textual.widget import Widget

from boardlib.attention import VERIFYING
from boardlib.inert import inert
from boardlib.location import BoardLocation, DatabaseUrl
from boardlib.transitions import label

from ..cards import clock_text
from . import tcss


def short_path(path: BoardLocation) -> str:
    """Relative to the working folder when inside it, else with `~` for home; a database URL
    without its password."""
    if isinstance(path, DatabaseUrl):
        return path.display
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        pass
    text = str(path)
    home = os.path.expanduser("~")
    if home != "/" and text.startswith(home + os.sep):
        text = "~" + text[len(home) :]
    return text


@dataclass(frozen=True, slots=True)
class HeaderFacts:
    path: str = ""
    total: int = 0
    shown: int = 0
    in_progress: int = 0
    in_review: int = 0
    blocked: int = 0
    loaded: bool = False
    paused: bool = False
    waiting: bool = False  # paused and the board changed meanwhile
    unreadable_since: int | None = None
    unreadable_reason: str | None = None
    last_change_ms: int | None = None
    filter: str = ""
    filter_problems: tuple[str, ...] = ()  # parts of the filter that are not understood
    read_only: bool = False
    schema_newer: bool = False  # the file was written by a newer kanban
    hidden_left: tuple[str, ...] = ()  # the statuses of the columns off screen on each side
    hidden_right: tuple[str, ...] = ()
    note: str = ""  # a lasting word from whoever started the app ("demo ended 03:10: ...")
    demo: bool = False  # `kanban demo`: simulated agents on a throwaway board, said always
    inbox: int = 0  # how many items need a person (the inbox, `i`)
    inbox_new: str = ""  # the newest arrival, said once ("TASK-5 needs review"), until `i`
    inbox_new_short: str = ""  # the same, shorter: its id ("TASK-5", "TASK-5 (+1)"), or ""
    inbox_by_status: tuple[tuple[str, int], ...] = ()  # how many of the items in each column
    verifying: int = 0  # tasks their gate judges now: no item, nobody need act (`1 verifying`)


NEW_ITEM_PRIORITY = 8.5  # above the counts and the arrows (8), below what is never dropped (9)
# The filter decides what every column shows: with it gone, a filter matching nothing left seven
# empty columns and no word of why. It outlasts the new item's note, which is said shorter first.
FILTER_PRIORITY = 8.7
# Tasks their gate judges now, beside what needs a person ("0 need you · 1 verifying" tells an
# empty inbox from nothing in flight). First of the counts to go: nobody need act on it.
VERIFYING_PRIORITY = 8


class HeaderBar(Widget):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, path: BoardLocation, *, read_only: bool, now_ms: Callable[[], int]) -> None:
        super().__init__(id="header")
        self.now_ms = now_ms
        self.facts = HeaderFacts(path=short_path(path), read_only=read_only)

    def update_facts(self, **changes: object) -> None:
        facts = replace(self.facts, **changes)  # type: ignore[arg-type]
        if facts != self.facts:
            self.facts = facts
            self.refresh()

    def render(self) -> Content:
        """Markup is ours; every fact is passed as a variable, which Textual inserts as plain
        text, after `inert` (a path or an error message can hold anything). Facts keep their
        order; when they do not all fit, the least important go first (the path, then the time
        of the last change), never the state, the counts or the filter."""
        f = self.facts
        now = self.now_ms()

        def clock(ms: int) -> str:
            return clock_text(ms, now)

        parts: list[tuple[float, Content]] = [(9, Content.from_markup("[b $accent]kanban[/]"))]
        if f.demo:
            parts.append((9, Content.from_markup("[b $text-warning]DEMO[/]")))
        said_shorter_first: dict[int, tuple[float, Content]] = {}
        beside: set[int] = set()  # parts joined to the one before by " · ", not " │ "
        if f.unreadable_since is not None:
            reason = f" ({f.unreadable_reason})" if f.unreadable_reason else ""
            unreadable = _markup(
                "[b $text-error]⚠ unreadable since $when$reason[/]",
                when=clock(f.unreadable_since),
                reason=reason,
            )
            parts.append((9, unreadable))
        elif not f.loaded:
            parts.append((9, Content.from_markup("[$text-muted]loading…[/]")))
        elif f.paused:
            waiting = " · changes waiting (p)" if f.waiting else ""
            parts.append((9, _markup("[b $text-warning]❚❚ paused$waiting[/]", waiting=waiting)))
        else:
            parts.append((9, Content.from_markup("[b $text-success]● live[/]")))
        if f.schema_newer:
            newer = "[b $text-warning]read-only: schema newer than this kanban[/]"
            parts.append((9, Content.from_markup(newer)))
        elif f.read_only:
            parts.append((9, Content.from_markup("[b $text-warning]read-only[/]")))
        if f.loaded:
            # What needs a person: never dropped, at any width (the state's priority).
            need = (
                "[b $text-warning]$count need you[/]"
                if f.inbox
                else "[$text-muted]$count need you[/]"
            )
            parts.append((9, _markup(need, count=str(f.inbox))))
            if f.verifying:
                verifying = _markup("[$text-accent]$count[/]", count=f"{f.verifying} {VERIFYING}")
                beside.add(id(verifying))  # "2 need you · 1 verifying"
                parts.append((VERIFYING_PRIORITY, verifying))
            if f.inbox_new:
                # Said in the header, as the inbox promises: it outlasts the counts and the
                # arrows (at 80 columns with columns off screen it was the first to go).
                new = _markup("[b $text-warning]new: $new (i)[/]", new=f.inbox_new)
                brief = f"new: {f.inbox_new_short} (i)" if f.inbox_new_short else "new (i)"
                said_shorter_first[id(new)] = (
                    NEW_ITEM_PRIORITY,
                    _markup("[b $text-warning]$new[/]", new=brief),
                )
                parts.append((NEW_ITEM_PRIORITY, new))
            count = (
                f"{f.total} task{'' if f.total == 1 else 's'}"
                if f.shown == f.total
                else f"{f.shown}/{f.total} shown"
            )
            extra = f" · {f.in_progress} running" if f.in_progress else ""
            extra += f" · {f.in_review} to review" if f.in_review else ""
            extra += f" · {f.blocked} blocked" if f.blocked else ""
            counts = Content(count + extra)
            if extra:  # before the counts go, they are said shorter: the total alone
                said_shorter_first[id(counts)] = (8, Content(count))
            parts.append((8, counts))
        compact: dict[int, Content] = {}
        if f.hidden_left or f.hidden_right:
            # What needs a person in a column off screen is said beside its arrow: at 80x24
            # three columns of seven show, and review or blocked can be among the rest.
            needing = dict(f.inbox_by_status) if f.loaded else {}
            left_needs = _needs(f.hidden_left, needing)
            right_needs = _needs(f.hidden_right, needing)
            left, right = len(f.hidden_left), len(f.hidden_right)
            wide = [
                _side(f"◀ {_columns(left)}", left_needs, long=True) if left else None,
                _side(f"{_columns(right)} ▶", right_needs, long=True) if right else None,
            ]
            narrow = [
                _side(f"◀{left}", left_needs, long=False) if left else None,
                _side(f"{right}▶", right_needs, long=False) if right else None,
            ]
            compact[len(parts)] = Content(" ").join(side for side in narrow if side is not None)
            parts.append((8, Content(" · ").join(side for side in wide if side is not None)))
        # A fact that is said shorter before it goes, by the part it replaces.
        said_shorter: dict[int, tuple[float, Content]] = dict(said_shorter_first)
        if f.note:
            note = _markup("[b $text-success]$note[/]", note=f.note)
            first_clause = _markup("[b $text-success]$note[/]", note=f.note.split(";")[0])
            said_shorter[id(note)] = (8, first_clause)  # then it stays with the counts
            parts.append((5, note))
        if f.last_change_ms is not None:
            changed = _markup("[$text-muted]changed [/]$when", when=clock(f.last_change_ms))
            parts.append((3, changed))
        if f.filter:
            filtered = _markup("[$text-accent]filter:[/] $filter", filter=f.filter)
            parts.append((FILTER_PRIORITY, filtered))
        if f.filter_problems:
            problems = "; ".join(f.filter_problems)
            parts.append((6, _markup("[b $text-warning]⚠ $problems[/]", problems=problems)))
        parts.append((1, _markup("[$text-muted]$path[/]", path=f.path)))
        width = self.size.width

        def used() -> int:
            return sum(part.cell_length for _, part in parts) + 3 * (len(parts) - 1)

        while width and used() > width and len(parts) > 2:
            least = min(range(len(parts)), key=lambda i: parts[i][0])
            if parts[least][0] >= 8 and compact:  # before losing a fact, say it shorter
                for index, short in compact.items():
                    parts[index] = (parts[index][0], short)
                compact.clear()
                continue
            shorter = said_shorter.pop(id(parts[least][1]), None)
            if shorter is not None:
                parts[least] = shorter
                continue
            del parts[least]
            compact = {i - (i > least): c for i, c in compact.items() if i != least}
        joined = Content("")
        for n, (_, part) in enumerate(parts):
            if n:
                joined += Content(" · " if id(part) in beside else " │ ")
            joined += part
        return joined


def _columns(count: int) -> str:
    return f"{count} column" if count == 1 else f"{count} columns"


def _needs(statuses: tuple[str, ...], waiting: dict[str, int]) -> tuple[int, str]:
    """How many items need a person in these columns, and which: `1 blocked, 2 in review`."""
    held = [(waiting[status], status) for status in statuses if waiting.get(status)]
    return sum(n for n, _ in held), ", ".join(f"{n} {label(status)}" for n, status in held)


def _side(arrow: str, needs: tuple[int, str], *, long: bool) -> Content:
    """One side's arrow and count, then what needs a person there, if anything."""
    count, which = needs
    if not count:
        return _markup("[$text-accent]$arrow[/]", arrow=arrow)
    if long:
        which += " needs you" if count == 1 else " need you"
    return _markup("[$text-accent]$arrow[/] [b $text-warning]($which)[/]", arrow=arrow, which=which)


def _markup(markup: str, **facts: str) -> Content:
    """Our markup with the facts inserted as inert plain text."""
    return Content.from_markup(markup, **{name: inert(value) for name, value in facts.items()})
