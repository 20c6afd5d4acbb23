"""Every answer the server sends: the one JSON response class (`reply`), the board's and the
identity's refusals in a route's envelope (`envelopes.py` shapes the bodies), and, for
`/openapi.json`, the success bodies: seed 003's envelopes around the board's own records.

The records (`boardlib.records`, `boardlib.worktrees.results`) are the one declaration of each
row; pydantic reads them through their `__pydantic_config__` (camelCase aliases), so the schema a
client sees is the JSON the board prints. Endpoints build their JSON with the records' `to_json()`
and return it directly: these models describe the answer, they do not re-validate it on every
request (a 10,000-task list would pay for that twice).
"""

import hashlib
from typing import Any, Literal

import orjson
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from boardlib.errors import BoardError, Reason, ServerReason
from boardlib.paging import TaskDocuments
from boardlib.records import (
    Ancestor,
    BudgetReport,
    BudgetStanding,
    ClosedExecution,
    Comment,
    DailyBudget,
    Event,
    Execution,
    GateRun,
    InboxItem,
    LandingRun,
    LinkedTask,
    Task,
    WontLand,
    Workspace,
)
from boardlib.stats import Stats
from boardlib.worktrees.results import CompleteInfo, DiffStat, PauseInfo, WorktreeInfo
from kanban.documents import one_line_utf8

from .acting import Forbidden
from .auth import HEADERS
from .envelopes import (
    RETRY_AFTER_S,
    SHUTTING_DOWN_MESSAGE,
    Envelope,
    forbidden,
    http_refusal,
    invalid_body,
    invalid_details,
    malformed_request,
    refusal_body,
    status_of,
)

_RAW_HEADERS = [(name.lower().encode(), value.encode()) for name, value in HEADERS.items()]
_JSON_TYPE = (b"content-type", b"application/json")


