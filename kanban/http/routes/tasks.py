"""Seed 003's task routes: list, create, read, claim, transition/edit, comment, link a
dependency, cancel a dead chain. Each asks the board as the caller's actor and answers in the
seed's envelope; the board decides every rule."""

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import TypeAdapter, ValidationError
from starlette.concurrency import run_in_threadpool

from boardlib.config import minutes_to_ms
from boardlib.errors import Reason
from boardlib.lifecycle import seed_create_holds
from boardlib.paging import PAGE_DEFAULT
from boardlib.review import review_entries
from boardlib.store.base import WouldWait
from boardlib.transitions import STATUSES

from ..bodies import (
    ClaimBody,
    CommentBody,
    CreateTaskBody,
    LinkDepBody,
    Name,
    QueryFlag,
    Status,
    UpdateTaskBody,
)
from ..deps import Who
from ..envelopes import INVALID_QUERY, Envelope, declare, envelope, error_responses
from ..pages import PageCache
from ..replies import (
    CancelledList,
    CommentReply,
    CreatedTask,
    ListBody,
    NotModified,
    Ok,
    TaskDetail,
    TaskList,
    TaskReply,
    list_body,
    list_etag,
    matches,
    reply,
)

router = APIRouter(prefix="/api/board", tags=["board"])

TaskId = Annotated[str, "the task's id (TASK-n)"]
# The seed's routes by its own names: recorded in a default block reason (`seed_route`).
SEED_CREATE = "POST /api/board"
SEED_UPDATE = "PATCH /api/board/:taskId"
INLINE_PAGE = 500  # pages up to this many tasks are read on the event loop when they can be
# No `enum` in /openapi.json: with ready=true any value is taken, which a schema cannot say.
STATUS_QUERY = f"One of {', '.join(STATUSES)}. Ignored, whatever its value, when ready=true."
DROPPED_QUERY = "true or false (default). Ignored, whatever its value, when ready=true."


def overridden(given: dict[str, tuple[Any, str | None]]) -> dict[str, Any]:
    """The list filters `ready=true` overrides (name: its type and the value sent), judged once
    they count: any bad one is the same 400 `invalid query` FastAPI gives a declared parameter,
    naming each."""
    judged: dict[str, Any] = {}
    errors: list[Any] = []
    for name, (kind, value) in given.items():
        try:
            judged[name] = None if value is None else TypeAdapter(kind).validate_python(value)
        except ValidationError as error:
            errors += [{**item, "loc": ("query", name)} for item in error.errors(include_url=False)]
    if errors:
        raise RequestValidationError(errors)
    return judged


@router.get(
    "",
    response_model=None,
    responses={
        200: {"model": TaskList, "headers": {"ETag": {"schema": {"type": "string"}}}},
        304: {"description": "Not modified: the list matches the request's If-None-Match."},
        **error_responses("plain"),
    },
    summary="List tasks (or ready-to-work tasks) for a team, whole or a page at a time",
)
@envelope("plain", invalid=INVALID_QUERY)
async def list_tasks(
    who: Who,
    request: Request,
    team_id: Annotated[Name | None, Query(alias="teamId")] = None,
    status: Annotated[str | None, Query(description=STATUS_QUERY)] = None,
    ready: Annotated[QueryFlag, Query(description="Only todo tasks whose deps are done.")] = False,
    dropped_flag: Annotated[
        str | None, Query(alias="includeDropped", description=DROPPED_QUERY)
    ] = None,
    role: Annotated[Name | None, Query()] = None,
    assignee: Annotated[Name | None, Query(description="Tasks held by this agent.")] = None,
    limit: Annotated[
        int | None,
        Query(ge=1, le=1_000_000, description="A page of this many, in creation order."),
    ] = None,
    cursor: Annotated[
        str | None,
        Query(min_length=1, max_length=40, description="The previous page's nextCursor."),
    ] = None,
    if_none_match: Annotated[str | None, Header(alias="If-None-Match")] = None,
) -> Response:
    board = who.board
    # Seed 003: `status` is "Ignored when ready=true", which "Overrides status/includeDropped":
    # judged only when they count, so a seed client's `ready=true&status=...` is the ready list.
    include_dropped = False
    if ready:
        status = None
    else:
        judged = overridden(
            {"status": (Status, status), "includeDropped": (QueryFlag, dropped_flag)}
        )
        status, include_dropped = judged["status"], bool(judged["includeDropped"])
    query = (team_id, status, ready, include_dropped, role, assignee, cursor, limit)
    board_id = str(board.path)
    small = (cursor is not None or limit is not None) and (limit or PAGE_DEFAULT) <= INLINE_PAGE
    kept: PageCache = request.app.state.service.pages

    def current() -> Response | None:
        """The cheap question first, the list's tag now: a 304 when the client holds it, the
        body kept for it when it is a page asked before at this version."""
        etag = list_etag(board_id, board.list_version(), query)
        if if_none_match and matches(if_none_match, etag):
            return NotModified(etag)
        body = kept.get(etag) if small else None
        return None if body is None else ListBody(body, etag)

    def listed() -> Response:
        documents = board.task_documents(
            status=status, team_id=team_id, role=role, assignee=assignee,
            include_dropped=include_dropped, ready=ready, cursor=cursor, limit=limit,
        )  # fmt: skip
        etag, body = list_etag(board_id, documents.version, query), list_body(documents)
        if small:
            kept.put(etag, body)
        return ListBody(body, etag)

    # The tag and a page are read right here when the board's reader is free this instant (a
    # page of 100: ~0.7 ms of SQLite): the pool's two thread hops would cost more, and on a
    # loaded machine each hop is a wait for a core. The whole list, and any read that would
    # wait (another thread reading, a Postgres round trip), go to the pool, where only a
    # client's tag is checked first (a Postgres page is then one round trip, as before).
    asked = False
    try:
        with board.at_once():
            if if_none_match or small:
                answered, asked = current(), True
                if answered is not None:
                    return answered
            if small:
                return listed()
    except WouldWait:
        pass

    def answer() -> Response:
        return (current() if if_none_match and not asked else None) or listed()

    return await run_in_threadpool(answer)


