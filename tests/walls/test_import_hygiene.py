"""Headless code stays headless: importing boardlib and running an agent's claim loop loads none
of the UI, server or git stacks (nor pydantic, which costs more than the claim itself), and
`boardlib`'s names load on first use. (The CLI's verbs: tests/cli/test_hygiene.py.)"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import boardlib

FORBIDDEN = ("textual", "fastapi", "uvicorn", "starlette", "git", "click", "rich", "pydantic")
# The Postgres store is imported only for a postgresql:// board: a SQLite agent never pays for it.
POSTGRES = ("psycopg", "psycopg_pool", "psycopg_binary")

SCRIPT = """
import json, sys
from boardlib import Board
with Board(sys.argv[1]) as board:
    task = board.create_task("job")
    claimed = board.claim_next("alice")
    board.heartbeat(claimed.id, "alice", epoch=claimed.claim_epoch)
    board.log_progress(claimed.id, "alice", "half way")
    run = board.open_execution(claimed.id, "sh")
    board.close_execution(run.id, "succeeded", agent="alice", cost_usd=0.01)
    board.complete(claimed.id, "alice")
    board.claim_next("bob")
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def test_claim_path_imports_nothing_heavy(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "board.db")],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(result.stdout))
    assert "boardlib" in loaded
    assert loaded.isdisjoint(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
    assert loaded.isdisjoint(POSTGRES), sorted(loaded & set(POSTGRES))


MCP_SCRIPT = """
import anyio, json, sys
from kanban.cli.root import cli
from kanban.cli.mcp_command import mcp
from kanban.mcp.server import build_server
from kanban.mcp.session import AgentSession

session = AgentSession(sys.argv[1], "alice", create=True)
server = build_server(session)
result = anyio.run(server.call_tool, "claim_next", {})
session.close()
assert not result.is_error, result
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


@pytest.mark.slow
def test_the_mcp_server_imports_no_ui_git_or_http_framework(tmp_path: Path) -> None:
    """`kanban mcp` is a long-running process, but its start-up is paid before the first tool
    call: the SDK is its cost (it loads rich for its log handler, and starlette), the TUI, git,
    FastAPI and the plan parser are not."""
    result = subprocess.run(
        [sys.executable, "-c", MCP_SCRIPT, str(tmp_path / "board.db")],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(result.stdout))
    assert {"mcp", "kanban", "boardlib"} <= loaded
    heavy = {"textual", "git", "fastapi", "tui", "yaml", "unidiff"}
    assert loaded.isdisjoint(heavy), sorted(loaded & heavy)


def test_boardlib_names_load_on_first_use(tmp_path: Path) -> None:
    """`boardlib`'s public names resolve lazily, each from the module that declares it, so a
    surface that needs only `boardlib.errors` does not import the board."""
    for name in boardlib.__all__:
        value = getattr(boardlib, name)
        module = value.__name__ if name == "transitions" else value.__module__
        assert module.startswith("boardlib."), (name, module)
    assert set(boardlib.__all__) == {*boardlib._HOMES, "transitions"}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys; import boardlib.errors; print(json.dumps(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert "boardlib.board" not in json.loads(result.stdout)
