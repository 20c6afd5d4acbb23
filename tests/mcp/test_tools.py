"""What a model reads before its first call: every tool named as the issue names it, described
(when to use it, what the lease means), with a schema whose every parameter is described; and a
hint for every refusal reason the board can give."""

import re
from pathlib import Path

import pytest

from boardlib import Board, transitions
from boardlib.errors import Reason
from kanban.mcp.hints import HINTS, UNEXPECTED_HINT, hint_for
from tests.mcp.conftest import fingerprint, mcp_session, ok, refused

# The tools and their parameters, as issue 13 names them.
EXPECTED = {
    "claim_next": ["role", "team_id"],
    "heartbeat": ["task_id"],
    "log_progress": ["task_id", "note"],
    "extend_lease": ["task_id", "minutes"],
    "complete_task": ["task_id", "summary"],
    "block_task": ["task_id", "reason"],
    "release_task": ["task_id"],
    "start_run": ["task_id", "executor", "reason"],
    "finish_run": [
        "execution_id",
        "status",
        "cost_usd",
        "input_tokens",
        "output_tokens",
        "cache_read",
        "cache_write",
        "summary",
    ],
    "get_task": ["task_id", "detail"],
    "list_tasks": ["status", "ready", "role", "mine", "limit"],
    "explain": ["task_id", "role"],
    "create_task": [
        "title",
        "description",
        "priority",
        "role",
        "depends_on",
        "budget_usd",
        "budget_tokens",
    ],
    "create_subtask": [
        "parent_task_id",
        "title",
        "description",
        "priority",
        "role",
        "depends_on",
        "budget_usd",
        "budget_tokens",
    ],
    "add_comment": ["task_id", "body", "path", "line"],
    "link_dependency": ["task_id", "depends_on"],
    "approve_task": ["task_id"],
    "reject_task": ["task_id", "reason", "comments"],
    "land_task": ["task_id", "strategy", "into", "dry_run"],
    "preview_landing": ["task_id", "strategy"],
    "provision_workspace": ["task_id", "repo_path", "base_ref"],
    "write_handoff": ["task_id", "handoff"],
    "resume_workspace": ["task_id"],
    "complete_workspace": ["task_id", "summary"],
    "sync_workspace": ["task_id", "strategy"],
    "inbox": [],
}
REQUIRED = {
    "heartbeat": ["task_id"],
    "log_progress": ["task_id", "note"],
    "extend_lease": ["task_id"],
    "complete_task": ["task_id"],
    "block_task": ["task_id", "reason"],
    "release_task": ["task_id"],
    "start_run": ["task_id", "executor"],
    "finish_run": ["execution_id", "status"],
    "get_task": ["task_id"],
    "create_task": ["title"],
    "create_subtask": ["parent_task_id", "title"],
    "add_comment": ["task_id", "body"],
    "link_dependency": ["task_id", "depends_on"],
    "approve_task": ["task_id"],
    "reject_task": ["task_id", "reason"],
    "land_task": ["task_id"],
    "preview_landing": ["task_id"],
    "provision_workspace": ["task_id", "repo_path"],
    "write_handoff": ["task_id", "handoff"],
    "resume_workspace": ["task_id"],
    "complete_workspace": ["task_id"],
    "sync_workspace": ["task_id"],
}
LEASE_RULE = (
    "A claim holds a lease of 15 minutes: call heartbeat or log_progress at least every "
    "5 minutes while working, or the task is released to someone else; complete when done; "
    "never approve your own work."
)


async def test_every_tool_is_described_with_a_described_schema(tmp_path: Path) -> None:
    db = tmp_path / "board.db"
    with Board(db):
        pass
    async with mcp_session(db, "alice") as client:
        assert client.instructions is not None
        assert "agent 'alice'" in client.instructions and LEASE_RULE in client.instructions
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == sorted(EXPECTED)
    for name, tool in tools.items():
        description = tool.description or ""
        assert len(description) > 80, name
        assert "\n" not in description and "  " not in description, name
        assert not re.search(r"\{[a-z_]+\}", description), f"unfilled setting in {name}"
        schema = tool.input_schema
        assert schema["type"] == "object", name
        properties = schema.get("properties", {})
        assert list(properties) == EXPECTED[name], name
        assert sorted(schema.get("required", [])) == sorted(REQUIRED.get(name, [])), name
        for parameter, spec in properties.items():
            assert re.fullmatch(r"[a-z]+(_[a-z]+)*", parameter), parameter
            assert len(spec.get("description", "")) > 10, f"{name}.{parameter}"
            assert "type" in spec or "anyOf" in spec, f"{name}.{parameter}"
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
        read_only = (
            "get_task", "list_tasks", "explain", "preview_landing", "resume_workspace", "inbox"
        )  # fmt: skip
        assert tool.annotations.read_only_hint is (name in read_only)
    assert LEASE_RULE in (tools["claim_next"].description or "")
    for name in ("heartbeat", "log_progress", "extend_lease"):  # the short form: the numbers
        assert "The lease lasts 15 minutes; renew at least every 5 minutes." in (
            tools[name].description or ""
        ), name
    for name in ("approve_task", "reject_task", "complete_task", "land_task"):
        assert "your own work" in (
            tools[name].description or ""
        ) or "cannot approve it yourself" in (tools[name].description or ""), name
    status = tools["list_tasks"].input_schema["properties"]["status"]
    assert sorted(status["enum"]) == sorted(transitions.STATUSES)


