"""What the board screen shows, apart from how it is drawn: the tasks it holds by id, the filter,
and for each status the visible task ids in display order.

Every unfinished task is held; a finished column (done, cancelled) holds a window of it, read a
page at a time as the operator scrolls, with the column's count from the store
(`boardlib.columns`). Which tasks a filter matches the store says, never a scan here. Reads are
applied as a keyed diff by task id, reporting per column what to repaint; a task a page and a
change both bring is one task. Columns order by priority, then creation (never `updated_at`); done
and cancelled newest first. Why: docs/architecture.md#the-terminal-boards-state, docs/tui.md
"""

from bisect import bisect_left
from dataclasses import dataclass, field

from boardlib import transitions as t
from boardlib.columns import (
    FINISHED,
    LIVE,
    PAGE_SIZE,
    ColumnPage,
    FinishedKey,
    PageRequest,
    TaskSearch,
    ViewRead,
    finished_key,
    sort_key,
)
from boardlib.records import Task

__all__ = ["FINISHED", "Applied", "BoardState", "ColumnChange", "TaskFilter"]

FILTER_KEYS = {"team": "team", "assignee": "assignee", "role": "role", "status": "status"}
WINDOW_PAGES = 5  # a finished column holds at most this many pages around where it is looked at


@dataclass(frozen=True, slots=True)
class TaskFilter:
    """`team:x role:y assignee:z` (or `@z`) `status:s` plus free text matched against id, title
    and description, all case-insensitive. What it does not understand it says (`problems`),
    instead of silently matching nothing: a `key:value` with an unknown key is searched as text,
    an unknown status matches nothing. The store answers it (`search`)."""

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

    def search(self, *, include_dropped: bool) -> TaskSearch:
        return TaskSearch(
            words=tuple(self.text.split()),
            team=self.team,
            assignee=self.assignee,
            role=self.role,
            status=self.status,
            include_dropped=include_dropped,
        )


@dataclass(slots=True)
class ColumnChange:
    """How one column changed: rows repainted in place, and the first row from which cards moved
    (an insertion or removal shifts everything below it)."""

    rows: set[str] = field(default_factory=set)  # task ids changed in place
    shifted_from: int | None = None  # a column row
    reset: bool = False  # rebuilt wholesale (first load, new filter)
    inserted: set[str] = field(default_factory=set)  # task ids that arrived in this column
    paged: bool = False  # a page arrived: rows that were blank (loading) now have cards

    def shift(self, row: int) -> None:
        self.shifted_from = row if self.shifted_from is None else min(self.shifted_from, row)


@dataclass(slots=True)
class Applied:
    """What one update did to the board."""

    columns: dict[str, ColumnChange] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)  # tasks whose row differs from before
    moved: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (from, to) status
    refiltered: bool = False  # the filter (or the dropped toggle) changed: a new question
    targets: list[Task] = field(default_factory=list)  # `around` pages: the tasks asked for
    missing: list[str] = field(default_factory=list)  # `around` pages: ids of no task

    def column(self, status: str) -> ColumnChange:
        change = self.columns.get(status)
        if change is None:
            change = self.columns[status] = ColumnChange()
        return change

    @property
    def empty(self) -> bool:
        return not self.columns and not self.changed


