"""Work that can never land does not wait in the inbox for ever, on both backends with real
repositories: a change the base holds already is recorded as landed in the base's tip (nothing
moves), and done work an operator decides will not land is archived with its reason, branch kept.
"""

import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib import attention as a
from boardlib.events import EventKind, read
from boardlib.narration import narrate
from boardlib.records import AuditEntry, Task, WontLand
from boardlib.wontland import ABANDON_ACTION, abandon_detail, wont_land
from tests.worktrees.conftest import ROOT, LandEnv, checkout_state, file_hashes, git
from tests.worktrees.test_land import ANSWER, board_snapshot


def inbox(land: LandEnv) -> list[tuple[str, str | None]]:
    return [(item.kind, item.task_id) for item in land.board.inbox().items]


def landed_events(land: LandEnv, task_id: str) -> list[dict[str, object]]:
    events = land.board.events(task_id=task_id)
    return [read(e.data) for e in events if e.kind == EventKind.TASK_LANDED]


# -- the change is on the base already ----------------------------------------------------------


@pytest.mark.parametrize("strategy", ["squash", "rebase", "merge"])
def test_a_change_already_on_main_is_recorded_there_and_leaves_the_inbox(
    land: LandEnv, strategy: str
) -> None:
    """Found as the operator: someone landed the same change by hand, the task stayed
    `unlanded: land` and every landing was refused `not_landable` ("already on main") until the
    janitor collected the worktree a day later."""
    task_id, path = land.task_with({"same.txt": "same\n"})
    tip = land.commit_on_main("same.txt", "same\n", "the same change, cherry-picked")
    assert inbox(land) == [(a.UNLANDED, task_id)]
    before = checkout_state(land.repo), board_snapshot(land, task_id)
    dry = land.trees.land(task_id, actor="bob", strategy=strategy, dry_run=True)
    assert (dry.dry_run, dry.landed, dry.already_on, dry.commit) == (True, False, True, tip)
    assert (checkout_state(land.repo), board_snapshot(land, task_id)) == before  # a question
    result = land.trees.land(task_id, actor="bob", strategy=strategy)
    assert (result.landed, result.already_on, result.commit, result.archived) == (
        True, True, tip, True,
    )  # fmt: skip
    assert land.main() == tip  # main did not move: no empty commit, no merge of nothing
    assert git(land.repo, "status", "--porcelain") == ""
    task = land.board.get_task(task_id)
    assert (task.landed_commit, task.landed_into, task.landed_by) == (tip, "main", "bob")
    # nothing was squashed, rebased or merged: no strategy is recorded, whichever was asked
    assert (task.landed_strategy, result.strategy, dry.strategy) == (None, None, None)
    [data] = landed_events(land, task_id)
    assert data["already_on"] is True and data["base_before"] == tip
    assert data["strategy"] is None
    [audit] = [row for row in land.board.audit(task_id) if row.action == "land"]
    assert "(no strategy)" in str(audit.detail) and strategy not in str(audit.detail)
    [event] = [e for e in land.board.events(task_id=task_id) if e.kind == EventKind.TASK_LANDED]
    assert "found already on the branch" in narrate(event)
    assert inbox(land) == []
    assert not path.exists()  # archived as after a landing
    assert land.board.workspaces(task_id)[-1].status == "archived"
    # landing twice changes nothing
    with pytest.raises(BoardError) as caught:
        land.trees.land(task_id, actor="bob")
    assert caught.value.details["why"] == "already_landed"


def test_approve_and_land_of_a_change_on_main_approves_it_without_a_verify_command(
    land: LandEnv,
) -> None:
    """Nothing moves, so nothing is verified: no verify command is asked for, and a task in
    review is approved in the same decision, as any approve-and-land."""
    task_id, _ = land.task_with({"same.txt": "same\n"}, verify=None, finish="review")
    tip = land.commit_on_main("same.txt", "same\n")
    result = land.trees.land(task_id, actor="bob")
    task = land.board.get_task(task_id)
    assert (result.already_on, task.status, task.landed_commit) == (True, "done", tip)
    [data] = landed_events(land, task_id)
    assert (data["from"], data["to"]) == ("in_review", "done")
    assert land.main() == tip and inbox(land) == []


