"""Guarantee 6 (the surfaces): every REST body and every MCP tool argument, generated.

- REST: schemathesis over `/openapi.json` with a larger budget than CI's route tests
  (tests/http/test_schema.py: 25 examples a route; here 50, half `KANBAN_CHAOS_EXAMPLES`),
  with their checks (no 500, every status and body as declared) plus two of its own: a refused
  call (any 4xx or 5xx) writes nothing, and a task created from a generated title stores that
  title as given (stripped) and draws it inert. Why 50: a refusal planted after the commit of
  a task with a non-ASCII title was missed at 25 examples a route and found at 50 and at 100
  (one run each); 100 (150 s of one worker) no longer fit CI's budget beside the key fuzz.
- MCP: hypothesis drives the real `kanban mcp` over stdio (the SDK's client, in a thread of its
  own) with generated arguments for every tool the server lists: typed but hostile, of the wrong
  type, missing, or unknown. Every call gets a result (a tool error at worst), the server never
  logs a traceback, and a tool error writes nothing.
"""

import asyncio
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, Tool

from boardlib import Board
from tests.cli.conftest import KANBAN, clean_env
from tests.core.test_inert import HOSTILE
from tests.http.conftest import Live, live_server, seed_every_state
from tests.http.test_schema import CHECKS
from tests.tui.test_inert_rendering import PALETTE, check_segments
from tui.cards import card_lines

EXAMPLES = int(os.environ.get("KANBAN_CHAOS_EXAMPLES", "100"))
REST_EXAMPLES = max(EXAMPLES // 2, 1)  # a route: each example is a live request and a check


class Watcher:
    """Whether anything committed to a board file: `PRAGMA data_version` on a connection of its
    own moves on every commit by any other connection."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)

    def version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])


# -- REST -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with live_server(tmp_path_factory.mktemp("chaos-schemathesis")) as server:
        seed_every_state(server.api)
        yield server


@pytest.fixture(scope="module")
def rest_client(live: Live) -> Iterator[tuple[requests.Session, Watcher]]:
    """One keep-alive session (no proxy lookup from the environment) and one `data_version`
    connection for every example: a connection and a TCP handshake per call were most of the
    client's cost, and neither is what the test is about."""
    with requests.Session() as session:
        session.trust_env = False
        yield session, Watcher(live.api.path)


@pytest.fixture(scope="module")
def chaos_schema(live: Live) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(live.api.client.get("/openapi.json").json())


rest = schemathesis.pytest.from_fixture("chaos_schema")


@pytest.mark.slow  # the REST body fuzz
@rest.parametrize()
@settings(
    max_examples=REST_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_rest_body_is_answered_and_a_refusal_writes_nothing(
    case: schemathesis.Case, live: Live, rest_client: tuple[requests.Session, Watcher]
) -> None:
    if case.operation.path.endswith("/events") and case.operation.method.upper() == "GET":
        case.headers = {**(case.headers or {}), "Accept": "application/json"}
    session, watcher = rest_client
    before = watcher.version()
    response = case.call(base_url=live.url, timeout=30, session=session)
    case.validate_response(response, checks=CHECKS)
    if response.status_code >= 400:
        assert watcher.version() == before, (
            f"{case.operation.method} {case.operation.path} answered {response.status_code} "
            f"but committed: {response.text[:300]}"
        )
    created = case.operation.method.upper() == "POST" and case.operation.path == "/api/board"
    if created and response.status_code == 200 and isinstance(case.body, dict):
        task = live.api.stored(response.json()["task"]["id"])
        assert task.title == case.body["title"].strip()
        for strip in card_lines(task, 40, PALETTE, now_ms=task.created_at, selected=True):
            check_segments(list(strip), newline=False)


# -- MCP ------------------------------------------------------------------------------------------


class McpDriver:
    """One `kanban mcp --agent alice` session, served by the SDK's client on an event loop in a
    thread of its own, so synchronous hypothesis examples can call tools one by one."""

    def __init__(self, db: Path, errors: Path) -> None:
        command = f'exec "{KANBAN}" mcp --agent alice 2>>"{errors}"'
        # Started in the board's folder, with its worktrees there: a fuzzed provision_workspace
        # of "." must never branch the repository the tests run from.
        env = clean_env(KANBAN_DB=str(db), KANBAN_WORKTREES=str(db.parent / "worktrees"))
        self.params = StdioServerParameters(
            command="sh", args=["-c", command], env=env, cwd=db.parent
        )
        self.loop = asyncio.new_event_loop()
        self.ready: Future[Client] = Future()
        self.done = asyncio.Event()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.session = asyncio.run_coroutine_threadsafe(self._serve(), self.loop)
        self.client = self.ready.result(timeout=120)
        self.tools: list[Tool] = self.call(self.client.list_tools()).tools

    async def _serve(self) -> None:
        try:
            async with Client(self.params) as client:
                self.ready.set_result(client)
                await self.done.wait()
        except BaseException as error:
            if not self.ready.done():
                self.ready.set_exception(error)
            raise

    def call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=120)

    def tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        result: CallToolResult = self.call(self.client.call_tool(name, arguments))
        return result

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.done.set)
        self.session.result(timeout=60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)


