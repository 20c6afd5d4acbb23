"""The diff as plain data (`boardlib.worktrees.diffs`), parsed with unidiff from real git diffs:
every kind of change, hostile bytes, and a diff cut at any line by the size cap."""

from pathlib import Path

import pytest

from boardlib.worktrees import diffs
from boardlib.worktrees.diffs import parse_diff
from tests.worktrees.conftest import git

HOSTILE = "evil \x1b]52;c;ZXZpbA==\x07 \x1b[2J \r over \x0c feed \u2028 sep [@click=app.quit]x[/]"


def real_diff(env) -> tuple[str, str]:
    """A worktree with one of every change; (task id, its detail diff)."""
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "app.py").write_text("def answer():\n    return 41\n\n\ndef more():\n    pass")
    (path / "README.md").unlink()
    (path / "pkg").mkdir()
    (path / "pkg" / "new.py").write_text("".join(f"x{i} = {i}\n" for i in range(30)))
    (path / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (path / "hostile.txt").write_text(f"{HOSTILE}\nsecond line\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "work")
    git(path, "mv", "pkg/new.py", "pkg/renamed.py")
    return task_id, env.trees.detail(task_id).diff


def test_every_kind_of_change_is_parsed(env):
    _, text = real_diff(env)
    files = {file.path: file for file in parse_diff(text)}
    assert set(files) == {"app.py", "README.md", "pkg/renamed.py", "blob.bin", "hostile.txt"}
    app = files["app.py"]
    assert app.change == diffs.MODIFIED and (app.insertions, app.deletions) == (5, 1)
    kinds = [line.kind for hunk in app.hunks for line in hunk.lines]
    assert kinds.count("+") == 5 and kinds.count("-") == 1 and diffs.NO_NEWLINE in kinds
    added = [line for line in app.hunks[0].lines if line.kind == "+"]
    assert added[0].text == "    return 41" and added[0].new_no == 2 and added[0].old_no is None
    assert files["README.md"].change == diffs.DELETED
    renamed = files["pkg/renamed.py"]
    assert renamed.change == diffs.NEW  # new against the baseline, whatever happened in between
    assert renamed.insertions == 30 and renamed.line_count == 30
    assert files["blob.bin"].binary and files["blob.bin"].hunks == []
    hostile = files["hostile.txt"].hunks[0].lines
    assert [line.text for line in hostile] == [HOSTILE, "second line"]  # \x0c, \u2028 kept whole
    body = files["app.py"].to_json()
    assert body["hunks"][0]["lines"][0].keys() == {"kind", "text", "oldNo", "newNo"}


def test_a_rename_against_the_baseline(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    git(path, "mv", "app.py", "main.py")
    [file] = parse_diff(env.trees.detail(task_id).diff)
    assert (file.change, file.path, file.old_path) == (diffs.RENAMED, "main.py", "app.py")


def test_a_diff_cut_at_any_line_still_parses_into_whole_lines(env):
    _, text = real_diff(env)
    whole = parse_diff(text)
    lines = text.split("\n")
    for cut in range(1, len(lines)):
        prefix = "\n".join(lines[:cut]) + "\n"
        files = parse_diff(prefix, truncated=True)
        assert len(files) <= len(whole)
        for got, full in zip(files, whole, strict=False):
            assert got.path == full.path
            shown = [(ln.kind, ln.text) for h in got.hunks for ln in h.lines]
            complete = [(ln.kind, ln.text) for h in full.hunks for ln in h.lines]
            assert shown == complete[: len(shown)]  # nothing invented, nothing reordered
        if files and files[-1].cut:
            assert files[-1].line_count < whole[len(files) - 1].line_count


def test_text_that_is_not_a_diff_is_refused_and_empty_is_nothing():
    assert parse_diff("") == [] and parse_diff("\n") == []
    with pytest.raises(ValueError):
        parse_diff("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-only one line\n")
