"""What the board screen shows, apart from how it is drawn: every task by id, the filter, and for
each status the visible task ids in display order.

Snapshots and changed rows are applied as a keyed diff by task id, reporting per column what to
repaint. Columns order by priority, then creation (never `updated_at`); done and cancelled newest
first. Why: docs/architecture.md#the-terminal-boards-state
"""

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field

from boardlib import transitions as t
from boardlib.records import Task

FINISHED = tuple(status for status in t.STATUSES if status in t.TERMINAL)  # done, cancelled
FILTER_KEYS = {"team": "team", "assignee": "assignee", "role": "role", "status": "status"}


@dataclass(frozen=True, slots=True)
class TaskFilter:
    """`team:x role:y assignee:z` (or `@z`) `status:s` plus free text matched against id, title
    and description, all case-insensitive. What it does not understand it says (`problems`),
    instead of silently matching nothing: a `key:value` with an unknown key is searched as text,
    an unknown status matches nothing."""

    text: str = ""
    team: str | None = None
    assignee: str | None = None
    role: str | None = None
    status: str | None = None
    problems: tuple[str, ...] = ()

    @classmethod
    def parse(cls, query: str) -> "TaskFilter":
        words: list[str] = []
        fields: dict[str, str] = {}
        problems: list[str] = []
        for token in query.split():
            key, colon, value = token.partition(":")
            if colon and key.lower() in FILTER_KEYS and value:
                value = value.lower()
                if key.lower() == "status":
                    value = value.replace("-", "_").replace(" ", "_")
                    if value not in t.STATUSES:
                        problems.append(f"no status {value!r} (statuses: {', '.join(t.STATUSES)})")
                fields[FILTER_KEYS[key.lower()]] = value
            elif token.startswith("@") and len(token) > 1:
                fields["assignee"] = token[1:].lower()
            else:
                if colon and value and key.isidentifier():
                    keys = ", ".join(f"{name}:" for name in FILTER_KEYS)
                    problems.append(f"{key}: is not a filter key ({keys}); searched as text")
                words.append(token.lower())
        return cls(text=" ".join(words), problems=tuple(problems), **fields)

    @property
    def active(self) -> bool:
        return bool(self.text or self.team or self.assignee or self.role or self.status)

    def describe(self) -> str:
        parts = [self.text] if self.text else []
        for name in ("team", "assignee", "role", "status"):
            value = getattr(self, name)
            if value:
                parts.append(f"{name}:{value}")
        return " ".join(parts)

    def matches(self, task: Task, haystack: str) -> bool:
        if self.team and (task.team_id or "").lower() != self.team:
            return False
        if self.role and (task.role or "").lower() != self.role:
            return False
        if self.status and task.status != self.status:
            return False
        if self.assignee:
            names = {(task.assignee_agent_id or "").lower(), (task.claimed_by or "").lower()}
            if self.assignee not in names:
                return False
        return all(word in haystack for word in self.text.split())


def sort_key(task: Task, rank: int) -> tuple[int, int]:
    """Where a task sits in its column: finished work newest first, the rest by priority."""
    if task.status in FINISHED:
        finished = task.completed_at if task.completed_at is not None else task.updated_at
        return (-finished, rank)
    return (-task.priority, rank)


@dataclass(slots=True)
class ColumnChange:
    """How one column changed: rows repainted in place, and the first row from which cards moved
    (an insertion or removal shifts everything below it)."""

    rows: set[str] = field(default_factory=set)  # task ids changed in place
    shifted_from: int | None = None
    reset: bool = False  # rebuilt wholesale (first load, new filter)
    inserted: set[str] = field(default_factory=set)  # task ids that arrived in this column

    def shift(self, index: int) -> None:
        self.shifted_from = index if self.shifted_from is None else min(self.shifted_from, index)


@dataclass(slots=True)
class Applied:
    """What one update did to the board."""

    columns: dict[str, ColumnChange] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)  # tasks whose row differs from before
    moved: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (from, to) status
    refiltered: bool = False  # the filter (or the dropped toggle) changed: a new question

    def column(self, status: str) -> ColumnChange:
        change = self.columns.get(status)
        if change is None:
            change = self.columns[status] = ColumnChange()
        return change

    @property
    def empty(self) -> bool:
        return not self.columns and not self.changed


