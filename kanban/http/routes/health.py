"""Liveness and readiness probes."""

from anyio import to_thread
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..envelopes import error_responses
from ..replies import Health, Readiness, reply
from ..service import shown_location

router = APIRouter(tags=["health"])


@router.get(
    "/healthz",
    response_model=None,
    responses={200: {"model": Health}, 500: error_responses("plain")[500]},
    summary="Liveness: the process answers (no token needed, touches nothing)",
)
def healthz() -> JSONResponse:
    return reply({"ok": True})


@router.get(
    "/readyz",
    response_model=None,
    responses={
        200: {"model": Readiness},
        503: {"model": Readiness, "description": "The database is unreachable or outdated."},
        **{code: spec for code, spec in error_responses("plain").items() if code != 503},
    },
    summary="Readiness: the database answers and its schema is current",
)
async def readyz(request: Request) -> JSONResponse:
    service = request.app.state.service
    database = shown_location(service.settings.db)
    try:
        current = await to_thread.run_sync(service.board.schema_current)
    except Exception as error:  # unreachable, locked past the budget, not a board...
        body = {"ok": False, "database": database, "schemaCurrent": False, "error": str(error)}
        return reply(body, 503, {"Retry-After": "1"})
    return reply(
        {"ok": current, "database": database, "schemaCurrent": current}, 200 if current else 503
    )
