"""The board's refusal reasons, declared once and used by every surface.

A refusal is data, not a crash: every board call either returns its result or raises `BoardError`
carrying one `Reason`, a one-line message a person can act on, and structured details (the current
and expected status, the cycle, the cap...). The CLI prints it as JSON and maps it to an exit code,
the HTTP layer to the seed's envelope and status, the TUI to a notification. SQL errors never leak:
the store turns them into `BoardError` (or, for lock contention, retries them).
"""

from enum import StrEnum
from typing import Any

from .naming import camel
from .transitions import legal_targets


class Reason(StrEnum):
    NOT_FOUND = "not_found"
    ILLEGAL_TRANSITION = "illegal_transition"  # the transition table refuses current -> requested
    INVALID_STATE = "invalid_state"  # the verb needs another status (heartbeat on a done task...)
    VERIFICATION_REQUIRED = "verification_required"  # -> done over a non-promotable verdict
    CONFLICT = "conflict"  # lost the claim race, or the task is not claimable: data, never retry
    UNMET_DEPENDENCIES = "unmet_dependencies"
    DEPENDENCY_CYCLE = "dependency_cycle"
    NOT_ASSIGNEE = "not_assignee"  # a lease-protected verb from an agent that does not hold it
    STALE_CLAIM = "stale_claim"  # the caller's claim epoch is no longer current
    SELF_REVIEW = "self_review"  # builder is not judge
    CAP_EXCEEDED = "cap_exceeded"  # depth, live children or root-create rate ceiling
    NO_ISOLATION = "no_isolation"  # worktree refused for a task kind that mutates no files
    INVALID_INPUT = "invalid_input"
    READ_ONLY = "read_only"
    BUSY = "busy"  # the write lock stayed taken past the retry budget; nothing was written
    NO_BOARD = "no_board"  # the board file does not exist (creating one is explicit)
    NOT_A_BOARD = "not_a_board"  # the file exists but is not a kanban board: left untouched
    PERMISSION_DENIED = "permission_denied"  # the OS refuses this user the board file or folder
    UNSUPPORTED_BACKEND = "unsupported_backend"  # a database URL this kanban cannot open
    NEWER_SCHEMA = "newer_schema"  # written by a newer kanban: readable, never written by this one
    DISK_FULL = "disk_full"  # no space left where the board lives: nothing was written
    DATABASE_UNAVAILABLE = "database_unavailable"  # server unreachable, board file gone under us
    # Landing a task's work onto its base branch (boardlib.worktrees.landing): nothing landed.
    NOT_LANDABLE = "not_landable"  # no worktree, not reviewed, nothing to land, already landed
    MERGE_CONFLICT = "merge_conflict"  # the change does not merge with the base; `files` says where
    VERIFICATION_FAILED = "verification_failed"  # the verify command failed on the merged tree
    BASE_MOVED = "base_moved"  # the base kept moving while landing, past the rebuild budget
    BASE_CHECKED_OUT_DIRTY = "base_checked_out_dirty"  # a checkout of the base has local changes
    BUDGET_EXCEEDED = "budget_exceeded"  # a budget over the task is spent: an operator raises it
    OPERATOR_ONLY = "operator_only"  # a verb for people only (setting budgets): agents never
    # The plain complete of work in a worktree: its verify gate judges it (`workspace complete`).
    GATE_REQUIRED = "gate_required"


class ServerReason(StrEnum):
    """Refusals the HTTP server (`kanban serve`) makes itself, the board never having judged the
    request: no board call raises them, so the CLI and MCP never show them (no exit code, no
    hint), and each answer's status is the HTTP one it names."""

    UNAUTHORIZED = "unauthorized"  # 401: no token, or one the server does not know
    FORBIDDEN = "forbidden"  # 403: a browser's cross-site request, or another agent's name
    TOO_LARGE = "too_large"  # 413: a body over the cap, not read whole
    UNSUPPORTED_ENCODING = "unsupported_encoding"  # 415: a Content-Encoding it does not inflate
    SHUTTING_DOWN = "shutting_down"  # 503: cut off at shutdown; it may or may not have happened
    METHOD_NOT_ALLOWED = "method_not_allowed"  # 405: the path takes other methods (`Allow`)