@pytest.fixture(scope="module")
def mcp_board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpDriver, Path, Path]]:
    folder = tmp_path_factory.mktemp("chaos-mcp")
    db = folder / "board.db"
    with Board(db) as board:
        for n in range(4):
            board.create_task(f"task {n}")
        held = board.claim_next("alice")
        assert held is not None
        other = board.claim_next("bob")
        assert other is not None
        board.complete(other.id, "bob", epoch=other.claim_epoch)
    errors = folder / "mcp.err"
    driver = McpDriver(db, errors)
    try:
        yield driver, db, errors
    finally:
        driver.close()


TEXT = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40), st.sampled_from(["", " ", "\n"]))
WRONG = st.sampled_from([None, 0, -1, 2**70, 1.5, float("inf"), True, [], {}, "x" * 30_000])
IDS = st.sampled_from(["TASK-1", "TASK-2", "TASK-3", "TASK-4", "TASK-99", "", "../x"])


def value_for(name: str, schema: dict[str, Any]) -> Any:
    """A value for one parameter from its JSON schema: right type and hostile, or wrong."""
    kinds = {schema.get("type")} | {option.get("type") for option in schema.get("anyOf", [])}
    choices: list[Any] = [WRONG]
    if "string" in kinds:
        choices.append(IDS if "task_id" in name or name == "depends_on" else TEXT)
        if "enum" in schema:
            choices.append(st.sampled_from(schema["enum"]))
        for option in schema.get("anyOf", []):
            if "enum" in option:
                choices.append(st.sampled_from(option["enum"]))
    if "integer" in kinds:
        choices.append(st.integers(min_value=-(2**65), max_value=2**65))
    if "number" in kinds:
        choices.append(st.floats(allow_nan=True, allow_infinity=True))
    if "boolean" in kinds:
        choices.append(st.booleans())
    if "array" in kinds:
        choices.append(st.lists(st.one_of(IDS, TEXT), max_size=3))
    if "null" in kinds:
        choices.append(st.none())
    return st.one_of(*choices)


def arguments_for(tool: Tool) -> Any:
    properties = tool.input_schema.get("properties", {})
    fields = {name: value_for(name, schema) for name, schema in properties.items()}
    extra = st.dictionaries(st.sampled_from(["agent", "epoch", "actor", "zzz"]), TEXT, max_size=1)
    return st.tuples(
        st.just(tool.name),
        st.fixed_dictionaries({}, optional=fields),
        st.one_of(st.just({}), st.just({}), extra),
    ).map(lambda drawn: (drawn[0], {**drawn[1], **drawn[2]}))


@pytest.mark.slow  # the MCP argument fuzz
@settings(
    max_examples=EXAMPLES * 3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_every_mcp_tool_argument_gets_a_result_and_a_tool_error_writes_nothing(
    data: st.DataObject, mcp_board: tuple[McpDriver, Path, Path]
) -> None:
    driver, db, errors = mcp_board
    tool = data.draw(st.sampled_from(driver.tools), label="tool")
    name, arguments = data.draw(arguments_for(tool), label="arguments")
    watcher = Watcher(db)
    before = watcher.version()
    result = driver.tool(name, arguments)
    assert result.content, (name, arguments)
    if result.is_error:
        assert watcher.version() == before, (name, arguments, result.content)
    else:
        json.loads(result.content[0].text)  # type: ignore[union-attr]
    log = errors.read_text() if errors.exists() else ""
    assert "Traceback" not in log, log[-3000:]
