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

from boardlib import transitions as t
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
    column_counts: tuple[tuple[str, int], ...] = ()  # each column's tasks, as its title counts
    note: str = ""  # a lasting word from whoever started the app ("demo ended 03:10: ...")
    demo: bool = False  # `kanban demo`: simulated agents on a throwaway board, said always
    inbox: int = 0  # how many items need a person (the inbox, `i`)
    inbox_new: str = ""  # the newest arrival, said once ("TASK-5 needs review"), until `i`
    inbox_new_short: str = ""  # the same, shorter: its id ("TASK-5", "TASK-5 (+1)"), or ""
    inbox_by_status: tuple[tuple[str, int], ...] = ()  # how many of the items in each column
    verifying: int = 0  # tasks their gate judges now: no item, nobody need act (`1 verifying`)


# Each form of a fact has its own priority: the least gives way first, to the fact's next
# form, else the fact goes. 9 is never dropped (the state, what needs you). At 80 columns with
# columns off screen: their names stop saying "need you" in words (7.9); the gate count goes
# (8); the counts say the total alone (8.05); empty columns off screen are left out (8.1); the
# total goes (8.2); a new item is said by its id (8.25); the columns off screen name only what
# needs you (8.3), then are counted (8.4), then go (8.42); a note (`demo ended ...`), said by
# its first clause, goes (8.45), then the new item (8.5); the filter last of all: it decides
# what every column shows (with it gone, a filter matching nothing left seven empty columns
# and no word of why).
FILTER_PRIORITY = 8.7
NEW_ITEM_PRIORITY = 8.25
NEW_ITEM_SHORT_PRIORITY = 8.5
NOTE_PRIORITY = 8.45
SIDES = (7.9, 8.1, 8.3, 8.4, 8.42)  # the columns off screen at each level of `_sides`
COUNTS_PRIORITY = 8.05
TOTAL_PRIORITY = 8.2
# How people read a column's status in the header's few cells: the words its counts use.
RUNNING = "running"  # the header's word for in progress work, in its counts too
SHORT_LABELS = {t.IN_PROGRESS: RUNNING, t.IN_REVIEW: "review"}
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
        of the last change), each said shorter first where it can be (the priorities above),
        never the state or what needs you."""
        f = self.facts
        now = self.now_ms()

        def clock(ms: int) -> str:
            return clock_text(ms, now)

        parts: list[_Part] = [_Part(9, Content.from_markup("[b $accent]kanban[/]"))]
        if f.demo:
            parts.append(_Part(9, Content.from_markup("[b $text-warning]DEMO[/]")))
        if f.unreadable_since is not None:
            reason = f" ({f.unreadable_reason})" if f.unreadable_reason else ""
            unreadable = _markup(
                "[b $text-error]⚠ unreadable since $when$reason[/]",
                when=clock(f.unreadable_since),
                reason=reason,
            )
            parts.append(_Part(9, unreadable))
        elif not f.loaded:
            parts.append(_Part(9, Content.from_markup("[$text-muted]loading…[/]")))
        elif f.paused:
            waiting = " · changes waiting (p)" if f.waiting else ""
            parts.append(
                _Part(9, _markup("[b $text-warning]❚❚ paused$waiting[/]", waiting=waiting))
            )
        else:
            parts.append(_Part(9, Content.from_markup("[b $text-success]● live[/]")))
        if f.schema_newer:
            newer = "[b $text-warning]read-only: schema newer than this kanban[/]"
            parts.append(_Part(9, Content.from_markup(newer)))
        elif f.read_only:
            parts.append(_Part(9, Content.from_markup("[b $text-warning]read-only[/]")))
        if f.loaded:
            # What needs a person: never dropped, at any width (the state's priority).
            need = (
                "[b $text-warning]$count need you[/]"
                if f.inbox
                else "[$text-muted]$count need you[/]"
            )
            parts.append(_Part(9, _markup(need, count=str(f.inbox))))
            if f.verifying:
                verifying = _markup("[$text-accent]$count[/]", count=f"{f.verifying} {VERIFYING}")
                # beside what needs you: "2 need you · 1 verifying"
                parts.append(_Part(VERIFYING_PRIORITY, verifying, beside=True))
            if f.inbox_new:
                # Said in the header, as the inbox promises: it outlasts the counts, and is said
                # shorter before what is off screen goes (at 80 columns it had taken its room).
                new = _markup("[b $text-warning]new: $new (i)[/]", new=f.inbox_new)
                brief = f"new: {f.inbox_new_short} (i)" if f.inbox_new_short else "new (i)"
                brief_new = _markup("[b $text-warning]$new[/]", new=brief)
                parts.append(_Part(NEW_ITEM_PRIORITY, new, (NEW_ITEM_SHORT_PRIORITY, brief_new)))
            count = (
                f"{f.total} task{'' if f.total == 1 else 's'}"
                if f.shown == f.total
                else f"{f.shown}/{f.total} shown"
            )
            extra = f" · {f.in_progress} {RUNNING}" if f.in_progress else ""
            extra += f" · {f.in_review} to review" if f.in_review else ""
            extra += f" · {f.blocked} blocked" if f.blocked else ""
            if extra:  # before the counts go, they are said shorter: the total alone
                counts = Content(count + extra)
                parts.append(_Part(COUNTS_PRIORITY, counts, (TOTAL_PRIORITY, Content(count))))
            else:
                parts.append(_Part(TOTAL_PRIORITY, Content(count)))
        if f.hidden_left or f.hidden_right:
            # The columns off screen, named with their counts, and what there needs a person:
            # at 80x24 three columns of seven show, and review or blocked can be among the rest.
            needing = dict(f.inbox_by_status) if f.loaded else {}
            tasks = dict(f.column_counts)
            left = [(s, tasks.get(s, 0), needing.get(s, 0)) for s in f.hidden_left]
            right = [(s, tasks.get(s, 0), needing.get(s, 0)) for s in f.hidden_right]
            forms = [(rank, _sides(left, right, level)) for level, rank in enumerate(SIDES)]
            parts.append(_Part(*forms[0], *forms[1:]))
        if f.note:
            note = _markup("[b $text-success]$note[/]", note=f.note)
            first_clause = _markup("[b $text-success]$note[/]", note=f.note.split(";")[0])
            # said shorter, it then outlasts the counts and the columns off screen
            parts.append(_Part(5, note, (NOTE_PRIORITY, first_clause)))
        if f.last_change_ms is not None:
            changed = _markup("[$text-muted]changed [/]$when", when=clock(f.last_change_ms))
            parts.append(_Part(3, changed))
        if f.filter:
            filtered = _markup("[$text-accent]filter:[/] $filter", filter=f.filter)
            parts.append(_Part(FILTER_PRIORITY, filtered))
        if f.filter_problems:
            problems = "; ".join(f.filter_problems)
            parts.append(_Part(6, _markup("[b $text-warning]⚠ $problems[/]", problems=problems)))
        parts.append(_Part(1, _markup("[$text-muted]$path[/]", path=f.path)))
        width = self.size.width

        def used() -> int:
            return sum(part.content.cell_length for part in parts) + 3 * (len(parts) - 1)

        # The least important part goes first, said shorter first where it has a shorter form
        # (each form has its own priority); what is never dropped (9) stays.
        while width and used() > width and len(parts) > 2:
            least = min(range(len(parts)), key=lambda i: parts[i].priority)
            if parts[least].priority >= 9:
                break
            if not parts[least].shorter():
                del parts[least]
        joined = Content("")
        for n, part in enumerate(parts):
            if n:
                joined += Content(" · " if part.beside else " │ ")
            joined += part.content
        return joined


class _Part:
    """One fact of the header in its forms, longest first, each with its own priority: the
    form shown now is the first, and a shorter one replaces it before the fact goes."""

    def __init__(
        self,
        priority: float,
        content: Content,
        *shorter: tuple[float, Content],
        beside: bool = False,
    ) -> None:
        self.forms = [(priority, content), *shorter]
        self.beside = beside  # joined to the part before by " · ", not " │ "

    @property
    def priority(self) -> float:
        return self.forms[0][0]

    @property
    def content(self) -> Content:
        return self.forms[0][1]

    def shorter(self) -> bool:
        """One form shorter; False when this was the last."""
        if len(self.forms) == 1:
            return False
        del self.forms[0]
        return True


_Hidden = list[tuple[str, int, int]]  # a hidden column: its status, tasks, items needing you


def _sides(left: _Hidden, right: _Hidden, level: int) -> Content:
    """The columns off screen on each side at one `level` of detail: 0 names each with its
    count and what there needs you (`in review 2 (2 need you)`); 1 says shorter names and `!`
    for what needs you (`review 2!`); 2 leaves the empty columns out (`empty` for a side with no
    task); 3 names only what needs you and counts the other tasks that way (`◀ +9`, `review 2!
    +30 ▶`); 4 counts each side's tasks, `!` when something there needs you (`◀9 · 33!▶`). At 2
    and 3, no task either way is said once: `◀ empty ▶`."""
    empty = not any(tasks or needs for _status, tasks, needs in [*left, *right])
    if left and right and level in (2, 3) and empty:
        # `◀ empty · empty ▶` (the demo at 80 columns) read as two things missing
        return _arrow(left=True) + _markup(SHOWING, text=" empty ") + _arrow(left=False)
    sides = [
        _side(left, level, arrow_first=True) if left else None,
        _side(right, level, arrow_first=False) if right else None,
    ]
    return Content(" · ").join(side for side in sides if side is not None)


def _side(columns: _Hidden, level: int, *, arrow_first: bool) -> Content:
    words: list[Content] = []
    if level == 4:
        that_way = sum(tasks for _status, tasks, _needs in columns)
        mark = "!" if any(needs for _status, _tasks, needs in columns) else ""
        words.append(_markup(NEEDING if mark else SHOWING, text=f"{that_way}{mark}"))
    for status, tasks, needs in columns if level < 4 else ():
        name = label(status) if level == 0 else SHORT_LABELS.get(status, label(status))
        if needs:
            mark = f" ({needs} need{'s' if needs == 1 else ''} you)" if level == 0 else "!"
            words.append(_markup(NEEDING, text=f"{name} {tasks}{mark}"))
        elif level < 2 or (level == 2 and tasks):
            words.append(_markup(SHOWING, text=f"{name} {tasks}"))
    if level == 3:
        rest = sum(tasks for _status, tasks, needs in columns if not needs)
        if rest or not words:
            words.append(_markup(SHOWING, text=f"+{rest}"))
    elif not words:
        words.append(_markup(SHOWING, text="empty"))
    body = Content(" " if level >= 3 else ", ").join(words)
    gap = Content("" if level == 4 else " ")
    arrow = _arrow(left=arrow_first)
    return arrow + gap + body if arrow_first else body + gap + arrow


def _arrow(*, left: bool) -> Content:
    return Content.from_markup("[$text-accent]◀[/]" if left else "[$text-accent]▶[/]")


NEEDING = "[b $text-warning]$text[/]"  # a column off screen with something that needs you
SHOWING = "[$text-accent]$text[/]"


def _markup(markup: str, **facts: str) -> Content:
    """Our markup with the facts inserted as inert plain text."""
    return Content.from_markup(markup, **{name: inert(value) for name, value in facts.items()})
