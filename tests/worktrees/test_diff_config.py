"""The Diff tab's kept reads follow the repository's settings: a setting that changes what git
stages or says (`core.autocrlf`, an attribute in info/attributes) is seen on the next read, and
the names in the text are `a/` and `b/` whatever the prefix settings say."""

import os
import subprocess
import time
from pathlib import Path

from boardlib.worktrees import SOR_FILES, gitrepo
from boardlib.worktrees.diffs import parse_diff
from tests.worktrees.conftest import GIT_ENV, git, git_runs

AN_HOUR_AGO = time.time() - 3600  # an agent's finished work: settled, so its diff is kept


def settle(path: Path) -> None:
    for file in path.rglob("*"):
        if file.is_file() and ".git" not in file.relative_to(path).parts:
            os.utime(file, (AN_HOUR_AGO, AN_HOUR_AGO))


def provisioned(env, files: dict[str, bytes]) -> tuple[str, Path]:  # type: ignore[no-untyped-def]
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    for name, data in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    settle(path)
    return task_id, path


def plain_add_tree(path: Path, tmp_path: Path) -> str:
    """The tree `git add --all` writes from a copy of the checkout's real index."""
    index = tmp_path / "plain-index"
    index.write_bytes(gitrepo._index_file(path).read_bytes())
    run = {**GIT_ENV, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "add", "--all"], cwd=path, env=run, check=True)
    done = subprocess.run(["git", "write-tree"], cwd=path, env=run, check=True, capture_output=True)
    return done.stdout.decode().strip()


def test_a_kept_diff_follows_a_changed_autocrlf(env) -> None:  # type: ignore[no-untyped-def]
    """Found by review: a settled checkout's diff was kept by its `git status` digest, and its
    snapshot index by the real index's identity; `git config core.autocrlf true` changes
    neither, so the Diff tab kept showing `\\r` endings git no longer stages."""
    task_id, _ = provisioned(env, {"app.py": b"def answer():\r\n    return 41\r\n"})
    before = env.trees.fingerprint(task_id)
    first = env.trees.detail(task_id)
    assert "return 41\r\n" in first.diff
    assert first.diff_stat is not None and first.diff_stat.deletions == 2

    git(env.repo, "config", "core.autocrlf", "true")
    assert env.trees.fingerprint(task_id) != before  # the drawer polls this to read again
    again = env.trees.detail(task_id)
    assert "\r" not in again.diff and "+    return 41\n" in again.diff
    assert again.diff_stat is not None and again.diff_stat.deletions == 1


def test_a_kept_snapshot_index_follows_a_changed_autocrlf(env, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """What lands is snapshotted through the same kept index: after the setting changed it is
    the tree `git add` gives, not the one staged under the old setting."""
    _, path = provisioned(env, {"app.py": b"def answer():\r\n    return 41\r\n"})
    first = gitrepo.snapshot_tree(path)
    assert first == plain_add_tree(path, tmp_path)
    git(env.repo, "config", "core.autocrlf", "true")
    again = gitrepo.snapshot_tree(path)
    assert again != first and again == plain_add_tree(path, tmp_path)


def test_a_kept_diff_follows_info_attributes_live_and_paused(env) -> None:  # type: ignore[no-untyped-def]
    """An attribute in the repository's info/attributes (no file of the checkout changes)."""
    task_id, _ = provisioned(env, {"app.py": b"def answer():\n    return 41\n"})
    attributes = Path(git(env.repo, "rev-parse", "--absolute-git-dir")) / "info" / "attributes"
    attributes.parent.mkdir(exist_ok=True)
    for paused in (False, True):
        if paused:
            attributes.unlink()
            env.trees.pause(task_id)
        assert "+    return 41" in env.trees.detail(task_id).diff
        before = env.trees.fingerprint(task_id)
        attributes.write_text("app.py -diff\n")
        assert env.trees.fingerprint(task_id) != before
        detail = env.trees.detail(task_id)
        assert "Binary files" in detail.diff and "return 41" not in detail.diff, paused


def test_the_names_are_a_and_b_whatever_the_prefix_settings(env) -> None:  # type: ignore[no-untyped-def]
    """`diff.noprefix` named `a/x.py` as `a/x.py` on both sides, which the parser read as
    `x.py`; `diff.mnemonicPrefix` wrote `c/` and `i/`. The text is read with fixed names."""
    task_id, _ = provisioned(env, {"app.py": b"VALUE = 1\n", "a/x.py": b"X = 1\n"})
    for setting in ("diff.noprefix", "diff.mnemonicPrefix"):
        git(env.repo, "config", setting, "true")
        detail = env.trees.detail(task_id)
        assert detail.diff.startswith("diff --git a/a/x.py b/a/x.py\n"), setting
        assert [file.path for file in parse_diff(detail.diff)] == ["a/x.py", "app.py"], setting
        git(env.repo, "config", "--unset", setting)


def test_a_paused_worktrees_files_are_read_without_a_git_run_each(env) -> None:  # type: ignore[no-untyped-def]
    """Found by counting the drawer's git runs: a paused worktree's SoR files were read with one
    `cat-file` each (seven a read). They are read in one exchange with the repository's kept
    lookup process (no git run), else one `cat-file --batch`; a folder by a SoR name is skipped
    as before."""
    task_id, path = provisioned(env, {"app.py": b"VALUE = 1\n", "task-progress.md": b"## Next\n"})
    (path / "REVIEW.md").mkdir()
    (path / "REVIEW.md" / "x").write_text("a folder, not the review\n")
    env.trees.pause(task_id)
    env.trees.detail(task_id)
    with git_runs() as runs:
        detail = env.trees.detail(task_id)
    assert [run for run in runs if "cat-file" in " ".join(run)] == []
    expected = set(SOR_FILES) - {"REVIEW.md", "AGENT_HANDOFF.json"}  # the scaffold writes them
    assert set(detail.sor_files) == expected and detail.sor_files["task-progress.md"] == "## Next\n"
    source = detail.checkout.head
    assert source is not None
    with git_runs() as runs:
        batch = gitrepo.read_blobs(env.repo, source, SOR_FILES)
    assert len(runs) == 1 and batch == detail.sor_files
