"""Driving the real `kanban mcp` process with the MCP SDK's own client over stdio.

Each session is a process of its own running the console script's `main` as `kanban mcp ...`, on a
temp board, with a clean environment (no stray `KANBAN_*`) plus whatever board settings the test
chooses. It is forked from a zygote that imported the SDK once (zygote.py: 1.3 CPU-s saved per
session); the docs and `kanban init` tests start the installed script itself, and so does every
session when `KANBAN_TEST_FRESH_PROCESSES=1`. The server runs on the wall clock: lease expiry is
tested with a short lease and a real wait. Set-up that is not under test goes through the library
in-process.
"""

import atexit
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, Implementation, TextContent

from boardlib.inert import inert
from tests.backends import is_postgres
from tests.cli.conftest import KANBAN, clean_env, content_digest
from tests.cli.warm import start_zygote

HERE = Path(__file__).parent
_zygote: list[tuple["subprocess.Popen[str]", Path]] = []  # this test process's, once started


def zygote_socket() -> Path:
    """The socket of this test process's zygote, started on first use (each xdist worker has
    its own); the session-scoped fixture below ends it."""
    if not _zygote:
        folder = Path(tempfile.mkdtemp(prefix="kanban-zygote-"))
        path = folder / "zygote.sock"
        process = start_zygote([str(HERE / "zygote.py"), str(path)], clean_env(), "MCP")
        _zygote.append((process, path))
        atexit.register(end_zygote)  # for the tests of other wings (tests/chaos) that use it
    return _zygote[0][1]


def end_zygote() -> None:
    """Kill and wait for the zygote: waited, its sessions' CPU time counts in the run's."""
    for process, path in _zygote:
        process.kill()
        process.wait(timeout=30)
        path.unlink(missing_ok=True)
        path.parent.rmdir()
    _zygote.clear()


@pytest.fixture(scope="session", autouse=True)
def _end_the_zygote() -> Iterator[None]:
    yield
    end_zygote()


def server_parameters(db: Path, agent: str | None, *args: str, **env: str) -> StdioServerParameters:
    """`kanban mcp --agent AGENT ARGS` as the client launches it: through tests/mcp/launch.py,
    which hands its stdio to a process forked from the zygote."""
    argv = ["mcp", *(["--agent", agent] if agent is not None else []), *args]
    environment = clean_env(KANBAN_DB=str(db), **env)
    if os.environ.get("KANBAN_TEST_FRESH_PROCESSES") == "1":  # as tests/cli/warm.py: no zygote
        return StdioServerParameters(command=str(KANBAN), args=argv, env=environment)
    launcher = ["-I", "-S", str(HERE / "launch.py"), str(zygote_socket())]
    return StdioServerParameters(command=sys.executable, args=[*launcher, *argv], env=environment)


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
    assert first == f"{reason}: {inert(doc['error'])}" and first.isprintable(), first
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
