"""A path segment is one parameter, `%2F` and all: the server decodes the whole path before
routing (`/api/board/a%2Fb` was routed as `/api/board/a/b`, and `TASK-1%2Fclaim` claimed
TASK-1). A path that came percent-encoded is routed with each segment's own `/` and `%` kept
escaped, and every route's path parameters are read back through `unescaped`, so `a%2Fb` reaches
the handler as the id `a/b` (a task not found, in the route's envelope).
"""

from collections.abc import Iterable, MutableMapping
from typing import Any
from urllib.parse import unquote

from starlette.convertors import StringConvertor
from starlette.routing import BaseRoute


def unescaped(segment: str) -> str:
    """A routed segment as the client meant it (`escaped`'s inverse)."""
    return unquote(segment) if "%" in segment else segment


def escaped(segment: str) -> str:
    return segment.replace("%", "%25").replace("/", "%2F")


def route_by_segment(scope: MutableMapping[str, Any]) -> None:
    """Set `scope["path"]` to the client's path decoded segment by segment, as the server
    decodes it (`unquote`, UTF-8 with replacement), each segment's `/` and `%` escaped. Only a
    path that carried a `%` changes; one under a `root_path` is left as the server made it."""
    raw = scope.get("raw_path")
    if not raw or b"%" not in raw or scope.get("root_path"):
        return
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:  # the server decoded it as ASCII too, so never reached here
        return
    scope["path"] = "/".join(escaped(unquote(part)) for part in text.split("/"))


class Segment(StringConvertor):
    """`{task_id}`, `{exec_id}`: one segment, unescaped."""

    def convert(self, value: str) -> str:
        return unescaped(value)


def unescape_parameters(routes: Iterable[BaseRoute]) -> None:
    """Read every string path parameter of `routes` through `unescaped`."""
    for route in routes:
        convertors = getattr(route, "param_convertors", None)
        if not convertors:
            continue
        for name, convertor in convertors.items():
            if type(convertor) is StringConvertor:
                convertors[name] = Segment()
