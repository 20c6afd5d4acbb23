"""Shared helpers for the worktree and verification tests: real temporary git repositories, a
board file, and a `Worktrees` rooted in a temporary folder (no mocks of git)."""

import atexit
import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, ManualClock
from boardlib.worktrees import Worktrees

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


def git(cwd: Path, *args: str, check: bool = True, strip: bool = True) -> str:
    """git's output, stripped unless `strip=False` (a diff's last context line may be a space)."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip() if strip else done.stdout


def make_repo(path: Path) -> Path:
    """A repository with one commit on `main`, an identity in its own config: a copy of one
    built once per test process (six git processes a test, 0.4 s on a loaded machine, against
    a file copy; the commit is the same, its dates fixed)."""
    shutil.copytree(_template_repo(), path, symlinks=True)  # refuses an existing `path`, as mkdir
    return path


@functools.cache
def _template_repo() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="kanban-test-repo-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test Person")
    git(path, "config", "user.email", "test@example.com")
    (path / "README.md").write_text("# project\n")
    (path / "app.py").write_text("def answer():\n    return 42\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def repo_state(repo: Path) -> tuple[str, str, str]:
    """What a user sees of their repository: status, HEAD and the list of files on disk."""
    files = "\n".join(
        sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if ".git" not in p.parts)
    )
    return (
        git(repo, "status", "--porcelain=v1", "--branch", "--untracked-files=all"),
        git(repo, "rev-parse", "HEAD"),
        files,
    )


@dataclass
class Env:
    board: Board
    trees: Worktrees
    repo: Path
    root: Path
    clock: ManualClock
    tmp: Path

    def task(self, title: str = "Fix the answer", *, claim_by: str | None = "alice", **kw) -> str:
        task = self.board.create_task(title, description="Make answer() right.", **kw)
        if claim_by:
            self.board.claim(task.id, claim_by)
        return task.id


def make_env(tmp_path: Path, monkeypatch, **trees_kwargs) -> Env:
    root = tmp_path / "state" / "worktrees"
    monkeypatch.setenv("KANBAN_WORKTREES", str(root))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    clock = ManualClock()
    board = Board(tmp_path / "board.db", clock=clock)
    repo = make_repo(tmp_path / "repo")
    trees = Worktrees(board, **trees_kwargs)
    return Env(board=board, trees=trees, repo=repo, root=root, clock=clock, tmp=tmp_path)


# -- landing (tests/worktrees/test_land*.py, tests/chaos/test_land_kills.py) ----------------------


def file_hashes(repo: Path) -> dict[str, str]:
    """The sha256 of every file of a checkout (outside .git), by path."""
    import hashlib

    return {
        str(p.relative_to(repo)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }


def checkout_state(repo: Path) -> tuple[dict[str, str], str, str]:
    """Everything "touching nothing" must leave as it was: every file's hash, `git status`, and
    every ref."""
    return (
        file_hashes(repo),
        git(repo, "status", "--porcelain=v1", "--branch", "--untracked-files=all"),
        git(repo, "show-ref"),
    )


@contextlib.contextmanager
def git_runs() -> Iterator[list[list[str]]]:
    """The git processes started meanwhile in this process (their arguments), as
    benchmarks/land.py counts them: each costs a few milliseconds of a landing."""
    started: list[list[str]] = []
    real_init = subprocess.Popen.__init__

    def counting(self: "subprocess.Popen[Any]", args: Any, *rest: Any, **options: Any) -> None:
        if isinstance(args, list | tuple) and Path(str(args[0])).name == "git":
            started.append([str(arg) for arg in args[1:]])
        real_init(self, args, *rest, **options)

    subprocess.Popen.__init__ = counting  # type: ignore[method-assign]
    try:
        yield started
    finally:
        subprocess.Popen.__init__ = real_init  # type: ignore[method-assign]


def set_verify(path: Path, command: str) -> None:
    """The worktree's init.sh VERIFY_CMD (single-quoted: no single quote in `command`)."""
    assert "'" not in command
    init = (path / "init.sh").read_text()
    (path / "init.sh").write_text(init.replace("VERIFY_CMD=''", f"VERIFY_CMD='{command}'"))


