"""Review comments anchored to lines through the real `kanban` script: `task comment --path
--line`, `task reject --comment FILE:LINE TEXT` (several), and the agent reading them back in
`task view`, `task workspace resume` and its worktree's REVIEW.md. A bad anchor is exit 2 with one
JSON line, and the board is byte for byte what it was."""

from pathlib import Path

import pytest

from tests.cli.conftest import Kanban, unchanged
from tests.worktrees.conftest import GIT_ENV, make_repo

APP = "".join(f"line_{n} = {n}\n" for n in range(1, 21))


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Kanban, Path, dict[str, str]]:
    env = {
        "KANBAN_WORKTREES": str(tmp_path / "state" / "worktrees"),
        **{key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")},
    }
    return Kanban(tmp_path / "board.db"), make_repo(tmp_path / "repo"), env


def test_anchored_comments_reach_the_agent_through_the_cli(setup) -> None:  # type: ignore[no-untyped-def]
    kanban, repo, env = setup
    with kanban.board() as board:
        task_id = board.create_task("Fix the answer").id
        board.claim(task_id, "alice")
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    worktree = Path(made["worktree"]["worktreePath"])
    (worktree / "app.py").write_text(APP)
    with kanban.board() as board:  # in review with its worktree, no gate run (the CLI's plain
        board.complete(task_id, "alice")  # complete refuses that: gate_required)
    comment = kanban.ok(
        "task", "comment", task_id, "--path", "app.py", "--line", "12",
        "--line-text", "line_12 = 12", "--body", "twelve is off by one", env=env,
    )  # fmt: skip
    assert (comment["path"], comment["line"], comment["side"]) == ("app.py", 12, "new")
    assert comment["authorType"] == "user"
    assert "twelve is off by one" in (worktree / "REVIEW.md").read_text()
    kanban.ok(
        "task", "reject", task_id, "--agent", "grace", "--reason", "see the comments",
        "--comment", "app.py:3", "three too", "--comment", "README.md", "say it here", env=env,
    )  # fmt: skip
    resumed = kanban.ok("task", "workspace", "resume", task_id, env=env)
    assert [(e["path"], e["line"], e["body"]) for e in resumed["review"]] == [
        ("app.py", 12, "twelve is off by one"), ("app.py", 3, "three too"),
        ("README.md", None, "say it here"),
    ]  # fmt: skip
    assert resumed["review"][0]["lineText"] == "line_12 = 12"
    view = kanban.ok("task", "view", task_id, env=env)
    assert [e["commentId"] for e in view["review"]] == [e["commentId"] for e in resumed["review"]]
    assert {c["body"] for c in view["comments"]} >= {"rejected: see the comments", "three too"}
    review = (worktree / "REVIEW.md").read_text()
    assert "## `app.py:12`" in review and "## `app.py:3`" in review and "## `README.md`" in review


@pytest.mark.parametrize(
    "args",
    [
        ("--line", "12"),
        ("--path", "/etc/passwd", "--line", "1"),
        ("--path", "app.py", "--line", "0"),
        ("--path", "../app.py", "--line", "1"),
    ],
)
def test_a_bad_anchor_is_refused_and_writes_nothing(setup, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    kanban, _repo, env = setup
    with kanban.board() as board:
        task_id = board.create_task("x").id
    with unchanged(kanban.db):
        kanban.refused("task", "comment", task_id, *args, "--body", "x", reason="invalid_input",
                       env=env)  # fmt: skip


def test_the_review_comments_example_runs_as_written(tmp_path: Path) -> None:
    from boardlib import Board
    from boardlib.worktrees import Worktrees
    from tests.cli.test_doc_examples import reader_env, run
    from tests.doc_examples import example

    repo = make_repo(tmp_path / "repo")
    db = tmp_path / "board.db"
    worktrees = tmp_path / "state" / "worktrees"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KANBAN_WORKTREES", str(worktrees))
        with Board(db) as board:
            task = board.create_task("Fix the list")
            board.claim(task.id, "worker-1")
            made = Worktrees(board).provision(task.id, repo, actor="worker-1")
            (Path(made.worktree.worktree_path) / "app.py").write_text(APP)
            board.complete(task.id, "worker-1")
    env = reader_env(tmp_path, KANBAN_DB=str(db), KANBAN_WORKTREES=str(worktrees),
                     GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")  # fmt: skip
    done = run(example("docs/agents.md#review-comments"), tmp_path, env)
    printed = [line for line in done.stdout.splitlines() if not line.startswith("{")]
    assert printed == ["app.py:12 this drops the last item", "app.py:14 and this returns too early"]
