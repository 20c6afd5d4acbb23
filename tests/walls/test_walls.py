"""The walls between the wings and the code's hygiene, checked by the same command as every other
test: import-linter's contracts (pyproject.toml), ruff's lint and format, and mypy --strict over
`boardlib`, `kanban` and `tui`. Each runs as the tool itself in a subprocess, so a failure reads
exactly as it would on the command line."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def _run(*command: str) -> None:
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stdout}\n{result.stderr}"


def test_import_contracts_hold() -> None:
    """kanban over tui over boardlib; the core imports no surface library; the store knows no
    worktrees; the transition table and lease liveness import nothing of the project."""
    _run(_tool("lint-imports"), "--no-cache")


def test_ruff_lint_and_format() -> None:
    _run(_tool("ruff"), "check", "--quiet", ".")
    _run(_tool("ruff"), "format", "--check", "--quiet", ".")


def test_mypy_strict_over_every_package() -> None:
    _run(_tool("mypy"))
