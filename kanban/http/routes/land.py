"""Landing over HTTP (beyond seed 003): `POST /api/board/{taskId}/land` approves and lands (in
review) or lands (done) a task's work onto its base branch, `GET` of the same path previews it,
`POST .../land/abandon` is an operator's "won't land" for done work that never will (archived,
branch kept, audited), and `POST .../workspace/sync` brings the base's tip into the task's
worktree. The same rules, reasons and JSON as `kanban task land` and `kanban task workspace
sync`; refusals in the lease verbs' envelope (`{ok: false, error: <reason>}`, 409 for the
landing's own reasons, 403 self_review). With an agent token the lander is the token's agent."""

from typing import TYPE_CHECKING, Annotated, Literal

from fastapi import APIRouter, Body, Query
from fastapi.responses import JSONResponse

from boardlib.records import LAND_STRATEGIES

from ..bodies import AbandonBody, LandBody, SyncBody
from ..deps import Who
from ..envelopes import envelope, error_responses
from ..replies import Abandoned, Landed, LandingPreviewReply, Synced, reply

router = APIRouter(prefix="/api/board", tags=["land"])

if TYPE_CHECKING:
    Strategy = str
else:  # the schema's enum comes from the one list of strategies
    Strategy = Literal[LAND_STRATEGIES]


@router.post(
    "/{task_id}/land",
    response_model=None,
    responses={200: {"model": Landed}, **error_responses("reason", 403, 404, 409)},
    summary="Approve and land (in_review) or land (done) the task's work onto its base branch",
)
@envelope("reason")
def land(task_id: str, who: Who, body: Annotated[LandBody | None, Body()] = None) -> JSONResponse:
    body = body or LandBody()
    result = who.trees.land(
        task_id,
        actor=who.acting(body.agent),
        into=body.into,
        strategy=body.strategy,
        dry_run=body.dry_run,
        keep=body.keep,
        allow_unverified=body.allow_unverified,
        unverified_reason=body.unverified_reason,
        epoch=body.epoch,
        expect_source=body.expect_source,
    )
    return reply({"ok": True, **result.to_json()})


@router.post(
    "/{task_id}/land/abandon",
    response_model=None,
    responses={200: {"model": Abandoned}, **error_responses("reason", 403, 404, 409)},
    summary="Operators: done work that won't land leaves the inbox (archived, branch kept)",
)
@envelope("reason")
def abandon(task_id: str, who: Who, body: AbandonBody) -> JSONResponse:
    actor = who.acting(body.agent)
    result = who.trees.abandon_landing(task_id, actor=actor, reason=body.reason)
    return reply({"ok": True, **result.to_json()})


@router.get(
    "/{task_id}/land",
    response_model=None,
    responses={200: {"model": LandingPreviewReply}, **error_responses("plain", 400, 404)},
    summary="Would the task land now: clean onto base@sha, conflicts (files), or why not",
)
@envelope("plain", not_found="task not found")
def preview(
    task_id: str,
    who: Who,
    into: Annotated[str | None, Query(max_length=400, description="Another branch")] = None,
    strategy: Annotated[
        Strategy, Query(description="The landing to preview: a rebase replays each commit")
    ] = "squash",
) -> JSONResponse:
    previewed = who.trees.landing_preview(task_id, into=into, strategy=strategy)
    return reply({"ok": True, "preview": previewed.to_json()})


@router.post(
    "/{task_id}/workspace/sync",
    response_model=None,
    responses={200: {"model": Synced}, **error_responses("message", 403, 404, 409)},
    summary="Merge (or rebase onto) the base branch's tip in the task's worktree",
)
@envelope("message", not_found="workspace not found")
def sync(task_id: str, who: Who, body: Annotated[SyncBody | None, Body()] = None) -> JSONResponse:
    body = body or SyncBody()
    actor = who.acting(body.agent)
    result = who.trees.sync(
        task_id, actor=actor, strategy=body.strategy, into=body.into, epoch=body.epoch
    )
    return reply({"ok": True, **result.to_json()})
