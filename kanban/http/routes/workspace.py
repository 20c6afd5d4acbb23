"""Seed 003's workspace routes: a file-mutating task's own git worktree, its system-of-record
files, the clock-out handoff, and completion through the verification gate. The worktree
subsystem (`boardlib.worktrees`) touches only the task's worktree, its branch and the state
folder; the detail route serves the SoR files by their fixed names and nothing else."""

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from boardlib.errors import Reason, wrong_state
from boardlib.review import review_entries

from ..bodies import HandoffBody, ProvisionBody, WorkspaceActionBody
from ..deps import Who
from ..envelopes import INVALID_HANDOFF, envelope, error_responses
from ..replies import Completed, Ok, Paused, Provisioned, Resumed, WorkspaceDetail, reply

router = APIRouter(prefix="/api/board", tags=["workspace"])

# The worktree routes share a prefix: the two-segment paths first, as the seed's router does.


@router.post(
    "/{task_id}/workspace/handoff",
    response_model=None,
    responses={200: {"model": Ok}, **error_responses("message", 403, 404, 409)},
    summary="Write the clock-out AGENT_HANDOFF.json into the task's worktree",
)
@envelope("message", not_found="workspace not found", invalid=INVALID_HANDOFF)
def write_handoff(task_id: str, body: HandoffBody, who: Who) -> JSONResponse:
    given = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if who.token_agent is not None:  # an agent token signs its handoffs as itself, never another
        who.agent(body.handoff_from, field="handoffFrom")
    who.trees.write_handoff(task_id, given, actor=who.token_agent)
    return reply({"ok": True})


@router.get(
    "/{task_id}/workspace/detail",
    response_model=None,
    responses={200: {"model": WorkspaceDetail}, **error_responses("plain", 404)},
    summary="The SoR files and the unified diff against the baseline (the drawer view)",
)
@envelope("plain", not_found="workspace not found")
def workspace_detail(task_id: str, who: Who) -> JSONResponse:
    detail = who.trees.detail(task_id)
    return reply(
        {
            "ok": True,
            "workspace": detail.workspace.to_json(),
            "sorFiles": dict(detail.sor_files),
            "diffStat": None if detail.diff_stat is None else detail.diff_stat.to_json(),
            "diff": detail.diff,
            "diffTruncated": detail.diff_truncated,
            "review": review_entries(who.board.comments(task_id)),
        }
    )


@router.post(
    "/{task_id}/workspace",
    response_model=None,
    responses={200: {"model": Provisioned}, **error_responses("message", 403, 404, 409, 422)},
    summary="Provision a worktree, branch and SoR scaffold (reused when live)",
)
@envelope(
    "message",
    not_found="task not found",
    ok_forms={Reason.NO_ISOLATION: Reason.NO_ISOLATION.value},  # seed 003's error, verbatim
)
def provision(task_id: str, body: ProvisionBody, who: Who) -> JSONResponse:
    who.check_repo(body.repo_path)
    made = who.trees.provision(
        task_id,
        body.repo_path,
        base_sha=body.base_sha,
        base_ref=body.base_ref,
        kind=body.kind,
        actor=who.acting(body.agent),
        epoch=body.epoch,
    )
    return reply({"ok": True, **made.to_json()})


@router.get(
    "/{task_id}/workspace",
    response_model=None,
    responses={200: {"model": Resumed}, **error_responses("plain", 404)},
    summary="Cold-resume read: the workspace and the state rebuilt from its files",
)
@envelope("plain", not_found="workspace not found")
def resume(task_id: str, who: Who) -> JSONResponse:
    state = who.trees.resume(task_id)
    return reply(
        {
            "ok": True,
            "workspace": state.workspace.to_json(),
            "resume": state.resume,
            "handoff": state.handoff,
            "review": state.review,
        }
    )


@router.patch(
    "/{task_id}/workspace",
    response_model=None,
    responses={
        200: {"model": Paused | Completed},
        **error_responses("message", 403, 404, 409),
    },
    summary="Pause (commit, drop the checkout, keep the branch) or complete (the gate decides)",
)
@envelope("message", not_found="workspace not found")
def workspace_action(task_id: str, body: WorkspaceActionBody, who: Who) -> JSONResponse:
    if body.action == "pause":
        paused = who.trees.pause(task_id, actor=who.acting(body.agent), epoch=body.epoch)
        return reply({"ok": True, **paused.to_json()})
    if who.identity.is_agent or body.agent is not None:
        builder = who.agent(body.agent)
    else:  # seed 003's body names nobody: the holder completes its own work
        task = who.board.get_task(task_id)
        found = task.assignee_agent_id or task.builder
        if found is None:
            raise wrong_state("complete", task.status, "in_progress", id=task_id)
        builder = found
    result = who.trees.complete(task_id, builder, epoch=body.epoch, summary=body.summary)
    return reply({"ok": True, **result.to_json()})