def test_a_rebase_whose_replay_conflicts_on_the_way_to_main_s_tree_is_already_on(
    land: LandEnv,
) -> None:
    """Commit 1 of the task conflicts with main when replayed, commit 2 brings the file to what
    main has: the change as a whole is on main, so the rebase records it too (the preview said
    so, the landing said merge_conflict)."""
    task_id, path = land.task_with({"app.py": "first\n"}, finish="none")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first try")
    (path / "app.py").write_text(ANSWER)
    land.trees.complete(task_id, "alice")
    tip = land.commit_on_main("app.py", ANSWER)
    preview = land.trees.landing_preview(task_id, strategy="rebase")
    assert (preview.state, preview.why) == ("clean", "already_on")
    result = land.trees.land(task_id, actor="bob", strategy="rebase")
    assert (result.already_on, result.commit, land.main()) == (True, tip, tip)


def test_a_change_only_partly_on_main_lands_as_usual(land: LandEnv) -> None:
    task_id, _ = land.task_with({"same.txt": "same\n", "app.py": ANSWER})
    tip = land.commit_on_main("same.txt", "same\n")
    preview = land.trees.landing_preview(task_id)
    assert (preview.state, preview.why) == ("clean", None)
    result = land.trees.land(task_id, actor="bob")
    assert not result.already_on and result.commit != tip
    assert git(land.repo, "rev-parse", "main~1") == tip
    assert result.files == ["app.py"]
    assert land.board.get_task(task_id).landed_commit == result.commit


def test_a_refused_landing_whose_change_reaches_main_is_settled_by_the_next(land: LandEnv) -> None:
    """A refusal standing in the inbox (`landing_refused`) goes with the record too."""
    task_id, _ = land.task_with({"same.txt": "same\n"})
    (land.repo / "README.md").write_text("# my uncommitted edit\n")
    with pytest.raises(BoardError):
        land.trees.land(task_id, actor="bob")
    assert inbox(land) == [(a.LANDING_REFUSED, task_id)]
    git(land.repo, "checkout", "README.md")
    tip = land.commit_on_main("same.txt", "same\n")
    assert land.trees.land(task_id, actor="bob").already_on
    assert inbox(land) == [] and land.main() == tip
    assert land.board.store.read(lambda tx: tx.land_refusals_waiting()) == []


# -- an operator's "won't land" -------------------------------------------------------------------


def failing_on_main(land: LandEnv) -> str:
    """Done work whose verify command fails on the merged tree: every landing is refused
    `verification_failed`, and the base must never take that tree."""
    task_id, _ = land.task_with({"app.py": ANSWER}, verify="test ! -e BROKEN")
    land.commit_on_main("BROKEN", "main broke the assumption\n")
    with pytest.raises(BoardError) as caught:
        land.trees.land(task_id, actor="bob")
    assert caught.value.reason == Reason.VERIFICATION_FAILED
    assert inbox(land) == [(a.LANDING_REFUSED, task_id)]
    return task_id


