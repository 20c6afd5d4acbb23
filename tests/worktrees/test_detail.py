"""Detail (the drawer's Workspace tab): SoR files by fixed name only, diff and diff-stat against
the baseline with the SoR files excluded, and no way to make it read another path."""

import os
import sqlite3
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib.worktrees import SOR_FILES, WorktreeLock, Worktrees, gitrepo
from tests.worktrees.conftest import git


def test_detail_shows_sor_files_and_a_diff_that_excludes_them(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "app.py").write_text("def answer():\n    return 41\n")
    (path / "docs").mkdir()
    (path / "docs" / "TASK.md").write_text("a real document, not bookkeeping\n")
    (path / "task-progress.md").write_text("## Done\n- a lot\n")
    (path / "DECISIONS.json").write_text('[{"decision": "x"}]\n')
    env.trees.write_handoff(task_id, {"handoffFrom": "alice", "runtime": "r"})
    env.trees.add_comment(task_id, "why 41?", path="app.py", line=2)  # REVIEW.md

    detail = env.trees.detail(task_id)
    assert detail.live and detail.busy is None and detail.warnings == []
    assert list(detail.sor_files) == list(SOR_FILES)
    assert detail.sor_files["task-progress.md"] == "## Done\n- a lot\n"
    stat = detail.diff_stat
    assert stat is not None and (stat.files_changed, stat.insertions, stat.deletions) == (2, 2, 1)
    assert "+    return 41" in detail.diff and "docs/TASK.md" in detail.diff
    for name in SOR_FILES:
        assert f"a/{name}" not in detail.diff and f"b/{name}" not in detail.diff
    body = detail.to_json()
    assert set(body) >= {"workspace", "sorFiles", "diffStat", "diff"}
    assert body["diffStat"]["dirty"] is True
    # Reading changed nothing: the index and branch are as they were.
    assert "app.py" in os.popen(f"git -C {path} status --porcelain").read()


