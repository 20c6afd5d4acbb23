"""Seed 003's execution ledger: the runs of a task, opened after a claim and closed once."""

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from ..bodies import CompleteExecutionBody, CreateExecutionBody
from ..deps import Who
from ..envelopes import envelope, error_responses
from ..replies import ClosedExecutionReply, ExecutionList, ExecutionReply, reply

router = APIRouter(prefix="/api/board", tags=["executions"])


@router.get(
    "/{task_id}/executions",
    response_model=None,
    responses={200: {"model": ExecutionList}, **error_responses("plain", 404)},
    summary="The run ledger of a task, oldest first",
)
@envelope("plain", not_found="task not found")
def list_executions(task_id: str, who: Who) -> JSONResponse:
    runs = who.board.executions(task_id)
    return reply({"ok": True, "executions": [run.to_json() for run in runs]})


@router.post(
    "/{task_id}/executions",
    response_model=None,
    responses={200: {"model": ExecutionReply}, **error_responses("plain", 403, 404, 409)},
    summary="Open a run (by the task's holder, after a claim)",
)
@envelope("plain", not_found="task not found")
def open_execution(task_id: str, body: CreateExecutionBody, who: Who) -> JSONResponse:
    run = who.board.open_execution(
        task_id,
        body.executor_type,
        agent=who.token_agent,
        epoch=body.epoch,
        workspace_id=body.workspace_id,
        run_reason=body.run_reason,
        before_commit=body.before_commit,
    )
    return reply({"ok": True, "execution": run.to_json()})


@router.patch(
    "/executions/{exec_id}",
    response_model=None,
    responses={200: {"model": ClosedExecutionReply}, **error_responses("plain", 403, 404, 409)},
    summary="Close a running execution with its outcome and ledger (a spent budget blocks "
    "the task)",
)
@envelope("plain", not_found="execution not found")
def close_execution(exec_id: str, body: CompleteExecutionBody, who: Who) -> JSONResponse:
    closed = who.board.close_execution(
        exec_id,
        body.status,
        agent=who.run_closer(exec_id),  # an agent closes only its own run; the board decides
        epoch=body.epoch,
        summary=body.summary,
        error=body.error,
        after_commit=body.after_commit,
        input_tokens=body.input_tokens,
        output_tokens=body.output_tokens,
        cache_read=body.cache_read,
        cache_write=body.cache_write,
        cost_usd=body.cost_usd,
        late_cost=False,  # the seed's 404 for a run no longer running: nothing closed, no event
    )
    return reply({"ok": True, "execution": closed.to_json()})