def test_an_operator_decides_work_wont_land_and_it_leaves_the_inbox(land: LandEnv) -> None:
    task_id = failing_on_main(land)
    [ws] = land.board.workspaces(task_id)
    path, branch = Path(str(ws.worktree_path)), str(ws.branch)
    (path / "notes.txt").write_text("an uncommitted note\n")  # kept on the branch, not lost
    main, files, status = land.main(), file_hashes(land.repo), git(land.repo, "status")
    result = land.trees.abandon_landing(task_id, actor="operator:ada", reason="superseded by T-9")
    assert (result.archived, result.committed, result.branch) == (True, True, branch)
    assert git(land.repo, "rev-parse", f"refs/heads/{branch}") == result.commit
    assert git(land.repo, "show", f"{result.commit}:notes.txt") == "an uncommitted note"
    assert not path.exists()
    # the base and the user's checkout are untouched
    assert (land.main(), file_hashes(land.repo), git(land.repo, "status")) == (main, files, status)
    task = land.board.get_task(task_id)
    assert (task.status, task.landed_commit) == ("done", None)
    assert inbox(land) == []
    assert land.board.store.read(lambda tx: tx.land_refusals_waiting()) == []
    [audit] = [row for row in land.board.audit(task_id) if row.action == "land_abandoned"]
    assert audit.actor == "operator:ada" and "superseded by T-9" in str(audit.detail)
    assert branch in str(audit.detail)
    [event] = [e for e in land.board.events(task_id=task_id) if e.kind == "workspace_updated"][-1:]
    assert read(event.data)["status"] == "archived"
    assert "won't land, decided by operator:ada: superseded by T-9" in read(event.data)["reason"]
    # the task read says so, by whom and why (`wontLand`): not only the audit row and an event
    view = land.board.view(task_id)
    assert view.wont_land is not None
    assert (view.wont_land.by, view.wont_land.reason) == ("operator:ada", "superseded by T-9")
    assert view.wont_land.kept == f"its work kept on {branch} at {result.commit[:12]}"
    assert view.to_json()["wontLand"]["reason"] == "superseded by T-9"
    assert land.board.wont_land_task_ids() == {task_id}  # what a board view marks cards by
    # deciding twice: nothing left to archive, the board says so again (one more audit row)
    again = land.trees.abandon_landing(task_id, actor="operator:ada", reason="still; really")
    assert not again.archived and again.commit == result.commit
    decided = land.board.view(task_id).wont_land
    assert decided is not None and decided.reason == "still; really"


def test_work_that_wont_land_landed_later_from_its_branch_says_landed(land: LandEnv) -> None:
    """The kept branch lands once main is fixed: the task then says landed, not won't land."""
    task_id = failing_on_main(land)
    land.trees.abandon_landing(task_id, actor="operator:ada", reason="main is broken")
    assert land.board.view(task_id).wont_land is not None
    git(land.repo, "rm", "-q", "BROKEN")
    git(land.repo, "commit", "-q", "-m", "main fixed")
    result = land.trees.land(task_id, actor="bob")
    assert result.landed and git(land.repo, "show", "main:app.py") == ANSWER.strip()
    view = land.board.view(task_id)
    assert view.task.landed_commit == result.commit and view.wont_land is None
    assert view.to_json()["wontLand"] is None
    assert land.board.wont_land_task_ids() == set()


@pytest.mark.parametrize(
    ("actor", "reason", "expected"),
    [
        ("bob", "no", Reason.OPERATOR_ONLY),  # an agent never decides it
        ("operator:ada", None, Reason.INVALID_INPUT),  # why is required
        ("operator:ada", "  ", Reason.INVALID_INPUT),
    ],
)
def test_a_wont_land_refused_changes_nothing(
    land: LandEnv, actor: str, reason: str | None, expected: Reason
) -> None:
    task_id = failing_on_main(land)
    before = checkout_state(land.repo), board_snapshot(land, task_id), inbox(land)
    [ws] = land.board.workspaces(task_id)
    with pytest.raises(BoardError) as caught:
        land.trees.abandon_landing(task_id, actor=actor, reason=reason)
    assert caught.value.reason == expected, caught.value.to_dict()
    assert (checkout_state(land.repo), board_snapshot(land, task_id), inbox(land)) == before
    assert Path(str(ws.worktree_path)).is_dir()


