"""What a `kanban` call imports, and the commands that only start other programs.

An agent pays for every import on every claim, so the claim path must load neither the TUI,
the web stack, git nor pydantic/rich; `kanban init` not the MCP SDK (it reads the tool list's
size from `kanban/mcp/listing.json`); help no board. Measured with `python -X importtime` on
the real console script, which lists every module the process imported.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import KANBAN, Kanban

# What a verb pays for only if it uses it: the servers, the MCP SDK, pydantic, the TUI, rich (the
# table format), git, the diff parser and the plan parser.
HEAVY = (
    "textual",
    "tui",
    "fastapi",
    "uvicorn",
    "starlette",
    "sse_starlette",
    "mcp",
    "anyio",
    "git",
    "unidiff",
    "pydantic",
    "rich",
    "yaml",
)


def imported_modules(kanban: Kanban, *args: str) -> tuple[int, set[str]]:
    """The exit code and the top-level packages the call imported."""
    code, names = imported_names(kanban, *args)
    return code, {name.split(".")[0] for name in names}


def imported_names(kanban: Kanban, *args: str) -> tuple[int, set[str]]:
    """The exit code and every module the call imported, by its full name."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(KANBAN), *args],
        env=kanban.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    modules = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                modules.add(name)
    return done.returncode, modules


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    kanban = Kanban(board_path)
    with kanban.board() as board:
        board.create_task("one")
        board.create_task("two")
    return kanban


@pytest.mark.parametrize(
    "args",
    [
        ("task", "claim-next", "--agent", "alice"),
        ("task", "dispatch", "--title", "new"),
        ("task", "list"),
        ("events",),
        ("init", "--print", "--repo", "{repo}"),
        ("--help",),
        ("serve", "--help"),
        ("mcp", "--help"),
    ],
    ids=["claim-next", "dispatch", "list", "events", "init", "help", "serve-help", "mcp-help"],
)
def test_agent_commands_import_no_heavy_module(
    kanban: Kanban, args: tuple[str, ...], tmp_path: Path
) -> None:
    (tmp_path / "repo").mkdir()
    code, names = imported_names(kanban, *(arg.format(repo=tmp_path / "repo") for arg in args))
    modules = {name.split(".")[0] for name in names}
    assert code == 0
    assert "boardlib" in modules and "click" in modules  # the probe sees real imports
    assert sorted(modules & set(HEAVY)) == []
    assert "kanban.mcp.server" not in names
    if args[-1] == "--help" and len(args) == 2:  # a command's help opens no board
        assert "boardlib.board" not in names


def test_the_probe_does_see_heavy_imports(kanban: Kanban, tmp_path: Path) -> None:
    """The control: plan files do need pydantic and PyYAML, and the probe reports them."""
    plan = tmp_path / "plan.yaml"
    plan.write_text("- {key: a, title: A}\n")
    code, modules = imported_modules(kanban, "plan", "lint", str(plan))
    assert code == 0
    assert {"pydantic", "yaml"} <= modules
    code, modules = imported_modules(kanban, "task", "list", "--format", "table")
    assert code == 0
    assert "rich" in modules and "textual" not in modules


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("tui", ("--poll-ms", "--read-only", "--theme", "--db")),
        (
            "demo",
            (
                "--dir",
                "--agents",
                "--tasks",
                "--speed",
                "--keep",
                "--no-tui",
                "--duration",
                "--poll-ms",
            ),
        ),
    ],
)
def test_tui_and_demo_are_registered(
    kanban: Kanban, command: str, options: tuple[str, ...]
) -> None:
    result = kanban.run(command, "--help")
    assert result.code == 0, str(result)
    for option in options:
        assert option in result.out
    code, modules = imported_modules(kanban, command, "--help")
    assert code == 0
    assert "textual" not in modules  # help never starts the app


def test_help_lists_every_verb_of_the_issue(kanban: Kanban) -> None:
    verbs = kanban.run("task", "--help").out
    for verb in (
        "dispatch", "claim-next", "claim", "log-progress", "extend-lease", "complete", "approve",
        "reject", "block", "unblock", "release", "drop", "restore", "why", "move", "cancel",
        "cancel-dependents", "deps", "comment", "view", "list", "search", "exec",
    ):  # fmt: skip
        assert f"  {verb} " in verbs, verb
    top = kanban.run("--help").out
    for command in ("task", "events", "reconcile", "db", "plan", "tui", "demo"):
        assert f"  {command} " in top, command
    assert "3 nothing to claim" in top
    assert kanban.run("--version").out.startswith("kanban, version ")


@pytest.mark.parametrize(
    "args",
    [
        ("serve", "--port", "0"),
        ("mcp", "--agent", "alice"),
        ("tui",),
        ("demo", "--no-tui", "--duration", "1"),
        (),  # plain `kanban`: the live board
    ],
    ids=["serve", "mcp", "tui", "demo", "kanban"],
)
def test_a_command_with_no_result_refuses_format_table(
    kanban: Kanban, args: tuple[str, ...]
) -> None:
    """`kanban --format table serve --port 0` printed the JSON ready line, the option silently
    ignored. A server, an MCP session or a full-screen app has no result to draw: it refuses,
    starting nothing; --format json is what it does anyway."""
    refusal = kanban.refused("--format", "table", *args, reason="usage")
    assert "--format table" in refusal["error"] and "has none" in refusal["error"], refusal
