"""Several machines on one board (docs/worktrees.md#several-machines): landing, sync, complete and
pause of a task whose worktree is on machine A, asked on machine B, are refused naming A and
change nothing (not landed from the branch under A's checkout, not "gone"); on A they work.
Machine B is played with KANBAN_HOST_ID and the checkout (or the repository) moved off the disk
while B looks, as B's disk would not hold it."""

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib.landings import LandQueue, holder_gone
from boardlib.processes import HOST_ID_VARIABLE, host_key
from tests.worktrees.conftest import LandEnv, checkout_state, git
from tests.worktrees.test_land import ANSWER, board_snapshot

ELSEWHERE = "on machine machine-a, not on this one"


@contextlib.contextmanager
def on_machine_b(monkeypatch: pytest.MonkeyPatch, *paths: Path, park: Path) -> Iterator[None]:
    """Machine B: another host id, and `paths` (a checkout, a repository) not on its disk; put
    back as machine A had them afterwards."""
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-b")
    park.mkdir(exist_ok=True)
    moved = [(path, park / f"{index}-{path.name}") for index, path in enumerate(paths)]
    for path, away in moved:
        path.rename(away)
    try:
        yield
    finally:
        for path, away in moved:
            away.rename(path)
        monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")


def everything(land: LandEnv, task_id: str) -> tuple[object, ...]:
    """The board (task, events, comments, audit, landing queue, workspaces) and the repository
    (files, status, every ref, registered worktrees)."""
    return (
        board_snapshot(land, task_id),
        [ws.to_json() for ws in land.board.workspaces(task_id)],
        checkout_state(land.repo),
        git(land.repo, "worktree", "list", "--porcelain"),
    )


def refused_here(call, land: LandEnv, task_id: str, reason: Reason) -> BoardError:  # type: ignore[no-untyped-def]
    before = everything(land, task_id)
    with pytest.raises(BoardError) as caught:
        call()
    assert caught.value.reason == reason, caught.value.to_dict()
    assert caught.value.details["host"] == "machine-a"
    assert ELSEWHERE in caught.value.message
    assert everything(land, task_id) == before
    return caught.value


