"""Landing a task's work onto its base branch, on real repositories and both backends: what lands
(only the task's own change), how (squash, rebase, merge), and every refusal changing nothing."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from boardlib import Board, BoardError, Reason
from boardlib.events import EventKind
from boardlib.narration import narrate
from boardlib.worktrees import SOR_FILES, Worktrees
from boardlib.worktrees.landing import (
    BUILT_AHEAD,
    FAILED_AHEAD,
    Lander,
    LandingPreview,
    LandResult,
    fence_ref,
)
from boardlib.worktrees.results import DONE_SYNC, REVIEW_SYNC
from tests.worktrees.conftest import GIT_ENV, LandEnv, checkout_state, git, git_runs, make_repo

ANSWER = "def answer():\n    return 43\n"


def tree_names(repo: Path, rev: str) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", rev).splitlines()


def parents(repo: Path, rev: str) -> list[str]:
    return git(repo, "rev-list", "--parents", "-n", "1", rev).split()[1:]


def board_snapshot(land: LandEnv, task_id: str) -> tuple[object, ...]:
    """The task row, its events, comments and audit, and the landing queue."""
    return (
        land.board.get_task(task_id).to_json(),
        [event.to_json() for event in land.board.events(task_id=task_id)],
        [comment.to_json() for comment in land.board.comments(task_id)],
        [entry.to_json() for entry in land.board.audit(task_id)],
        [entry.to_json() for entry in land.trees.lander().queue.all_entries()],
    )


def refused(land: LandEnv, task_id: str, reason: Reason, **kwargs) -> BoardError:
    """Land and expect `reason`, with the repository and the board exactly as they were."""
    before = checkout_state(land.repo), board_snapshot(land, task_id)
    with pytest.raises(BoardError) as caught:
        land.trees.land(task_id, **{"actor": "bob", **kwargs})
    assert caught.value.reason == reason, caught.value.to_dict()
    assert (checkout_state(land.repo), board_snapshot(land, task_id)) == before
    return caught.value


# -- what lands ----------------------------------------------------------------------------------


def test_a_done_task_lands_as_one_commit_with_only_its_own_change(land: LandEnv) -> None:
    task_id, path = land.task_with({"app.py": ANSWER, "docs/notes.md": "notes\n"})
    (path / "TASK.md").write_text("an agent rewrote its bookkeeping\n")  # never lands
    tip = land.main()
    result = land.trees.land(task_id, actor="bob")
    assert result.landed and not result.dry_run and result.builds == 1
    head = land.main()
    assert head == result.commit and parents(land.repo, head) == [tip]
    message = git(land.repo, "log", "-1", "--format=%B", head)
    assert message.startswith(f"Change the answer ({task_id})\n")
    assert f"Kanban-Task: {task_id}" in message
    names = tree_names(land.repo, head)
    assert "docs/notes.md" in names and not set(SOR_FILES) & set(names)
    assert sorted(result.files) == ["app.py", "docs/notes.md"]
    # The user's checkout of main came along, clean.
    assert result.checkouts == [str(land.repo)]
    assert (land.repo / "app.py").read_text() == ANSWER
    assert git(land.repo, "status", "--porcelain") == ""
    task = land.board.get_task(task_id)
    assert task.status == "done"
    assert (task.landed_commit, task.landed_into, task.landed_by, task.landed_strategy) == (
        head, "main", "bob", "squash",
    )  # fmt: skip
    assert task.landed_at is not None
    doc = task.to_json()
    assert doc["landedCommit"] == head and doc["landedStrategy"] == "squash"
    [event] = [e for e in land.board.events(task_id=task_id) if e.kind == EventKind.TASK_LANDED]
    assert event.actor == "bob" and event.data["landedCommit"] == head
    assert "to" not in event.data  # it was done already: the status did not move
    assert [a.action for a in land.board.audit(task_id)][-1] == "land"
    # Archived: the checkout and the task branch are gone, the workspace says so.
    assert result.archived and not path.exists()
    assert land.trees.detail(task_id).checkout.summary == (
        f"worktree and branch kanban/task-{task_id} removed (landed as {head[:7]} on main)"
    )  # not "an empty diff": found in the drawer
    assert git(land.repo, "branch", "--list", f"kanban/task-{task_id}") == ""
    assert land.board.workspaces(task_id)[-1].status == "archived"
    assert git(land.repo, "for-each-ref", "refs/kanban") == ""  # no fence left behind
    assert land.board.store.read(lambda tx: tx.land_queue_all()) == []


# A verified squash landing onto a checked-out base, once the lander's process is warm: git runs
# it cannot avoid (build, checks of the checkout before and after verifying, the move, bringing
# the checkout along and clearing the mark that it was behind meanwhile, cleaning the scratch,
# archiving, and which board made the task's branch, so a board never lands another's work: read
# from the lookup process, git asked only when its history is not a plain line down to the
# task's scaffold; what trees differ in is read there too). It took 26 before they were counted.
GIT_RUNS_PER_LANDING = 19


def test_a_landing_runs_few_git_processes(land: LandEnv) -> None:
    """Found by the landing benchmark (issue 23's target): each git process costs a landing about
    3 ms, and a landing ran 26 where a bare merge-tree + commit-tree + update-ref loop runs 3."""
    first, _ = land.task_with({"app.py": ANSWER})
    second, _ = land.task_with({"docs/notes.md": "notes\n"})
    land.trees.land(first, actor="bob")  # starts the kept lookup process, makes the scratch
    with git_runs() as runs:
        result = land.trees.land(second, actor="bob")
    assert result.landed and result.archived and result.verification is not None
    assert len(runs) <= GIT_RUNS_PER_LANDING, "\n".join(" ".join(run) for run in runs)
    assert git(land.repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("strategy", ["squash", "merge"])
def test_the_check_before_queueing_makes_no_commit_a_moved_branch_throws_away(
    land: LandEnv, strategy: str
) -> None:
    """Found by counting a landing's git runs: the build checked before queueing (a conflict, a
    checkout in the way) was made a commit (`commit-tree`, one git run; two for a merge), then
    thrown away whenever the branch moved while the landing waited, as it does behind every
    landing ahead (benchmarks/land.py: 19 of 20 landings built again on the commit ahead). Its
    tree is enough for those checks; the commit is made in the turn, on the tip it lands on."""
    task_id, _ = land.task_with({"app.py": ANSWER})
    moved: list[str] = []

    def on_step(step: str, _info: dict[str, object]) -> None:
        if step == "joined":  # queued: the branch moves before the turn
            moved.append(land.commit_on_main("docs/news.md", "main moves on\n"))

    with git_runs() as runs:
        result = land.trees.lander(on_step=on_step).land(task_id, actor="bob", strategy=strategy)
    assert result.landed and result.builds == 1 and result.base_before == moved[0]
    assert parents(land.repo, result.commit)[0] == moved[0]
    made = [run for run in runs if "commit-tree" in run]
    # the change as the side every build merges (the fence), then the landed commit (a merge's
    # side commit too)
    assert len(made) == (3 if strategy == "merge" else 2), made


def test_a_lander_process_imports_no_model_to_run_a_verify_command(
    land: LandEnv, board_path: Path
) -> None:
    """Found by the landing benchmark: importing the pydantic models (only to hold how the verify
    command ended) was about 135 ms of a lander process's first landing."""
    task_id, _ = land.task_with({"app.py": ANSWER})
    script = (
        "import json, sys\n"
        "from boardlib import Board\n"
        "from boardlib.worktrees import Worktrees\n"
        f"with Board({str(board_path)!r}) as board:\n"
        f"    result = Worktrees(board).land({task_id!r}, actor='bob')\n"
        "print(json.dumps([result.landed, result.verification is not None,"
        " sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic')[:3]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == [True, True, []], done.stdout + done.stderr


def test_a_land_run_from_a_git_hook_works_on_its_own_folders_not_the_hooks_repository(
    land: LandEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an adversarial review: a git hook sets GIT_DIR (and may set GIT_WORK_TREE) for
    what it runs, and every git the landing started obeyed it: the scratch checkout's `git init`
    re-initialised the user's repository and the landing died untyped (FileNotFoundError). git
    now runs without a caller's location variables, in the folder it is run in."""
    task_id, _ = land.task_with({"app.py": ANSWER})
    config = (land.repo / ".git" / "config").read_bytes()
    monkeypatch.setenv("GIT_DIR", str(land.repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(land.repo))
    monkeypatch.setenv("GIT_INDEX_FILE", str(land.repo / ".git" / "index"))
    result = land.trees.land(task_id, actor="bob")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert result.landed and result.verification is not None
    assert git(land.repo, "show", "main:app.py") == ANSWER.rstrip("\n")
    assert (land.repo / "app.py").read_text() == ANSWER  # the checkout of main came along
    assert git(land.repo, "status", "--porcelain") == ""
    assert (land.repo / ".git" / "config").read_bytes() == config


def test_a_caller_pointing_git_at_another_repository_provisions_and_lands_the_given_one(
    land: LandEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding the work tree around a path (gitpython) obeyed a caller's GIT_WORK_TREE while every
    git the board ran dropped it: given a repository's git folder from a git hook of another
    repository, provision took that other one's work tree for the given repository's and made the
    task's worktree there. git is asked, without the caller's location variables, as everywhere: a
    git folder is no work tree (as git says)."""
    other = make_repo(land.tmp / "other")
    untouched = checkout_state(other), git(other, "worktree", "list", "--porcelain")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    task = land.board.create_task("Change the answer", description="A test change.")
    land.board.claim(task.id, "alice")
    with pytest.raises(BoardError) as caught:
        land.trees.provision(task.id, land.repo / ".git")
    assert caught.value.reason == Reason.INVALID_INPUT, caught.value.to_dict()
    task_id, _ = land.task_with({"app.py": ANSWER})
    [workspace] = land.board.workspaces(task_id)
    assert Path(workspace.repo_path) == land.repo.resolve()
    result = land.trees.land(task_id, actor="bob")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert result.landed and git(land.repo, "show", "main:app.py") == ANSWER.rstrip("\n")
    assert (checkout_state(other), git(other, "worktree", "list", "--porcelain")) == untouched


def test_approve_and_land_from_review_lands_exactly_what_the_drawer_shows(land: LandEnv) -> None:
    # The work is uncommitted (and partly untracked) in the worktree, as the diff shows it.
    task_id, _ = land.task_with(
        {"app.py": ANSWER, "new.txt": "new\n"}, finish="review", commit=False
    )
    detail = land.trees.detail(task_id)
    assert {f.path for f in detail.diff_files} == {"app.py", "new.txt"}
    before = [e.seq for e in land.board.events(task_id=task_id)]
    result = land.trees.land(task_id, actor="bob")
    task = result.task
    assert task.status == "done" and task.landed_by == "bob"
    assert json.loads(task.verification)["reviews"][-1]["reviewer"] == "bob"
    new_events = [e for e in land.board.events(task_id=task_id) if e.seq > before[-1]]
    landed = [e for e in new_events if e.kind == EventKind.TASK_LANDED]
    assert len(landed) == 1 and (landed[0].data["from"], landed[0].data["to"]) == (
        "in_review", "done",
    )  # fmt: skip
    assert not [e for e in new_events if e.kind == "status_changed"]  # one event, the landing
    assert sorted(result.files) == ["app.py", "new.txt"]
    assert git(land.repo, "show", "main:new.txt") == "new"


def test_the_repositorys_own_bookkeeping_named_files_stay_as_main_has_them(
    land: LandEnv,
) -> None:
    land.commit_on_main("init.sh", "#!/bin/sh\necho the project's own\n")
    task_id, _ = land.task_with({"app.py": ANSWER})
    land.trees.land(task_id, actor="bob")
    assert git(land.repo, "show", "main:init.sh") == "#!/bin/sh\necho the project's own"
    assert "TASK.md" not in tree_names(land.repo, "main")


def test_rebase_replays_each_commit_and_merge_keeps_a_side_branch(land: LandEnv) -> None:
    first, path = land.task_with({"a.txt": "a\n"}, finish="none")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "add a")
    (path / "b.txt").write_text("b\n")
    land.trees.complete(first, "alice")
    land.commit_on_main("other.txt", "moved\n")
    tip = land.main()
    result = land.trees.land(first, actor="bob", strategy="rebase")
    log = git(land.repo, "log", "--format=%s", f"{tip}..main").splitlines()
    assert len(log) == 2 and log[-1] == "add a"  # each commit, oldest first
    assert git(land.repo, "rev-list", "--merges", "main") == ""
    for commit in git(land.repo, "rev-list", f"{tip}..main").split():
        assert not set(SOR_FILES) & set(tree_names(land.repo, commit))
    assert result.strategy == "rebase" and land.board.get_task(first).landed_strategy == "rebase"

    second, _ = land.task_with({"c.txt": "c\n"})
    result = land.trees.land(second, actor="bob", strategy="merge")
    merge_parents = parents(land.repo, "main")
    assert len(merge_parents) == 2 and merge_parents[0] == result.base_before
    subject = git(land.repo, "log", "-1", "--format=%s", "main")
    assert subject == f"Merge {second}: Change the answer"
    assert not set(SOR_FILES) & set(tree_names(land.repo, merge_parents[1]))


@pytest.mark.parametrize(
    "title",
    [
        "--force\nKanban-Task: TASK-999\n\x1b]52;c;aGk=\x07",
        "-m evil",
        "\x1b[2J\x07\r",
        "x" * 500,
    ],
)
def test_hostile_titles_make_one_inert_subject_line(land: LandEnv, title: str) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER}, title=title)
    result = land.trees.land(task_id, actor="bob")
    subject, _, body = git(land.repo, "log", "-1", "--format=%B", result.commit).partition("\n")
    assert subject.endswith(f"({task_id})") and len(subject) <= 220
    assert not any(ord(char) < 32 for char in subject)
    assert body.count("Kanban-Task:") == 1 and f"Kanban-Task: {task_id}" in body


def test_into_another_branch_and_keep_leave_the_worktree(land: LandEnv) -> None:
    git(land.repo, "branch", "release")
    task_id, path = land.task_with({"app.py": ANSWER})
    result = land.trees.land(task_id, actor="bob", into="release", keep=True)
    assert result.into == "release" and git(land.repo, "rev-parse", "release") == result.commit
    assert result.checkouts == [] and not result.archived
    assert path.is_dir() and git(land.repo, "branch", "--list", f"kanban/task-{task_id}") != ""
    assert land.board.get_task(task_id).landed_into == "release"
    other, _ = land.task_with({"app.py": ANSWER})
    for into in ("main~1", "main..x", "-x", "@{-1}"):  # the refusal names its own field
        error = refused(land, other, Reason.INVALID_INPUT, into=into)
        assert error.details["field"] == "into" and error.message.startswith("into "), into


def test_dry_run_builds_and_verifies_and_changes_nothing(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER}, verify="grep -q 43 app.py")
    before = checkout_state(land.repo), board_snapshot(land, task_id)
    result = land.trees.land(task_id, actor="bob", dry_run=True)
    assert result.dry_run and not result.landed and result.commit
    assert result.verification and result.verification["exitCode"] == 0
    assert result.files == ["app.py"]
    assert (checkout_state(land.repo), board_snapshot(land, task_id)) == before


def test_a_landing_behind_one_landed_unverified_verifies_ahead_on_its_build(
    land: LandEnv, board_path: Path
) -> None:
    """Found by the landing benchmark's review: a landing with no verify command (an operator's
    override) never said which commit it would land, so the landing waiting behind it could not
    verify ahead on it and verified only once its turn came."""
    first, _ = land.task_with({"first.txt": "1\n"}, verify=None, finish="review")
    second, _ = land.task_with({"second.txt": "2\n"})
    in_turn, verified_ahead = threading.Event(), threading.Event()
    answers: dict[str, LandResult] = {}

    def holds_its_turn(step: str, _info: dict[str, object]) -> None:
        if step == "built":  # built, in its turn: the landing behind it joins now
            in_turn.set()
            verified_ahead.wait(timeout=10)

    def lands_unverified() -> None:
        with Board(board_path) as board:
            lander = Worktrees(board).lander(on_step=holds_its_turn)
            answers[first] = lander.land(
                first, actor="operator", allow_unverified=True, unverified_reason="no tests"
            )

    steps: list[str] = []

    def hears(step: str, _info: dict[str, object]) -> None:
        steps.append(step)
        if step == "verified_ahead":
            verified_ahead.set()

    thread = threading.Thread(target=lands_unverified)
    thread.start()
    try:
        assert in_turn.wait(timeout=60)
        result = land.trees.lander(on_step=hears).land(second, actor="bob")
    finally:
        verified_ahead.set()
        thread.join(timeout=60)
    assert answers[first].unverified and result.base_before == answers[first].commit
    assert "verified_ahead" in steps, steps
    assert result.verification is not None and result.verification["commit"] == result.commit
    assert result.verified_ahead and result.to_json()["verifiedAhead"] is True
    assert not answers[first].verified_ahead  # nothing ahead of it; nothing verified either


def test_a_scratch_checkout_verified_ahead_in_is_clean_when_given_up(
    land: LandEnv, board_path: Path
) -> None:
    """Found by counting a landing's git runs: a scratch checkout a waiting landing verified in
    was cleaned only after that landing's turn, so the next guess there (often another
    lander's, in benchmarks/land.py) found it used and cleaned it first, listing its index in
    a git run of its own (`ls-files`: the checkout was another process's). It is cleaned while
    its landing waits, before it is given up."""
    first, _ = land.task_with({"first.txt": "1\n"}, verify=None, finish="review")
    second, _ = land.task_with({"second.txt": "2\n"}, verify="touch left-over.txt")
    in_turn, verified_ahead = threading.Event(), threading.Event()
    scratch = land.trees.layout.repo_dir(land.repo) / ".land"
    found: list[list[str]] = []

    def holds_its_turn(step: str, _info: dict[str, object]) -> None:
        if step == "built":  # built, in its turn: the landing behind it joins now
            in_turn.set()
            verified_ahead.wait(timeout=10)

    def lands_unverified() -> None:
        with Board(board_path) as board:
            lander = Worktrees(board).lander(on_step=holds_its_turn)
            lander.land(first, actor="operator", allow_unverified=True, unverified_reason="x")

    def hears(step: str, _info: dict[str, object]) -> None:
        if step == "verified_ahead":  # still waiting: the first holds its turn
            found.append(sorted(
                str(path.relative_to(scratch))
                for path in [*scratch.glob("*.used"), *scratch.glob("*/left-over.txt")]
            ))  # fmt: skip
            verified_ahead.set()

    thread = threading.Thread(target=lands_unverified)
    thread.start()
    try:
        assert in_turn.wait(timeout=60)
        result = land.trees.lander(on_step=hears).land(second, actor="bob")
    finally:
        verified_ahead.set()
        thread.join(timeout=60)
    assert result.verified_ahead and found == [[]]


def test_an_operator_may_land_without_a_verify_command_audited(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER}, verify=None, finish="review")
    error = refused(land, task_id, Reason.VERIFICATION_REQUIRED)
    assert "allowUnverified" in error.message
    # operator_only, as a budget is (it was invalid_input)
    error = refused(land, task_id, Reason.OPERATOR_ONLY, allow_unverified=True)
    # A reason goes with the override, and is text.
    refused(land, task_id, Reason.INVALID_INPUT, actor="operator", unverified_reason="hotfix")
    refused(land, task_id, Reason.INVALID_INPUT, actor="operator", allow_unverified=True,
            unverified_reason=["hotfix"])  # fmt: skip
    result = land.trees.land(
        task_id, actor="operator", allow_unverified=True, unverified_reason="hotfix\x1b[2J now"
    )
    assert result.landed and result.unverified and result.verification is None
    audit = land.board.audit(task_id)
    assert [a.action for a in audit][-2:] == ["land", "land_unverified"]
    assert "why: hotfix" in str(audit[-1].to_json())
    [landed] = [e for e in land.board.events(task_id=task_id) if e.kind == EventKind.TASK_LANDED]
    # the history says so, with the operator's reason (found in tmux: it was only in the audit)
    told = narrate(landed)
    assert "unverified (no verify command; why: hotfix\u241b[2J now)" in told and "\x1b" not in told
    assert "landed without verification by operator: no verify command; why: hotfix" in str(
        audit[-1].to_json()
    )
    # Stop 47's list: the verdict read a bare `pass`, as if a verify command had run. The pass
    # is the approver's, and its review says the landing was unverified.
    review = json.loads(land.board.get_task(task_id).verification or "{}")["reviews"][-1]
    assert review["decision"] == "approve" and "unverified" in review["reason"]


# -- refusals change nothing ---------------------------------------------------------------------


def test_builders_may_not_land_their_own_work_operators_may(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER}, finish="review")
    refused(land, task_id, Reason.SELF_REVIEW, actor="alice")
    done_id, _ = land.task_with({"b.txt": "b\n"}, builder="carol")
    refused(land, done_id, Reason.SELF_REVIEW, actor="carol")
    assert land.trees.land(done_id, actor="operator:dana").landed


def refused_and_previewed(land: LandEnv, task_id: str) -> str:
    """The landing's refusal, and the preview saying the same (the preview called a cancelled,
    dropped or unfinished task's work "lands cleanly")."""
    why = str(refused(land, task_id, Reason.NOT_LANDABLE).details["why"])
    preview = land.trees.landing_preview(task_id)
    assert (preview.state, preview.why) == ("unavailable", why), preview.to_json()
    return why


def test_what_is_not_landable_says_why(land: LandEnv) -> None:
    todo = land.board.create_task("not started")
    assert refused_and_previewed(land, todo.id) == "not_reviewed"
    working, _ = land.task_with({"app.py": ANSWER}, finish="none")
    assert refused_and_previewed(land, working) == "not_reviewed"
    land.board.cancel(working, reason="changed my mind")
    assert refused_and_previewed(land, working) == "not_reviewed"
    approved, _ = land.task_with({"app.py": ANSWER})
    land.board.drop(approved)
    assert refused_and_previewed(land, approved) == "dropped"
    bare = land.board.create_task("reviewed, no worktree")
    land.board.claim(bare.id, "alice")
    land.board.complete(bare.id, "alice")
    assert refused_and_previewed(land, bare.id) == "no_worktree"
    empty, _ = land.task_with({"task-progress.md": "## Done\n- nothing\n"}, finish="review")
    assert refused_and_previewed(land, empty) == "empty"
    # an empty complete removes the worktree and branch: the landing says empty, not "gone"
    nothing, _ = land.task_with({})
    removed = refused(land, nothing, Reason.NOT_LANDABLE)
    assert removed.details["why"] == "empty" and "found no change" in removed.message
    assert land.trees.landing_preview(nothing).why == "empty"
    done, _ = land.task_with({"app.py": ANSWER})
    first = land.trees.land(done, actor="bob")
    again = refused(land, done, Reason.NOT_LANDABLE)
    assert again.details["why"] == "already_landed"
    assert again.to_dict()["landedCommit"] == first.commit


def test_landing_what_changed_since_the_preview_is_refused(land: LandEnv) -> None:
    task_id, path = land.task_with({"app.py": ANSWER}, finish="review", commit=False)
    preview = land.trees.landing_preview(task_id)
    (path / "app.py").write_text("def answer():\n    return 44\n")
    error = refused(land, task_id, Reason.NOT_LANDABLE, expect_source=preview.source_tree)
    assert error.details["why"] == "changed_since_review"
    fresh = land.trees.landing_preview(task_id)
    assert land.trees.land(task_id, actor="bob", expect_source=fresh.source_tree).landed


def test_a_conflicting_pair_lands_one_then_the_other_after_a_sync(land: LandEnv) -> None:
    first, _ = land.task_with({"app.py": ANSWER})
    other = {"app.py": "def answer():\n    return 44\n"}
    second, path = land.task_with(other, finish="review", verify="grep -q answer app.py")
    land.trees.land(first, actor="bob")
    tip = land.main()
    preview = land.trees.landing_preview(second)
    assert (preview.state, preview.conflicts, preview.behind) == ("conflicts", ["app.py"], 1)
    assert "conflicts with main in app.py" in preview.summary
    error = refused_with_comment(land, second)
    assert error.details["files"] == ["app.py"] and land.main() == tip
    # The agent takes it back, syncs, sees the conflict in its worktree and resolves it.
    land.board.reject(second, "bob", "conflicts with main")
    land.board.claim(second, "alice")
    with pytest.raises(BoardError) as caught:
        land.trees.sync(second, actor="alice")
    assert caught.value.reason == Reason.MERGE_CONFLICT
    assert caught.value.details["files"] == ["app.py"]
    assert "<<<<<<<" in (path / "app.py").read_text()
    (path / "app.py").write_text("def answer():\n    return 44  # after 43\n")
    done = land.trees.complete(second, "alice")
    assert done.task_status == "done"
    assert land.trees.landing_preview(second).state == "clean"
    result = land.trees.land(second, actor="bob")
    assert parents(land.repo, result.commit) == [tip]
    assert git(land.repo, "show", "main:app.py").endswith("return 44  # after 43")
    assert "<<<<<<<" not in git(land.repo, "show", "main:app.py")


def test_handed_in_work_is_synced_by_an_operator_only(land: LandEnv) -> None:
    """The builder synced its approved (done) task, the sync said "resolve them, then complete
    again", complete refused (done), and the resolution it wrote landed without review. An agent may
    not sync work in review or done; an operator may, and is told to land again."""
    first, _ = land.task_with({"app.py": ANSWER})
    second, path = land.task_with({"app.py": "def answer():\n    return 44\n"})  # done
    land.trees.land(first, actor="bob")
    before = checkout_state(path), land.board.get_task(second)
    with pytest.raises(BoardError) as caught:
        land.trees.sync(second, actor="alice")  # its builder, who holds it no more
    assert caught.value.reason == Reason.INVALID_STATE and "handed in" in caught.value.message
    assert (checkout_state(path), land.board.get_task(second)) == before
    with pytest.raises(BoardError) as caught:
        land.trees.sync(second, actor="operator")
    assert caught.value.reason == Reason.MERGE_CONFLICT
    assert caught.value.message.endswith("resolve them, then land again")


def test_a_conflict_says_who_may_sync_handed_in_work(land: LandEnv) -> None:
    """Landing conflicting done work over HTTP or the CLI said "a sync of the worktree with the base
    lets them be resolved", where an agent's sync of done work (or work in review) is refused: the
    refusal says whose sync it is, in the words the MCP hint says (`_DONE_CONFLICT` imports
    them)."""
    first, _ = land.task_with({"app.py": ANSWER})
    done, _ = land.task_with({"app.py": "def answer():\n    return 44\n"})
    review, _ = land.task_with({"app.py": "def answer():\n    return 45\n"}, finish="review")
    land.trees.land(first, actor="bob")
    assert refused(land, done, Reason.MERGE_CONFLICT).message.endswith(f"resolved, and {DONE_SYNC}")
    assert refused_with_comment(land, review).message.endswith(f"resolved, and {REVIEW_SYNC}")


def conflicted_after_sync(land: LandEnv, strategy: str = "merge") -> tuple[str, Path, str]:
    """A task whose sync stopped on a conflict in app.py, left in its worktree; main's tip."""
    first, _ = land.task_with({"app.py": ANSWER})
    second, path = land.task_with({"app.py": "def answer():\n    return 44\n"}, finish="none")
    land.trees.land(first, actor="bob")
    with pytest.raises(BoardError) as caught:
        land.trees.sync(second, actor="alice", strategy=strategy)
    assert caught.value.reason == Reason.MERGE_CONFLICT
    assert "<<<<<<<" in (path / "app.py").read_text()
    return second, path, land.main()


def test_a_conflict_left_unresolved_is_never_completed_paused_or_landed(land: LandEnv) -> None:
    """Found by hand: `git add --all` took the file with git's markers in it, so completing,
    pausing or landing a worktree mid-merge committed them, and landed them on main."""
    task_id, path, tip = conflicted_after_sync(land)
    before = checkout_state(path), checkout_state(land.repo)
    for verb, attempt in (
        ("complete", lambda: land.trees.complete(task_id, "alice")),
        ("pause", lambda: land.trees.pause(task_id, actor="alice")),
    ):
        with pytest.raises(BoardError) as caught:
            attempt()
        assert caught.value.reason == Reason.MERGE_CONFLICT, verb
        assert caught.value.details["files"] == ["app.py"]
        assert caught.value.details["why"] == "unresolved"
        assert (checkout_state(path), checkout_state(land.repo)) == before, verb
    land.board.complete(task_id, "alice")  # in review on the board alone: the merge is open
    preview = land.trees.landing_preview(task_id)
    assert (preview.state, preview.why) == ("unavailable", "unresolved")
    assert "unresolved conflicts in app.py" in preview.summary
    refused(land, task_id, Reason.MERGE_CONFLICT)
    assert checkout_state(path) == before[0] and land.main() == tip
    # Edited clean (not even `git add`ed): resolved, and it lands without a marker.
    (path / "app.py").write_text("def answer():\n    return 44  # after 43\n")
    assert land.trees.landing_preview(task_id).state == "clean"
    result = land.trees.land(task_id, actor="bob")
    assert parents(land.repo, result.commit) == [tip]
    assert "<<<<<<<" not in git(land.repo, "show", "main:app.py")


def test_the_lease_protocols_complete_of_work_in_a_worktree_is_refused_for_the_gate(
    land: LandEnv,
) -> None:
    """The lease protocol's complete (CLI, HTTP, MCP) put a worktree's work in review with no gate
    run, where a reviewer took it for verified (and one holding git's markers too). It is refused
    `gate_required` now, changing nothing, whatever the checkout holds; `complete` runs the gate."""
    task_id, path, _ = conflicted_after_sync(land)
    before = checkout_state(path), board_snapshot(land, task_id)
    with pytest.raises(BoardError) as caught:
        land.trees.complete_lease(task_id, "alice", summary="done")
    assert caught.value.reason == Reason.GATE_REQUIRED
    assert caught.value.details["use"] == "workspace complete"
    assert (checkout_state(path), board_snapshot(land, task_id)) == before
    with pytest.raises(BoardError) as caught:  # not the holder: the board's own refusal first
        land.trees.complete_lease(task_id, "bob")
    assert caught.value.reason == Reason.NOT_ASSIGNEE
    (path / "app.py").write_text("def answer():\n    return 44  # after 43\n")  # edited clean
    with pytest.raises(BoardError) as caught:
        land.trees.complete_lease(task_id, "alice")
    assert caught.value.reason == Reason.GATE_REQUIRED
    assert land.board.get_task(task_id).status == "in_progress"
    assert land.trees.complete(task_id, "alice").gate_ran  # the gate judges it


def test_a_rebase_stopped_on_a_conflict_is_named_not_taken_for_a_detached_head(
    land: LandEnv,
) -> None:
    task_id, path, tip = conflicted_after_sync(land, strategy="rebase")
    before = checkout_state(path), checkout_state(land.repo)
    with pytest.raises(BoardError) as caught:
        land.trees.complete(task_id, "alice")
    assert caught.value.reason == Reason.INVALID_STATE
    assert "a rebase is under way" in caught.value.message
    assert caught.value.details["files"] == ["app.py"]
    land.board.complete(task_id, "alice")
    assert "a rebase is under way" in land.trees.landing_preview(task_id).summary
    error = refused(land, task_id, Reason.INVALID_STATE)
    assert "git rebase --continue" in error.message
    assert (checkout_state(path), checkout_state(land.repo)) == before and land.main() == tip


@pytest.mark.parametrize("actor", ["", "ev\x1b[2Jil", 0])
def test_a_sync_by_a_bad_actor_is_refused_before_anything_is_merged(
    land: LandEnv, actor: object
) -> None:
    """Found by tests/chaos/test_fuzz_worktrees.py: sync committed the work and merged the base
    in, then refused the actor when it recorded the workspace (or raised AttributeError)."""
    task_id, path = land.task_with({"extra.py": "x = 1\n"}, finish="none")
    land.commit_on_main("other.py", "y = 2\n")
    before = (checkout_state(path), checkout_state(land.repo))
    with pytest.raises(BoardError) as refused:
        land.trees.sync(task_id, actor=actor)  # type: ignore[arg-type]
    assert refused.value.reason == Reason.INVALID_INPUT
    assert (checkout_state(path), checkout_state(land.repo)) == before


def refused_with_comment(land: LandEnv, task_id: str) -> BoardError:
    """An approve-and-land that fails at the merge: the repository untouched, the task still in
    review, one system comment saying why, and no queue row left."""
    before = checkout_state(land.repo)
    with pytest.raises(BoardError) as caught:
        land.trees.land(task_id, actor="bob")
    assert caught.value.reason == Reason.MERGE_CONFLICT
    assert checkout_state(land.repo) == before
    task = land.board.get_task(task_id)
    assert task.status == "in_review" and task.landed_commit is None
    [comment] = [c for c in land.board.comments(task_id) if c.author_type == "system"]
    assert "did not land" in comment.body and "app.py" in comment.body
    assert land.board.store.read(lambda tx: tx.land_queue_all()) == []
    return caught.value


def test_verification_failing_on_the_merged_tree_refuses_and_leaves_main(land: LandEnv) -> None:
    # The gate passes on the branch; main then gains a file the change does not cope with.
    task_id, _ = land.task_with({"app.py": ANSWER}, verify="test ! -e BROKEN")
    land.commit_on_main("BROKEN", "main broke the assumption\n")
    error = refused(land, task_id, Reason.VERIFICATION_FAILED)
    assert error.details["exit_code"] == 1 and error.details["command"] == "test ! -e BROKEN"
    assert "stderr_tail" in error.details and "stdout_tail" in error.details


def test_git_run_by_a_verify_command_stays_in_the_scratch_checkout(land: LandEnv) -> None:
    """The scratch checkout is a repository of its own that borrows the user's objects: found by
    reading, a verify command that ran `git config` or `git update-ref` in a linked scratch
    worktree wrote the user's shared config and refs. Here it writes the scratch's, lands, and
    the user's repository gains only the landed commit."""
    meddle = (
        'if [ -n "$KANBAN_LANDING" ]; then git config user.name meddler && git tag meddled '
        "&& git branch meddled && git update-ref refs/heads/main HEAD~1 "
        "&& git log -1 --format=%H HEAD~1 >/dev/null; fi"
    )
    task_id, _ = land.task_with({"app.py": ANSWER}, verify=meddle)
    config = (land.repo / ".git" / "config").read_bytes()
    refs = ["for-each-ref", "--format=%(refname)"]
    before = set(git(land.repo, *refs).split())
    result = land.trees.land(task_id, actor="bob")
    assert result.landed and land.main() == result.commit
    assert (land.repo / ".git" / "config").read_bytes() == config
    assert set(git(land.repo, *refs).split()) < before  # the task branch went, nothing came
    assert "/.land/" not in git(land.repo, "worktree", "list", "--porcelain")


# What a verify command's git may leave in its scratch repository that changes the files the
# next landing's checkout there writes.
MEDDLING = {
    "skip_worktree": "echo meddled > README.md && git update-index --skip-worktree README.md",
    "sparse_checkout": "git sparse-checkout set --no-cone /README.md",
    "autocrlf": "git config core.autocrlf true",
    # the marker beside the scratch is writable by the command: naming its meddled index there
    # must not pass for the index the checkout wrote
    "skip_worktree_marker_forged": "echo meddled > README.md && git update-index "
    '--skip-worktree README.md && sha256sum .git/index | cut -d " " -f 1 > "$PWD.used"',
}
# Fails unless every file of the commit is on disk with the commit's very bytes.
EXACT_TREE = (
    'if [ -n "$KANBAN_LANDING" ]; then for f in $(git ls-tree -r --name-only HEAD); do '
    '[ "$(git hash-object --no-filters "$f")" = "$(git rev-parse "HEAD:$f")" ] || exit 1; done; fi'
)


@pytest.mark.parametrize("case", sorted(MEDDLING))
def test_the_next_landing_is_verified_on_its_own_tree_whatever_git_did_there(
    land: LandEnv, case: str
) -> None:
    """A verify command that marked a file skip-worktree after editing it (or made the scratch
    sparse, or set core.autocrlf) in its scratch checkout changed what the next landing verified
    there: `checkout --force` kept the edited file, the missing ones, the CRLF line ends. The next
    landing's verify command judged files its commit does not have. The scratch repository is put
    back as it was made first."""
    meddler, _ = land.task_with(
        {"first.txt": "one\n"}, verify=f'if [ -n "$KANBAN_LANDING" ]; then {MEDDLING[case]}; fi'
    )
    judged, _ = land.task_with({"second.txt": "two\n"}, verify=EXACT_TREE)
    assert land.trees.land(meddler, actor="bob").landed
    result = land.trees.land(judged, actor="bob")
    assert result.landed and result.verification is not None


# How a verify command's git could make the lander's next git run in its scratch repository read
# a config it wrote: the copy of the config as made, kept beside the checkout; a `commondir`
# naming a repository of its own.
CONFIG_REWRITES = {
    "config_as_made_rewritten": 'git config core.fsmonitor "$HOOK" && cp .git/config "$PWD.config"',
    "commondir": 'git init -q --bare "$PWD.evil" && git -C "$PWD.evil" config core.fsmonitor '
    '"$HOOK" && echo "$PWD.evil" > .git/commondir',
}


@pytest.mark.parametrize("case", sorted(CONFIG_REWRITES))
def test_a_config_a_verify_command_writes_runs_nothing_in_the_next_landing(
    land: LandEnv, tmp_path: Path, case: str
) -> None:
    """The scratch repository's config as made was kept in a file beside the checkout, where the
    verify command runs: one that rewrote it (and the config) with a `core.fsmonitor` had its
    command run by the next landing's git there, in the lander. The config as made is kept in the
    lander's memory now, and a `commondir` goes."""
    ran = tmp_path / "ran"
    hook = tmp_path / "fsmonitor.sh"  # a lander's git runs it; the verify command's own do not
    hook.write_text(f'#!/bin/sh\n[ -n "$KANBAN_LANDING" ] || echo "$PWD" >> {ran}\nexit 1\n')
    hook.chmod(0o755)
    meddle = f'if [ -n "$KANBAN_LANDING" ]; then HOOK={hook} && {CONFIG_REWRITES[case]}; fi'
    meddler, _ = land.task_with({"first.txt": "one\n"}, verify=meddle)
    judged, _ = land.task_with({"second.txt": "two\n"}, verify=EXACT_TREE)
    assert land.trees.land(meddler, actor="bob").landed
    result = land.trees.land(judged, actor="bob")
    assert result.landed and result.verification is not None
    assert not ran.exists(), ran.read_text()


def test_a_linked_scratch_checkout_left_by_an_older_version_is_replaced(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER})
    older = land.trees.layout.repo_dir(land.repo) / ".land" / "0"
    git(land.repo, "worktree", "add", "--detach", str(older), "main")
    assert land.trees.land(task_id, actor="bob").landed
    assert (older / ".git").is_dir() and (older / "app.py").read_text() == ANSWER
    assert "/.land/" not in git(land.repo, "worktree", "list", "--porcelain")


def test_a_dirty_checkout_of_main_is_refused_touching_nothing(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER})
    (land.repo / "README.md").write_text("# my uncommitted edit\n")
    (land.repo / "scratch.txt").write_text("an untracked note\n")
    error = refused(land, task_id, Reason.BASE_CHECKED_OUT_DIRTY)
    assert error.details["path"] == str(land.repo) and error.details["files"] == ["README.md"]
    git(land.repo, "checkout", "README.md")
    # An untracked file where the landing would put one is in the way too.
    other, _ = land.task_with({"new.txt": "from the task\n"})
    (land.repo / "new.txt").write_text("mine\n")
    error = refused(land, other, Reason.BASE_CHECKED_OUT_DIRTY)
    assert error.details["files"] == ["new.txt"]
    (land.repo / "new.txt").unlink()
    (land.repo / "new.txt").mkdir()  # a folder of untracked files where the file goes
    (land.repo / "new.txt" / "inner").write_text("mine\n")
    error = refused(land, other, Reason.BASE_CHECKED_OUT_DIRTY)
    assert error.details["files"] == ["new.txt"]  # git's words named none
    shutil.rmtree(land.repo / "new.txt")
    assert land.trees.land(other, actor="bob").landed
    assert (land.repo / "scratch.txt").read_text() == "an untracked note\n"  # left alone


@pytest.mark.parametrize("case", ["file_where_a_folder_goes", "skip_worktree", "assume_unchanged",
                                  "index_lock"])  # fmt: skip
def test_what_would_stop_main_coming_along_is_refused_before_main_moves(
    land: LandEnv, case: str
) -> None:
    """Found by hand: `git status` and a test of each added path saw none of these, so main moved
    and its checkout could not follow: HEAD on the landed commit over the old index, the user's
    next commit undoing the landing. A dry run of the same fast-forward sees them all."""
    task_id, _ = land.task_with({"build/x.txt": "x\n", "README.md": "# landed\n"})
    if case == "file_where_a_folder_goes":
        (land.repo / "build").write_text("an untracked file of mine\n")
        files = ["build"]
    elif case == "index_lock":
        (land.repo / ".git" / "index.lock").write_text("")  # another git command, or its crash
        files = [".git/index.lock"]
    else:
        (land.repo / "README.md").write_text("# my edit, hidden from git status\n")
        git(land.repo, "update-index", f"--{case.replace('_', '-')}", "README.md")
        assert git(land.repo, "status", "--porcelain") == ""
        files = ["README.md"]
    error = refused(land, task_id, Reason.BASE_CHECKED_OUT_DIRTY)
    assert error.details["files"] == files and error.details["path"] == str(land.repo)
    if case == "index_lock":  # "commit, stash or move them" helped nobody
        assert "wait for it to finish" in error.message and "commit, stash" not in error.message


def test_ignored_files_where_the_landing_puts_files_or_folders_are_refused(land: LandEnv) -> None:
    """Git's dry run passes over ignored files (read-tree -m -u takes them for disposable), so a
    person's ignored `.env` was overwritten by the task's and their ignored `build/` folder deleted
    for the task's `build` file, without a word."""
    land.commit_on_main(".gitignore", ".env\nbuild/\ncache\n", "ignore local files")
    task_id, _ = land.task_with(
        {".gitignore": "", ".env": "TEMPLATE=1\n", "build": "a file now\n", "cache/x": "x\n"}
    )
    (land.repo / ".env").write_text("SECRET=1\n")  # the person's own, ignored
    (land.repo / "build").mkdir()
    (land.repo / "build" / "out").write_text("an artifact\n")
    (land.repo / "cache").write_text("a cache file where the task puts a folder\n")
    assert git(land.repo, "status", "--porcelain") == ""
    error = refused(land, task_id, Reason.BASE_CHECKED_OUT_DIRTY)  # every file as it was
    assert error.details["files"] == [".env", "build", "cache"]
    assert "ignored ones included" in error.message
    # It said "git would not overwrite" and "would overwrite them without a word" at once; it says
    # what blocks and what to do, and stash (which leaves ignored files alone) is not it.
    assert "move or delete them, then land again" in error.message
    assert "would not overwrite" not in error.message and "stash" not in error.message
    for name in (".env", "build", "cache"):
        path = land.repo / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    assert land.trees.land(task_id, actor="bob").landed
    assert (land.repo / ".env").read_text() == "TEMPLATE=1\n"


def test_a_rebase_of_main_under_way_is_refused_and_can_go_on(land: LandEnv) -> None:
    """With a rebase of main stopped in its checkout (HEAD detached), main was moved under it and
    `git rebase --continue` then failed to lock main."""
    land.commit_on_main("one.txt", "1\n", "one")
    land.commit_on_main("two.txt", "2\n", "two")
    task_id, _ = land.task_with({"app.py": ANSWER})
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"}
    subprocess.run(
        ["git", "-C", str(land.repo), "rebase", "-q", "-i", "HEAD~2"], env=env, check=True,
        capture_output=True,
    )  # fmt: skip
    tip = land.main()
    error = refused(land, task_id, Reason.BASE_CHECKED_OUT_DIRTY)
    assert "a rebase of main is under way" in error.message and error.details["files"] == []
    git(land.repo, "rebase", "--continue")
    assert land.main() == tip  # the person's rebase finished on the branch it started from
    assert land.trees.land(task_id, actor="bob").landed


def test_an_edit_while_the_verify_command_runs_is_refused_before_main_moves(
    land: LandEnv,
) -> None:
    """The checkouts are checked again once verification is done, right before the branch
    moves: found by hand with a user editing during a long verify command."""
    edit = f'if [ -n "$KANBAN_LANDING" ]; then echo mine >> {land.repo}/README.md; fi; true'
    task_id, _ = land.task_with({"README.md": "# landed\n"}, verify=edit, finish="review")
    tip = land.main()
    with pytest.raises(BoardError) as caught:
        land.trees.land(task_id, actor="bob")
    assert caught.value.reason == Reason.BASE_CHECKED_OUT_DIRTY
    assert caught.value.details["files"] == ["README.md"]
    assert land.main() == tip and land.board.get_task(task_id).status == "in_review"
    assert (land.repo / "README.md").read_text() == "# project\nmine\n"  # the edit is kept
    assert git(land.repo, "diff", "--cached", "--name-only") == ""  # no landing half done


def test_a_repository_made_inside_the_worktree_is_not_landed_as_a_bare_pointer(
    land: LandEnv,
) -> None:
    """Found by hand: an agent cloned a dependency into vendor/; `git add` recorded it as a
    gitlink no `.gitmodules` declares, so main got a pointer to a commit it does not have and
    the files went with the archived worktree. Declared as a submodule, it lands."""
    task_id, path = land.task_with({"app.py": ANSWER}, finish="review")
    vendor = path / "vendor"
    vendor.mkdir()
    (vendor / "lib.txt").write_text("a library\n")
    git(vendor, "init", "-q")
    git(vendor, "add", "lib.txt")
    git(vendor, "-c", "user.name=a", "-c", "user.email=a@x", "commit", "-q", "-m", "vendored")
    preview = land.trees.landing_preview(task_id)
    assert (preview.state, preview.why) == ("unavailable", "embedded_repository")
    error = refused(land, task_id, Reason.NOT_LANDABLE)
    assert error.details["why"] == "embedded_repository" and error.details["files"] == ["vendor"]
    assert (vendor / "lib.txt").exists()  # the worktree, and the work in it, kept
    (path / ".gitmodules").write_text(
        '[submodule "vendor"]\n\tpath = vendor\n\turl = https://example.com/vendor.git\n'
    )
    # declared, its commit is still only in the worktree: refused until it is pushed
    error = refused(land, task_id, Reason.NOT_LANDABLE)
    assert error.details["why"] == "submodule_commit_unpublished"
    remote = land.tmp / "vendor.git"
    git(land.tmp, "init", "-q", "--bare", str(remote))
    git(vendor, "remote", "add", "origin", str(remote))
    git(vendor, "push", "-q", "origin", "HEAD:refs/heads/main")
    assert land.trees.land(task_id, actor="bob", keep=True).landed
    assert git(land.repo, "ls-tree", "main", "vendor").startswith("160000 commit")


def test_a_submodule_bump_lands_and_its_checkout_comes_along(land: LandEnv) -> None:
    """A task that moved a submodule landed, but the user's checkout kept the submodule's files at
    the old commit (` M lib`), and every later landing into main was refused base_checked_out_dirty
    until `git submodule update`. The submodule comes along when its commit is there (never
    fetched), else a warning says what to run (its path quoted: a path in the repository is anyone's
    word); a submodule's pointer alone never makes the checkout dirty for a landing."""
    lib = "the lib"  # a path a shell splits in two unless it is quoted
    allow = ("-c", "protocol.file.allow=always")
    upstream = land.tmp / "lib-upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    (upstream / "lib.txt").write_text("v1\n")
    git(upstream, "add", "lib.txt")
    git(upstream, "-c", "user.name=a", "-c", "user.email=a@x", "commit", "-q", "-m", "v1")
    git(land.repo, *allow, "submodule", "add", "-q", str(upstream), lib)
    git(land.repo, "commit", "-q", "-m", "the lib submodule")
    (upstream / "lib.txt").write_text("v2\n")
    git(upstream, "-c", "user.name=a", "-c", "user.email=a@x", "commit", "-q", "-am", "v2")
    v2 = git(upstream, "rev-parse", "HEAD")

    def bumped() -> str:
        task_id, path = land.task_with({}, finish="none")
        git(path, *allow, "submodule", "update", "-q", "--init", lib)
        git(path / lib, "fetch", "-q", "origin")
        git(path / lib, "checkout", "-q", v2)
        result = land.trees.complete(task_id, "alice")
        assert result.task_status == "done", result.to_json()
        return task_id

    first = bumped()
    git(land.repo / lib, "fetch", "-q", "origin")  # the person has the new commit, not on it
    result = land.trees.land(first, actor="bob")
    assert result.landed and result.warnings == []
    assert git(land.repo / lib, "rev-parse", "HEAD") == v2  # brought along
    assert git(land.repo, "status", "--porcelain") == ""
    # A checkout without the commit keeps its files, says so, and blocks no later landing.
    git(land.repo / lib, "checkout", "-q", "HEAD~1")
    git(land.repo, "-c", "user.name=a", "-c", "user.email=a@x", "commit", "-q", "-am", "back")
    second = bumped()
    git(land.repo / lib, "reflog", "expire", "--expire=now", "--all")
    git(land.repo / lib, "update-ref", "-d", "refs/remotes/origin/main")
    git(land.repo / lib, "gc", "-q", "--prune=now")  # v2 gone from the person's submodule
    result = land.trees.land(second, actor="bob")
    assert result.landed and len(result.warnings) == 1
    assert "run `git submodule update 'the lib'` there" in result.warnings[0]
    other, _ = land.task_with({"app.py": ANSWER})
    assert land.trees.land(other, actor="bob").landed  # not refused for the submodule


def test_a_submodule_commit_only_the_worktree_holds_is_not_landed(land: LandEnv) -> None:
    """An agent committed inside its worktree's submodule; the landing pointed main at that commit,
    then archived the worktree and the only copy with it (`git submodule update` failed for good:
    "not our ref"). Refused until the commit is somewhere else: the person's submodule, or a
    remote-tracking branch."""
    allow = ("-c", "protocol.file.allow=always")
    who = ("-c", "user.name=a", "-c", "user.email=a@x")
    upstream = land.tmp / "lib-upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    (upstream / "lib.txt").write_text("v1\n")
    git(upstream, "add", "lib.txt")
    git(upstream, *who, "commit", "-q", "-m", "v1")
    git(land.repo, *allow, "submodule", "add", "-q", str(upstream), "lib")
    git(land.repo, "commit", "-q", "-m", "the lib submodule")
    task_id, path = land.task_with({}, finish="none")
    git(path, *allow, "submodule", "update", "-q", "--init", "lib")
    (path / "lib" / "lib.txt").write_text("the agent's change\n")
    git(path / "lib", *who, "commit", "-q", "-am", "the agent's commit")
    ours = git(path / "lib", "rev-parse", "HEAD")
    assert land.trees.complete(task_id, "alice").task_status == "done"
    before = land.main(), checkout_state(land.repo)
    preview = land.trees.landing_preview(task_id)
    assert (preview.state, preview.why) == ("unavailable", "submodule_commit_unpublished")
    error = refused(land, task_id, Reason.NOT_LANDABLE)
    assert error.details["why"] == "submodule_commit_unpublished"
    assert error.details["files"] == ["lib"] and "fetch" in error.message
    assert (land.main(), checkout_state(land.repo)) == before
    assert git(path / "lib", "rev-parse", "HEAD") == ours  # the worktree, and the commit, kept
    git(land.repo / "lib", "fetch", "-q", str(path / "lib"), "HEAD")  # as the refusal says
    result = land.trees.land(task_id, actor="bob")
    assert result.landed and git(land.repo, "ls-tree", "main", "lib").split()[2] == ours
    assert git(land.repo / "lib", "rev-parse", "HEAD") == ours  # brought along


def test_a_sparse_checkout_of_the_user_gives_a_whole_task_worktree(land: LandEnv) -> None:
    """Found by hand: git copies the user's sparse-checkout patterns into a new worktree, so an
    agent's edit outside them showed in `git status` but never landed, and a new file there made
    preview and land fail `git_failed`. The task worktree is whole; the user's stays sparse."""
    land.commit_on_main("in/i.txt", "i\n")
    land.commit_on_main("out/o.txt", "o\n")
    git(land.repo, "sparse-checkout", "set", "in")
    assert not (land.repo / "out").exists()
    task_id, _ = land.task_with({"out/o.txt": "o2\n", "out/new.txt": "n\n", "in/i.txt": "i2\n"})
    assert land.trees.landing_preview(task_id).state == "clean"
    result = land.trees.land(task_id, actor="bob")
    assert sorted(result.files) == ["in/i.txt", "out/new.txt", "out/o.txt"]
    assert git(land.repo, "show", "main:out/o.txt") == "o2"
    assert git(land.repo, "sparse-checkout", "list") == "in" and not (land.repo / "out").exists()


def test_a_stale_registration_of_a_checkout_of_main_is_passed_over(
    land: LandEnv, tmp_path: Path
) -> None:
    """A registered worktree of main whose folder is now a plain folder (not a checkout): git
    calls it prunable, and landing passes it over (it ran `git status` there and failed)."""
    task_id, _ = land.task_with({"app.py": ANSWER})
    git(land.repo, "checkout", "-q", "-b", "side")
    other = tmp_path / "theirs"
    git(land.repo, "worktree", "add", "-q", str(other), "main")
    shutil.rmtree(other)
    other.mkdir()
    result = land.trees.land(task_id, actor="bob")
    assert result.landed and result.checkouts == [] and not result.warnings
    assert git(land.repo, "show", "main:app.py") == ANSWER.strip()


def test_a_human_commit_during_verification_is_built_on_and_verified_again(
    land: LandEnv, tmp_path: Path
) -> None:
    flag = tmp_path / "committed-once"
    # The first landing verification commits to main from outside (a person pushing meanwhile).
    verify = (
        f'if [ -n "$KANBAN_LANDING" ] && [ ! -e {flag} ]; then touch {flag}; '
        f'git -C "$KANBAN_REPO" -c user.name=h -c user.email=h@x commit -q --allow-empty '
        f'-m "a human commit"; fi; true'
    )
    task_id, _ = land.task_with({"app.py": ANSWER}, verify=verify)
    tip = land.main()
    result = land.trees.land(task_id, actor="bob")
    assert result.builds == 2
    human = parents(land.repo, result.commit)
    assert len(human) == 1 and parents(land.repo, human[0]) == [tip]
    assert git(land.repo, "log", "-1", "--format=%s", human[0]) == "a human commit"
    assert result.base_before == human[0]


def test_a_base_that_keeps_moving_is_base_moved(land: LandEnv) -> None:
    verify = (
        'if [ -n "$KANBAN_LANDING" ]; then git -C "$KANBAN_REPO" -c user.name=h '
        "-c user.email=h@x commit -q --allow-empty -m busy; fi; true"
    )
    task_id, _ = land.task_with({"app.py": ANSWER}, verify=verify, finish="review")
    tip = land.main()
    lander = Lander(land.trees, max_builds=2)
    with pytest.raises(BoardError) as caught:
        lander.land(task_id, actor="bob")
    assert caught.value.reason == Reason.BASE_MOVED
    assert git(land.repo, "log", "--format=%s", f"{tip}..main").splitlines() == ["busy", "busy"]
    assert land.board.get_task(task_id).status == "in_review"
    assert land.board.get_task(task_id).landed_commit is None


# -- the preview ---------------------------------------------------------------------------------


def test_the_preview_says_clean_behind_landed_or_why_not(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER})
    preview = land.trees.landing_preview(task_id)
    assert preview.state == "clean" and preview.behind == 0
    assert preview.summary == f"lands cleanly onto main@{land.main()[:7]}"
    land.commit_on_main("x.txt", "x\n")
    land.commit_on_main("y.txt", "y\n")
    moved = land.trees.landing_preview(task_id)
    assert moved.state == "clean" and moved.behind == 2 and moved.stamp != preview.stamp
    assert moved.summary.endswith("main has moved 2 commits since the worktree was made")
    stamp = land.trees.landing_stamp(task_id)
    assert land.trees.landing_stamp(task_id) == stamp
    land.commit_on_main("z.txt", "z\n")
    assert land.trees.landing_stamp(task_id) != stamp
    result = land.trees.land(task_id, actor="bob")
    landed = land.trees.landing_preview(task_id)
    assert (landed.state, landed.landed_commit) == ("landed", result.commit)
    none = land.board.create_task("no worktree")
    unavailable = land.trees.landing_preview(none.id)
    assert (unavailable.state, unavailable.why) == ("unavailable", "not_reviewed")
    # The same change already on main (another task landed it): the landing records it there
    # (tests/worktrees/test_land_settled.py), and the preview says so.
    twin, _ = land.task_with({"same.txt": "same\n"})
    tip = land.commit_on_main("same.txt", "same\n", "the same change, landed another way")
    already = land.trees.landing_preview(twin)
    assert (already.state, already.why) == ("clean", "already_on")
    assert already.summary == (
        f"its change is already on main@{tip[:7]}: landing records it as landed there, and main "
        "does not move"
    )


@pytest.mark.slow  # a race, run for two seconds
def test_a_base_branch_deleted_while_previewing_is_unavailable_never_a_crash(
    land: LandEnv,
) -> None:
    """Another process deletes and remakes the base branch while previews run: each says it
    lands cleanly, or that the base is gone (`no_base_branch`); none raises, whichever git
    command it was at when the branch went."""
    import threading
    import time

    git(land.repo, "branch", "release", "main")
    task_id, _ = land.task_with({"app.py": ANSWER}, base_ref="release")
    tip = git(land.repo, "rev-parse", "refs/heads/release")
    stop = threading.Event()

    def toggle() -> None:
        while not stop.is_set():
            subprocess.run(["git", "update-ref", "-d", "refs/heads/release"], cwd=land.repo,
                           env=GIT_ENV, check=True)  # fmt: skip
            subprocess.run(["git", "update-ref", "refs/heads/release", tip], cwd=land.repo,
                           env=GIT_ENV, check=True)  # fmt: skip

    toggler = threading.Thread(target=toggle)
    toggler.start()
    seen: set[tuple[str, str | None]] = set()
    try:
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            preview = land.trees.landing_preview(task_id)
            seen.add((preview.state, preview.why))
    finally:
        stop.set()
        toggler.join()
    assert seen <= {("clean", None), ("unavailable", "no_base_branch")}, seen
    assert ("unavailable", "no_base_branch") in seen  # the race was run


def test_the_branch_move_hands_the_fence_to_the_next_lander(land: LandEnv) -> None:
    """A landing waiting behind the one moving the branch gets the fence in the same git
    transaction (its turn starts fenced), and the last landing out removes it."""
    import threading
    import time

    first, _ = land.task_with({"one.py": "ONE = 1\n"})
    second, _ = land.task_with({"two.py": "TWO = 2\n"})
    fence = fence_ref("main", land.trees.board_key)
    seen: dict[str, str] = {}
    results: dict[str, object] = {}

    def behind() -> None:
        results[second] = land.trees.land(second, actor="bob").commit

    waiting = threading.Thread(target=behind)

    def on_step(step: str, _info: dict[str, object]) -> None:
        queue = land.trees.lander().queue
        if step == "turn":
            waiting.start()
            deadline = time.monotonic() + 60
            while queue.entry_of_task(second) is None and time.monotonic() < deadline:
                time.sleep(0.01)  # until the second landing has joined the queue behind
        elif step == "updated":
            entry = queue.entry_of_task(second)
            assert entry is not None and entry.state == "waiting"
            seen["fence"] = git(land.repo, "rev-parse", fence)
            seen["expected"] = entry.fence

    land.trees.lander(on_step=on_step).land(first, actor="bob")
    waiting.join(timeout=120)
    assert seen["fence"] == seen["expected"]
    assert results[second] == land.main()
    assert git(land.repo, "for-each-ref", "refs/kanban") == ""


def test_landing_a_task_whose_checkout_was_deleted_by_hand_leaves_git_no_trace(
    land: LandEnv,
) -> None:
    """The landing deleted the branch, but git still listed the deleted checkout (prunable) with
    that branch, so a later `git branch -D` of the same name was refused "checked out at ...". The
    work was committed, so it lands from the branch."""
    task_id, path = land.task_with({"app.py": ANSWER}, finish="review", verify=None)
    shutil.rmtree(path)
    result = land.trees.land(
        task_id, actor="operator", allow_unverified=True, unverified_reason="hotfix"
    )
    assert result.landed and result.archived
    listed = git(land.repo, "worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 1 and task_id not in listed
    assert git(land.repo, "branch", "--list", f"kanban/task-{task_id}") == ""


def test_the_preview_names_a_landing_under_way(land: LandEnv) -> None:
    """While a landing verified, the drawer still said "lands cleanly" and the land dialog offered a
    second landing, refused only once asked."""
    task_id, _ = land.task_with({"app.py": ANSWER})
    seen: dict[str, object] = {}

    def on_step(step: str, _info: dict[str, object]) -> None:
        if step == "turn":
            seen["preview"] = land.trees.landing_preview(task_id)

    land.trees.lander(on_step=on_step).land(task_id, actor="bob")
    during = seen["preview"]
    assert isinstance(during, LandingPreview)
    assert during.landing is not None and during.landing.startswith("being landed by bob (")
    assert during.landing.endswith(", active)") and during.summary.endswith(during.landing)
    after = land.trees.landing_preview(task_id)
    assert after.state == "landed" and after.landing is None


def test_a_replay_that_conflicts_where_the_whole_work_merges_says_so(land: LandEnv) -> None:
    """With rebase chosen, the preview said "lands cleanly" (it merges the work as a whole), the
    landing conflicted at commit 2 of 3, and its advice was a sync the builder had done already. The
    refusal names the other way."""
    land.commit_on_main("notes.txt", "orig\n")
    task_id, path = land.task_with({}, finish="none")
    for text, extra in (("changed\n", None), ("orig\n", "other.txt")):
        (path / "notes.txt").write_text(text)
        if extra:
            (path / extra).write_text("more\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"step to {text.strip()}")
    land.board.complete(task_id, "alice")
    land.commit_on_main("notes.txt", "theirs\n")
    tip = land.main()
    # The preview honours the strategy (it said "lands cleanly" for a rebase, the work merging as
    # one change, and the landing then conflicted).
    squashed = land.trees.landing_preview(task_id)
    assert (squashed.state, squashed.strategy) == ("clean", "squash")
    replayed = land.trees.landing_preview(task_id, strategy="rebase")
    assert (replayed.state, replayed.conflicts) == ("conflicts", ["notes.txt"])
    assert replayed.strategy == "rebase" and "commits are replayed" in replayed.summary
    assert land.trees.landing_preview(task_id, strategy="merge").state == "clean"
    with pytest.raises(BoardError) as caught:
        land.trees.landing_preview(task_id, strategy="octopus")
    assert caught.value.reason == Reason.INVALID_INPUT
    with pytest.raises(BoardError) as caught:  # stands in the inbox: not "changes nothing"
        land.trees.land(task_id, actor="bob", strategy="rebase")
    error = caught.value
    assert error.reason == Reason.MERGE_CONFLICT and "(replaying commit 1 of 2)" in error.message
    assert "squash or merge lands the work as one change" in error.message
    assert land.main() == tip
    assert land.trees.land(task_id, actor="bob", strategy="squash").landed


def test_a_rebase_preview_after_a_sync_replays_as_the_landing_does(land: LandEnv) -> None:
    """Over MCP, a builder synced a conflicting base, resolved it and passed the gate; the base had
    not moved since, so the rebase preview said "lands cleanly" without replaying, and the rebase
    landing conflicted (replaying the work saved before the sync). The preview replays whenever the
    strategy is rebase."""
    land.commit_on_main("notes.txt", "orig\n")
    task_id, path = land.task_with({"notes.txt": "ours\n"}, finish="none")
    land.commit_on_main("notes.txt", "theirs\n")
    with pytest.raises(BoardError) as caught:
        land.trees.sync(task_id, actor="alice")
    assert caught.value.reason == Reason.MERGE_CONFLICT
    (path / "notes.txt").write_text("ours and theirs\n")
    assert land.trees.complete(task_id, "alice").task_status == "done"
    assert land.trees.landing_preview(task_id).state == "clean"
    replayed = land.trees.landing_preview(task_id, strategy="rebase")
    assert (replayed.state, replayed.conflicts) == ("conflicts", ["notes.txt"]), replayed
    with pytest.raises(BoardError) as caught:
        land.trees.land(task_id, actor="bob", strategy="rebase")
    assert caught.value.reason == Reason.MERGE_CONFLICT
    assert land.trees.land(task_id, actor="bob", strategy="squash").landed


def test_a_branch_moved_back_under_a_landing_gets_a_build_on_its_tip(land: LandEnv) -> None:
    """A landing built on B (a commit that came after its early build on A), then saw the branch
    moved back to A (a reset), and landed the build on B onto A, bringing back the commit the person
    had removed. Each attempt lands only a build on the tip it moves the branch from."""
    git(land.repo, "branch", "release")
    a = git(land.repo, "rev-parse", "release")
    marker = land.tmp / "person-commit"
    reset = (
        f'if [ -f {marker} ] && [ "$KANBAN_LAND_BASE" = "$(cat {marker})" ]; then '
        f'git -C "$KANBAN_REPO" update-ref refs/heads/release {a} "$KANBAN_LAND_BASE"; fi'
    )
    task_id, _ = land.task_with({"app.py": ANSWER}, verify=reset)

    def on_step(step: str, _info: dict[str, object]) -> None:
        if step == "joined":  # a person's commit after the early build on A
            b = git(land.repo, "commit-tree", f"{a}^{{tree}}", "-p", a, "-m", "a person's")
            git(land.repo, "update-ref", "refs/heads/release", b, a)
            marker.write_text(b)

    result = land.trees.lander(on_step=on_step).land(task_id, actor="bob", into="release")
    assert result.builds == 2 and git(land.repo, "rev-parse", "release") == result.commit
    assert git(land.repo, "rev-parse", f"{result.commit}^") == a  # not the removed commit


def test_a_guess_whose_verify_command_failed_says_so_while_it_waits(
    land: LandEnv, tmp_path: Path
) -> None:
    """A waiting landing's verify command failed on the commit the landing ahead would land, and its
    last step stayed `built_ahead` ("verifying on the landing ahead") until its turn. It now tells
    `failed_ahead`; the turn on that commit is refused."""
    import threading
    import time

    go = tmp_path / "go"
    first, _ = land.task_with(
        {"one.py": "ONE = 1\n"},
        verify=f'if [ -n "$KANBAN_LANDING" ]; then while [ ! -e {go} ]; do sleep 0.02; done; fi',
    )
    second, _ = land.task_with(
        {"two.py": "TWO = 2\n"}, verify='if [ -n "$KANBAN_LANDING" ]; then exit 3; fi'
    )
    steps: list[str] = []
    answers: dict[str, object] = {}

    def lands_first() -> None:
        answers[first] = land.trees.lander().land(first, actor="bob").commit

    ahead = threading.Thread(target=lands_first)
    ahead.start()
    try:
        deadline = time.monotonic() + 60
        while not any(entry.built_commit for entry in land.trees.lander().queue.all_entries()):
            assert time.monotonic() < deadline, "the first never built"
            time.sleep(0.02)

        def on_step(step: str, _info: dict[str, object]) -> None:
            steps.append(step)
            if step == FAILED_AHEAD:
                go.touch()

        with pytest.raises(BoardError) as caught:
            land.trees.lander(on_step=on_step).land(second, actor="bob")
    finally:
        go.touch()
        ahead.join(timeout=120)
    assert caught.value.reason == Reason.VERIFICATION_FAILED
    assert steps[:3] == ["joined", BUILT_AHEAD, FAILED_AHEAD], steps
    assert answers[first] == land.main()


def test_two_callers_recovering_one_dead_landing_say_it_was_interrupted_once(
    land: LandEnv,
) -> None:
    """Two landers waiting behind a dead landing (or an operator's recovery beside one) each
    read it dead and settle it. The row goes once, and so must the system comment telling the
    task's reviewer that nothing landed: the second recovery found the row gone and still
    commented, a second comment and `comment_added` event for one interrupted landing."""
    task_id, _ = land.task_with({"app.py": ANSWER}, finish="review")
    lander = land.trees.lander(lease_ms=500)
    tip = land.main()
    entry = lander.queue.join(
        task_id, repo_path=str(land.repo), ref="refs/heads/main", lander="bob",
        holder="dead-lander", strategy="squash", fence=tip,
    )  # fmt: skip
    assert lander.queue.take_turn(entry) is not None
    seen = [lander.queue.entry_of_task(task_id) for _ in range(2)]  # both read it dead
    while not all(dead is not None and dead.dead(land.board.now()) for dead in seen):
        time.sleep(0.05)  # its lease runs out
    for dead in seen:
        assert dead is not None
        assert lander.recover_entry(dead, by="operator:carol") is None
    interrupted = [c for c in land.board.comments(task_id) if "was interrupted" in c.body]
    assert len(interrupted) == 1
    kinds = [event.kind for event in land.board.events(task_id=task_id)]
    assert kinds.count(EventKind.COMMENT_ADDED) == 1
    assert lander.queue.all_entries() == [] and land.main() == tip