def test_work_in_review_or_landed_is_not_abandoned(land: LandEnv) -> None:
    review, _ = land.task_with({"app.py": ANSWER}, finish="review")
    before = checkout_state(land.repo), board_snapshot(land, review)
    with pytest.raises(BoardError) as caught:
        land.trees.abandon_landing(review, actor="operator", reason="no")
    assert caught.value.reason == Reason.INVALID_STATE and "reject it" in caught.value.message
    assert (checkout_state(land.repo), board_snapshot(land, review)) == before
    landed, _ = land.task_with({"other.py": "x = 1\n"})
    land.trees.land(landed, actor="bob", keep=True)
    with pytest.raises(BoardError) as caught:
        land.trees.abandon_landing(landed, actor="operator", reason="no")
    assert caught.value.details["why"] == "already_landed"


def test_a_landing_that_joins_while_wont_land_is_decided_keeps_its_checkout(
    land: LandEnv,
) -> None:
    """A landing joins the queue after "won't land" looked (none under way) and before it wrote:
    the decision is refused (`conflict`) and the workspace keeps its checkout. The old code
    removed the checkout first, then was refused: an active workspace without a checkout until
    the janitor. The racer joins from git's post-commit hook, run while the uncommitted part is
    committed to the task branch (a real process, as a landing's join)."""
    task_id = failing_on_main(land)
    [ws] = land.board.workspaces(task_id)
    path = Path(str(ws.worktree_path))
    (path / "notes.txt").write_text("an uncommitted note\n")
    ready = land.tmp / "racer.pid"
    racer = [sys.executable, "-m", "tests.worktrees.queue_holder", str(land.board.path),
             task_id, ws.repo_path, "refs/heads/main", str(ready)]  # fmt: skip
    hook = land.repo / ".git" / "hooks" / "post-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        f'#!/bin/sh\nrm -f "$0"\ncd {shlex.quote(str(ROOT))}\n'
        f"env -u GIT_DIR -u GIT_INDEX_FILE PYTHONPATH={shlex.quote(str(ROOT))} "
        f"{shlex.join(racer)} </dev/null >/dev/null 2>&1 &\n"
        f"while [ ! -s {shlex.quote(str(ready))} ]; do sleep 0.05; done\n"
    )
    hook.chmod(0o755)
    try:
        with pytest.raises(BoardError) as caught:
            land.trees.abandon_landing(task_id, actor="operator:ada", reason="superseded")
        assert caught.value.reason == Reason.CONFLICT, caught.value.to_dict()
        assert path.is_dir() and (path / "notes.txt").is_file()
        [ws] = land.board.workspaces(task_id)
        assert ws.status == "active"
        assert str(path) in git(land.repo, "worktree", "list", "--porcelain")
        assert not [row for row in land.board.audit(task_id) if row.action == "land_abandoned"]
    finally:
        if ready.exists():
            os.kill(int(ready.read_text()), signal.SIGKILL)
    deadline = time.monotonic() + 10  # its place is freed at once once its process is gone
    while land.trees.lander().queue.entry_of_task(task_id) is not None:
        entry = land.trees.lander().queue.entry_of_task(task_id)
        if entry is not None and entry.dead(land.board.now()):
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    result = land.trees.abandon_landing(task_id, actor="operator:ada", reason="superseded")
    assert result.archived and not path.exists()


def test_a_wont_land_stands_only_on_the_done_stint_it_was_decided_in() -> None:
    """Read back from the audit: a decision from before the task last became done (reopened and
    done again with new work) no longer stands; the reason may hold "; " itself."""
    task = Task(id="T-1", title="x", status="done", created_at=0, updated_at=0, status_since=2000)
    detail = abandon_detail("operator:ada", "first; then", "no branch left")
    earlier = AuditEntry(seq=1, actor="operator:ada", action=ABANDON_ACTION, created_at=1000,
                         detail=detail)  # fmt: skip
    assert wont_land(task, [earlier]) is None
    later = AuditEntry(seq=2, actor="operator:ada", action=ABANDON_ACTION, created_at=3000,
                       detail=detail)  # fmt: skip
    assert wont_land(task, [earlier, later]) == WontLand(
        by="operator:ada", at=3000, reason="first; then", kept="no branch left"
    )
    task.landed_commit = "a" * 40
    assert wont_land(task, [earlier, later]) is None
