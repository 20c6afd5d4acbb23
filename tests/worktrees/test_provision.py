"""Provisioning a task's worktree: where it goes, what it records, what it reuses and what it
refuses (creating nothing), on real temporary git repositories."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib.worktrees.sor import SCAFFOLD_FILES
from tests.worktrees.conftest import git, make_repo, repo_state


def test_provision_creates_branch_worktree_and_scaffold_outside_the_repo(env):
    task_id = env.task()
    before = repo_state(env.repo)
    made = env.trees.provision(task_id, env.repo)

    path = Path(made.worktree.worktree_path)
    assert path.parent.parent == env.root.resolve()
    assert not path.is_relative_to(env.repo)
    assert made.worktree.branch == f"kanban/task-{task_id}"
    assert made.isolation == "worktree" and made.worktree.detached is False
    assert repo_state(env.repo) == before  # the user's repository looks exactly the same

    assert git(path, "symbolic-ref", "--short", "HEAD") == made.worktree.branch
    assert git(path, "rev-parse", "HEAD") == made.worktree.base_commit
    assert git(path, "status", "--porcelain") == ""  # the scaffold is committed: the baseline
    scaffold = git(path, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert sorted(scaffold) == sorted(SCAFFOLD_FILES)
    assert git(path, "rev-parse", "HEAD~1") == git(env.repo, "rev-parse", "HEAD")
    assert "Fix the answer" in (path / "TASK.md").read_text()
    assert "Make answer() right." in (path / "TASK.md").read_text()
    assert (path / "DECISIONS.json").read_text().strip() == "[]"
    assert os.stat(path / "init.sh").st_mode & stat.S_IXUSR
    assert "VERIFY_CMD=''" in (path / "init.sh").read_text()

    task = env.board.get_task(task_id)
    assert task.worktree_ref == str(path) and task.branch_ref == made.worktree.branch
    [ws] = env.board.workspaces(task_id)
    assert (ws.id, ws.status, ws.base_commit) == (
        made.workspace_id,
        "active",
        made.worktree.base_commit,
    )
    kinds = [event.kind for event in env.board.events(task_id=task_id)]
    assert kinds.count("workspace_provisioned") == 1


def test_json_shape_is_the_seed_provision_response(env):
    task_id = env.task()
    body = env.trees.provision(task_id, env.repo).to_json()
    assert set(body["worktree"]) == {"taskId", "worktreePath", "branch", "baseCommit", "detached"}
    assert body["isolation"] == "worktree" and body["workspaceId"].startswith("WS-")


def test_repeat_provision_reuses_the_live_checkout(env):
    task_id = env.task()
    first = env.trees.provision(task_id, env.repo)
    (Path(first.worktree.worktree_path) / "work.txt").write_text("in progress\n")
    again = env.trees.provision(task_id, env.repo)
    assert again.reused and again.workspace_id == first.workspace_id
    assert again.worktree == first.worktree
    assert len(env.board.workspaces(task_id)) == 1
    assert (Path(first.worktree.worktree_path) / "work.txt").read_text() == "in progress\n"


def test_subdirectory_of_the_repo_resolves_to_the_same_checkout(env):
    (env.repo / "pkg").mkdir()
    task_id = env.task()
    first = env.trees.provision(task_id, env.repo)
    again = env.trees.provision(task_id, env.repo / "pkg")
    assert again.reused and again.worktree.worktree_path == first.worktree.worktree_path


def test_base_sha_and_base_ref_pin_the_branch_point(env):
    old = git(env.repo, "rev-parse", "HEAD")
    (env.repo / "later.txt").write_text("later\n")
    git(env.repo, "add", "-A")
    git(env.repo, "commit", "-q", "-m", "later")
    git(env.repo, "tag", "v1", old)

    by_sha = env.trees.provision(env.task(), env.repo, base_sha=old[:10])
    by_tag = env.trees.provision(env.task(), env.repo, base_ref="v1")
    by_head = env.trees.provision(env.task(), env.repo)
    for made, expected in (
        (by_sha, old),
        (by_tag, old),
        (by_head, git(env.repo, "rev-parse", "HEAD")),
    ):
        assert git(Path(made.worktree.worktree_path), "rev-parse", "HEAD~1") == expected


@pytest.mark.parametrize("kind", ["research", "review", "Research"])
def test_kinds_without_file_mutation_are_refused_with_no_isolation(env, kind):
    task_id = env.task(kind="code")
    with pytest.raises(BoardError) as refused:
        env.trees.provision(task_id, env.repo, kind=kind)
    assert refused.value.reason == Reason.NO_ISOLATION
    assert refused.value.to_dict()["isolation"] == "none"
    assert env.board.workspaces(task_id) == [] and not env.root.exists()


def test_the_tasks_own_kind_decides_when_none_is_given(env):
    task_id = env.task(kind="research")
    with pytest.raises(BoardError) as refused:
        env.trees.provision(task_id, env.repo)
    assert refused.value.reason == Reason.NO_ISOLATION
    unknown = env.task(kind="design-doc")  # unknown kinds get a worktree, like code
    assert env.trees.provision(unknown, env.repo).isolation == "worktree"


def test_terminal_unknown_and_dropped_tasks_are_refused(env):
    done = env.task(claim_by=None)
    env.board.move(done, "cancelled")
    with pytest.raises(BoardError) as refused:
        env.trees.provision(done, env.repo)
    assert refused.value.reason == Reason.INVALID_STATE
    with pytest.raises(BoardError) as missing:
        env.trees.provision("TASK-999", env.repo)
    assert missing.value.reason == Reason.NOT_FOUND
    dropped = env.task(claim_by=None)
    env.board.drop(dropped)
    with pytest.raises(BoardError):
        env.trees.provision(dropped, env.repo)
    assert not env.root.exists()


HOSTILE_REFS = [
    "--output=/tmp/kanban-pwned-ref",
    "-c",
    "--exec=touch pwned",
    "main..HEAD",
    "HEAD~1",
    "HEAD^{tree}",
    "main:app.py",
    "ma in",
    "main\n--all",
    "refs/heads/.hidden",
    "main.lock",
    "@{-1}",
    "",
    "a" * 401,
]


@pytest.mark.parametrize("ref", HOSTILE_REFS)
def test_hostile_base_refs_are_refused_and_create_nothing(env, ref):
    task_id = env.task()
    before = repo_state(env.repo)
    branches = git(env.repo, "branch", "--list")
    with pytest.raises(BoardError) as refused:
        env.trees.provision(task_id, env.repo, base_ref=ref)
    assert refused.value.reason == Reason.INVALID_INPUT
    assert refused.value.details["field"] == "baseRef"
    assert repo_state(env.repo) == before and git(env.repo, "branch", "--list") == branches
    assert not env.root.exists() and not Path("/tmp/kanban-pwned-ref").exists()
    assert env.board.workspaces(task_id) == []
    assert env.board.get_task(task_id).worktree_ref is None


def test_a_repository_with_no_commit_yet_is_refused_saying_so(env, tmp_path):
    """`git init` and no commit: HEAD names nothing to branch from. The refusal says the
    repository has no commit yet, not only that HEAD names none, and creates nothing."""
    task_id = env.task()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")
    (fresh / "app.py").write_text("print('hi')\n")

    def state() -> tuple[str, str, list[str]]:  # repo_state's, but HEAD names no commit here
        status = git(fresh, "status", "--porcelain=v1", "--branch", "--untracked-files=all")
        files = sorted(str(path.relative_to(fresh)) for path in fresh.rglob("*"))
        return status, git(fresh, "for-each-ref"), files

    before = state()
    with pytest.raises(BoardError) as refused:
        env.trees.provision(task_id, fresh)
    assert refused.value.reason == Reason.INVALID_INPUT
    assert "has no commit yet: commit its files first" in refused.value.message
    assert refused.value.details["field"] == "baseRef"
    assert state() == before and not env.root.exists()
    assert env.board.workspaces(task_id) == []
    assert env.board.get_task(task_id).worktree_ref is None


@pytest.mark.parametrize("sha", ["--all", "xyz123", "12", "-1234abcd", "0" * 65])
def test_hostile_base_shas_are_refused(env, sha):
    task_id = env.task()
    with pytest.raises(BoardError) as refused:
        env.trees.provision(task_id, env.repo, base_sha=sha)
    assert refused.value.reason == Reason.INVALID_INPUT and not env.root.exists()


def test_a_well_formed_ref_that_names_nothing_is_refused(env):
    task_id = env.task()
    for ref in ("no-such-branch", "refs/tags/nope"):
        with pytest.raises(BoardError) as refused:
            env.trees.provision(task_id, env.repo, base_ref=ref)
        assert refused.value.reason == Reason.INVALID_INPUT
    with pytest.raises(BoardError):
        env.trees.provision(task_id, env.repo, base_sha="deadbeef")
    with pytest.raises(BoardError):  # both at once is ambiguous
        env.trees.provision(task_id, env.repo, base_sha="deadbeef", base_ref="main")
    assert git(env.repo, "branch", "--list") == "* main" and not env.root.exists()


def test_hostile_repo_paths_are_refused_and_create_nothing(env, tmp_path):
    task_id = env.task()
    not_a_repo = tmp_path / "plain"
    not_a_repo.mkdir()
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    a_file = env.repo / "README.md"
    hostile = [
        "--upload-pack=touch /tmp/kanban-pwned-repo",
        "-C/",
        "",
        "   ",
        str(env.repo) + "\n--help",
        "x\x00y",
        str(tmp_path / "missing"),
        str(not_a_repo),
        str(bare),
        str(a_file),
        "a" * 4001,
        "y" * 501,  # one name longer than the filesystem holds (ENAMETOOLONG): found by the fuzz
        None,
        42,
    ]
    before = repo_state(env.repo)
    for path in hostile:
        with pytest.raises(BoardError) as refused:
            env.trees.provision(task_id, path)  # type: ignore[arg-type]
        assert refused.value.reason == Reason.INVALID_INPUT, path
    assert repo_state(env.repo) == before
    assert not env.root.exists() and not Path("/tmp/kanban-pwned-repo").exists()
    assert env.board.workspaces(task_id) == []


def test_a_checkout_or_a_repo_holding_the_worktrees_root_is_refused(env, tmp_path, monkeypatch):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    other = env.task()
    with pytest.raises(BoardError) as inside:
        env.trees.provision(other, made.worktree.worktree_path)
    assert inside.value.reason == Reason.INVALID_INPUT
    from boardlib.worktrees import Worktrees

    polluting = Worktrees(env.board, root=env.repo / ".worktrees")
    with pytest.raises(BoardError) as around:
        polluting.provision(other, env.repo)
    assert "inside the repository" in around.value.message
    assert not (env.repo / ".worktrees").exists()


def test_another_repository_for_the_same_task_is_a_conflict(env, tmp_path):
    task_id = env.task()
    env.trees.provision(task_id, env.repo)
    second = make_repo(tmp_path / "second")
    with pytest.raises(BoardError) as refused:
        env.trees.provision(task_id, second)
    assert refused.value.reason == Reason.CONFLICT
    assert git(second, "branch", "--list") == "* main"
    # Once the first workspace went stale (its checkout collected), another repository is fine.
    first = env.board.workspaces(task_id)[0]
    env.board.update_workspace(first.id, status="stale")
    moved = env.trees.provision(task_id, second)
    assert moved.workspace_id != first.id and not moved.reused
    assert [w.status for w in env.board.workspaces(task_id)] == ["stale", "active"]
    assert env.board.get_task(task_id).worktree_ref == moved.worktree.worktree_path


def test_a_branch_left_by_a_crash_is_reattached_and_a_foreign_one_refused(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "app.py").write_text("def answer():\n    return 41\n")
    git(path, "commit", "-qam", "work")
    # A crash between git and the board leaves the branch without a live row: remove the checkout
    # behind the board's back and archive the row, then provision again.
    git(env.repo, "worktree", "remove", "--force", str(path))
    ws = env.board.workspaces(task_id)[0]
    env.board.update_workspace(ws.id, status="archived")
    again = env.trees.provision(task_id, env.repo)
    assert again.reattached and again.worktree.base_commit == made.worktree.base_commit
    assert "return 41" in (path / "app.py").read_text()

    foreign = env.task()
    git(env.repo, "branch", f"kanban/task-{foreign}")
    with pytest.raises(BoardError) as refused:
        env.trees.provision(foreign, env.repo)
    assert refused.value.reason == Reason.CONFLICT
    assert env.board.workspaces(foreign) == []


def test_a_repo_without_an_identity_still_gets_its_baseline(env, tmp_path, monkeypatch):
    bare_identity = tmp_path / "anon"
    bare_identity.mkdir()
    git(bare_identity, "init", "-q", "-b", "main")
    (bare_identity / "f.txt").write_text("x\n")
    git(bare_identity, "add", "-A")
    git(bare_identity, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "one")
    # A pre-commit hook that always fails must not block the board's bookkeeping commit.
    hook = bare_identity / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    made = env.trees.provision(env.task(), bare_identity)
    author = git(Path(made.worktree.worktree_path), "log", "-1", "--format=%an <%ae>")
    assert author == "kanban <kanban@localhost>"


def test_importing_boardlib_or_the_worktree_package_does_not_import_git(tmp_path):
    code = (
        "import sys, boardlib\n"
        "b = boardlib.Board(sys.argv[1]); t = b.create_task('x'); b.claim_next('a')\n"
        "assert 'git' not in sys.modules, 'boardlib imported git'\n"
        "import boardlib.worktrees, boardlib.worktrees.gate\n"
        "assert 'git' not in sys.modules, 'boardlib.worktrees imported git at import'\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "b.db")], capture_output=True, text=True
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_a_checkout_made_just_before_a_crash_is_adopted(env):
    """git made the branch and the checkout, then the process died before the board recorded it."""
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    ws = env.board.workspaces(task_id)[0]
    env.board.update_workspace(ws.id, status="archived")  # as if the row had never been written
    again = env.trees.provision(task_id, env.repo)
    assert again.worktree.worktree_path == made.worktree.worktree_path
    assert again.worktree.base_commit == made.worktree.base_commit
    assert [w.status for w in env.board.workspaces(task_id)] == ["archived", "active"]
    assert git(env.repo, "worktree", "list", "--porcelain").count("worktree ") == 2


def test_a_checkout_git_fails_after_making_is_undone_and_provision_works_again(env):
    """A post-checkout hook that fails (as a missing git-lfs does) made `git worktree add -b` fail
    after it made the branch and the checkout; both stayed, and every later provision was refused:
    "branch ... was not made by this board"."""
    task_id = env.task()
    hook = env.repo / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\necho 'git-lfs was not found' >&2\nexit 2\n")
    hook.chmod(0o755)
    before = repo_state(env.repo), git(env.repo, "branch", "--list")
    with pytest.raises(Exception, match="git-lfs was not found"):
        env.trees.provision(task_id, env.repo)
    assert (repo_state(env.repo), git(env.repo, "branch", "--list")) == before
    assert git(env.repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert env.board.workspaces(task_id) == []
    hook.unlink()
    made = env.trees.provision(task_id, env.repo)
    assert Path(made.worktree.worktree_path).is_dir()
