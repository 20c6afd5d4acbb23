"""The MCP config `kanban init` writes starts a working server (issue 26): for each runtime, the
config file is parsed as the runtime reads it, the SDK's client launches exactly its command,
args and env (over the client's default environment, as a runtime does), and an agent claims and
completes a task through it, under the name and with the tool set the config gives."""

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from boardlib import Board
from kanban.mcp.catalog import TOOL_SETS
from tests.cli.conftest import KANBAN, clean_env
from tests.mcp.conftest import ok

CONFIGS = {
    "claude-code": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "codex": ".codex/config.toml",
}


def server_entry(repo: Path, harness: str) -> dict[str, Any]:
    path = repo / CONFIGS[harness]
    if path.suffix == ".toml":
        servers = tomllib.loads(path.read_text())["mcp_servers"]
    else:
        servers = json.loads(path.read_text())["mcpServers"]
    entry: dict[str, Any] = servers["kanban"]
    return entry


@pytest.mark.slow  # an MCP server per runtime
@pytest.mark.parametrize(
    ("harness", "tool_set"), [("claude-code", "all"), ("cursor", "worker"), ("codex", "worker")]
)
async def test_the_written_config_starts_a_server_that_completes_a_claim(
    tmp_path: Path, harness: str, tool_set: str
) -> None:
    repo, db = tmp_path / "repo", tmp_path / "board.db"
    repo.mkdir()
    argv = ["init", "--harness", harness, "--repo", str(repo), "--db", str(db)]
    options = ["--agent", "worker-1", "--role", "worker", "--tools", tool_set]
    done = subprocess.run(
        [str(KANBAN), *argv, *options],
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with Board(db, reconcile_orphans=False) as board:
        task = board.create_task("Wire it up", role="worker")
        board.create_task("Not for workers", role="designer")

    entry = server_entry(repo, harness)
    assert entry.get("type", "stdio") == "stdio"
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"])
    async with Client(params) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed == list(TOOL_SETS[tool_set])
        claimed = await ok(client, "claim_next")
        assert (claimed["id"], claimed["assigneeAgentId"]) == (task.id, "worker-1")
        finished = await ok(client, "complete_task", task_id=task.id, summary="wired")
        assert finished["status"] == "in_review"
        assert await ok(client, "claim_next") == {"task": None}  # --role worker from the config
