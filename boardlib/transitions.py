"""The seven task statuses and the legal moves between them (seed 000, "The task lifecycle").

This module is the single authority on what is legal. It imports nothing, so every surface (the
store, the CLI, the REST layer, the TUI's move menu) can import it without pulling anything else in,
and none of them may re-declare a status or a move.
"""

BACKLOG = "backlog"
TODO = "todo"
IN_PROGRESS = "in_progress"
IN_REVIEW = "in_review"
BLOCKED = "blocked"
DONE = "done"
CANCELLED = "cancelled"

# Column order: the order the board shows statuses in, and the order menus list targets in.
STATUSES: tuple[str, ...] = (BACKLOG, TODO, IN_PROGRESS, IN_REVIEW, BLOCKED, DONE, CANCELLED)

LEGAL_MOVES: dict[str, frozenset[str]] = {
    BACKLOG: frozenset({TODO, BLOCKED, CANCELLED}),
    TODO: frozenset({IN_PROGRESS, BLOCKED, BACKLOG, CANCELLED}),
    IN_PROGRESS: frozenset({IN_REVIEW, DONE, BLOCKED, TODO, CANCELLED}),
    IN_REVIEW: frozenset({DONE, IN_PROGRESS, BLOCKED, CANCELLED}),
    BLOCKED: frozenset({TODO, IN_PROGRESS, BACKLOG, CANCELLED}),
    DONE: frozenset(),
    CANCELLED: frozenset(),
}

# No outgoing moves: the task is finished one way or the other.
TERMINAL: frozenset[str] = frozenset({DONE, CANCELLED})

# Actively owned: the assignee must not be swapped out from under the worker (only the holder's own
# transfer hands it on).
LOCKED: frozenset[str] = frozenset({IN_PROGRESS, IN_REVIEW})

# Not started yet: what cancel_dependents may cancel when a blocker fails.
PENDING: frozenset[str] = frozenset({BACKLOG, TODO})

# Where a new task may start: immediately claimable, or triage-only.
CREATABLE: frozenset[str] = frozenset({BACKLOG, TODO})


def is_status(value: object) -> bool:
    """True when `value` is one of the seven statuses (false for anything not a string, even one
    that cannot be hashed, so every door can ask it of raw input)."""
    return isinstance(value, str) and value in LEGAL_MOVES


def can_transition(current: str, target: str) -> bool:
    """Whether `current -> target` is legal. Same-status is an idempotent no-op, always allowed."""
    if current == target:
        return current in LEGAL_MOVES
    return target in LEGAL_MOVES.get(current, frozenset())


def legal_targets(current: str) -> tuple[str, ...]:
    """The statuses reachable in one move from `current`, in column order (no duplicates)."""
    allowed = LEGAL_MOVES.get(current, frozenset())
    return tuple(status for status in STATUSES if status in allowed)


def neighbour_target(current: str, step: int) -> str | None:
    """The nearest legal target to the left (`step=-1`) or right (`step=+1`) of `current` in column
    order, or None. Drives the board's "move to the previous/next legal column" keys."""
    if current not in LEGAL_MOVES or step not in (-1, 1):
        return None
    index = STATUSES.index(current) + step
    while 0 <= index < len(STATUSES):
        if STATUSES[index] in LEGAL_MOVES[current]:
            return STATUSES[index]
        index += step
    return None


def label(status: str) -> str:
    """How people read a status: `in_progress` -> `in progress`."""
    return status.replace("_", " ")
