"""The status words SQL names, written as SQL literals from their one declaration (`transitions`,
`records`), for the schema's CHECKs and partial indexes and for the stores' conditions.

Literals, not bound parameters, on purpose: a partial index (`WHERE status = 'todo'`) serves only
a query whose condition names the same constant, and a constant lets each statement keep one text
(one entry in sqlite3's statement cache and in `queries.pyformat`'s). Sets are listed in column
order, never in a frozenset's (per-process) order, so every text is the same in every process:
the migrations built from these must stay byte for byte what boards were migrated with.
"""

from collections.abc import Iterable

from .. import transitions as t
from ..events import EventKind
from ..records import (
    EXECUTION_FAILED,
    EXECUTION_RUNNING,
    EXECUTION_SUCCEEDED,
    EXECUTION_TIMED_OUT,
)
from ..records import WORKSPACE_ACTIVE as _WORKSPACE_ACTIVE


def sql_literal(word: str) -> str:
    """A declared word as a SQL string literal: `todo` -> `'todo'`. Only plain words: nothing here
    quotes agent text, which is always bound."""
    if not word.isidentifier():
        raise ValueError(f"not a plain word: {word!r}")
    return f"'{word}'"


def sql_list(words: Iterable[str]) -> str:
    """`('todo', 'backlog')` -> `'todo', 'backlog'`, for an `IN (...)`."""
    return ", ".join(sql_literal(word) for word in words)


def in_column_order(statuses: frozenset[str]) -> tuple[str, ...]:
    return tuple(status for status in t.STATUSES if status in statuses)


TODO = sql_literal(t.TODO)
IN_REVIEW = sql_literal(t.IN_REVIEW)
BLOCKED = sql_literal(t.BLOCKED)
IN_PROGRESS = sql_literal(t.IN_PROGRESS)
IN_REVIEW = sql_literal(t.IN_REVIEW)
BLOCKED = sql_literal(t.BLOCKED)
DONE = sql_literal(t.DONE)
CANCELLED = sql_literal(t.CANCELLED)
TERMINAL = sql_list(in_column_order(t.TERMINAL))  # 'done', 'cancelled'
PENDING = sql_list(in_column_order(t.PENDING))  # 'backlog', 'todo'
LIVE = sql_list(status for status in t.STATUSES if status not in t.TERMINAL)  # the unfinished
TASK_STATUSES = sql_list(t.STATUSES)

RUN_RUNNING = sql_literal(EXECUTION_RUNNING)
RUN_SUCCEEDED = sql_literal(EXECUTION_SUCCEEDED)
RUN_FAILED = sql_list((EXECUTION_FAILED, EXECUTION_TIMED_OUT))  # the runs that came to nothing

# The event kinds the flow figures count (`kanban stats`) and the inbox reads.
TASK_CLAIMED_EVENT = sql_literal(EventKind.TASK_CLAIMED.value)
STATUS_CHANGED_EVENT = sql_literal(EventKind.STATUS_CHANGED.value)  # a task's moves (the inbox)
TASK_CREATED_EVENT = sql_literal(EventKind.TASK_CREATED.value)  # who created a task (root caps)
LEASE_EXPIRED_EVENT = sql_literal(EventKind.LEASE_EXPIRED.value)
VERIFICATION_EVENT = sql_literal(EventKind.VERIFICATION_RECORDED.value)
# What says whether a task in review waits on its gate (`attention.gate_since`).
GATE_EVENTS = sql_list(
    kind.value
    for kind in (
        EventKind.STATUS_CHANGED, EventKind.VERIFICATION_STARTED,
        EventKind.VERIFICATION_RECORDED, EventKind.VERIFICATION_STOPPED,
    )
)  # fmt: skip
WORKSPACE_ACTIVE = sql_literal(_WORKSPACE_ACTIVE)
