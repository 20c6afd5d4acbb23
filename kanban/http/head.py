"""HEAD wherever GET: RFC 9110 (9.3.2) has a server answer HEAD as it answers GET, without the
content. Monitors and proxies probe with it (`curl -I`, `HEAD /healthz`); FastAPI routes take
only the methods they declare, so every HEAD was a 405.

An ASGI middleware, outermost: a HEAD request goes on as the GET it asks about (the guards, the
token check and the routes see a GET; the same headers come back, `Content-Length` the GET's),
and the body parts of its answer are sent empty. uvicorn, which remembers the request was a
HEAD, writes no body either; this makes the answer right under any server.
"""

from .auth import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """ASGI middleware answering HEAD as GET, without the content."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headless(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headless)