@dataclass
class LandEnv:
    """A board (SQLite or Postgres), a real repository with `main` checked out, and worktrees."""

    board: Board
    trees: Worktrees
    repo: Path
    root: Path
    tmp: Path

    def task_with(
        self,
        files: dict[str, str],
        *,
        title: str = "Change the answer",
        builder: str = "alice",
        verify: str | None = "true",
        finish: str = "gate",
        commit: bool = True,
        base_ref: str | None = None,
    ) -> tuple[str, Path]:
        """A task whose worktree changes `files` (None deletes one). `finish`: `gate` (workspace
        complete: the gate passes, done), `review` (the lease protocol's complete: in review,
        the work left uncommitted unless `commit`), or `none` (still in progress)."""
        task = self.board.create_task(title, description="A test change.")
        self.board.claim(task.id, builder)
        made = self.trees.provision(task.id, self.repo, base_ref=base_ref or "HEAD")
        path = Path(made.worktree.worktree_path)
        if verify is not None:
            set_verify(path, verify)
        for name, text in files.items():
            target = path / name
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        if finish == "gate":
            result = self.trees.complete(task.id, builder)
            assert result.task_status == "done", result.to_json()
        elif finish == "review":
            if commit:
                git(path, "add", "-A")
                git(path, "commit", "-q", "-m", f"work on {task.id}")
            self.board.complete(task.id, builder)
        return task.id, path

    def commit_on_main(self, name: str, text: str, message: str = "a human commit") -> str:
        (self.repo / name).parent.mkdir(parents=True, exist_ok=True)
        (self.repo / name).write_text(text)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", message)
        return git(self.repo, "rev-parse", "HEAD")

    def main(self) -> str:
        return git(self.repo, "rev-parse", "refs/heads/main")


def make_land_env(tmp_path: Path, monkeypatch, board_path, **trees_kwargs) -> LandEnv:
    root = tmp_path / "state" / "worktrees"
    monkeypatch.setenv("KANBAN_WORKTREES", str(root))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    board = Board(board_path)
    repo = make_repo(tmp_path / "repo")
    trees = Worktrees(board, verify_timeout_s=60, **trees_kwargs)
    return LandEnv(board=board, trees=trees, repo=repo, root=root, tmp=tmp_path)


@pytest.fixture
def land(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board_path: Path):
    """A `LandEnv` on each backend."""
    made = make_land_env(tmp_path, monkeypatch, board_path)
    yield made
    made.board.close()


ROOT = Path(__file__).resolve().parents[2]


def start_lander(
    board: object, task_ids: Sequence[str], *args: str, path: Path | None = None
) -> subprocess.Popen[str]:
    """A lander process (tests/worktrees/land_procs.py) for `task_ids` of the board at `board`,
    up and waiting for "go" on its stdin; `args` are land_procs' options. `path`: a folder put
    first on its PATH (a `git` shim there runs in place of git)."""
    command = [sys.executable, "-m", "tests.worktrees.land_procs", str(board), ",".join(task_ids),
               "--wait", *args]  # fmt: skip
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if path is not None:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    proc = subprocess.Popen(command, cwd=ROOT, env=env, text=True, **pipes)
    assert proc.stdout is not None
    assert json.loads(proc.stdout.readline()) == {"ready": True}, proc.stderr
    return proc


def go(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()


def landers_go(procs: list[subprocess.Popen[str]], timeout_s: float) -> list[dict[str, Any]]:
    """Every lander (all up: a barrier) told to go at once; what they printed, each exiting 0."""
    for proc in procs:
        go(proc)
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout_s)
        assert proc.returncode == 0, err
        outputs += [json.loads(line) for line in out.splitlines()]
    return outputs
