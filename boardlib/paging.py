"""Pages of a task list: the keyset cursor, written and read in this one place, and the pages.

A page walks creation order, newest first (the task's `seq`, which no write changes), so a walk
that runs while agents claim and finish tasks sees every task that was there all along exactly
once. The cursor is opaque to callers; inside, it names the last task a page gave.
docs/http.md#pages-and-etags
"""

from dataclasses import dataclass

from .errors import invalid_input
from .records import Task
from .validation import INT64_MAX

PAGE_DEFAULT = 100  # a page's size when a cursor comes without a limit
_PREFIX = "k1."  # the cursor's format version: a later format can tell old cursors apart


def rows_to_read(size: int) -> int:
    """The rows a page of `size` reads: one more, to know whether another page follows. A size
    past the store's 64-bit integers (a page larger than any board) reads the whole list."""
    return min(size, INT64_MAX - 1) + 1


def cursor_after(seq: int) -> str:
    """The cursor of the page that follows the task numbered `seq`."""
    return f"{_PREFIX}{seq}"


def seq_of(cursor: str) -> int:
    """The seq a cursor names; a cursor this board did not hand out is `invalid_input`."""
    digits = cursor[len(_PREFIX) :] if isinstance(cursor, str) else ""
    if (
        not isinstance(cursor, str)
        or not cursor.startswith(_PREFIX)
        or not digits.isascii()
        or not digits.isdigit()
        or len(digits) > 18
    ):
        raise invalid_input(
            "cursor is not one this board handed out: pass back a page's nextCursor as it is",
            field="cursor",
        )
    return int(digits)


@dataclass(frozen=True, slots=True)
class TaskPage:
    """One page of tasks, and the cursor of the next (None after the last page)."""

    tasks: list[Task]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class TaskDocuments:
    """A task list as the database wrote it: each task's JSON document (`Task.to_json`'s keys
    and values), the next page's cursor when this is a page, and the version of the board the
    list was read at (equal versions, equal lists: what an ETag is made from)."""

    documents: list[str]
    next_cursor: str | None
    paged: bool
    version: str
