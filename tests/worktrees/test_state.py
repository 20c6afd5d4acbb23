"""What `detail` says about a checkout is true in every state (checked out, paused, kept on its
branch, cleaned, missing); the diff is capped with what was cut named; git is killed at a timeout;
the worktree fingerprint changes exactly when the worktree does."""

import time
from pathlib import Path

import pytest

from boardlib.worktrees import GitFailure, Worktrees, collect_garbage, gitrepo, landgit
from boardlib.worktrees.results import CHECKED_OUT, CLEANED, KEPT, MISSING, PAUSED
from tests.worktrees.conftest import git, git_runs


def provisioned(env, **kw):
    task_id = env.task(**kw)
    made = env.trees.provision(task_id, env.repo)
    return task_id, made, Path(made.worktree.worktree_path)


def test_a_live_checkout_says_whether_work_is_uncommitted(env):
    task_id, made, path = provisioned(env)
    state = env.trees.detail(task_id).checkout
    assert state is not None and state.state == CHECKED_OUT and state.uncommitted is False
    assert state.path == str(path) and state.head == made.worktree.base_commit
    # The board's own files are not the agent's work left uncommitted (the gate's VERIFICATION.md
    # and a reviewer's REVIEW.md read "with uncommitted changes").
    (path / "VERIFICATION.md").write_text("# appended by the gate\n")
    (path / "REVIEW.md").write_text("# written by a line comment\n")
    again = env.trees.detail(task_id).checkout
    assert again is not None and again.uncommitted is False, again.summary
    (path / "app.py").write_text("def answer():\n    return 41\n")
    detail = env.trees.detail(task_id)
    assert detail.checkout is not None and detail.checkout.uncommitted is True
    assert "uncommitted changes" in detail.checkout.summary
    assert detail.to_json()["checkout"]["state"] == "checked_out"


def test_detail_after_a_pause_is_true(env):
    task_id, made, path = provisioned(env)
    (path / "app.py").write_text("def answer():\n    return 41\n")
    (path / "task-progress.md").write_text("## Done\n- fixed it\n\n## Next\n- add a test\n")
    paused = env.trees.pause(task_id)
    detail = env.trees.detail(task_id)
    state = detail.checkout
    assert state is not None and state.state == PAUSED
    assert state.uncommitted is False and state.head == paused.pause.head
    assert state.branch == made.worktree.branch and state.path is None
    command = f"kanban task workspace provision {task_id} --repo {env.repo.resolve()}"
    assert state.resume_command == command and command in state.summary
    assert detail.workspace.status == "active"  # the seed: "active and resumable"
    # The work against the baseline (the seed's diffStat.dirty), read from the branch.
    assert detail.diff_stat is not None and detail.diff_stat.dirty
    assert [f.path for f in detail.diff_files] == ["app.py"]
    # The cold-resume state, rebuilt from the branch's SoR files.
    assert detail.resume is not None and detail.resume["next"] == "add a test"
    assert detail.resume["done"] == ["fixed it"]


def test_done_with_an_empty_diff_shows_cleaned(env):
    task_id, _, path = provisioned(env)
    env.trees.complete(task_id, "alice")
    assert env.board.get_task(task_id).status == "done" and not path.exists()
    state = env.trees.checkout_state(task_id)
    assert state.state == CLEANED and "removed" in state.summary
    assert state.resume_command is None
    detail = env.trees.detail(task_id)
    assert detail.checkout == state and detail.sor_files == {} and detail.diff == ""


def test_done_then_collected_shows_the_branch_that_keeps_the_work(env):
    task_id, made, path = provisioned(env)
    (path / "init.sh").write_text("VERIFY_CMD='true'\n")
    (path / "app.py").write_text("def answer():\n    return 41\n")
    assert env.trees.complete(task_id, "alice").task_status == "done"
    assert env.trees.checkout_state(task_id).state == CHECKED_OUT  # kept until collected
    report = collect_garbage(env.board, retention_ms=0)
    assert report.removed and not path.exists()
    state = env.trees.checkout_state(task_id)
    assert state.state == KEPT and state.branch == made.worktree.branch
    assert state.head == git(env.repo, "rev-parse", made.worktree.branch)
    assert state.resume_command is None  # a done task is not provisioned again
    detail = env.trees.detail(task_id)
    assert "+    return 41" in detail.diff  # still reviewable from the branch


def test_a_vanished_checkout_and_branch_is_missing(env):
    task_id, made, _ = provisioned(env)
    env.trees.pause(task_id)
    git(env.repo, "branch", "-D", made.worktree.branch)
    state = env.trees.checkout_state(task_id)
    assert state.state == MISSING and made.worktree.branch in state.summary


def test_a_checkout_deleted_by_hand_is_missing_not_paused(env):
    """`rm -rf` of a worktree with uncommitted changes read "paused: all work committed", the lost
    work described as kept."""
    import shutil

    task_id, made, path = provisioned(env)
    (path / "app.py").write_text("def answer():\n    return 41\n")  # never committed
    shutil.rmtree(path)
    state = env.trees.checkout_state(task_id)
    assert state.state == MISSING and "deleted outside the board" in state.summary
    assert "lost" in state.summary and state.head == made.worktree.base_commit
    assert state.resume_command is not None and state.resume_command in state.summary
    again = env.trees.provision(task_id, env.repo)  # the command it names works
    assert again.reattached and Path(again.worktree.worktree_path).is_dir()
    assert env.trees.checkout_state(task_id).state == CHECKED_OUT


