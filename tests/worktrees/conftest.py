"""Shared helpers for the worktree and verification tests: real temporary git repositories, a
board file, and a `Worktrees` rooted in a temporary folder (no mocks of git)."""

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from boardlib import Board, ManualClock
from boardlib.worktrees import Worktrees

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


def git(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


def make_repo(path: Path) -> Path:
    """A repository with one commit on `main`, an identity in its own config."""
    path.mkdir(parents=True)
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
