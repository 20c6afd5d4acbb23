"""The inbox and landing, on both backends with real repositories: work that passed its gate or
was approved but has not landed needs a person (to land it), and so does a landing refused on the
work or the base, until it lands or moves on. The refusal is kept for the inbox only: the task
row, its events, comments, audit and the landing queue stay as they were."""

import sqlite3
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib import attention as a
from boardlib.store.sqlite import SqliteTx
from tests.worktrees.conftest import LandEnv, checkout_state, git
from tests.worktrees.test_land import ANSWER, board_snapshot


def inbox(land: LandEnv) -> list[tuple[str, str | None, str]]:
    return [(item.kind, item.task_id, item.action) for item in land.board.inbox().items]


def item_of(land: LandEnv, task_id: str):
    [item] = [item for item in land.board.inbox().items if item.task_id == task_id]
    return item


def refuse(land: LandEnv, task_id: str, reason: Reason, **kwargs) -> BoardError:
    """Land, expect `reason`, and prove the repository and the task's own record unchanged."""
    before = checkout_state(land.repo), board_snapshot(land, task_id)
    with pytest.raises(BoardError) as caught:
        land.trees.land(task_id, **{"actor": "bob", **kwargs})
    assert caught.value.reason == reason, caught.value.to_dict()
    assert (checkout_state(land.repo), board_snapshot(land, task_id)) == before
    return caught.value


def test_work_that_passed_its_gate_waits_in_the_inbox_until_it_lands(land: LandEnv) -> None:
    plain = land.board.create_task("no worktree")  # done without a worktree: nothing to land
    land.board.claim(plain.id, "carol")
    land.board.complete(plain.id, "carol")
    land.board.approve(plain.id, "bob")
    task_id, _ = land.task_with({"app.py": ANSWER})
    item = item_of(land, task_id)
    assert (item.kind, item.action, item.status) == (a.UNLANDED, a.LAND, "done")
    branch = land.board.workspaces(task_id)[-1].branch
    assert item.why == f"passed its gate, not landed: its work waits on {branch}"
    assert inbox(land) == [(a.UNLANDED, task_id, a.LAND)]
    land.trees.land(task_id, actor="bob")
    assert inbox(land) == []


def test_approved_work_waits_to_land_kept_worktrees_do_not(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER}, finish="review")
    assert inbox(land) == [(a.REVIEW, task_id, a.APPROVE)]
    land.board.approve(task_id, "bob")
    item = item_of(land, task_id)
    assert item.kind == a.UNLANDED and item.why.startswith("approved by bob, not landed")
    land.trees.land(task_id, actor="bob", keep=True)  # the worktree stays live, but it landed
    assert inbox(land) == []


def test_a_refused_landing_stands_in_the_inbox_until_it_lands(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER})
    (land.repo / "README.md").write_text("# my uncommitted edit\n")
    refuse(land, task_id, Reason.BASE_CHECKED_OUT_DIRTY, dry_run=True)  # a question: not kept
    assert [item.kind for item in land.board.inbox().items] == [a.UNLANDED]
    refuse(land, task_id, Reason.BASE_CHECKED_OUT_DIRTY)
    item = item_of(land, task_id)  # one item: the refusal says more than "not landed"
    assert (item.kind, item.action) == (a.LANDING_REFUSED, a.LAND)
    assert item.why.startswith("landing refused (base_checked_out_dirty) for bob: ")
    assert "README.md" in item.why or "local changes" in item.why
    git(land.repo, "checkout", "README.md")
    land.trees.land(task_id, actor="bob")
    assert inbox(land) == []
    assert land.board.store.read(lambda tx: tx.land_refusals_waiting()) == []


def test_an_approve_and_land_that_conflicts_replaces_the_review_item(land: LandEnv) -> None:
    first, _ = land.task_with({"app.py": ANSWER})
    second, _ = land.task_with(
        {"app.py": "def answer():\n    return 44\n"}, finish="review", verify="true"
    )
    land.trees.land(first, actor="bob")
    with pytest.raises(BoardError) as caught:
        land.trees.land(second, actor="bob")
    assert caught.value.reason == Reason.MERGE_CONFLICT
    assert inbox(land) == [(a.LANDING_REFUSED, second, a.LAND)]
    assert "merge_conflict" in item_of(land, second).why
    # Sent back, the old refusal no longer stands; a fresh review is an ordinary review.
    land.board.reject(second, "bob", "conflicts with main")
    assert inbox(land) == []
    land.board.claim(second, "alice")
    land.board.complete(second, "alice")
    assert inbox(land) == [(a.REVIEW, second, a.APPROVE)]


def test_verification_failing_and_no_verify_command_are_kept(land: LandEnv) -> None:
    failing, _ = land.task_with({"app.py": ANSWER}, verify="test ! -e BROKEN")
    land.commit_on_main("BROKEN", "main broke the assumption\n")
    refuse(land, failing, Reason.VERIFICATION_FAILED)
    unverified, _ = land.task_with({"other.py": "x = 1\n"}, verify=None, finish="review")
    land.board.approve(unverified, "bob")
    refuse(land, unverified, Reason.VERIFICATION_REQUIRED)
    reasons = {item.task_id: item.why for item in land.board.inbox().items}
    assert "(verification_failed)" in reasons[failing]
    assert "(verification_required)" in reasons[unverified]
    assert [item.kind for item in land.board.inbox().items] == [a.LANDING_REFUSED] * 2
    # The drawer's preview says so too: merging cleanly is not landing (it said "lands cleanly onto
    # main" right after the refusal the inbox named).
    preview = land.trees.landing_preview(failing)
    assert preview.state == "clean" and preview.refused is not None
    assert preview.refused.startswith("verification_failed: ")
    assert preview.summary.endswith("its last landing was refused (verification_failed)")


def test_refusals_that_are_the_callers_are_not_kept(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER})
    refuse(land, task_id, Reason.SELF_REVIEW, actor="alice")  # the builder: answered at once
    with pytest.raises(BoardError):
        land.trees.land(task_id, actor="bob", strategy="octopus")
    assert inbox(land) == [(a.UNLANDED, task_id, a.LAND)]


def test_a_dropped_task_with_a_refusal_leaves_the_inbox(land: LandEnv) -> None:
    task_id, _ = land.task_with({"app.py": ANSWER})
    (land.repo / "README.md").write_text("# my uncommitted edit\n")
    refuse(land, task_id, Reason.BASE_CHECKED_OUT_DIRTY)
    land.board.drop(task_id)
    assert inbox(land) == []


def test_the_landing_reads_walk_indexes(tmp_path: Path) -> None:
    """The SQLite plans of the store's own statements: the live worktrees' index and the
    refusals' key, never a scan of `tasks` (done tasks are most of a board)."""
    from boardlib import Board

    Board(tmp_path / "board.db").close()
    conn = sqlite3.connect(tmp_path / "board.db")
    seen: list[str] = []

    class Planned(SqliteTx):
        def _fetchall(self, query, params=()):  # type: ignore[no-untyped-def]
            seen.extend(str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {query}", params))
            return []

    tx = Planned(conn)
    tx.unlanded_work()
    assert any("workspaces_live" in line for line in seen), seen
    assert not any(line.startswith("SCAN t") or line == "SCAN tasks" for line in seen), seen
    seen.clear()
    tx.land_refusals_waiting()
    assert not any("SCAN t" in line and "land_refusals" not in line for line in seen), seen
    conn.close()
