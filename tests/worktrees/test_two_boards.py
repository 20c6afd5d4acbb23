"""Two boards on one repository (a demo or scratch board beside the real one, two teams' boards
on a monorepo): both number their tasks TASK-1, TASK-2..., so each must keep to its own branches,
checkouts, locks and refs, and neither's landing, garbage collection or refusal may touch the
other's work. Real board files, one real repository, one worktrees folder."""

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from boardlib import Board, BoardError, ManualClock, Reason
from boardlib.worktrees import Worktrees, collect_garbage
from boardlib.worktrees.gc import DAY_MS
from boardlib.worktrees.gitrepo import SCAFFOLD_DEPTH, SCAFFOLD_SUBJECT, branch_maker
from boardlib.worktrees.landgit import baseline_ref
from boardlib.worktrees.landing import BEHIND_PREFIX
from boardlib.worktrees.layout import board_key, branch_name, task_slot
from tests.worktrees.conftest import (
    LandEnv,
    checkout_state,
    file_hashes,
    git,
    go,
    landers_go,
    make_land_env,
    start_lander,
)


@pytest.fixture
def boards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Board A and board B, each with its own file, on one repository and worktrees folder."""
    first = make_land_env(tmp_path, monkeypatch, tmp_path / "a.db")
    other = Board(tmp_path / "b.db", clock=ManualClock())
    second = LandEnv(
        board=other,
        trees=Worktrees(other, verify_timeout_s=60),
        repo=first.repo,
        root=first.root,
        tmp=tmp_path,
    )
    yield first, second
    first.board.close()
    other.close()


def started(env: LandEnv, text: str) -> tuple[str, Path]:
    """TASK-1 of `env`'s board, claimed, provisioned and changed (`text` in its own file)."""
    task_id, path = env.task_with({f"{text}.txt": f"{text}\n"}, title=f"work {text}", finish="none")
    return task_id, path


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)", "--list", "kanban/*").splitlines()


def checkouts(repo: Path) -> list[str]:
    listed = git(repo, "worktree", "list", "--porcelain").splitlines()
    return sorted(line.removeprefix("branch refs/heads/") for line in listed if "kanban/" in line)


def test_two_boards_each_provision_complete_and_land_their_own_task_1(boards) -> None:
    a, b = boards
    a_id, a_path = started(a, "from-a")
    b_id, b_path = started(b, "from-b")
    assert a_id == b_id == "TASK-1"  # the collision: was refused, naming A's branch to delete
    key = board_key(b.board.path)
    plain, keyed = branch_name("TASK-1"), branch_name("TASK-1", key)
    assert a.board.workspaces(a_id)[-1].branch == plain  # the first keeps the plain name
    assert b.board.workspaces(b_id)[-1].branch == keyed == f"kanban/task-TASK-1@{key}"
    assert a_path != b_path and b_path.name == task_slot("TASK-1", key)
    assert branches(a.repo) == sorted([plain, keyed]) == checkouts(a.repo)
    assert not (a_path / "from-b.txt").exists() and not (b_path / "from-a.txt").exists()
    # Each board holds its own lock: a read of B's task does not wait on A's mutation.
    with a.trees._lock(a.repo, a_id, "hold"):
        assert b.trees.detail(b_id).busy is None
        assert a.trees.detail(a_id).busy is not None
    # A sync keeps each board's new baseline alive under its own ref.
    a.commit_on_main("main.txt", "moved on\n")
    for env, task_id in ((a, a_id), (b, b_id)):
        assert not env.trees.sync(task_id, actor="alice").conflicts
    refs = git(a.repo, "for-each-ref", "--format=%(refname)", "refs/kanban/baselines/")
    assert refs.splitlines() == [baseline_ref("TASK-1"), baseline_ref(task_slot("TASK-1", key))]
    for env, task_id in ((a, a_id), (b, b_id)):
        assert env.trees.complete(task_id, "alice").task_status == "done"
    assert branches(a.repo) == sorted([plain, keyed]) == checkouts(a.repo)

    landed_a = a.trees.land(a_id, actor="bob")
    assert branches(a.repo) == [keyed] == checkouts(a.repo) and b_path.is_dir()  # B's kept
    landed_b = b.trees.land(b_id, actor="bob")
    assert landed_a.landed and landed_b.landed
    history = git(a.repo, "rev-list", "--first-parent", "main").splitlines()
    assert history[:2] == [landed_b.commit, landed_a.commit]
    for name in ("from-a.txt", "from-b.txt", "main.txt"):
        assert git(a.repo, "cat-file", "-e", f"main:{name}") == ""
    assert branches(a.repo) == [] == checkouts(a.repo)
    assert git(a.repo, "for-each-ref", "refs/kanban") == ""  # no baseline or fence left over


def test_neither_boards_garbage_collection_touches_the_others_work(boards) -> None:
    a, b = boards
    a_id, a_path = started(a, "from-a")
    b_id, b_path = started(b, "from-b")
    key = board_key(b.board.path)
    for env, task_id in ((a, a_id), (b, b_id)):
        env.board.move(task_id, "done", actor="operator")
    b.board.clock.advance(ms=DAY_MS + 1)  # B's task is past its retention, A's is not

    report = collect_garbage(b.board, retention_ms=DAY_MS)
    assert report.errors == [] and len(report.removed) == 1
    assert not b_path.exists() and (a_path / "from-a.txt").read_text() == "from-a\n"
    assert branches(a.repo) == sorted([branch_name("TASK-1"), branch_name("TASK-1", key)])
    assert checkouts(a.repo) == [branch_name("TASK-1")]  # A's checkout, untouched

    a.trees.pause(a_id)  # A's work now lives on its branch alone
    again = collect_garbage(b.board, retention_ms=0)
    assert again.removed == [] and again.errors == []
    head = git(a.repo, "rev-parse", branch_name("TASK-1"))
    assert git(a.repo, "show", f"{head}:from-a.txt") == "from-a"
    assert collect_garbage(a.board, retention_ms=DAY_MS).errors == []
    assert git(a.repo, "rev-parse", branch_name("TASK-1", key))  # B's branch is kept by A too


def test_a_branch_no_board_made_is_refused_without_asking_to_delete_it(boards) -> None:
    a, b = boards
    task = b.board.create_task("work", description="x")
    b.board.claim(task.id, "alice")
    git(a.repo, "branch", branch_name(task.id))  # the user's own, by hand
    before = git(a.repo, "show-ref")
    with pytest.raises(BoardError) as refused:
        b.trees.provision(task.id, a.repo)
    assert refused.value.reason == Reason.CONFLICT
    assert refused.value.details["branch"] == branch_name(task.id)
    assert "delete" not in refused.value.message and "rename" in refused.value.message
    assert git(a.repo, "show-ref") == before and b.board.workspaces(task.id) == []


def test_a_crash_left_keyed_branch_is_taken_back_by_its_board(boards) -> None:
    a, b = boards
    started(a, "from-a")
    b_id, b_path = started(b, "from-b")
    git(b_path, "add", "-A")
    git(b_path, "commit", "-qm", "work")
    made = b.board.workspaces(b_id)[-1]
    git(a.repo, "worktree", "remove", "--force", str(b_path))  # the checkout, behind the board
    b.board.update_workspace(made.id, status="archived")  # as if never recorded
    again = b.trees.provision(b_id, a.repo)
    assert again.reattached and again.worktree.branch == made.branch
    assert again.worktree.base_commit == made.base_commit
    assert (b_path / "from-b.txt").read_text() == "from-b\n"


def test_a_board_whose_branch_was_deleted_never_takes_the_other_boards_remade_one(
    boards,
) -> None:
    """A's TASK-1 is paused, its branch deleted by hand; B, finding the plain name free, makes
    its own TASK-1 there, same branch name, same checkout folder. A must neither reuse,
    commit to, land nor remove B's work: it gets a fresh worktree in its own slot."""
    a, b = boards
    a_id, a_path = started(a, "from-a")
    a.trees.pause(a_id, actor="alice")
    git(a.repo, "branch", "-D", branch_name(a_id))
    b_id, b_path = started(b, "from-b")
    assert b_path == a_path and b.board.workspaces(b_id)[-1].branch == branch_name(b_id)
    (b_path / "uncommitted.txt").write_text("B's, not committed\n")
    b_head = git(a.repo, "rev-parse", branch_name(b_id))

    for act in (
        lambda: a.trees.complete(a_id, "alice"),
        lambda: a.trees.pause(a_id, actor="alice"),
        lambda: a.trees.sync(a_id, actor="alice"),
    ):
        with pytest.raises(BoardError) as refused:
            act()
        assert refused.value.reason == Reason.CONFLICT and "another board" in refused.value.message
    shown = a.trees.detail(a_id)
    assert shown.checkout.state == "missing" and "from-b.txt" not in shown.diff
    a.board.move(a_id, "cancelled", actor="operator")  # past retention: gc would remove it
    report = collect_garbage(a.board, retention_ms=0)
    assert report.removed == [] and report.committed == [] and report.errors == []
    assert (b_path / "uncommitted.txt").is_file()
    assert git(a.repo, "rev-parse", branch_name(b_id)) == b_head

    assert b.trees.complete(b_id, "alice").task_status == "done"  # B's work is whole
    assert git(a.repo, "show", f"{branch_name(b_id)}:uncommitted.txt") == "B's, not committed"


def test_a_re_provision_after_the_other_board_remade_the_branch_gets_a_fresh_slot(
    boards,
) -> None:
    a, b = boards
    a_id, _ = started(a, "from-a")
    a.trees.pause(a_id, actor="alice")
    git(a.repo, "branch", "-D", branch_name(a_id))
    b_id, b_path = started(b, "from-b")
    (b_path / "uncommitted.txt").write_text("B's\n")
    again = a.trees.provision(a_id, a.repo, actor="alice")
    key = board_key(a.board.path)
    assert not again.reused and again.worktree.branch == branch_name(a_id, key)
    assert Path(again.worktree.worktree_path).name == task_slot(a_id, key)
    assert a.board.workspaces(a_id)[0].status == "stale"
    assert (b_path / "uncommitted.txt").is_file() and not (b_path / "from-a.txt").exists()
    assert b.trees.detail(b_id).checkout.state == "checked_out"


def test_a_live_checkout_whose_branch_was_deleted_under_it_is_left_to_its_board(
    boards,
) -> None:
    """A's branch deleted by hand (`update-ref -d`: `branch -D` refuses a checked-out one) while
    its checkout lives: B's TASK-1 takes its own slot, not a refusal to move A's checkout away."""
    a, b = boards
    _, a_path = started(a, "from-a")
    git(a.repo, "update-ref", "-d", f"refs/heads/{branch_name('TASK-1')}")
    b_id, b_path = started(b, "from-b")
    key = board_key(b.board.path)
    assert b.board.workspaces(b_id)[-1].branch == branch_name(b_id, key)
    assert b_path.name == task_slot(b_id, key) and (a_path / "from-a.txt").is_file()


def test_a_board_whose_file_moved_keeps_working_its_synced_worktree(boards, tmp_path) -> None:
    """A moved board file has a new key; its branches' scaffolds name the old one. A sync after
    the move, then complete and land: still its own branch, not one another board remade."""
    a, _ = boards
    a_id, _ = started(a, "from-a")
    a.board.close()
    for name in ("a.db", "a.db-wal", "a.db-shm"):
        if (tmp_path / name).exists():
            (tmp_path / name).rename(tmp_path / name.replace("a.db", "moved.db"))
    moved = Board(tmp_path / "moved.db", clock=ManualClock())
    try:
        trees = Worktrees(moved, verify_timeout_s=60)
        a.commit_on_main("main.txt", "moved on\n")
        assert not trees.sync(a_id, actor="alice").conflicts
        assert trees.complete(a_id, "alice").task_status == "done"
        assert trees.land(a_id, actor="bob").landed
        assert git(a.repo, "cat-file", "-e", "main:from-a.txt") == ""
    finally:
        moved.close()


def test_a_landed_commit_on_the_base_is_no_scaffold_of_the_board_that_landed_it(
    boards, tmp_path: Path
) -> None:
    """A lands its TASK-1 (the commit on main names A's board), B makes its TASK-1 from main
    under the plain name, then A's board file is made anew at the same path (same key): its
    new TASK-1 must not take B's branch for one a crash left of its own."""
    a, b = boards
    a_id, _ = a.task_with({"from-a.txt": "a\n"})
    assert a.trees.land(a_id, actor="bob").landed
    b_id, b_path = started(b, "from-b")
    assert b.board.workspaces(b_id)[-1].branch == branch_name(b_id)
    a.board.close()
    for leftover in tmp_path.glob("a.db*"):
        leftover.unlink()
    anew = Board(tmp_path / "a.db", clock=ManualClock())
    try:
        task = anew.create_task("anew", description="x")
        anew.claim(task.id, "alice")
        made = Worktrees(anew, verify_timeout_s=60).provision(task.id, a.repo, actor="alice")
        key = board_key(anew.path)
        assert task.id == b_id and made.worktree.branch == branch_name(task.id, key)
        assert not made.reattached and Path(made.worktree.worktree_path) != b_path
    finally:
        anew.close()


def test_a_landing_of_one_board_leaves_the_other_boards_fence_alone(boards) -> None:
    """B lands while A holds its turn, verified and about to move main: A's fence stays, and A
    lands on B's commit after one more build."""
    a, b = boards
    a_id, _ = a.task_with({"from-a.txt": "a\n"})
    b_id, _ = b.task_with({"from-b.txt": "b\n"})
    seen: dict[str, object] = {}

    def fences() -> list[str]:
        return git(a.repo, "for-each-ref", "--format=%(objectname)", "refs/kanban/landing/").split()

    def on_step(step: str, _info: dict[str, object]) -> None:
        if step == "verified" and "b" not in seen:
            seen["before"] = fences()
            seen["b"] = b.trees.land(b_id, actor="bob").commit
            seen["after"] = fences()

    result = a.trees.lander(on_step=on_step).land(a_id, actor="bob")
    assert len(seen["before"]) == 1 and seen["after"] == seen["before"]  # was overwritten, gone
    assert result.landed and result.builds == 2
    history = git(a.repo, "rev-list", "--first-parent", "main").splitlines()
    assert history[:2] == [result.commit, seen["b"]]
    assert git(a.repo, "for-each-ref", "refs/kanban") == ""


@pytest.mark.slow  # two lander processes racing
def test_two_boards_landing_into_main_at_once_both_land_in_line(boards, tmp_path: Path) -> None:
    """Each board queues its own landings; across boards the compare-and-swap on `main` is what
    orders them: both land, one after the other, and neither is lost or moved over."""
    a, b = boards
    ids = {}
    for env, name in ((a, "a.db"), (b, "b.db")):
        ids[name] = env.task_with({f"{name}.txt": "x\n"}, verify="sleep 0.3")[0]
    git(a.repo, "checkout", "-q", "--detach")  # no checkout of main to bring along meanwhile
    tip = a.main()
    procs = [start_lander(tmp_path / name, [task_id]) for name, task_id in ids.items()]
    results = landers_go(procs, timeout_s=300)
    assert all("commit" in result for result in results), results
    history = git(a.repo, "rev-list", "--first-parent", "main").splitlines()
    assert sorted(history[:2]) == sorted(result["commit"] for result in results)
    assert history[2] == tip
    for name in ids:
        assert git(a.repo, "cat-file", "-e", f"main:{name}.txt") == ""
    assert git(a.repo, "for-each-ref", "refs/kanban") == ""  # each board's fence is gone


def keep_no_reflog(repo: Path) -> None:
    """`repo` as one that keeps no branch reflog (`core.logAllRefUpdates=false`, its logs gone):
    git appends to a reflog that exists whatever the setting says."""
    git(repo, "config", "core.logAllRefUpdates", "false")
    shutil.rmtree(repo / ".git" / "logs")


def wait_for_file(path: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


@pytest.mark.slow  # a lander process
@pytest.mark.parametrize("reflog", [True, False], ids=["reflog", "no-reflog"])
def test_a_landing_waits_for_the_other_boards_to_bring_the_checkout_along(
    boards, tmp_path: Path, reflog: bool
) -> None:
    """B's landing has moved `main` and not yet brought the user's checkout of it along (each
    board queues its own landings, so A's is not held back): the checkout looks changed then.
    A lands once it caught up; it was refused `base_checked_out_dirty`, nothing of the user's
    changed. The same in a repository that keeps no reflog: B's mark tells A, not the reflog."""
    a, b = boards
    if not reflog:
        keep_no_reflog(a.repo)
    a_id, _ = a.task_with({"from-a.txt": "a\n"})
    b_id, _ = b.task_with({"from-b.txt": "b\n"})
    proc = start_lander(tmp_path / "a.db", [a_id])

    def on_step(step: str, _info: dict[str, object]) -> None:
        if step == "updated":  # main moved, the checkout not brought along yet
            go(proc)
            time.sleep(1.0)  # A reads the checkout meanwhile

    landed_b = b.trees.lander(on_step=on_step).land(b_id, actor="bob")
    out, err = proc.communicate(timeout=120)
    result = json.loads(out.splitlines()[-1])
    assert "commit" in result, (result, err)
    history = git(a.repo, "rev-list", "--first-parent", "main").splitlines()
    assert history[:2] == [result["commit"], landed_b.commit]
    assert git(a.repo, "status", "--porcelain") == ""  # brought along, twice
    assert (a.repo / "from-a.txt").is_file() and (a.repo / "from-b.txt").is_file()


@pytest.mark.slow  # a lander process
def test_a_checkout_brought_along_before_its_mark_is_read_lands_without_a_reflog(
    boards, tmp_path: Path
) -> None:
    """A's turn finds the user's checkout changed while B's landing brings it along, and B has
    finished (its mark gone) by the time A looks for a mark; the repository keeps no reflog. A
    looks once more, finds the checkout along, and lands: it was refused `base_checked_out_dirty`.
    A `git` shim on A's PATH holds A's first read of the marks until B is done."""
    a, b = boards
    keep_no_reflog(a.repo)
    landing, verifying, verify_go = (tmp_path / name for name in ("landing", "verifying", "go"))
    asked, marks_go = tmp_path / "asked", tmp_path / "marks-go"
    wait = f"until [ -e {verify_go} ]; do sleep 0.01; done"
    hold = f"[ ! -e {landing} ] || {{ touch {verifying}; {wait}; }}"
    a_id, _ = a.task_with({"from-a.txt": "a\n"}, verify=hold)  # the gate runs it too: not held
    landing.touch()
    b_id, _ = b.task_with({"from-b.txt": "b\n"})
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text(
        f'#!/bin/sh\ncase "$*" in *{BEHIND_PREFIX}*) if [ ! -e {asked} ]; then touch {asked}; '
        f"until [ -e {marks_go} ]; do sleep 0.01; done; fi;; esac\n"
        f'exec {shutil.which("git")} "$@"\n'
    )
    (shim / "git").chmod(0o755)
    proc = start_lander(tmp_path / "a.db", [a_id], path=shim)
    go(proc)
    wait_for_file(verifying)  # A's turn verifies on main's tip; its checks found nothing changed

    def on_step(step: str, _info: dict[str, object]) -> None:
        if step == "updated":  # main moved, the checkout not brought along yet, B's mark set
            verify_go.touch()
            wait_for_file(asked)  # A found the checkout changed and looks for a mark

    b.trees.lander(on_step=on_step).land(b_id, actor="bob")
    assert git(a.repo, "for-each-ref", BEHIND_PREFIX) == ""  # B brought it along: mark gone
    marks_go.touch()
    out, err = proc.communicate(timeout=120)
    result = json.loads(out.splitlines()[-1])
    assert "commit" in result, (result, err)
    assert git(a.repo, "status", "--porcelain") == ""
    assert (a.repo / "from-a.txt").is_file() and (a.repo / "from-b.txt").is_file()


def killed_after_moving_main(boards, tmp_path: Path) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """A task on each board, and B's lander killed -9 after moving `main`, before bringing the
    user's checkout of it along: the ids of A's task and B's."""
    a, b = boards
    a_id, _ = a.task_with({"from-a.txt": "a\n"})
    b_id, _ = b.task_with({"from-b.txt": "b\n"})
    proc = start_lander(tmp_path / "b.db", [b_id], "--crash-at", "updated")
    go(proc)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    return a_id, b_id


@pytest.mark.slow  # a lander process killed
def test_a_landing_brings_along_the_checkout_the_other_boards_killed_lander_left(
    boards, tmp_path: Path
) -> None:
    """B's lander is killed -9 after moving `main`, before bringing the user's checkout of it
    along: the checkout holds exactly main's previous commit, nothing of the user's. A's landing
    brings it along (as B's next call would) and lands, instead of refusing
    `base_checked_out_dirty` until B's board is used again."""
    a, b = boards
    a_id, b_id = killed_after_moving_main(boards, tmp_path)
    assert git(a.repo, "status", "--porcelain") != ""  # left behind its branch
    result = a.trees.land(a_id, actor="bob")
    assert result.landed
    assert git(a.repo, "status", "--porcelain") == ""
    assert (a.repo / "from-a.txt").is_file() and (a.repo / "from-b.txt").is_file()
    assert b.trees.land(b_id, actor="bob").recovered  # B's board records its own landing
    assert git(a.repo, "for-each-ref", "refs/kanban") == ""


@pytest.mark.slow  # a lander process killed
def test_a_user_edit_in_a_checkout_the_other_boards_killed_lander_left_is_refused(
    boards, tmp_path: Path
) -> None:
    """The same, but the user edited a file in the left-behind checkout: A refuses, touching
    nothing of it. Nor a checkout holding exactly main's previous commit with no landing's mark
    on it: a person's revert of the landing, not a killed lander's leftover."""
    a, b = boards
    a_id, b_id = killed_after_moving_main(boards, tmp_path)
    (a.repo / "app.py").write_text("mine\n")
    before = checkout_state(a.repo)
    with pytest.raises(BoardError) as caught:
        a.trees.land(a_id, actor="bob")
    assert caught.value.reason == Reason.BASE_CHECKED_OUT_DIRTY
    assert checkout_state(a.repo) == before
    git(a.repo, "checkout", "--", "app.py")
    assert b.trees.land(b_id, actor="bob").recovered  # brought along; its mark is gone
    git(a.repo, "read-tree", "-m", "-u", "HEAD", "HEAD^")  # the person undoes it, uncommitted
    before = checkout_state(a.repo)
    with pytest.raises(BoardError) as caught:
        a.trees.land(a_id, actor="bob")
    assert caught.value.reason == Reason.BASE_CHECKED_OUT_DIRTY
    assert checkout_state(a.repo) == before


def test_a_live_checkout_whose_branch_was_deleted_gets_it_back_on_provision(boards) -> None:
    """A's branch deleted by hand under its live checkout (git cannot read it then, and its next
    commit would be a root commit): provisioning again makes the branch again at the baseline,
    says so (`reattached`, not `reused`), and leaves every file of the checkout as it was."""
    a, _ = boards
    a_id, a_path = started(a, "from-a")
    git(a_path, "add", "-A")
    git(a_path, "commit", "-q", "-m", "work")
    (a_path / "more.txt").write_text("more\n")
    before = file_hashes(a_path)
    git(a.repo, "update-ref", "-d", f"refs/heads/{branch_name(a_id)}")
    again = a.trees.provision(a_id, a.repo)
    assert again.reattached and not again.reused
    baseline = a.board.workspaces(a_id)[-1].base_commit
    assert git(a.repo, "rev-parse", f"refs/heads/{branch_name(a_id)}") == baseline
    assert file_hashes(a_path) == before
    detail = a.trees.detail(a_id)
    assert detail.checkout.state == "checked_out"
    assert {"from-a.txt", "more.txt"} <= {stat.path for stat in detail.diff_files}
    assert a.trees.provision(a_id, a.repo).reused  # from then on, a plain reuse


def test_choosing_a_slot_reads_the_other_boards_branch_down_to_its_scaffold_only(boards) -> None:
    """B's TASK-1 finds A's branch in the plain slot: which board made it is read from the
    branch's newest scaffold, near its tip, not from its whole history (seconds on a long one).
    Here the history below is unreadable (its first commit's object removed): B still gets its
    own slot."""
    a, b = boards
    first = git(a.repo, "rev-parse", "main")
    a.commit_on_main("later.txt", "later\n")
    started(a, "from-a")
    (a.repo / ".git" / "objects" / first[:2] / first[2:]).unlink()
    b_id, b_path = started(b, "from-b")
    assert b_path.name == task_slot(b_id, board_key(b.board.path))


def test_a_scaffold_of_task_12_above_task_1s_leaves_the_branch_to_its_board(boards) -> None:
    """A's TASK-1 branch holds, above its own scaffold, a commit with TASK-12's scaffold subject
    and trailers (picked over from TASK-12's branch, say): a `git log --grep` for TASK-1 matched
    it as a substring and stopped there, so B's TASK-1 was refused the plain slot as a branch no
    board made. The match is exact: B finds A's scaffold below it and takes its own slot."""
    a, b = boards
    a_id, a_path = started(a, "from-a")
    a_key = board_key(a.board.path)
    other = f"{SCAFFOLD_SUBJECT}TASK-12\n\nKanban-Task: TASK-12\nKanban-Board: {a_key}\n"
    git(a_path, "commit", "-q", "--no-verify", "--allow-empty", "-m", other)
    scaffold = a.board.workspaces(a_id)[-1].base_commit
    b_id, b_path = started(b, "from-b")
    assert b_path.name == task_slot(b_id, board_key(b.board.path))
    assert branch_maker(a.repo, branch_name(a_id), a_id) == (a_key, scaffold)
    assert git(a.repo, "rev-parse", f"{branch_name(a_id)}~1") == scaffold  # A's, untouched


def test_a_task_branch_no_board_made_is_refused_without_reading_its_history(boards) -> None:
    """A `kanban/task-TASK-1` branch no board made, with a long history: finding that no board
    made it reads its first parents down `SCAFFOLD_DEPTH` commits, not to its root (seconds on a
    long history, under the repository's lock). Here its root is unreadable (the object
    removed): the provision is still refused `conflict`, and the branch left as it was."""
    a, _ = boards
    task = a.board.create_task("Someone's branch", description="A test change.")
    a.board.claim(task.id, "alice")
    branch = branch_name(task.id)
    tree = git(a.repo, "rev-parse", "main^{tree}")
    root = git(a.repo, "commit-tree", "-m", "someone's root", tree)
    stream = [f"reset refs/heads/{branch}\nfrom {root}\n"]
    for number in range(SCAFFOLD_DEPTH + 1):
        message = f"someone's commit {number}\n"
        stream.append(
            f"commit refs/heads/{branch}\ncommitter someone <s@example.org> {number} +0000\n"
            f"data {len(message.encode())}\n{message}\n"
        )
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=a.repo, input="".join(stream), text=True,
        check=True,
    )  # fmt: skip
    (a.repo / ".git" / "objects" / root[:2] / root[2:]).unlink()
    tip = git(a.repo, "rev-parse", f"refs/heads/{branch}")
    with pytest.raises(BoardError) as caught:
        a.trees.provision(task.id, a.repo)
    assert caught.value.reason == Reason.CONFLICT
    assert git(a.repo, "rev-parse", f"refs/heads/{branch}") == tip
    assert a.board.workspaces(task.id) == []
