"""Guarantee: a verify command dies with the lander or gate that ran it, kill -9 included, and
what it started in the background is stopped by the next run that reuses its checkout.

A lander or `workspace complete` killed with SIGKILL while its verify command ran left the command's
process group running on, writing into the scratch checkout (or the worktree) the next landing (or
gate) then used.
"""

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib.processes import EXITED_STATES, stat_fields
from boardlib.worktrees.gate import _group_running
from tests.chaos.test_land_kills import lander
from tests.cli.conftest import Kanban
from tests.worktrees.conftest import GIT_ENV, LandEnv, make_land_env

pytestmark = [pytest.mark.slow, pytest.mark.sqlite_only]  # real processes killed mid-verify


@pytest.fixture
def land(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board_path: Path):
    made = make_land_env(tmp_path, monkeypatch, board_path)
    yield made
    made.board.close()


def hanging_verify(tmp_path: Path) -> tuple[str, Path, Path]:
    """A verify command that hangs the first time only: its shell, and a background child that
    outlives the shell, would each touch `marker` in 30 s. It writes its group id to `group`."""
    first, group, marker = tmp_path / "first", tmp_path / "group", tmp_path / "marker"
    first.touch()
    command = (
        f"test -e {first} || exit 0; rm {first}; (sleep 30; touch {marker}) & "
        f"echo $$ > {group}.tmp; mv {group}.tmp {group}; sleep 30; touch {marker}"
    )
    return command, group, marker


@contextlib.contextmanager
def killed_mid_verify(process, group: Path) -> Iterator[int]:  # type: ignore[no-untyped-def]
    """Wait for the verify command to start, SIGKILL `process`: the command's group id, whose
    processes are killed after the test whatever it found."""
    deadline = time.monotonic() + 60
    while not group.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the verify command never started"
        time.sleep(0.02)
    process.kill()
    process.communicate(timeout=30)
    pgid = int(group.read_text())
    try:
        yield pgid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)


def shell_dies(pgid: int) -> None:
    """The command's shell (the group's leader) dies with the process that ran it."""
    deadline = time.monotonic() + 5
    while stat_fields(pgid)[:1] not in ([], *([state] for state in EXITED_STATES)):
        assert time.monotonic() < deadline, "the verify command outlived its lander"
        time.sleep(0.02)


def test_a_killed_landers_verify_command_dies_and_the_next_landing_stops_its_leftovers(
    land: LandEnv, board_path: Path, tmp_path: Path
) -> None:
    command, group, marker = hanging_verify(tmp_path)
    task_id, _ = land.task_with({"app.py": "x = 1\n"}, finish="review", verify=command)
    with killed_mid_verify(lander(board_path, task_id), group) as pgid:
        shell_dies(pgid)
        assert _group_running(pgid)  # its background child holds the scratch checkout's lock
        result = land.trees.land(task_id, actor="bob")  # recovers the dead landing, verifies
        assert result.landed and land.board.get_task(task_id).status == "done"
        assert not _group_running(pgid)
    assert not marker.exists()


def test_a_killed_gates_verify_command_dies_and_the_next_gate_stops_its_leftovers(
    land: LandEnv, board_path: Path, tmp_path: Path
) -> None:
    command, group, marker = hanging_verify(tmp_path)
    task_id, _ = land.task_with({"app.py": "x = 1\n"}, finish="none", verify=command)
    kanban = Kanban(board_path, test_clock=False)
    env = {"KANBAN_WORKTREES": str(land.root)}
    env |= {key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")}
    gate = kanban.popen("task", "workspace", "complete", task_id, "--agent", "alice", **env)
    with killed_mid_verify(gate, group) as pgid:
        shell_dies(pgid)
        assert land.board.get_task(task_id).status == "in_review"  # the gate was cut short
        result = land.trees.complete(task_id, "alice")  # the gate runs again in the worktree
        assert result.task_status == "done" and not _group_running(pgid)
    assert not marker.exists()