def test_a_diff_past_the_cap_is_cut_at_a_line_and_names_what_was_cut(env, tmp_path):
    task_id, _, path = provisioned(env)
    for index in range(6):
        body = "".join(f"line {index}-{n}\n" for n in range(400))
        (path / f"file{index}.txt").write_text(body)
    small = Worktrees(env.board, diff_limit_bytes=12_000)
    detail = small.detail(task_id)
    assert detail.diff_truncated and detail.diff_limit_bytes == 12_000
    assert len(detail.diff.encode()) <= 12_000 and detail.diff.endswith("\n")
    assert [f.path for f in detail.diff_files] == [f"file{i}.txt" for i in range(6)]
    assert all(f.insertions == 400 and f.deletions == 0 for f in detail.diff_files)
    assert "file5.txt" not in detail.diff  # cut, but listed in diffFiles
    whole = env.trees.detail(task_id)
    assert not whole.diff_truncated and whole.diff_limit_bytes is None
    assert whole.diff.startswith(detail.diff)


def test_git_is_killed_at_the_timeout_with_its_children(env):
    started = time.monotonic()
    with pytest.raises(GitFailure) as failed:
        gitrepo.run_capped(
            env.repo, "-c", "alias.sleepy=!sleep 30", "sleepy", limit=1000, timeout_s=0.5
        )
    assert time.monotonic() - started < 10
    assert "timed out" in str(failed.value) and failed.value.status is None


def test_the_fingerprint_changes_exactly_when_the_worktree_does(env):
    task_id, _, path = provisioned(env)
    first = env.trees.fingerprint(task_id)
    assert env.trees.fingerprint(task_id) == first  # reading changes nothing
    (path / "app.py").write_text("def answer():\n    return 41\n")
    second = env.trees.fingerprint(task_id)
    assert second != first
    time.sleep(0.01)
    (path / "app.py").write_text("def answer():\n    return 40\n")  # same status line, new content
    third = env.trees.fingerprint(task_id)
    assert third != second
    (path / "task-progress.md").write_text("## Next\n- more\n")
    fourth = env.trees.fingerprint(task_id)
    assert fourth != third
    (path / "notes.txt").write_text("untracked\n")
    assert env.trees.fingerprint(task_id) != fourth
    env.trees.pause(task_id)
    assert "branch:" in env.trees.fingerprint(task_id)
    assert env.trees.fingerprint(env.task(claim_by=None)) == "none"


def test_a_workspace_read_runs_no_git_to_see_which_board_made_its_branch(env):
    """Found by counting a landing's git runs: every read of a workspace (the fingerprint a
    viewer polls, the checkout state, the drawer's detail, the landing preview) ran a `git log`
    to see whether another board had remade the task's branch. A branch at the row's baseline
    is this board's, and any other answer holds for as long as the branch's tip does."""
    task_id, made, path = provisioned(env)
    (path / "app.py").write_text("def answer():\n    return 41\n")

    def reads() -> list[list[str]]:
        with git_runs() as runs:
            env.trees.fingerprint(task_id)
            env.trees.checkout_state(task_id)
            env.trees.detail(task_id)
        return [run for run in runs if "log" in run]

    assert reads() == []  # the branch is at the row's baseline
    git(path, "commit", "-qam", "work")  # committed on the row's scaffold
    assert reads() == []
    git(env.repo, "commit", "-q", "--allow-empty", "-m", "main moves on")
    assert not env.trees.sync(task_id, actor="alice").conflicts
    git(path, "commit", "-q", "--allow-empty", "-m", "more work")  # a merge below: git is asked
    env.trees.fingerprint(task_id)  # once for this tip
    assert reads() == []
    git(env.repo, "pack-refs", "--all")
    branch = made.worktree.branch
    assert landgit.branch_tip_from_files(env.repo, branch) == git(env.repo, "rev-parse", branch)
    assert reads() == []
    assert landgit.branch_tip_from_files(env.repo, "no/such/branch") is None
    assert landgit.branch_tip_from_files(env.repo, "../../HEAD") is None


def test_audit_rows_in_words():
    from boardlib.narration import narrate_audit
    from boardlib.records import AuditEntry

    override = AuditEntry(
        seq=1, actor="operator:sam", action="human_override", created_at=0, task_id="TASK-4",
        from_status="in_review", to_status="done", verdict_overridden='{"status": "fail"}',
    )  # fmt: skip
    assert (
        narrate_audit(override) == "human override: TASK-4 done over a fail verdict by operator:sam"
    )
    gate = AuditEntry(
        seq=2, actor="verification-gate", action="verification", created_at=0, task_id="TASK-1",
        detail="attempt 1: fail (exited 1 after 0.2 s) -> in_progress",
    )  # fmt: skip
    assert narrate_audit(gate).startswith("verification gate on TASK-1: attempt 1: fail")


def test_git_in_a_folder_removed_under_the_reader_is_a_git_failure(tmp_path: Path) -> None:
    """A drawer reading a worktree that a landing just removed gets a `GitFailure` (which every
    reader handles), not gitpython's "git not found" from a missing cwd: the TUI crashed on it."""
    gone = tmp_path / "worktree"
    gone.mkdir()
    gone.rmdir()
    with pytest.raises(GitFailure, match="not there any more"):
        gitrepo.has_uncommitted(gone)
    with pytest.raises(GitFailure):
        gitrepo.run(gone, "status", check=False)
    with pytest.raises(GitFailure):
        gitrepo.run_capped(gone, "diff", limit=100)
