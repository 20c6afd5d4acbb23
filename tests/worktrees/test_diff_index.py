"""The line index of a diff (`diffs.index_diff`), the drawer's way to any size, agrees with the
unidiff parse (`parse_diff`, the reference) on real git diffs: every kind of change, names git
quotes, hostile bytes, random contents, and a diff cut at any line."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from boardlib.worktrees import diffs
from boardlib.worktrees.diffs import DiffIndex, index_diff, parse_diff
from tests.examples import examples
from tests.worktrees.conftest import git, make_repo
from tests.worktrees.test_diffs import real_diff

KIND = {"+": diffs.ADDED_LINE, "-": diffs.REMOVED_LINE, " ": diffs.CONTEXT_LINE,
        "\\": diffs.NO_NEWLINE_LINE}  # fmt: skip


def guessed(want: diffs.DiffFile, change: str) -> bool:
    """unidiff calls a file emptied "deleted" and a file that was empty "added"; git's header
    says modified (no `deleted file mode`), and so does the index."""
    if change != diffs.MODIFIED or want.change not in (diffs.NEW, diffs.DELETED) or not want.hunks:
        return False
    hunk = want.hunks[0]
    return len(want.hunks) == 1 and 0 in (hunk.old_length, hunk.new_length)


def agrees(text: str, *, truncated: bool = False) -> DiffIndex:
    reference = parse_diff(text, truncated=truncated)
    index = index_diff(text, truncated=truncated)
    assert len(index.files) == len(reference), [f.path for f in index.files]
    for got, want in zip(index.files, reference, strict=True):
        assert (got.path, got.old_path, got.binary, got.cut) == (
            want.path, want.old_path, want.binary, want.cut,
        )  # fmt: skip
        assert got.change == want.change or guessed(want, got.change), (got, want.change)
        assert (got.insertions, got.deletions) == (want.insertions, want.deletions)
        rows = [
            (index.kinds[i], index.lines[i][1:], index.old_no[i] or None, index.new_no[i] or None)
            for i in range(got.start, got.end)
            if index.kinds[i] != diffs.HUNK
        ]
        expected = [
            (KIND[line.kind], line.text,
             line.old_no if line.kind != "\\" else None, line.new_no if line.kind != "\\" else None)
            for hunk in want.hunks
            for line in hunk.lines
        ]  # fmt: skip
        if not truncated or not want.cut:
            assert rows == expected, got.path
        else:  # the reference recounts a cut hunk's header; the lines shown are the same
            assert [r[:2] for r in rows] == [e[:2] for e in expected]
        headers = [i for i in range(got.start, got.end) if index.kinds[i] == diffs.HUNK]
        assert len(headers) == len(want.hunks)
    return index


def test_every_kind_of_change_is_indexed_as_unidiff_parses_it(env) -> None:  # type: ignore[no-untyped-def]
    _, text = real_diff(env)
    index = agrees(text)
    assert {f.path for f in index.files} == {
        "app.py", "README.md", "pkg/renamed.py", "blob.bin", "hostile.txt",
    }  # fmt: skip
    assert index.highest >= 30


def test_names_git_quotes_and_renames(env) -> None:  # type: ignore[no-untyped-def]
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    (path / "café au lait.txt").write_text("one\n")
    (path / "tab\there.txt").write_text("two\n")
    (path / "-rf").write_text("three\n")
    git(path, "mv", "app.py", "main app.py")
    index = agrees(env.trees.detail(task_id).diff)
    assert {f.path for f in index.files} == {
        "café au lait.txt", "tab\there.txt", "-rf", "main app.py",
    }  # fmt: skip


def test_a_diff_cut_at_any_line_is_indexed_as_it_is_parsed(env) -> None:  # type: ignore[no-untyped-def]
    _, text = real_diff(env)
    lines = text.split("\n")
    for cut in range(1, len(lines)):
        agrees("\n".join(lines[:cut]) + "\n", truncated=True)


LINES = st.lists(st.sampled_from(["a", "b", "c", "", "x = 1", " lead", "-dash", "+plus", "@@"]),
                 max_size=12)  # fmt: skip


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    before=st.lists(LINES, min_size=1, max_size=3),
    after=st.lists(LINES, min_size=1, max_size=3),
    newline=st.booleans(),
)
@example(before=[[""]], after=[["a", ""]], newline=True)  # the last hunk line is a lone space
@pytest.mark.slow
def test_random_edits_index_as_they_parse(
    tmp_path_factory, before: list[list[str]], after: list[list[str]], newline: bool
) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path_factory.mktemp("repo") / "r")
    for number, lines in enumerate(before):
        (repo / f"f{number}.txt").write_text("\n".join(lines) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "before")
    for number in range(len(before)):
        (repo / f"f{number}.txt").unlink()
    for number, lines in enumerate(after):
        (repo / f"f{number}.txt").write_text("\n".join(lines) + ("\n" if newline else ""))
    git(repo, "add", "-A")
    agrees(git(repo, "diff", "--cached", "--no-color", "--find-renames", strip=False))
