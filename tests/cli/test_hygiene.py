"""What a `kanban` call imports, and the commands that only start other programs.

An agent pays for every import on every claim, so the claim path must load neither the TUI,
the web stack, git nor pydantic/rich. Measured with `python -X importtime` on the real console
script, which lists every module the process imported.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import KANBAN, Kanban

HEAVY = ("textual", "fastapi", "uvicorn", "git", "pydantic", "rich", "yaml", "starlette")


def imported_modules(kanban: Kanban, *args: str) -> tuple[int, set[str]]:
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
                modules.add(name.split(".")[0])
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
        ("--help",),
    ],
    ids=["claim-next", "dispatch", "list", "events", "help"],
)
def test_agent_commands_import_no_heavy_module(kanban: Kanban, args: tuple[str, ...]) -> None:
    code, modules = imported_modules(kanban, *args)
    assert code == 0
    assert "boardlib" in modules and "click" in modules  # the probe sees real imports
    assert sorted(modules & set(HEAVY)) == []


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
