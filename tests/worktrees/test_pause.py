"""Pause: work committed to the branch, checkout removed, branch kept, resumable."""

from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from tests.worktrees.conftest import git


def test_pause_commits_removes_the_checkout_and_reprovision_keeps_the_work(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "app.py").write_text("def answer():\n    return 41\n")
    (path / "notes").mkdir()
    (path / "notes" / "untracked.txt").write_text("draft\n")
    (path / ".gitignore").write_text("*.log\n")
    (path / "debug.log").write_text("ignored\n")

    paused = env.trees.pause(task_id, actor="alice")
    assert paused.pause.committed and paused.to_json()["action"] == "pause"
    assert not path.exists()
    branch = made.worktree.branch
    assert git(env.repo, "rev-parse", f"refs/heads/{branch}") == paused.pause.head
    assert path.as_posix() not in git(env.repo, "worktree", "list", "--porcelain")
    [ws] = env.board.workspaces(task_id)
    assert ws.status == "active"

    again = env.trees.provision(task_id, env.repo)
    assert again.reattached and again.workspace_id == made.workspace_id
    assert again.worktree.base_commit == made.worktree.base_commit
    assert len(env.board.workspaces(task_id)) == 1
    assert (path / "app.py").read_text() == "def answer():\n    return 41\n"
    assert (path / "notes" / "untracked.txt").read_text() == "draft\n"
    assert not (path / "debug.log").exists()  # ignored files are not work
    stat = env.trees.detail(task_id).diff_stat
    assert stat is not None and stat.files_changed == 3  # app.py, notes/untracked.txt, .gitignore


def test_pause_with_nothing_to_commit_and_pause_twice(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    first = env.trees.pause(task_id)
    assert first.pause.committed is False and first.pause.head == made.worktree.base_commit
    second = env.trees.pause(task_id)
    assert second.pause == first.pause


def test_pause_refuses_a_checkout_switched_to_another_branch(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    git(path, "switch", "-q", "-c", "elsewhere")
    (path / "app.py").write_text("changed\n")
    with pytest.raises(BoardError) as refused:
        env.trees.pause(task_id)
    assert refused.value.reason == Reason.CONFLICT
    assert path.exists() and (path / "app.py").read_text() == "changed\n"


def test_pause_without_a_workspace_is_not_found(env):
    with pytest.raises(BoardError) as refused:
        env.trees.pause(env.task())
    assert refused.value.reason == Reason.NOT_FOUND


@pytest.mark.parametrize("actor", ["", "ev\x1b[2Jil", "x" * 201, 0])
def test_a_bad_actor_is_refused_before_anything_is_committed(env, actor):
    """Found by tests/chaos/test_fuzz_worktrees.py: pause committed the work and removed the
    checkout, then refused the actor when it recorded the workspace."""
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    (path / "app.py").write_text("def answer():\n    return 41\n")
    before = (git(path, "status", "--porcelain=v1"), git(path, "rev-parse", "HEAD"))
    with pytest.raises(BoardError) as refused:
        env.trees.pause(task_id, actor=actor)
    assert refused.value.reason == Reason.INVALID_INPUT
    assert (git(path, "status", "--porcelain=v1"), git(path, "rev-parse", "HEAD")) == before
    assert (path / "app.py").read_text() == "def answer():\n    return 41\n"
