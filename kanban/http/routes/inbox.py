"""`GET /api/board/inbox`: what needs a person now, oldest first (the rule:
`boardlib.attention`), the same list as `kanban inbox`, the MCP tool and the TUI. With an agent
token it is read for that agent (`kanban inbox --as`): the work it built is left out."""

from anyio import to_thread
from fastapi import APIRouter
from fastapi.responses import JSONResponse

from ..deps import Who
from ..envelopes import INVALID_QUERY, envelope, error_responses
from ..replies import InboxReply, reply

router = APIRouter(prefix="/api/board", tags=["board"])


@router.get(
    "/inbox",
    response_model=None,
    responses={200: {"model": InboxReply}, **error_responses("plain")},
    summary="What needs a person now: review, blocked, debt, lapsed leases, held deliveries",
)
@envelope("plain", invalid=INVALID_QUERY)
async def inbox(who: Who) -> JSONResponse:
    found = await to_thread.run_sync(who.board.inbox, who.token_agent)
    return reply(found.to_json())