class BoardState:
    """Every task by id, and each column's visible ids in display order."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}
        self.rank: dict[str, int] = {}  # creation order, the tie-breaker inside a priority
        self.columns: dict[str, list[str]] = {status: [] for status in t.STATUSES}
        self.counts: dict[str, int] = dict.fromkeys(t.STATUSES, 0)  # live (not dropped) tasks
        self.filter = TaskFilter()
        self.show_dropped = False
        self._haystacks: dict[str, tuple[Task, str]] = {}

    # -- queries --------------------------------------------------------------------------------

    def key(self, task_id: str) -> tuple[int, int]:
        return sort_key(self.tasks[task_id], self.rank[task_id])

    def in_scope(self, task: Task) -> bool:
        """Counted: every live task, and dropped ones while they are shown."""
        return not task.dropped or self.show_dropped

    def index_of(self, task_id: str) -> int | None:
        """Row of a visible task in its column, by binary search on the display order."""
        task = self.tasks.get(task_id)
        if task is None:
            return None
        ids = self.columns[task.status]
        index = bisect_left(ids, self.key(task_id), key=self.key)
        return index if index < len(ids) and ids[index] == task_id else None

    def visible(self, task: Task) -> bool:
        if task.dropped and not self.show_dropped:
            return False
        return not self.filter.active or self.filter.matches(task, self._haystack(task))

    def _haystack(self, task: Task) -> str:
        cached = self._haystacks.get(task.id)
        if cached is not None and cached[0] is task:
            return cached[1]
        text = f"{task.id} {task.title} {task.description or ''}".lower()
        self._haystacks[task.id] = (task, text)
        return text

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def shown(self) -> int:
        return sum(len(ids) for ids in self.columns.values())

    # -- updates --------------------------------------------------------------------------------

    def load(self, tasks: Iterable[Task]) -> Applied:
        """A full snapshot in creation order. Rows equal to what we had keep their old object, so
        the columns' card caches stay warm across a resynchronisation."""
        previous = self.tasks
        applied = Applied()
        self.tasks = {}
        self.rank = {}
        for rank, task in enumerate(tasks):
            old = previous.get(task.id)
            if old is not None and old == task:
                task = old
            elif old is not None:
                applied.changed.add(task.id)
                if old.status != task.status:
                    applied.moved[task.id] = (old.status, task.status)
            self.tasks[task.id] = task
            self.rank[task.id] = rank
        self._rebuild(applied)
        return applied

    def refilter(self) -> Applied:
        """Rebuild every column after the filter or the dropped toggle changed."""
        applied = Applied(refiltered=True)
        self._rebuild(applied)
        return applied

    def _rebuild(self, applied: Applied) -> None:
        columns: dict[str, list[str]] = {status: [] for status in t.STATUSES}
        counts = dict.fromkeys(t.STATUSES, 0)
        for task in self.tasks.values():
            if task.status not in columns:
                continue  # an unknown status is not guessed into a column
            if self.in_scope(task):
                counts[task.status] += 1
            if self.visible(task):
                columns[task.status].append(task.id)
        for ids in columns.values():
            ids.sort(key=self.key)
        self.columns = columns
        self.counts = counts
        for status in t.STATUSES:
            applied.column(status).reset = True

    def apply(self, tasks: Iterable[Task]) -> Applied:
        """The changed rows from the reader: remove each from where it was shown, insert it where
        it now belongs, and remember which cards only need a repaint in place."""
        applied = Applied()
        in_place: list[str] = []
        for task in tasks:
            old = self.tasks.get(task.id)
            if old is not None and old == task:
                continue
            applied.changed.add(task.id)
            if old is None:
                self.rank[task.id] = len(self.rank)
            else:
                if old.status != task.status:
                    applied.moved[task.id] = (old.status, task.status)
                if self.in_scope(old) and old.status in self.counts:
                    self.counts[old.status] -= 1
            was_at = self.index_of(task.id) if old is not None else None
            same_slot = (
                old is not None
                and was_at is not None
                and old.status == task.status
                and sort_key(old, 0) == sort_key(task, 0)
                and self.visible(task)
            )
            if same_slot:
                self.tasks[task.id] = task
                in_place.append(task.id)
            else:
                if old is not None and was_at is not None:
                    del self.columns[old.status][was_at]
                    applied.column(old.status).shift(was_at)
                self.tasks[task.id] = task
                if task.status in self.columns and self.visible(task):
                    ids = self.columns[task.status]
                    index = bisect_left(ids, self.key(task.id), key=self.key)
                    ids.insert(index, task.id)
                    applied.column(task.status).shift(index)
                    applied.column(task.status).inserted.add(task.id)
            if self.in_scope(task) and task.status in self.counts:
                self.counts[task.status] += 1
        for task_id in in_place:
            applied.column(self.tasks[task_id].status).rows.add(task_id)
        return applied
