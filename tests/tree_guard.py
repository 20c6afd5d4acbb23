"""The test session fails when the tests left a new file or folder in the repository tree.

Tests write into temp folders, never into the checkout: a board made from a URL taken for a path
once left 152 files in a folder named `postgresql:`, and `git add -A` committed them. The tree is
listed when the session starts and again when it ends (ignored files included; the environment,
the tools' caches and `.git` left out), in the controlling process only, so under xdist it runs
once. What the command line asked for by name (`--soak-report soak.json`, `--junitxml=...`) is no
leak, nor are snapshots written by `--snapshot-update`. Loaded by tests/conftest.py.
"""

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Never compared: the repository's own data, virtual environments and the tools' caches.
SKIPPED = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        ".tox",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".import_linter_cache",
        "node_modules",
    }
)
SHOWN = 20  # paths listed in the failure; the rest are counted

_before = pytest.StashKey[frozenset[str]]()
_left = pytest.StashKey[list[str]]()


def tree(root: Path = ROOT) -> frozenset[str]:
    """Every file and folder under `root`, relative to it, but the skipped ones."""
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED and not d.endswith(".egg-info")]
        relative = os.path.relpath(folder, root)
        for name in (*dirs, *files):
            found.add(os.path.normpath(os.path.join(relative, name)))
    return frozenset(found)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _asked_for(config: pytest.Config) -> list[Path]:
    """The paths the command line named in an option (relative to where pytest was started);
    the test paths themselves are no output."""
    start = config.invocation_params.dir
    named: list[Path] = []
    for key, value in vars(config.option).items():
        values = value if isinstance(value, list | tuple) else [value]
        if key != "file_or_dir":
            named += [(start / v).resolve() for v in values if isinstance(v, str) and v.strip()]
    return named


def _allowed(config: pytest.Config, relative: str, asked: list[Path]) -> bool:
    path = (ROOT / relative).resolve()
    if getattr(config.option, "update_snapshots", False) and "__snapshots__" in path.parts:
        return True
    before = config.stash[_before]
    for named in asked:
        if path == named:
            return True
        # a folder the command line named, made by the run (`--basetemp=scratch`)
        made = ROOT in named.parents and os.path.relpath(named, ROOT) not in before
        if made and named in path.parents:
            return True
        # `--soak-report soak.json` also writes `soak.postgres.json` beside it
        same_place = path.parent == named.parent and path.suffix == named.suffix
        if same_place and named.stem and path.name.startswith(named.stem + "."):
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    # pytest-textual-snapshot writes its failure report into the working folder by default.
    if getattr(config.option, "snapshot_report", None) == "snapshot_report.html":
        config.option.snapshot_report = os.path.join(
            tempfile.gettempdir(), "kanban-snapshot-report.html"
        )


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _is_worker(session.config):
        session.config.stash[_before] = tree()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if _is_worker(config) or _before not in config.stash:
        return
    asked = _asked_for(config)
    new = sorted(tree() - config.stash[_before])
    left = [p for p in new if not _allowed(config, p, asked)]
    # A new folder's files are new too: name the folder alone.
    left = [p for p in left if not any(p.startswith(other + os.sep) for other in left)]
    if left:
        config.stash[_left] = left
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    left = terminalreporter.config.stash.get(_left, [])
    if not left:
        return
    terminalreporter.write_sep("=", "files left in the repository tree", red=True, bold=True)
    terminalreporter.write_line(
        f"The tests left {len(left)} new path(s) under {ROOT}; a test must write into a temp "
        "folder (tmp_path) instead. The run fails."
    )
    for path in left[:SHOWN]:
        terminalreporter.write_line(f"  {path}{os.sep if (ROOT / path).is_dir() else ''}")
    if len(left) > SHOWN:
        terminalreporter.write_line(f"  ... and {len(left) - SHOWN} more")