@router.post(
    "",
    response_model=None,
    responses={200: {"model": CreatedTask}, **error_responses("plain", 403, 404, 409, 429)},
    summary="Create a task, in any status (an agent token's creates are capped)",
)
@envelope("plain")
def create_task(body: CreateTaskBody, who: Who) -> JSONResponse:
    if who.identity.roles and seed_create_holds(body.status):  # held by its creator: a claim
        who.may_claim_role(body.role)
    task = who.board.create_task(
        body.title,
        description=body.description,
        status=body.status,
        priority=body.priority,
        team_id=body.team_id,
        role=body.role,
        kind=body.kind,
        parent_task_id=body.parent_task_id,
        depends_on=body.depends_on,
        assignee_runtime=body.assignee_runtime,
        source_delegation_id=body.source_delegation_id,
        tenant_id=body.tenant_id,
        actor=who.actor,  # an agent token's creates are capped by the board, from the actor
        budget_usd=body.budget_usd,
        budget_tokens=body.budget_tokens,
        seed_route=SEED_CREATE,  # any of the seven statuses, as seed 003's createTaskBody has
    )
    return reply({"task": task.to_json()})


@router.get(
    "/{task_id}",
    response_model=None,
    responses={200: {"model": TaskDetail}, **error_responses("plain", 404)},
    summary="One task, its comments, its ancestor chain and its dependencies",
)
@envelope("plain", not_found="task not found")
def get_task(task_id: TaskId, who: Who) -> JSONResponse:
    view = who.board.view(task_id)
    return reply(
        {
            "task": view.task.to_json(),
            "comments": [comment.to_json() for comment in view.comments],
            "ancestors": [ancestor.to_json() for ancestor in view.ancestors],
            "dependencies": [linked.to_json() for linked in view.dependencies],
            "dependents": [linked.to_json() for linked in view.dependents],
            "review": review_entries(view.comments),
            "verifyingSince": view.verifying_since,  # beyond the seed: its gate judges it now
            "landing": None if view.landing is None else view.landing.to_json(),  # under way
            "wontLand": None if view.wont_land is None else view.wont_land.to_json(),
        }
    )


