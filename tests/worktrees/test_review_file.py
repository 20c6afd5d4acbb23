"""Review comments reach an agent that reads only its worktree: `REVIEW.md` is rewritten in the
live checkout when one is added or a reject carries some, and again at the next provision of a
paused worktree; the resume read lists them; `REVIEW.md` is bookkeeping (never in the diff). And
the checkout a person's own tools open is resolved by the core, inside the state folder only."""

import os
import sqlite3
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib.worktrees.sor import REVIEW_MD
from tests.worktrees.conftest import Env, make_env

APP = "".join(f"line_{n} = {n}\n" for n in range(1, 21))


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    return make_env(tmp_path, monkeypatch)


def test_a_review_comment_and_a_reject_reach_the_worktree_and_the_resume_read(env: Env) -> None:
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    (path / "app.py").write_text(APP)
    assert not (path / REVIEW_MD).exists()
    env.trees.add_comment(task_id, "a plain remark")  # not a review comment: no file
    assert not (path / REVIEW_MD).exists()
    env.trees.add_comment(
        task_id, "twelve is off by one", author_agent_id="operator:ana", author_type="user",
        path="app.py", line=12, line_text="line_12 = 12",
    )  # fmt: skip
    review = (path / REVIEW_MD).read_text()
    assert "## `app.py:12`" in review and "> `line_12 = 12`" in review
    assert "twelve is off by one" in review and "operator:ana" in review
    env.board.complete(task_id, "alice")
    env.trees.reject(
        task_id, "grace", "see the review",
        comments=[{"path": "app.py", "line": 3, "body": "and three"}],
    )  # fmt: skip
    review = (path / REVIEW_MD).read_text()
    assert review.index("app.py:12") < review.index("app.py:3`") and "and three" in review
    resumed = env.trees.resume(task_id).to_json()
    assert [(e["path"], e["line"], e["body"]) for e in resumed["review"]] == [
        ("app.py", 12, "twelve is off by one"), ("app.py", 3, "and three"),
    ]  # fmt: skip
    assert resumed["review"][0]["lineText"] == "line_12 = 12"
    detail = env.trees.detail(task_id)
    assert REVIEW_MD in detail.sor_files and REVIEW_MD not in detail.diff  # bookkeeping


def test_a_paused_worktree_gets_its_review_at_the_next_provision(env: Env) -> None:
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    (path / "app.py").write_text(APP)
    env.trees.pause(task_id)
    assert env.trees.write_review(task_id) is None  # no checkout to write into
    env.trees.add_comment(task_id, "fix twelve", path="app.py", line=12)
    assert not path.exists()
    again = env.trees.provision(task_id, env.repo)
    assert again.reattached and "fix twelve" in (path / REVIEW_MD).read_text()
    assert "fix twelve" in {e["body"] for e in env.trees.resume(task_id).review}
    # Written again, unchanged work: the diff still holds only app.py.
    assert {f.path for f in env.trees.detail(task_id).diff_files} == {"app.py"}


def test_the_checkout_for_a_persons_tools_stays_inside_the_state_folder(env: Env) -> None:
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    (path / "-rf").write_text("a file whose name looks like an option\n")
    os.symlink("/etc", path / "escape")
    assert env.trees.checkout_path(task_id) == Path(os.path.realpath(path))
    assert env.trees.checkout_file(task_id, "-rf") == Path(os.path.realpath(path)) / "-rf"
    assert str(env.trees.checkout_file(task_id, "-rf")).startswith("/")  # never an option
    for bad in ("/etc/passwd", "../x", "a/../../x", "escape/passwd", "x\x1b]52;c;eA==\x07", ""):
        with pytest.raises(BoardError) as refused:
            env.trees.checkout_file(task_id, bad)
        assert refused.value.reason is Reason.INVALID_INPUT, bad
    # A row pointing outside the worktrees folder is refused, as the detail route refuses it.
    [ws] = env.board.workspaces(task_id)
    with sqlite3.connect(env.tmp / "board.db") as conn:
        conn.execute("UPDATE workspaces SET worktree_path = ? WHERE id = ?", (str(env.tmp), ws.id))
    for call in (lambda: env.trees.checkout_path(task_id), lambda: env.trees.checkout_file(
            task_id, "app.py")):  # fmt: skip
        with pytest.raises(BoardError) as refused:
            call()
        assert refused.value.reason is Reason.CONFLICT
