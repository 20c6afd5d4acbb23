"""Garbage collection: vanished checkouts and long-finished tasks become stale, their work kept on
the branch; paused and live ones are left alone; deletes never leave the worktrees folder."""

import time
from pathlib import Path

import pytest

from boardlib import BoardError
from boardlib.worktrees import Layout, collect_garbage, start_worktree_gc
from boardlib.worktrees.gc import DAY_MS, GC_ACTOR
from tests.worktrees.conftest import git


def status(env, task_id):
    return env.board.workspaces(task_id)[-1].status


def test_a_vanished_checkout_is_marked_stale_and_pruned(env):
    import shutil

    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    shutil.rmtree(path)  # deleted behind git's back
    assert "prunable" in git(env.repo, "worktree", "list", "--porcelain")
    report = collect_garbage(env.board)
    assert report.stale == [made.workspace_id] and report.errors == []
    assert status(env, task_id) == "stale"
    assert "prunable" not in git(env.repo, "worktree", "list", "--porcelain")
    assert git(env.repo, "rev-parse", made.worktree.branch)  # the branch stays
    event = [e for e in env.board.events(task_id=task_id) if e.kind == "workspace_updated"][-1]
    assert event.actor == GC_ACTOR and event.data["reason"] == "worktree folder vanished"
    # A stale workspace is re-attached by the next provision: same row, back to active.
    again = env.trees.provision(task_id, env.repo)
    assert again.reattached and again.workspace_id == made.workspace_id
    assert status(env, task_id) == "active" and path.is_dir()


def test_live_and_paused_workspaces_are_left_alone(env):
    live = env.task()
    env.trees.provision(live, env.repo)
    paused = env.task()
    env.trees.provision(paused, env.repo)
    env.trees.pause(paused)
    report = collect_garbage(env.board)
    assert report.stale == [] and report.removed == []
    assert status(env, live) == status(env, paused) == "active"


def test_a_finished_task_keeps_its_checkout_for_the_retention_period_then_loses_it(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "app.py").write_text("def answer():\n    return 41\n")  # never committed
    env.board.move(task_id, "done", actor="operator")  # no verdict: lands done
    env.clock.advance(ms=DAY_MS - 1)
    assert collect_garbage(env.board).stale == [] and path.exists()
    env.clock.advance(ms=2)
    report = collect_garbage(env.board)
    assert report.stale == report.removed == report.committed == [made.workspace_id]
    assert not path.exists() and status(env, task_id) == "stale"
    assert "return 41" in git(env.repo, "show", f"{made.worktree.branch}:app.py")
    assert str(path) not in git(env.repo, "worktree", "list", "--porcelain")
    assert collect_garbage(env.board).stale == []  # a second pass finds nothing


def test_retention_is_configurable_and_a_cancelled_paused_task_goes_stale(env, monkeypatch):
    task_id = env.task()
    env.trees.provision(task_id, env.repo)
    env.trees.pause(task_id)
    env.board.cancel(task_id)
    monkeypatch.setenv("KANBAN_WORKTREE_RETENTION_MS", "0")
    assert collect_garbage(env.board).stale == [env.board.workspaces(task_id)[0].id]


def test_a_busy_worktree_is_skipped_and_retried(env):
    import shutil

    from boardlib.worktrees import WorktreeLock

    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    shutil.rmtree(made.worktree.worktree_path)
    lock = env.trees.layout.lock_path(env.repo.resolve(), task_id, env.trees.board_key)
    with WorktreeLock(lock, purpose="pause"):
        report = collect_garbage(env.board, lock_timeout_s=0.1)
    assert report.stale == [] and len(report.skipped) == 1
    assert collect_garbage(env.board).stale == [made.workspace_id]


def test_the_janitor_collects_at_start_and_on_an_interval(env):
    import shutil

    first = env.task()
    one = env.trees.provision(first, env.repo)
    shutil.rmtree(one.worktree.worktree_path)
    janitor = start_worktree_gc(env.board, interval_ms=100)
    try:
        deadline = time.monotonic() + 10
        while status(env, first) != "stale" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert status(env, first) == "stale"  # the pass at start
        second = env.task()
        two = env.trees.provision(second, env.repo)
        shutil.rmtree(two.worktree.worktree_path)
        while status(env, second) != "stale" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert status(env, second) == "stale"  # a later pass
        while janitor.passes < 2 and time.monotonic() < deadline:  # counted once it has ended,
            time.sleep(0.02)  # after its writes (a CI run read the count in between)
        assert janitor.passes >= 2
    finally:
        janitor.stop()


def test_recursive_delete_stays_inside_the_worktrees_folder(tmp_path):
    root = tmp_path / "root"
    layout = Layout(root)
    repo = tmp_path / "repo"
    repo.mkdir()
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "file").write_text("keep\n")
    # A symlink planted where a checkout belongs is unlinked, not followed.
    target = layout.worktree_path(repo, "TASK-1")
    target.parent.mkdir(parents=True)
    target.symlink_to(outside)
    assert layout.remove_tree(repo, "TASK-1")
    assert (outside / "file").read_text() == "keep\n"
    # A repository folder that is itself a link out of the root is refused.
    other = tmp_path / "other-repo"
    other.mkdir()
    (outside / "TASK-2").mkdir()
    (outside / "TASK-2" / "file").write_text("keep too\n")
    layout.repo_dir(other).symlink_to(outside)
    with pytest.raises(RuntimeError):
        layout.remove_tree(other, "TASK-2")
    assert (outside / "TASK-2" / "file").exists()
    for bad in ("../x", "..", "a/b", "", ".hidden", "-x"):
        with pytest.raises(BoardError):
            layout.remove_tree(repo, bad)
    assert (outside / "file").exists()
