"""Several machines on one board, through the real console script on both backends: `kanban task
land` on machine B of a task whose worktree is on machine A is one stderr line naming A, exit 2,
nothing written. Machine B is played with KANBAN_HOST_ID and the checkout moved off the disk
while B looks."""

from pathlib import Path

import pytest

from boardlib.processes import HOST_ID_VARIABLE
from tests.cli.conftest import Kanban, unchanged
from tests.worktrees.conftest import GIT_ENV, checkout_state, make_land_env

ANSWER = "def answer():\n    return 43\n"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board_path: Path):
    land = make_land_env(tmp_path, monkeypatch, board_path)
    env = {
        "KANBAN_WORKTREES": str(land.root),
        **{key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")},
    }
    yield Kanban(board_path), land, env
    land.board.close()


def test_land_on_another_machine_names_it_and_writes_nothing(setup, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    kanban, land, env = setup
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