def test_every_refusal_reason_has_a_hint_naming_what_to_do() -> None:
    assert set(HINTS) == {reason.value for reason in Reason}
    for reason in Reason:
        hint = hint_for(reason.value)
        assert hint and "\n" not in hint, reason
    assert hint_for("something_new") == UNEXPECTED_HINT
    assert "safe to retry" in hint_for(Reason.BUSY)
    assert "claim_next" in hint_for(Reason.STALE_CLAIM)


@pytest.mark.parametrize(
    ("lease_ms", "sentence"),
    [
        (
            60_000,
            "A claim holds a lease of 1 minute: call heartbeat or log_progress at least every "
            "20 seconds",
        ),
        (
            3_600_000,
            "A claim holds a lease of 60 minutes: call heartbeat or log_progress at least every "
            "20 minutes",
        ),
    ],
)
def test_the_lease_rule_follows_the_boards_lease(lease_ms: int, sentence: str) -> None:
    from kanban.mcp.catalog import lease_rule

    assert lease_rule(lease_ms).startswith(sentence)


async def test_the_docs_snippets_start_a_working_server(tmp_path: Path) -> None:
    """The `.mcp.json` and `claude mcp add` of docs/mcp.md, run as written (the board moved to a
    temp folder), answer a claim; the tool table lists every tool."""
    import json
    import shlex

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.cli.conftest import KANBAN, clean_env
    from tests.doc_examples import REPO, example

    section = (REPO / "docs" / "mcp.md").read_text()
    config = json.loads(example("docs/mcp.md#mcp-json"))
    server = config["mcpServers"]["kanban"]
    add_line = example("docs/mcp.md#claude-mcp-add").replace("\\\n", " ")
    words = shlex.split(add_line)
    assert words[:4] == ["claude", "mcp", "add", "kanban"]
    command = words[words.index("--") + 1 :]
    env_pairs = [words[i + 1] for i, word in enumerate(words) if word == "--env"]
    added = {pair.split("=", 1)[0]: pair.split("=", 1)[1] for pair in env_pairs}
    assert set(added) == set(server["env"]) == {"KANBAN_DB", "KANBAN_AGENT"}
    assert command == [server["command"], *server["args"]]

    db = tmp_path / "board.db"
    with Board(db) as board:
        task = board.create_task("From the README", role="worker")
    assert server["command"] == "kanban"
    params = StdioServerParameters(
        command=str(KANBAN),
        args=server["args"],
        env=clean_env(**{**server["env"], "KANBAN_DB": str(db)}),
    )
    async with Client(params) as client:
        result = await client.call_tool("claim_next", {})
    assert not result.is_error
    assert result.structured_content["id"] == task.id
    assert result.structured_content["assigneeAgentId"] == server["env"]["KANBAN_AGENT"]

    listed = re.findall(r"^\| `([a-z_]+)\(", section, flags=re.MULTILINE)
    assert sorted(listed) == sorted(EXPECTED)


def test_a_results_text_keeps_line_breakers_escaped_and_its_content_as_written() -> None:
    """Found by hand: the text of a tool result carried U+2028 and U+0085 raw, where the CLI
    (whose JSON the tools promise) escapes them; a runtime splitting lines broke the result."""
    import json

    from kanban.mcp.server import answer

    title = "a\x85\x9b\u2028\u2029\u202eb é"
    result = answer({"task": {"title": title}})
    [content] = result.content
    text = content.text  # type: ignore[union-attr]
    assert len(text.splitlines()) == 1 and "\\u2028" in text and "é" in text
    assert "\\u202e" in text and "\u202e" not in text
    assert json.loads(text) == {"task": {"title": title}} == result.structured_content


def test_a_database_gone_under_a_session_is_a_typed_tool_error() -> None:
    """A PostgreSQL server that went away under a running session: database_unavailable, the
    board's reason with its hint, not an unexpected failure."""
    from boardlib.store.base import StoreError
    from kanban.mcp.server import call_board

    def gone() -> dict[str, object]:
        raise StoreError("cannot reach the database at db.example:5432")

    result = call_board(gone)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("database_unavailable: cannot reach the database")
    assert "Next: The board's database cannot be reached" in text


# Control and format characters a name may not hold: an escape, a bell, a bidi override.
HOSTILE_EXECUTORS = ("codex\x1b[2J", "sh\x07", "claude\u202ecode")


async def test_a_runs_executor_is_a_name_and_a_hostile_one_changes_nothing(
    board_path: Path,
) -> None:
    """`start_run` took an executor with control characters (drawn inert, but stored), where
    the role and the team, names too, are refused."""
    with Board(board_path) as board:
        board.create_task("port the parser")
    async with mcp_session(board_path, "ada") as client:
        task = await ok(client, "claim_next")
        before = fingerprint(board_path)
        for executor in HOSTILE_EXECUTORS:
            doc = await refused(
                client, "start_run", "invalid_input", task_id=task["id"], executor=executor
            )
            assert doc["field"] == "executorType", doc
        assert fingerprint(board_path) == before
        assert (await ok(client, "start_run", task_id=task["id"], executor="codex"))["id"]