def test_a_landing_on_another_machine_names_it_writes_nothing_and_lands_there(
    land: LandEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old code landed B's view of it, the committed branch: a task in review with its work
    left uncommitted on A landed without that work, and the branch under A's checkout was
    deleted and the workspace archived (A's checkout left for ever)."""
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")
    done, done_path = land.task_with({"app.py": ANSWER})
    review, review_path = land.task_with({"NOTES.md": "kept\n"}, finish="review", commit=False)
    with on_machine_b(monkeypatch, done_path, review_path, park=land.tmp / "b"):
        for task_id in (done, review):
            error = refused_here(
                lambda t=task_id: land.trees.land(t, actor="operator"),
                land, task_id, Reason.NOT_LANDABLE,
            )  # fmt: skip
            assert error.details["why"] == "elsewhere"
            assert error.message == (
                f"cannot land {task_id} here: its worktree is {ELSEWHERE}; land it from there"
            )
            refused_here(
                lambda t=task_id: land.trees.land(t, actor="operator", dry_run=True),
                land, task_id, Reason.NOT_LANDABLE,
            )  # fmt: skip
            refused_here(
                lambda t=task_id: land.trees.landing_choices(t), land, task_id,
                Reason.NOT_LANDABLE,
            )  # fmt: skip
            preview = land.trees.landing_preview(task_id)  # the drawer's mergeability line
            assert (preview.state, preview.why) == ("unavailable", "elsewhere")
            assert ELSEWHERE in preview.summary
        shown = land.trees.detail(done)  # the drawer reads the committed work from the branch
        assert shown.checkout is not None and shown.checkout.summary == (
            "checked out on another machine (machine-a), not on this one"
        )
        assert "+    return 43" in shown.diff and shown.sor_files
    for task_id in (done, review):  # on machine A, with its checkout: lands, all of it
        assert land.trees.land(task_id, actor="operator").landed
    assert git(land.repo, "show", "main:NOTES.md") == "kept"
    assert git(land.repo, "show", "main:app.py") == ANSWER.strip()


def test_a_landing_where_the_repository_is_not_either_names_the_machine(
    land: LandEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old code said "its repository ... is gone" (`no_worktree`): sent the operator looking
    for a repository that is on machine A."""
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")
    task_id, path = land.task_with({"app.py": ANSWER})
    before = board_snapshot(land, task_id), [w.to_json() for w in land.board.workspaces(task_id)]
    with on_machine_b(monkeypatch, path, land.repo, park=land.tmp / "b"):
        with pytest.raises(BoardError) as caught:
            land.trees.land(task_id, actor="operator")
        preview = land.trees.landing_preview(task_id)
        after = board_snapshot(land, task_id), [w.to_json() for w in land.board.workspaces(task_id)]
    assert caught.value.reason == Reason.NOT_LANDABLE
    assert caught.value.details == {"why": "elsewhere", "id": task_id, "host": "machine-a"}
    assert "gone" not in caught.value.message and ELSEWHERE in caught.value.message
    assert (preview.why, after) == ("elsewhere", before)
    assert land.trees.land(task_id, actor="operator").landed  # from machine A


def test_sync_complete_and_pause_on_another_machine_name_it_and_change_nothing(
    land: LandEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old code's complete on B re-attached the branch there, found no change (the work was
    uncommitted on A), and made the task done with its branch deleted: the work was lost to
    the board. Its sync said "not checked out; provision it", its pause "paused"."""
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")
    task_id, path = land.task_with({"app.py": ANSWER}, finish="none")
    with on_machine_b(monkeypatch, path, park=land.tmp / "b"):
        refused_here(
            lambda: land.trees.complete(task_id, "alice"), land, task_id, Reason.INVALID_STATE
        )
        refused_here(
            lambda: land.trees.sync(task_id, actor="operator"), land, task_id,
            Reason.INVALID_STATE,
        )  # fmt: skip
        error = refused_here(
            lambda: land.trees.pause(task_id, actor="operator"), land, task_id,
            Reason.INVALID_STATE,
        )  # fmt: skip
        assert error.message == (
            f"cannot pause here: the worktree of {task_id} is {ELSEWHERE}; pause it from there"
        )
        before = everything(land, task_id)
        resumed = land.trees.resume(task_id)  # said only `live: false`, as if paused away
        assert (resumed.live, resumed.host) == (False, "machine-a")
        assert resumed.warnings == [
            f"the worktree of {task_id} is {ELSEWHERE}; resume it from there"
        ]
        assert everything(land, task_id) == before
    resumed = land.trees.resume(task_id)  # on machine A: read from its files
    assert resumed.live and resumed.host is None and resumed.warnings == []
    result = land.trees.complete(task_id, "alice")  # on machine A: the gate judges the work
    assert result.task_status == "done" and result.gate_ran
    assert land.board.workspaces(task_id)[0].host == "machine-a"


def test_a_dead_landing_of_another_machine_holds_its_branch_until_its_lease_runs_out(
    land: LandEnv,
) -> None:
    """Machine A's lander took its turn on main and died. Its pid means nothing on machine B: B
    neither judges it gone by a pid (here the pid of a process that exited on B) nor waits for
    ever. B's landing behind it waits, gives up `busy` while A's lease runs, and once the lease
    ran out settles A's row (nothing landed) and lands."""
    first, _ = land.task_with({"app.py": ANSWER})
    second, _ = land.task_with({"notes.txt": "notes\n"})
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    token = f"another-boot:4026531836/{gone.stdout.strip()}/12345/0123456789ab"
    assert not token.startswith(host_key()) and not holder_gone(token)
    fence = git(land.repo, "commit-tree", "main^{tree}", "-p", "main", "-m", "A's fence")
    a = LandQueue(land.board, lease_ms=3000)  # machine A's landing: 3 s, B waits 1 s of it
    [ws] = land.board.workspaces(first)
    entry = a.join(first, repo_path=ws.repo_path, ref="refs/heads/main", lander="carol",
                   holder=token, strategy="squash", fence=fence)  # fmt: skip
    turn = a.take_turn(entry)
    assert turn is not None and turn.state == "active"
    main = land.main()
    with pytest.raises(BoardError) as caught:  # A's lease runs: B waits, never takes it over
        land.trees.lander(queue_timeout_s=1.0).land(second, actor="bob")
    assert caught.value.reason == Reason.BUSY, caught.value.to_dict()
    assert a.entry(entry.id) is not None and land.main() == main
    result = land.trees.lander(queue_timeout_s=60).land(second, actor="bob")  # A's lease ends
    assert result.landed and land.board.now() >= turn.lease_until
    assert a.entry(entry.id) is None  # settled: it had moved nothing
    assert land.board.get_task(first).landed_commit is None
    assert land.board.get_task(second).landed_commit == result.commit == land.main()
    assert git(land.repo, "rev-parse", "main~1") == main
