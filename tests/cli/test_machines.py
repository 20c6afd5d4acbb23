"""Several machines on one board, through the real console script on both backends: `kanban task
land` on machine B of a task whose worktree is on machine A is one stderr line naming A, exit 2,
nothing written; `kanban db check` lists another machine's checkouts under `elsewhere` and this
machine's missing one among its problems (exit 1). Machine B is played with KANBAN_HOST_ID and
the checkout moved off the disk while B looks."""

import shutil

from boardlib.processes import HOST_ID_VARIABLE
from tests.cli.conftest import unchanged
from tests.cli.test_land import ANSWER
from tests.worktrees.conftest import checkout_state


def test_land_on_another_machine_names_it_and_writes_nothing(land_setup, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    kanban, land, env = land_setup
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")
    task_id, path = land.task_with({"app.py": ANSWER})
    away = land.tmp / "away"
    path.rename(away)  # not on machine B's disk
    b = {**env, HOST_ID_VARIABLE: "machine-b"}
    before = checkout_state(land.repo)
    with unchanged(kanban.db):
        for extra in ((), ("--dry-run",)):
            error = kanban.refused("task", "land", task_id, *extra, env=b, reason="not_landable")
            assert (error["why"], error["host"]) == ("elsewhere", "machine-a")
            assert error["error"] == (
                f"cannot land {task_id} here: its worktree is on machine machine-a, not on "
                "this one; land it from there"
            )
        preview = kanban.ok("task", "land", task_id, "--preview", env=b)
        assert (preview["state"], preview["why"]) == ("unavailable", "elsewhere")
    assert checkout_state(land.repo) == before
    away.rename(path)
    a = {**env, HOST_ID_VARIABLE: "machine-a"}
    assert kanban.ok("task", "land", task_id, env=a)["landed"] is True


def test_db_check_lists_another_machines_checkout_fails_on_its_own(land_setup, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The old check looked at no checkout: exit 0 with a checkout deleted under the board."""
    kanban, land, env = land_setup
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")
    theirs, their_path = land.task_with({"app.py": ANSWER}, finish="none")
    seen, _ = land.task_with({"app.py": ANSWER}, finish="none")  # A's, on a disk B shares
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-b")
    deleted, deleted_path = land.task_with({"app.py": ANSWER}, finish="none")
    paused, _ = land.task_with({"app.py": ANSWER}, finish="none")
    land.trees.pause(paused, actor="operator")
    their_path.rename(land.tmp / "away")  # on machine A's disk only
    shutil.rmtree(deleted_path)  # this machine's, deleted behind the board's back
    ws = {task_id: land.board.workspaces(task_id)[0].id for task_id in (theirs, deleted)}
    b = {**env, HOST_ID_VARIABLE: "machine-b"}
    with unchanged(kanban.db):
        result = kanban.run("db", "check", env=b)
    assert result.code == 1, str(result)
    assert result.doc["ok"] is False
    assert result.doc["elsewhere"] == [
        {"workspaceId": ws[theirs], "taskId": theirs, "host": "machine-a"}
    ]
    [problem] = result.doc["problems"]
    assert problem.startswith(f"workspace {ws[deleted]} of {deleted}: the checkout at ")
    assert "was deleted outside the board" in problem
    assert result.error["reason"] == "integrity" and result.error["problems"] == [problem]
    assert seen not in problem and paused not in problem
    land.trees.provision(deleted, land.repo)  # checked out again here: healthy
    healthy = kanban.ok("db", "check", env=b)
    assert healthy["ok"] is True and healthy["problems"] == []
    assert [entry["taskId"] for entry in healthy["elsewhere"]] == [theirs]