def test_only_sor_files_changed_is_a_clean_diff(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    (Path(made.worktree.worktree_path) / "VERIFICATION.md").write_text("scribbles\n")
    detail = env.trees.detail(task_id)
    assert detail.diff == "" and detail.diff_stat is not None and not detail.diff_stat.dirty


def test_a_symlinked_or_special_sor_file_is_never_followed(env, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the private key\n")
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "TASK.md").unlink()
    (path / "TASK.md").symlink_to(secret)
    (path / "DECISIONS.json").unlink()
    os.mkfifo(path / "DECISIONS.json")  # would block a naive read forever
    (path / "AGENT_HANDOFF.json").symlink_to("/etc/passwd")
    detail = env.trees.detail(task_id)
    assert "TASK.md" not in detail.sor_files and "DECISIONS.json" not in detail.sor_files
    assert "AGENT_HANDOFF.json" not in detail.sor_files
    assert all("private key" not in text for text in detail.sor_files.values())
    assert "private key" not in detail.diff  # the link's target path, at most, never its content


def test_a_tampered_workspace_row_cannot_point_detail_elsewhere(env, tmp_path):
    task_id = env.task()
    env.trees.provision(task_id, env.repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "TASK.md").write_text("not yours\n")
    with sqlite3.connect(env.board.path) as conn:  # simulate a hand-edited board file
        conn.execute("UPDATE workspaces SET worktree_path = ?", (str(elsewhere),))
    detail = env.trees.detail(task_id)
    assert detail.sor_files == {} and detail.diff_stat is None and not detail.live
    assert detail.warnings and "outside this worktrees folder" in detail.warnings[0]
    resume = env.trees.resume(task_id)
    assert resume.resume is None and resume.warnings


def test_detail_of_a_paused_worktree_reads_its_branch(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "app.py").write_text("def answer():\n    return 41\n")
    (path / "task-progress.md").write_text("## Next\n- finish\n")
    env.trees.pause(task_id)
    detail = env.trees.detail(task_id)
    assert not detail.live
    assert detail.sor_files["task-progress.md"] == "## Next\n- finish\n"
    assert detail.diff_stat is not None and detail.diff_stat.files_changed == 1
    assert "+    return 41" in detail.diff


def test_detail_while_a_mutation_holds_the_worktree_skips_the_diff(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    lock = env.trees.layout.lock_path(env.repo.resolve(), task_id, env.trees.board_key)
    impatient = Worktrees(env.board, read_lock_timeout_s=0.2)
    with WorktreeLock(lock, purpose="verify TASK-x"):
        detail = impatient.detail(task_id)
    assert detail.busy is not None and detail.busy["purpose"] == "verify TASK-x"
    assert detail.busy["pid"] == os.getpid()
    assert detail.diff_stat is None and "TASK.md" in detail.sor_files
    assert Path(made.worktree.worktree_path).exists()


@pytest.mark.parametrize(
    ("limits", "field"),
    [
        ({"diff_limit_bytes": ("t",)}, "diffLimitBytes"),
        ({"diff_limit_bytes": 0}, "diffLimitBytes"),
        ({"file_limit_bytes": "10"}, "fileLimitBytes"),
        ({"file_limit_bytes": -1}, "fileLimitBytes"),
        ({"file_limit_bytes": 2**63}, "fileLimitBytes"),
    ],
)
def test_limits_that_are_not_sizes_are_invalid_input(env, limits, field):
    """Found by tests/chaos/test_fuzz_worktrees.py: a tuple reached a slice and a comparison
    (TypeError)."""
    task_id = env.task()
    env.trees.provision(task_id, env.repo)
    with pytest.raises(BoardError) as refused:
        env.trees.detail(task_id, **limits)
    assert refused.value.reason == Reason.INVALID_INPUT and refused.value.details["field"] == field


@pytest.mark.slow  # ~2 CPU-s: 900 files written, committed and diffed by git
def test_one_diff_run_says_what_the_separate_runs_say(env):
    """`read_diff` reads the file list, the blobs and the text from one `git diff` whose listing
    comes first: a listing longer than a pipe read (900 files here) and names git quotes in the
    text but not in the listing (tabs, quotes, newlines, a symlink replacing a file: two text
    sections, one listed file) must still split where the text starts, and the cap count the
    text only."""
    names = [
        f"dir {n:03d}/a long file name to make the listing long {n:03d}.txt" for n in range(900)
    ]
    names += ["tab\there.txt", 'quo"te.txt', "new\nline.txt", "ünï.txt", "link.txt"]
    for name in names:
        (env.repo / name).parent.mkdir(exist_ok=True)
        (env.repo / name).write_text(f"{name!r}\n" * 5)
    git(env.repo, "add", "-A")
    git(env.repo, "commit", "-qm", "many files")
    base = git(env.repo, "rev-parse", "HEAD")
    for name in [*names[:-4], "new\nline.txt", "ünï.txt"]:  # all but the renamed and the link
        (env.repo / name).write_text(f"{name!r} changed\n" * 5)
    (env.repo / "link.txt").unlink()
    (env.repo / "link.txt").symlink_to("ünï.txt")
    (env.repo / 'quo"te.txt').rename(env.repo / "renamed\tto.txt")
    git(env.repo, "add", "-A")
    git(env.repo, "commit", "-qm", "change them")
    target = git(env.repo, "rev-parse", "HEAD")

    whole = gitrepo.read_diff(env.repo, base, target)
    assert whole.files == gitrepo.diff_numstat(env.repo, base, target) and len(whole.files) > 900
    assert ("renamed\tto.txt", 'quo"te.txt') in [(f.path, f.old_path) for f in whole.files]
    assert (whole.text, whole.truncated) == gitrepo.diff_text(env.repo, base, target)
    sized = gitrepo.read_diff(env.repo, base, target, file_limit=10_000)
    for file in sized.files[-5:]:  # each side's blob, asked of git one by one
        sides = [f"{base}:{file.old_path or file.path}", f"{target}:{file.path}"]
        sizes = [int(git(env.repo, "cat-file", "-s", side, check=False) or 0) for side in sides]
        assert file.size == max(sizes) and not file.omitted
    assert all(file.size is not None for file in sized.files)
    for limit in (1, 5_000, len(whole.text.encode()) - 1):
        cut = gitrepo.read_diff(env.repo, base, target, limit=limit)
        assert cut.files == whole.files
        assert (cut.text, cut.truncated) == gitrepo.diff_text(env.repo, base, target, limit=limit)
        assert cut.truncated and whole.text.startswith(cut.text)
