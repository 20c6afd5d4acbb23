"""The MCP config `kanban init` writes starts a working server (issue 26): for each runtime, the
config file is parsed as the runtime reads it, the SDK's client launches exactly its command,
args and env (over the client's default environment, as a runtime does), and an agent claims and
completes a task through it, under the name and with the tool set the config gives."""

import json
import os
import subprocess
import sys
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


def server_env(entry: dict[str, Any]) -> dict[str, str]:
    """The entry's env, and the PYTHONPATH this test runs under (a checkout's code to serve)."""
    path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
    return {**entry["env"], **path}


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
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=server_env(entry)
    )
    async with Client(params) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed == list(TOOL_SETS[tool_set])
        claimed = await ok(client, "claim_next")
        assert (claimed["id"], claimed["assigneeAgentId"]) == (task.id, "worker-1")
        finished = await ok(client, "complete_task", task_id=task.id, summary="wired")
        assert finished["status"] == "in_review"
        assert await ok(client, "claim_next") == {"task": None}  # --role worker from the config


# A runtime's process: it starts the server it is given and waits for it, stdio passed through.
RUNTIME = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


@pytest.mark.slow  # ~2 CPU-s: init and two MCP servers, fresh processes
async def test_two_sessions_of_one_runtime_judge_each_others_work(tmp_path: Path) -> None:
    """Every session of a runtime starts the server its one config names, so all acted as that
    config's one agent: a session that built a task could not have another session approve it
    (self_review), nor tell its claims from theirs. Each session of Claude Code (each its own
    runtime process, played here by a process that starts the server) acts as the name and its
    runtime's pid under `kanban init --per-session`: one builds, the other approves."""
    repo, db = tmp_path / "repo", tmp_path / "board.db"
    repo.mkdir()
    argv = [
        "init",
        "--harness",
        "claude-code",
        "--per-session",
        "--repo",
        str(repo),
        "--db",
        str(db),
    ]
    done = subprocess.run(
        [str(KANBAN), *argv], env=clean_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    with Board(db, reconcile_orphans=False) as board:
        task = board.create_task("Build the parser")
    entry = server_entry(repo, "claude-code")
    session = StdioServerParameters(
        command=sys.executable,
        args=["-c", RUNTIME, entry["command"], *entry["args"]],
        env=server_env(entry),
    )
    async with Client(session) as builder, Client(session) as judge:
        claimed = await ok(builder, "claim_next")
        assert claimed["id"] == task.id
        built = await ok(builder, "complete_task", task_id=task.id, summary="parser and tests")
        assert built["status"] == "in_review"
        waiting = await ok(judge, "inbox")
        assert [item["taskId"] for item in waiting["items"]] == [task.id]
        approved = await ok(judge, "approve_task", task_id=task.id)
        assert approved["status"] == "done"
    with Board(db, reconcile_orphans=False) as board:
        holders = board.get_task(task.id).holders
        moves = [e for e in board.events(task_id=task.id) if e.kind == "status_changed"]
        judged = [moves[-1].actor]  # into done
    names = {*holders, *judged}
    assert len(names) == 2 and all(name.startswith("claude-code-") for name in names), names


def git_repo(repo: Path) -> Path:
    """A repository with one commit on main."""
    repo.mkdir()
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (repo / "app.py").write_text("print('hi')\n")
    subprocess.run([*git, "add", "-A"], check=True)
    commit = [*git, "-c", "user.name=a", "-c", "user.email=a@x", "commit", "-q", "-m", "init"]
    subprocess.run(commit, check=True)
    return repo


@pytest.mark.slow  # init, a provision on the CLI and an MCP server
async def test_the_config_serves_the_worktrees_folder_init_ran_with(tmp_path: Path) -> None:
    """Init run with `KANBAN_WORKTREES` wrote a config without it: the runtime's server (which
    gets only the config's env over a few variables, as Codex gives it) made and looked for
    worktrees in the per-user folder, so the worktree a shell agent provisioned under the
    instructions' export line was "outside this worktrees folder": not live, not resumable."""
    repo, db, worktrees = git_repo(tmp_path / "repo"), tmp_path / "board.db", tmp_path / "worktrees"
    argv = ["init", "--harness", "codex", "--agent", "worker-1", "--repo", str(repo)]
    env = clean_env(KANBAN_DB=str(db), KANBAN_WORKTREES=str(worktrees))
    done = subprocess.run([str(KANBAN), *argv], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    entry = server_entry(repo, "codex")
    assert entry["env"]["KANBAN_WORKTREES"] == str(worktrees)
    assert f"KANBAN_WORKTREES={worktrees}" in (repo / "AGENTS.md").read_text()

    with Board(db, reconcile_orphans=False) as board:
        task = board.create_task("Write the lexer")
    shell = {**env, "KANBAN_AGENT": "worker-1"}
    claim = [str(KANBAN), "task", "claim-next"]
    epoch = json.loads(subprocess.check_output(claim, env=shell, text=True))["claimEpoch"]
    provision = [str(KANBAN), "task", "workspace", "provision", task.id, "--epoch", str(epoch)]
    made = json.loads(subprocess.check_output([*provision, "--repo", str(repo)], env=shell))
    checkout = made["worktree"]["worktreePath"]
    assert Path(checkout).is_relative_to(worktrees)

    home = tmp_path / "home"  # the runtime's own HOME: nothing here reaches the tester's
    home.mkdir()
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**server_env(entry), "HOME": str(home)}
    )
    async with Client(params) as client:
        resumed = await ok(client, "resume_workspace", task_id=task.id)
        assert (resumed["live"], resumed["warnings"]) == (True, [])
        again = await ok(client, "provision_workspace", task_id=task.id, repo_path=str(repo))
        assert (again["reused"], again["worktree"]["worktreePath"]) == (True, checkout)
    assert not (home / ".local").exists()