class BoardState:
    """The tasks held by id, and each column's visible ids in display order: every unfinished
    task; of a finished column, the window `columns[status]` starting at row `starts[status]` of
    `rows[status]`."""

    def __init__(self, *, page_size: int = PAGE_SIZE) -> None:
        self.page_size = page_size  # the reads' pages must be of this size too
        self.tasks: dict[str, Task] = {}
        self.rank: dict[str, int] = {}  # seq: creation order, the tie-breaker in a column
        self.columns: dict[str, list[str]] = {status: [] for status in t.STATUSES}
        self.starts: dict[str, int] = dict.fromkeys(t.STATUSES, 0)
        self.rows: dict[str, int] = dict.fromkeys(FINISHED, 0)  # what a finished column shows
        self.counts: dict[str, int] = dict.fromkeys(t.STATUSES, 0)  # live (not dropped) tasks
        self.filter = TaskFilter()
        self.show_dropped = False
        self.cursor = 0  # the event cursor of the last read applied
        # The ids the filter matches, as the store said (None: no filter narrows).
        self.matching: set[str] | None = None
        self._asked: dict[str, PageRequest] = {}  # a page on its way, per finished column

    # -- queries --------------------------------------------------------------------------------

    @property
    def search(self) -> TaskSearch:
        """The filter and the dropped toggle, as the store is asked them."""
        return self.filter.search(include_dropped=self.show_dropped)

    def key(self, task_id: str) -> tuple[int, int]:
        return sort_key(self.tasks[task_id], self.rank[task_id])

    def finished_key(self, task_id: str) -> FinishedKey:
        return finished_key(self.tasks[task_id], self.rank[task_id])

    def in_scope(self, task: Task) -> bool:
        """Counted: every live task, and dropped ones while they are shown."""
        return not task.dropped or self.show_dropped

    def index_of(self, task_id: str) -> int | None:
        """Place of a visible task in its column's ids, by binary search on the display order."""
        task = self.tasks.get(task_id)
        if task is None or task.status not in self.columns:
            return None
        ids = self.columns[task.status]
        index = bisect_left(ids, self.key(task_id), key=self.key)
        return index if index < len(ids) and ids[index] == task_id else None

    def row_of(self, task_id: str) -> int | None:
        """Row of a visible task in its column (a finished column's window starts further down)."""
        index = self.index_of(task_id)
        if index is None:
            return None
        return self.starts[self.tasks[task_id].status] + index

    def row_count(self, status: str) -> int:
        """How many cards the column shows, loaded or not."""
        return self.rows[status] if status in self.rows else len(self.columns[status])

    def id_at(self, status: str, row: int) -> str | None:
        """The task on a row of a column; None where a finished column has not loaded it."""
        index = row - self.starts[status]
        ids = self.columns[status]
        return ids[index] if 0 <= index < len(ids) else None

    def visible(self, task: Task) -> bool:
        if task.dropped and not self.show_dropped:
            return False
        return self.matching is None or task.id in self.matching

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def shown(self) -> int:
        return sum(self.row_count(status) for status in t.STATUSES)

    # -- pages ----------------------------------------------------------------------------------

    def want(self, status: str, row: int) -> PageRequest | None:
        """The page to ask for so that `row` of a finished column gets its card; None when it is
        loaded, out of range, or a page of that column is already on its way."""
        if status not in self.rows or status in self._asked:
            return None
        if not 0 <= row < self.rows[status] or self.id_at(status, row) is not None:
            return None
        ids, start = self.columns[status], self.starts[status]
        end, size = start + len(ids), self.page_size
        if ids and end <= row < end + size:
            request = PageRequest(status, after=self.finished_key(ids[-1]), limit=size)
        elif ids and start - size <= row < start:
            request = PageRequest(status, before=self.finished_key(ids[0]), limit=size)
        else:  # a jump (the end, a scrollbar drag): the page around that row
            request = PageRequest(status, offset=max(row - size // 2, 0), limit=size)
        self._asked[status] = request
        return request

    def anchors(self) -> dict[str, FinishedKey]:
        """Each finished window that does not start at the top, by its first task's key: the
        reader re-counts where that key is now, after a change above the window."""
        return {
            status: self.finished_key(self.columns[status][0])
            for status in FINISHED
            if self.starts[status] and self.columns[status]
        }

    # -- updates --------------------------------------------------------------------------------

    def load(self, read: ViewRead) -> Applied:
        """A full read: every unfinished task in creation order and each finished column's first
        page. Rows equal to what we had keep their old object, so the columns' card caches stay
        warm across a resynchronisation."""
        previous = self.tasks
        applied = Applied()
        self.tasks = {}
        self.rank = {}
        self._asked.clear()
        self.cursor = read.cursor
        self.matching = set(read.matching) if read.matching is not None else None
        pairs = list(zip(read.tasks, read.seqs, strict=True))
        for page in read.pages:
            pairs += zip(page.tasks, page.seqs, strict=True)
        for task, seq in pairs:
            old = previous.get(task.id)
            if old is not None and old == task:
                task = old
            elif old is not None:
                applied.changed.add(task.id)
                if old.status != task.status:
                    applied.moved[task.id] = (old.status, task.status)
            self.tasks[task.id] = task
            self.rank[task.id] = seq
        self._rebuild(applied)
        for page in read.pages:
            self._window(page, list(self._page_ids(page)), page.start)
        return applied

    def _rebuild(self, applied: Applied) -> None:
        """The unfinished columns from the tasks held (the finished ones come in pages)."""
        columns: dict[str, list[str]] = {status: [] for status in LIVE}
        counts = dict.fromkeys(LIVE, 0)
        for task in self.tasks.values():
            if task.status not in columns:
                continue  # finished (paged), or an unknown status not guessed into a column
            if self.in_scope(task):
                counts[task.status] += 1
            if self.visible(task):
                columns[task.status].append(task.id)
        for ids in columns.values():
            ids.sort(key=self.key)
        self.columns.update(columns)
        self.counts.update(counts)
        for status in t.STATUSES:
            applied.column(status).reset = True

    def apply(self, read: ViewRead) -> Applied:
        """A read since the last one: the changed rows (remove each from where it was shown,
        insert it where it now belongs, remember which cards only need a repaint in place), then
        a new filter's answer and the pages asked for."""
        applied = Applied(refiltered=read.rematched)
        self.cursor = max(self.cursor, read.cursor)
        if read.rematched:
            self.matching = set(read.matching) if read.matching is not None else None
        elif read.matching is not None and self.matching is not None:
            for task in read.tasks:
                if task.id in read.matching:
                    self.matching.add(task.id)
                else:
                    self.matching.discard(task.id)
        anchors = self.anchors()  # as the reader was told them after the last update
        in_place: list[str] = []
        for task, seq in zip(read.tasks, read.seqs, strict=True):
            self._change(task, seq, applied, in_place)
        for task_id in in_place:
            applied.column(self.tasks[task_id].status).rows.add(task_id)
        for status, count in read.counts.items():
            self.counts[status], self.rows[status] = count.total, count.rows
            row = count.anchor_row
            same_anchor = count.anchor is not None and count.anchor == anchors.get(status)
            if row is not None and same_anchor and row != self.starts[status]:
                self.starts[status] = row
                applied.column(status).shift(0)
        if read.rematched:
            self._rebuild(applied)
        for page in read.pages:
            self._merge(page, applied)
        return applied

    def _change(self, task: Task, seq: int, applied: Applied, in_place: list[str]) -> None:
        old = self.tasks.get(task.id)
        if old is not None and old == task:
            return
        applied.changed.add(task.id)
        if old is not None and old.status != task.status:
            applied.moved[task.id] = (old.status, task.status)
        if old is not None and old.status in LIVE and self.in_scope(old):
            self.counts[old.status] -= 1
        was_at = self.index_of(task.id) if old is not None else None
        same_slot = (
            old is not None
            and was_at is not None
            and old.status == task.status
            and sort_key(old, seq) == sort_key(task, seq)
            and self.visible(task)
        )
        self.rank[task.id] = seq
        if same_slot:
            self.tasks[task.id] = task
            in_place.append(task.id)
        else:
            if old is not None and was_at is not None:
                del self.columns[old.status][was_at]
                applied.column(old.status).shift(self.starts[old.status] + was_at)
                if old.status in self.rows:
                    self.rows[old.status] -= 1  # until the read's own count says
            self.tasks[task.id] = task
            if task.status in LIVE and self.visible(task):
                ids = self.columns[task.status]
                index = bisect_left(ids, self.key(task.id), key=self.key)
                ids.insert(index, task.id)
                applied.column(task.status).shift(index)
                applied.column(task.status).inserted.add(task.id)
            elif task.status in FINISHED:
                known = old is not None and (old.status in LIVE or was_at is not None)
                self._arrive(task, known, applied)
        if task.status in LIVE and self.in_scope(task):
            self.counts[task.status] += 1

    def _arrive(self, task: Task, known: bool, applied: Applied) -> None:
        """A finished task changed: into its window where it falls inside it (or on top of a
        window at the column's top), else only counted. `known`: it was not above the window
        before (it was unfinished, or in the window). Keys only grow (a finish time, a last
        change), so a task moves up its column, never down; where a window far down cannot know
        what moved above it, the read's re-count of its anchor says (`ColumnCount`)."""
        status, ids = task.status, self.columns[task.status]
        if not self.visible(task):
            self._forget(task.id)
            return
        start, key = self.starts[status], self.key(task.id)
        above = not ids or key < self.key(ids[0])
        self.rows[status] += 1  # until the read's own count says
        if above and start > 0:
            if known:  # it arrived above the window: the window is a row further down
                self.starts[status] += 1
                applied.column(status).shift(0)
            self._forget(task.id)
            return
        if not above and key > self.key(ids[-1]) and start + len(ids) < self.rows[status]:
            self._forget(task.id)  # below the window: it comes with the page that holds it
            return
        index = 0 if above else bisect_left(ids, key, key=self.key)
        ids.insert(index, task.id)
        applied.column(status).shift(start + index)
        applied.column(status).inserted.add(task.id)

    def _forget(self, task_id: str) -> None:
        """A finished task outside every window is not held (a year of them would be)."""
        self.tasks.pop(task_id, None)
        self.rank.pop(task_id, None)
        if self.matching is not None:
            self.matching.discard(task_id)

    def _page_ids(self, page: ColumnPage) -> list[str]:
        """Hold a page's tasks (an equal row keeps its old object) and say they match."""
        ids = []
        for task, seq in zip(page.tasks, page.seqs, strict=True):
            old = self.tasks.get(task.id)
            self.tasks[task.id] = old if old is not None and old == task else task
            self.rank[task.id] = seq
            if self.matching is not None:
                self.matching.add(task.id)
            ids.append(task.id)
        return ids

    def _window(self, page: ColumnPage, ids: list[str], start: int) -> set[str]:
        """Make `ids` (from row `start`) the column's window; returns the ids it let go."""
        status = page.status
        dropped = set(self.columns[status]) - set(ids)
        self.columns[status], self.starts[status] = ids, start
        self.rows[status], self.counts[status] = page.rows, page.total
        for task_id in dropped:
            self._forget(task_id)
        return dropped

    def _leave_live(self, page: ColumnPage, applied: Applied) -> None:
        """A finished page's task still held in an unfinished column: the page is newer than the
        rest of the view (read while paused, the changes waiting), so the task leaves that column
        now. Kept there, it showed in both, and stayed once its move came (its row was the same
        already): done cards in todo until `r`, found in tmux."""
        for task in page.tasks:
            old = self.tasks.get(task.id)
            if old is None or old.status not in LIVE:
                continue
            was_at = self.index_of(task.id)
            if was_at is not None:
                del self.columns[old.status][was_at]
                applied.column(old.status).shift(self.starts[old.status] + was_at)
            if self.in_scope(old):
                self.counts[old.status] -= 1
            applied.changed.add(task.id)
            applied.moved[task.id] = (old.status, task.status)

    def _merge(self, page: ColumnPage, applied: Applied) -> None:
        """A page into its column's window: joined to it when it continues it (after its end,
        before its start), in its place otherwise (a jump), each task once; then the window is
        cut back to `WINDOW_PAGES` pages, away from where the page came."""
        request = page.request
        if page.target is not None:
            applied.targets.append(page.target)
        elif request is not None and request.around is not None:
            applied.missing.append(request.around)
        if page.status in LIVE:  # an `around` a task that is not finished: a changed row
            in_place: list[str] = []
            for task, seq in zip(page.tasks, page.seqs, strict=True):
                self._change(task, seq, applied, in_place)
            return
        if page.status not in self.rows:
            return
        self._leave_live(page, applied)
        status = page.status
        if request is not None and self._asked.get(status) == request:
            del self._asked[status]
        current, start = self.columns[status], self.starts[status]
        page_ids = [task_id for task_id in self._page_ids(page)]
        end = start + len(current)
        if request is not None and request.after is not None and start <= page.start <= end:
            head = current[: page.start - start]
            ids, new_start, keep_end = head + [i for i in page_ids if i not in head], start, True
        elif (
            request is not None
            and request.before is not None
            and page.start <= start <= page.start + len(page_ids)
        ):
            tail = current[page.start + len(page_ids) - start :]
            ids = [i for i in page_ids if i not in tail] + tail
            new_start, keep_end = page.start, False
        else:
            ids, new_start, keep_end = page_ids, page.start, True
        limit = WINDOW_PAGES * self.page_size
        if len(ids) > limit:
            if keep_end:  # scrolling down: let the top go
                new_start += len(ids) - limit
                ids = ids[len(ids) - limit :]
            else:
                ids = ids[:limit]
        self._window(page, ids, new_start)
        change = applied.column(status)
        change.paged = True