# HTTP status per reason: the REST surface maps with this table and nothing else.
HTTP_STATUS: dict[Reason, int] = {
    Reason.NOT_FOUND: 404,
    Reason.ILLEGAL_TRANSITION: 409,
    Reason.INVALID_STATE: 409,
    Reason.VERIFICATION_REQUIRED: 409,
    Reason.CONFLICT: 409,
    Reason.UNMET_DEPENDENCIES: 409,
    Reason.DEPENDENCY_CYCLE: 409,
    Reason.NOT_ASSIGNEE: 403,
    Reason.STALE_CLAIM: 409,
    Reason.SELF_REVIEW: 403,
    Reason.CAP_EXCEEDED: 429,
    Reason.NO_ISOLATION: 422,
    Reason.INVALID_INPUT: 400,
    Reason.READ_ONLY: 403,
    Reason.BUSY: 503,
    Reason.NO_BOARD: 404,
    Reason.NOT_A_BOARD: 422,
    Reason.PERMISSION_DENIED: 403,
    Reason.UNSUPPORTED_BACKEND: 422,
    Reason.NEWER_SCHEMA: 422,
    Reason.DISK_FULL: 507,
    Reason.DATABASE_UNAVAILABLE: 503,
    Reason.NOT_LANDABLE: 409,
    Reason.MERGE_CONFLICT: 409,
    Reason.VERIFICATION_FAILED: 409,
    Reason.BASE_MOVED: 409,
    Reason.BASE_CHECKED_OUT_DIRTY: 409,
    Reason.BUDGET_EXCEEDED: 409,
    Reason.OPERATOR_ONLY: 403,
    Reason.GATE_REQUIRED: 409,
}


class BoardError(Exception):
    """A typed refusal from the board. Nothing was written when one is raised."""

    def __init__(self, reason: Reason, message: str, **details: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.details = {key: value for key, value in details.items() if value is not None}

    def to_dict(self) -> dict[str, Any]:
        """The JSON error document: `{"error": message, "reason": ..., **details}`, detail keys in
        camelCase like every other JSON the board prints."""
        details = {camel(key): value for key, value in self.details.items()}
        return {"error": self.message, "reason": self.reason.value, **details}

    def __repr__(self) -> str:
        return f"BoardError({self.reason.value!r}, {self.message!r})"


# The `why` of a board file removed or replaced under an open process (`store.board_file`):
# database_unavailable that does not pass by itself.
BOARD_FILE_GONE = "board_file_gone"


def passes_by_itself(error: BoardError) -> bool:
    """A refusal that a long-running reader waits out rather than stops on: the database busy,
    or its server unreachable (a restart, a failover). A board file removed under the process
    does not come back by itself."""
    if error.reason == Reason.BUSY:
        return True
    return error.reason == Reason.DATABASE_UNAVAILABLE and error.details.get("why") != (
        BOARD_FILE_GONE
    )


def not_found(what: str = "task", ident: str | None = None) -> BoardError:
    """`what` is also a detail: a run's id is looked for elsewhere than a task's (the MCP hint)."""
    return BoardError(Reason.NOT_FOUND, f"{what} not found", id=ident, what=what)


def invalid_input(message: str, **details: Any) -> BoardError:
    return BoardError(Reason.INVALID_INPUT, message, **details)


def not_utf8() -> BoardError:
    """Text no store can keep (a lone surrogate: how Python carries bytes that were not UTF-8),
    met at the statement that would have stored or searched it. Every field check refuses it
    first; each store turns it into this at its one door, for any other argument a caller hands
    the board."""
    return invalid_input("text that is not valid UTF-8 (it holds bytes that are not UTF-8)")


def database_line(text: str) -> str:
    """A database's message (libpq's, the server's) as the one clean line a refusal quotes: its
    first line (the rest is a hint, the statement quoted back, another host's attempt), each run
    of whitespace one space (libpq writes `FATAL:  ` with two). Empty for an empty message."""
    lines = text.strip().splitlines()
    return " ".join(lines[0].split()) if lines else ""


def unstorable(detail: str) -> BoardError:
    """A value the database refused to store (PostgreSQL's text cannot hold a NUL, a number out
    of its column's range), met at the statement. The field checks refuse what they know of
    first; this is the store's door for anything else a caller hands the board."""
    first = database_line(detail) or "no detail"
    return invalid_input(f"a value the database cannot store ({first}): nothing was written")


def wrong_state(
    verb: str,
    current: str,
    expected: str | tuple[str, ...],
    *,
    then: str | None = None,
    **details: Any,
) -> BoardError:
    """The seed-002 style state error: it names the current and the expected state. `then`, what
    gets the task there, said in their place (`cannot approve TASK-1: its builder ...`), once."""
    wanted = expected if isinstance(expected, str) else " or ".join(expected)
    said = f"task is {current}" if then is None else then
    which = f" {details['id']}" if then is not None and details.get("id") else ""
    return BoardError(
        Reason.INVALID_STATE,
        f"cannot {verb}{which}: {said} (current state: {current}, expected: {wanted})",
        current=current,
        expected=wanted,
        **details,
    )


def illegal_transition(current: str, requested: str, **details: Any) -> BoardError:
    """It says where the task may go instead (`allowed`): `illegal transition: todo -> done`
    alone left the operator to find the table in the docs."""
    allowed = legal_targets(current)
    then = f"; from {current} it may move to {', '.join(allowed)}" if allowed else ""
    then = then or f"; {current} is final, no move leaves it"
    return BoardError(
        Reason.ILLEGAL_TRANSITION,
        f"illegal transition: {current} -> {requested}{then}",
        current=current,
        requested=requested,
        allowed=list(allowed),
        **details,
    )