@pytest.mark.slow  # init and an MCP server whose gate runs
async def test_the_config_serves_the_gate_time_limit_init_ran_with(tmp_path: Path) -> None:
    """Init run with `KANBAN_VERIFY_TIMEOUT_S` (a machine setting, read from the environment)
    wrote a config without it: the runtime's server timed its gates at the default (10 min), so
    a gate the shell cut at its limit ran on over MCP (and a slow project's the other way)."""
    repo, db = git_repo(tmp_path / "repo"), tmp_path / "board.db"
    argv = ["init", "--harness", "codex", "--agent", "worker-1", "--repo", str(repo)]
    env = clean_env(
        KANBAN_DB=str(db),
        KANBAN_WORKTREES=str(tmp_path / "worktrees"),
        KANBAN_VERIFY_CMD="sleep 6",
        KANBAN_VERIFY_TIMEOUT_S=" 0.5 ",
    )
    done = subprocess.run([str(KANBAN), *argv], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    entry = server_entry(repo, "codex")
    assert entry["env"]["KANBAN_VERIFY_TIMEOUT_S"] == "0.5"
    assert "KANBAN_VERIFY_TIMEOUT_S=0.5" in (repo / "AGENTS.md").read_text()

    with Board(db, reconcile_orphans=False) as board:
        task = board.create_task("Write the lexer")
    home = tmp_path / "home"
    home.mkdir()
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**server_env(entry), "HOME": str(home)}
    )
    async with Client(params) as client:
        await ok(client, "claim_next")
        made = await ok(client, "provision_workspace", task_id=task.id, repo_path=str(repo))
        (Path(made["worktree"]["worktreePath"]) / "lexer.py").write_text("TOKENS = []\n")
        judged = await ok(client, "complete_workspace", task_id=task.id)
    assert (judged["taskStatus"], judged["verified"]) == ("in_progress", "fail"), judged
    with Board(db, reconcile_orphans=False) as board:
        said = [comment.body for comment in board.comments(task.id)]
    assert any("timed out" in body for body in said), said
