"""The dependencies routes share (FastAPI's bigger-applications `dependencies` module): the
caller, resolved once per request from the app's `Service`."""

from typing import Annotated

from fastapi import Depends, Request

from .acting import Caller
from .service import Service


async def caller(request: Request) -> Caller:
    """The dependency every route takes: who calls, and the board. Async because it does no
    I/O: a sync dependency would cost every request a trip through the thread pool."""
    service: Service = request.app.state.service
    return service.caller(request)


# A route's `who: Who` parameter: the caller, resolved once per request by `caller`.
Who = Annotated[Caller, Depends(caller)]
