"""Driving the real `kanban mcp` process with the MCP SDK's own client over stdio.

Each session is the installed console script in a subprocess, on a temp board, with a clean
environment (no stray `KANBAN_*`) plus whatever board settings the test chooses. The server runs
on the wall clock: it lives longer than one call, so lease expiry is tested with a short lease
and a real wait. Set-up that is not under test goes through the library in-process.
"""

import hashlib
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, Implementation, TextContent

from tests.backends import is_postgres
from tests.cli.conftest import KANBAN, clean_env, content_digest


def server_parameters(db: Path, agent: str | None, *args: str, **env: str) -> StdioServerParameters:
    argv = ["mcp", *(["--agent", agent] if agent is not None else []), *args]
    return StdioServerParameters(
        command=str(KANBAN), args=argv, env=clean_env(KANBAN_DB=str(db), **env)
    )


@asynccontextmanager
async def mcp_session(
    db: Path, agent: str, *args: str, runtime: str = "mcp", **env: str
) -> AsyncIterator[Client]:
    """A `kanban mcp --agent AGENT` session, closed (and its process ended) on the way out.
    `runtime` is the client's name in the handshake (the SDK's default is "mcp")."""
    info = Implementation(name=runtime, version="1")
    async with Client(server_parameters(db, agent, *args, **env), client_info=info) as client:
        yield client


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def ok(client: Client, tool: str, /, **arguments: Any) -> Any:
    """A call that must succeed: the board's JSON as structured content, and the same as text."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content == json.loads(text_of(result))
    return result.structured_content


async def refused(client: Client, tool: str, reason: str, /, **arguments: Any) -> dict[str, Any]:
    """A call the board must refuse: a tool error whose text is `<reason>: <message>` then the
    hint, and whose structured content is the error document with the hint."""
    result = await client.call_tool(tool, arguments)
    text = text_of(result)
    assert result.is_error, text
    assert text.startswith(f"{reason}: "), text
    first, next_step = text.split("\n")
    assert next_step.startswith("Next: ")
    doc = result.structured_content
    assert isinstance(doc, dict)
    assert doc["reason"] == reason
    assert first == f"{reason}: {doc['error']}"
    assert next_step == f"Next: {doc['hint']}"
    return doc


def fingerprint(db: Path) -> tuple[str, int, int]:
    """The board's bytes (main file and write-ahead log) and its task and event counts: equal
    before and after means a refused call wrote nothing. The hash is taken first, so the count
    query cannot change what it hashes. On Postgres: every table's content hash instead."""
    if is_postgres(db):
        tables, sequences = content_digest(db)
        counts = dict((name, rows) for name, rows, _ in tables)
        return repr((tables, sequences)), counts["tasks"], counts["events"]
    digest = hashlib.sha256()
    for path in (db, db.with_name(db.name + "-wal")):
        digest.update(path.read_bytes() if path.exists() else b"")
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        tasks = conn.execute("SELECT count(*) FROM tasks").fetchone()[0]
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return digest.hexdigest(), tasks, events