# Seed 003 names four `error` values for the claim and a status change: 404 is `not_found`,
# any 409 of a claim is `conflict` (not claimable: dependencies unmet too), any 409 of a move
# `illegal_transition` but the done-gate's (a spent budget, a lapsed lease, a stale `epoch`
# too). The board's own reason stays in `reason`; 400, 403 and the statuses the seed's routes
# never answer (429, 503...) keep theirs in `error` as well.
NOT_FOUND = (404, Reason.NOT_FOUND.value)
CLAIM = Envelope("reason", ok_forms=(NOT_FOUND, (409, Reason.CONFLICT.value)))
STATUS_CHANGE = Envelope(
    "reason",
    ok_forms=(
        NOT_FOUND,
        (409, Reason.ILLEGAL_TRANSITION.value),
        (Reason.VERIFICATION_REQUIRED, Reason.VERIFICATION_REQUIRED.value),
    ),
)
DEPS = Envelope(
    "plain",
    not_found="task not found",
    ok_forms=((Reason.DEPENDENCY_CYCLE, "task_dependency_cycle"),),
)
FIELD_EDIT = Envelope("plain", not_found="task not found")


@router.post(
    "/{task_id}/claim",
    response_model=None,
    responses={200: {"model": TaskReply}, **error_responses(CLAIM, 403, 404, 409)},
    summary="Atomically claim a todo task (409 is data: do not retry)",
)
@declare(CLAIM)
def claim(task_id: TaskId, body: ClaimBody, who: Who) -> JSONResponse:
    agent = who.agent(body.assignee_agent_id, field="assigneeAgentId")
    if who.identity.roles:
        who.may_claim_role(who.board.get_task(task_id).role)
    task = who.board.claim(
        task_id,
        agent,
        runtime=body.assignee_runtime,
        lease_ms=None if body.minutes is None else minutes_to_ms(body.minutes),
    )
    return reply({"ok": True, "task": task.to_json()})


@router.patch(
    "/{task_id}",
    response_model=None,
    responses={
        200: {"model": TaskReply},
        **error_responses(STATUS_CHANGE, 403, 404, 409, either_codes=(404, 409)),
    },
    summary="Transition status (verification-gated) and/or edit metadata, in one transaction",
)
@declare(STATUS_CHANGE)
def update_task(
    request: Request,
    task_id: TaskId,
    body: UpdateTaskBody,
    who: Who,
) -> JSONResponse:
    request.state.envelope = STATUS_CHANGE if body.status is not None else FIELD_EDIT
    task = who.board.update_task(
        task_id,
        status=body.status,
        title=body.title,
        description=body.description,
        priority=body.priority,
        human_override=bool(body.human_override),
        reason=body.reason,
        actor=who.actor,
        epoch=body.epoch,
        seed_route=SEED_UPDATE,  # a move to blocked without a reason gets a default one
        by_holder=who.unnamed,  # the seed's client names nobody: its PATCH keeps its lease
    )
    return reply({"ok": True, "task": task.to_json()})


@router.post(
    "/{task_id}/comments",
    response_model=None,
    responses={200: {"model": CommentReply}, **error_responses("plain", 403, 404)},
    summary="Add a comment (with path and line: a review comment anchored to that line)",
)
@envelope("plain", not_found="task not found")
def add_comment(task_id: TaskId, body: CommentBody, who: Who) -> JSONResponse:
    author, author_type = who.comment_author(body.author_agent_id, body.author_type)
    if not body.anchored:
        comment = who.board.add_comment(
            task_id, body.body, author_agent_id=author, author_type=author_type
        )
    else:  # a review comment: REVIEW.md in the worktree is rewritten too
        comment = who.trees.add_comment(
            task_id, body.body, author_agent_id=author, author_type=author_type,
            path=body.path, line=body.line, side=body.side, line_text=body.line_text,
        )  # fmt: skip
    return reply({"ok": True, "comment": comment.to_json()})


@router.post(
    "/{task_id}/deps",
    response_model=None,
    responses={200: {"model": Ok}, **error_responses(DEPS, 403, 404, 409, either_codes=(409,))},
    summary="Link a dependency: the task waits until dependsOnTaskId is done",
)
@declare(DEPS)
def link_dependency(task_id: TaskId, body: LinkDepBody, who: Who) -> JSONResponse:
    task = who.board.link_dependency(task_id, body.depends_on_task_id, actor=who.actor)
    return reply({"ok": True, "task": task.to_json()})


@router.post(
    "/{task_id}/cancel-dependents",
    response_model=None,
    responses={200: {"model": CancelledList}, **error_responses("plain", 403, 404)},
    summary="Cancel the still-pending dependents of a failed task, in one transaction",
)
@envelope("plain", not_found="task not found")
def cancel_dependents(task_id: TaskId, who: Who) -> JSONResponse:
    cancelled = who.board.cancel_dependents(task_id, actor=who.actor)
    return reply({"cancelled": [{"id": task.id, "title": task.title} for task in cancelled]})
