"""The lease protocol over HTTP (beyond seed 003, whose external claimers cannot heartbeat, so a
dead one holds its task forever): claim-next, and the holder's and reviewer's verbs under
`/api/board/{taskId}/`. Same rules and reasons as the library and the CLI; every verb takes the
`epoch` its claim returned and refuses a stale one (`stale_claim`). With an agent token the agent
is the token's; a body naming another agent is refused (`forbidden`)."""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse, Response

from boardlib import Task
from boardlib.config import minutes_to_ms

from ..bodies import (
    ActorBody,
    BlockBody,
    ClaimNextBody,
    CompleteBody,
    ExtendLeaseBody,
    HolderBody,
    ProgressBody,
    RejectBody,
    ReviewBody,
    TransferBody,
    UnblockBody,
)
from ..deps import Who
from ..envelopes import envelope, error_responses
from ..replies import TaskReply, reply

router = APIRouter(prefix="/api/board", tags=["lease"])

VERB_RESPONSES: dict[int | str, Any] = {
    200: {"model": TaskReply},
    **error_responses("reason", 403, 404, 409),
}


def _task(task: Task) -> JSONResponse:
    return reply({"ok": True, "task": task.to_json()})


@router.post(
    "/claim-next",
    response_model=None,
    status_code=200,
    responses={
        **VERB_RESPONSES,
        204: {"description": "Nothing is claimable right now (no body)."},
    },
    summary="Claim the best ready task for your role and team: 200 with it, 204 if none",
)
@envelope("reason")
def claim_next(who: Who, body: Annotated[ClaimNextBody | None, Body()] = None) -> Response:
    body = body or ClaimNextBody()
    task = who.board.claim_next(
        who.agent(body.agent),
        role=who.role(body.role),
        team_id=body.team,
        respect_deps=body.respect_deps,
        runtime=body.runtime,
        lease_ms=None if body.minutes is None else minutes_to_ms(body.minutes),
    )
    if task is None:
        return Response(status_code=204)
    return _task(task)


def _verb(
    path: str, summary: str
) -> Callable[[Callable[..., JSONResponse]], Callable[..., JSONResponse]]:
    def register(endpoint: Callable[..., JSONResponse]) -> Callable[..., JSONResponse]:
        marked = envelope("reason")(endpoint)
        router.post(
            f"/{{task_id}}/{path}", response_model=None, responses=VERB_RESPONSES, summary=summary
        )(marked)
        return marked

    return register


@_verb("heartbeat", "Renew the lease (the holder, with its epoch)")
def heartbeat(
    task_id: str, who: Who, body: Annotated[HolderBody | None, Body()] = None
) -> JSONResponse:
    body = body or HolderBody()
    return _task(who.board.heartbeat(task_id, who.agent(body.agent), epoch=body.epoch))


@_verb("progress", "Log a progress note (kept as a comment) and renew the lease")
def progress(task_id: str, body: ProgressBody, who: Who) -> JSONResponse:
    agent = who.agent(body.agent)
    return _task(who.board.log_progress(task_id, agent, body.note, epoch=body.epoch))


@_verb("extend-lease", "Set the lease to now + minutes, for a long quiet step")
def extend_lease(
    task_id: str, who: Who, body: Annotated[ExtendLeaseBody | None, Body()] = None
) -> JSONResponse:
    body = body or ExtendLeaseBody()
    agent = who.agent(body.agent)
    return _task(who.board.extend_lease(task_id, agent, minutes=body.minutes, epoch=body.epoch))


@_verb("complete", "The holder is done building: in_review, awaiting another judge")
def complete(
    task_id: str, who: Who, body: Annotated[CompleteBody | None, Body()] = None
) -> JSONResponse:
    body = body or CompleteBody()
    agent = who.agent(body.agent)
    return _task(who.trees.complete_lease(task_id, agent, summary=body.summary, epoch=body.epoch))


@_verb("approve", "Judge the work good: done (never by one of its builders)")
def approve(
    task_id: str, who: Who, body: Annotated[ReviewBody | None, Body()] = None
) -> JSONResponse:
    body = body or ReviewBody()
    return _task(who.board.approve(task_id, who.acting(body.agent), epoch=body.epoch))


@_verb("reject", "Send the work back to todo with a reason (never by one of its builders)")
def reject(task_id: str, body: RejectBody, who: Who) -> JSONResponse:
    reviewer = who.acting(body.agent)
    if not body.comments:
        return _task(who.board.reject(task_id, reviewer, body.reason, epoch=body.epoch))
    notes = [note.model_dump(exclude_none=True) for note in body.comments]
    return _task(who.trees.reject(task_id, reviewer, body.reason, epoch=body.epoch, comments=notes))


@_verb("block", "The holder cannot go on: blocked with a reason")
def block(task_id: str, body: BlockBody, who: Who) -> JSONResponse:
    agent = who.agent(body.agent)
    return _task(who.board.block(task_id, agent, body.reason, epoch=body.epoch))


@_verb("unblock", "blocked -> todo, for a fresh claim")
def unblock(
    task_id: str, who: Who, body: Annotated[UnblockBody | None, Body()] = None
) -> JSONResponse:
    body = body or UnblockBody()
    actor = who.acting(body.agent)
    return _task(who.board.unblock(task_id, note=body.note, actor=actor, epoch=body.epoch))


@_verb("release", "The holder gives the task back to todo")
def release(
    task_id: str, who: Who, body: Annotated[HolderBody | None, Body()] = None
) -> JSONResponse:
    body = body or HolderBody()
    return _task(who.board.release(task_id, who.agent(body.agent), epoch=body.epoch))


@_verb("transfer", "Hand a task you hold to another agent (fresh lease, new epoch)")
def transfer(task_id: str, body: TransferBody, who: Who) -> JSONResponse:
    agent = who.agent(body.agent)
    return _task(who.board.transfer(task_id, agent, body.to, epoch=body.epoch))


@_verb("drop", "Soft-delete: hidden and never claimable, restorable")
def drop(task_id: str, who: Who, body: Annotated[ActorBody | None, Body()] = None) -> JSONResponse:
    body = body or ActorBody()
    return _task(who.board.drop(task_id, actor=who.acting(body.agent), epoch=body.epoch))


@_verb("restore", "Undo a drop")
def restore(
    task_id: str, who: Who, body: Annotated[ActorBody | None, Body()] = None
) -> JSONResponse:
    body = body or ActorBody()
    return _task(who.board.restore(task_id, actor=who.acting(body.agent), epoch=body.epoch))