class Json(JSONResponse):
    """JSON encoded by orjson: a 10,000-task list in 21-28 ms instead of 69-179 ms with the
    standard library. Control characters in agent text come out escaped (\\u001b), as with json.
    The header block is built from a prepared list rather than Starlette's generic
    `init_headers` (the same headers, in the same order): every answer pays for it."""

    def __init__(
        self, content: Any, status_code: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        self.status_code = status_code
        self.background = None
        self.body = one_line_utf8(orjson.dumps(content))
        if headers:
            merged = {**HEADERS, **headers}
            raw = [
                (name.lower().encode("latin-1"), v.encode("latin-1")) for name, v in merged.items()
            ]
        else:
            raw = _RAW_HEADERS.copy()
        raw += ((b"content-length", str(len(self.body)).encode()), _JSON_TYPE)
        self.raw_headers = raw


def reply(content: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return Json(content, status, headers)


# -- lists: one body from the database's documents, an ETag, and 304 ------------------------------

# A list may be kept and revalidated (`If-None-Match`), never used unasked: `no-cache`, not
# `no-store`. Bump REPRESENTATION when the JSON of a list changes shape: old tags then miss.
REPRESENTATION = "1"
LIST_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-cache"),
]


class ListBody(Response):
    """A task list written once: the documents the database made, joined into seed 003's
    `{"tasks": [...]}` (and `nextCursor` for a page), with its ETag."""

    media_type = "application/json"

    def __init__(self, body: bytes, etag: str) -> None:
        self.status_code = 200
        self.background = None
        self.body = body
        self.raw_headers = [
            *LIST_HEADERS,
            (b"etag", etag.encode()),
            (b"content-length", str(len(self.body)).encode()),
            _JSON_TYPE,
        ]


def list_body(listed: TaskDocuments) -> bytes:
    """Seed 003's `{"tasks": [...]}` (and `nextCursor` for a page) around the documents."""
    tail = b"]}"
    if listed.paged:
        tail = b'],"nextCursor":' + orjson.dumps(listed.next_cursor) + b"}"
    return one_line_utf8(b'{"tasks":[' + ",".join(listed.documents).encode() + tail)


class NotModified(Response):
    """304: the list the client holds (its `If-None-Match`) is the list it would get."""

    def __init__(self, etag: str) -> None:
        self.status_code = 304
        self.background = None
        self.body = b""
        self.raw_headers = [*LIST_HEADERS, (b"etag", etag.encode())]


def list_etag(board_id: str, version: str, query: tuple[Any, ...]) -> str:
    """A strong ETag: the same board, at the same version, asked the same list, answers the
    same bytes."""
    digest = hashlib.blake2b(
        repr((REPRESENTATION, board_id, version, query)).encode(), digest_size=12
    )
    return f'"{digest.hexdigest()}"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110's weak comparison of `If-None-Match` (a list, `W/` tags, or `*`) with `etag`."""
    if not if_none_match:
        return False
    for candidate in if_none_match.split(","):
        tag = candidate.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


def board_error_reply(error: BoardError, spec: Envelope) -> JSONResponse:
    """The board's refusal in the route's envelope (shared with the lease verbs' fast lane). A
    task id in the path that cannot be an id (too long, a character ids never have) names no
    task: seed 003's 404, not "invalid body" for a request that may have none."""
    if error.reason is Reason.INVALID_INPUT and error.details.get("field") == "id":
        error = BoardError(Reason.NOT_FOUND, error.message)
    if error.reason is Reason.INVALID_INPUT:
        return reply(invalid_body(spec.invalid, invalid_details(error)), 400)
    body = refusal_body(error, spec)
    if error.reason in (Reason.BUSY, Reason.DATABASE_UNAVAILABLE):  # transient: say when
        return reply(body, 503, {"Retry-After": str(RETRY_AFTER_S)})
    return reply(body, status_of(error))


def forbidden_reply(error: Forbidden, spec: Envelope) -> JSONResponse:
    status, body = forbidden(error.message, spec, **error.details)
    return reply(body, status)


def shutting_down_reply(spec: Envelope) -> JSONResponse:
    """503 with Retry-After, as a transient refusal is: a server started again answers."""
    body = http_refusal(ServerReason.SHUTTING_DOWN.value, SHUTTING_DOWN_MESSAGE, spec)
    return reply(body, 503, {"Retry-After": str(RETRY_AFTER_S)})


def malformed_request_bytes(why: str, server_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole 400 answer, status line to body, to a request HTTP's parser refused: written
    straight to the connection (there is no request for the app to answer), which then closes."""
    answer = reply(malformed_request(why), 400)
    lines = [b"HTTP/1.1 400 Bad Request"]
    for name, value in [*server_headers, *answer.raw_headers, (b"connection", b"close")]:
        lines.append(name + b": " + value)
    return b"\r\n".join(lines) + b"\r\n\r\n" + answer.body


# -- success bodies, for OpenAPI ----------------------------------------------------------------


class Reply(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class TaskList(Reply):
    """The tasks; with `limit` or `cursor`, one page and the cursor of the next (null after the
    last page)."""

    tasks: list[Task]
    next_cursor: str | None = Field(default=None, alias="nextCursor")


class CreatedTask(Reply):
    task: Task


class TaskReply(Reply):
    ok: Literal[True]
    task: Task


class ReviewComment(Reply):
    """A comment anchored to a line of the task's diff, as an agent acts on it."""

    comment_id: str = Field(alias="commentId")
    path: str
    line: int | None
    side: str
    line_text: str | None = Field(alias="lineText")
    body: str
    author: str
    created_at: int = Field(alias="createdAt")


class TaskDetail(Reply):
    """One task with its comments (oldest first), its parent chain (nearest first), and, beyond
    the seed, the tasks it waits on and the tasks waiting on it, and whether an operator decided
    its work won't land (`wontLand`: `by`, `at`, `reason`, `kept`)."""

    task: Task
    comments: list[Comment]
    ancestors: list[Ancestor]
    dependencies: list[LinkedTask]
    dependents: list[LinkedTask]
    review: list[ReviewComment] = []
    # Beyond the seed: since when (epoch ms) its verification gate judges it; null when none does.
    verifying_since: int | None = Field(default=None, alias="verifyingSince")
    # Beyond the seed: the landing of it under way (who, since when); null when none is.
    landing: LandingRun | None = None
    # an operator decided its work won't land (null otherwise, and once it lands after all)
    wont_land: WontLand | None = Field(None, alias="wontLand")


class CommentReply(Reply):
    ok: Literal[True]
    comment: Comment


class ExecutionReply(Reply):
    ok: Literal[True]
    execution: Execution


class ClosedExecutionReply(Reply):
    """The closed run; `budgetExceeded` (present only then) names the budget its cost spent:
    the cost is recorded and the task is now blocked."""

    ok: Literal[True]
    execution: ClosedExecution


class StatsReply(Reply):
    ok: Literal[True]
    stats: Stats


class BudgetsReply(Reply):
    ok: Literal[True]
    budgets: BudgetReport


class DailyBudgetReply(BudgetsReply):
    """The daily budget as the change left it (what the CLI prints; every field null once
    removed), and every budget with today's spend."""

    daily_budget: DailyBudget = Field(alias="dailyBudget")


class StandingsReply(Reply):
    ok: Literal[True]
    budgets: list[BudgetStanding]


class ExecutionList(Reply):
    ok: Literal[True]
    executions: list[Execution]


class Ok(Reply):
    ok: Literal[True]


class CancelledTask(Reply):
    id: str
    title: str


class CancelledList(Reply):
    cancelled: list[CancelledTask]


class Provisioned(Reply):
    ok: Literal[True]
    worktree: WorktreeInfo
    workspace_id: str = Field(alias="workspaceId")
    isolation: Literal["worktree"]


class Resumed(Reply):
    ok: Literal[True]
    workspace: Workspace
    resume: dict[str, Any] | None
    handoff: dict[str, Any] | None
    review: list[ReviewComment] = []
    host: str | None = None  # the machine holding its checkout, when not this one (not live here)


class Paused(Reply):
    ok: Literal[True]
    action: Literal["pause"]
    pause: PauseInfo


class Completed(Reply):
    ok: Literal[True]
    action: Literal["complete"]
    complete: CompleteInfo
    task_status: str = Field(alias="taskStatus")
    verified: Literal["pass", "fail", "completed_with_debt"] | None = None
    note: str | None = None  # a repeat on a blocked task: nothing ran, and why it is blocked


class WorkspaceDetail(Reply):
    """The drawer's Workspace tab: SoR files by name (only those names), the diff and its stat."""

    ok: Literal[True]
    workspace: Workspace
    sor_files: dict[str, str] = Field(alias="sorFiles")
    diff_stat: DiffStat | None = Field(alias="diffStat")
    diff: str
    diff_truncated: bool = Field(default=False, alias="diffTruncated")
    review: list[ReviewComment] = []


class InboxReply(Reply):
    """Everything that needs a person, oldest first (`since` in epoch ms), as of `now`: each item
    names its task (or, for a held delivery, its consumer and event), why, and the one action."""

    items: list[InboxItem]
    count: int
    now: int
    left_out: int = Field(default=0, alias="leftOut")  # an agent token's own work, left out
    verifying: list[GateRun] = []  # in review, left out while their gate judges them
    landing: list[LandingRun] = []  # left out while a landing of them is under way


class EventPage(Reply):
    """Events after `since`, oldest first; pass `next` as the next `since`."""

    events: list[Event]
    next: int


class Health(Reply):
    ok: Literal[True]


class Readiness(Reply):
    ok: bool
    database: str
    schema_current: bool = Field(alias="schemaCurrent")


class Landed(Reply):
    """A landing (or, `dryRun`, what it would do): `boardlib.worktrees.LandResult`."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    ok: Literal[True]
    task: Task
    landed: bool
    dry_run: bool = Field(alias="dryRun")
    into: str
    strategy: str | None  # null: already on the base, no strategy applied
    commit: str | None = None


class Abandoned(Reply):
    """An operator's "won't land": `boardlib.worktrees.landing.AbandonResult`."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    ok: Literal[True]
    task: Task
    reason: str
    archived: bool


class LandingPreviewReply(Reply):
    """Would it land now: `boardlib.worktrees.LandingPreview` (clean, conflicts, landed,
    unavailable)."""

    ok: Literal[True]
    preview: dict[str, Any]


class Synced(Reply):
    """`boardlib.worktrees.SyncResult`."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    ok: Literal[True]
    action: Literal["sync"]
    task_id: str = Field(alias="taskId")
    up_to_date: bool = Field(alias="upToDate")
