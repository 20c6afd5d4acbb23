"""Several machines on one board (docs/worktrees.md#several-machines): a janitor judges only the
worktrees its machine made (or rows from before hosts were recorded), and two janitors that share
no lock file, both finding one workspace stale, mark it once with one event."""

import json
import os
import select
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from boardlib import Board, BoardError
from boardlib.processes import HOST_ID_VARIABLE, machine_id
from boardlib.worktrees import Worktrees, collect_garbage
from tests.worktrees.conftest import make_repo

REPO = Path(__file__).resolve().parents[2]


def updates(board: Board, task_id: str) -> list[dict[str, object]]:
    return [e.data for e in board.events(task_id=task_id) if e.kind == "workspace_updated"]


def test_a_worktree_of_another_machine_is_left_to_it_an_older_one_judged_here(env, monkeypatch):
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    shutil.rmtree(made.worktree.worktree_path)  # as machine B sees it: no checkout
    shutil.rmtree(env.repo)  # nor the repository
    monkeypatch.delenv(HOST_ID_VARIABLE)
    assert machine_id() != "machine-a"
    state = env.trees.checkout_state(task_id)  # the drawer: not "deleted outside the board"
    assert state.summary == "checked out on another machine (machine-a), not on this one"
    before = (env.board.workspaces(task_id), env.board.events(task_id=task_id))
    report = collect_garbage(env.board)
    assert (env.board.workspaces(task_id), env.board.events(task_id=task_id)) == before
    assert report.stale == report.skipped == report.errors == []
    assert report.elsewhere == [{"workspaceId": made.workspace_id, "host": "machine-a"}]
    assert env.board.workspaces(task_id)[0].host == "machine-a"
    # A row made before hosts were recorded keeps the old rule: judged by whoever looks.
    with sqlite3.connect(env.tmp / "board.db") as conn:
        conn.execute("UPDATE workspaces SET host = NULL WHERE id = ?", (made.workspace_id,))
    report = collect_garbage(env.board)
    assert report.stale == [made.workspace_id] and report.elsewhere == []
    assert updates(env.board, task_id)[-1]["reason"] == f"repository {env.repo} is gone"


def test_a_worktree_another_host_name_made_is_judged_where_it_can_be_seen(env, monkeypatch):
    """A container started again gets a new host name: the worktrees it made before, still on
    its disk (a volume), are judged as its own, so a finished task's checkout is collected
    rather than kept for ever as another machine's."""
    monkeypatch.setenv(HOST_ID_VARIABLE, "container-1")
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "init.sh").write_text("VERIFY_CMD='true'\n")
    (path / "app.py").write_text("def answer():\n    return 41\n")
    assert env.trees.complete(task_id, "alice").task_status == "done"
    monkeypatch.setenv(HOST_ID_VARIABLE, "container-2")
    report = collect_garbage(env.board, retention_ms=0)
    assert report.elsewhere == [] and report.removed == [made.workspace_id]
    assert not path.exists()


def test_a_workspace_made_again_here_is_this_machines(env, monkeypatch):
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-a")
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    shutil.rmtree(made.worktree.worktree_path)
    monkeypatch.setenv(HOST_ID_VARIABLE, "machine-b")
    again = env.trees.provision(task_id, env.repo)  # checked out again on machine B
    assert again.workspace_id == made.workspace_id
    assert env.board.workspaces(task_id)[0].host == "machine-b"


def _why_no_namespace() -> str | None:
    if shutil.which("unshare") is None:
        return "no unshare(1) to give each janitor a mount namespace of its own"
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    probe = subprocess.run(
        ["unshare", *user, "-m", "--propagation", "private", "sh", "-c",
         "mount --bind /tmp /mnt && umount /mnt"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        return f"cannot bind-mount in a private namespace here: {probe.stderr.strip()}"
    return None


WHY_NOT = _why_no_namespace()


@pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
def test_two_janitors_sharing_no_lock_mark_a_stale_workspace_once(
    board_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "worktrees"
    monkeypatch.setenv("KANBAN_WORKTREES", str(root))
    repo = make_repo(tmp_path / "repo")
    with Board(board_path) as board:
        task_id = board.create_task("Fix it", description="d").id
        board.claim(task_id, "alice")
        made = Worktrees(board).provision(task_id, repo)
    locks = Path(made.worktree.worktree_path).parent / ".locks"
    assert locks.is_dir()
    shutil.rmtree(made.worktree.worktree_path)
    shutil.rmtree(repo)
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    racers = []
    for name in ("one", "two"):
        own = tmp_path / f"locks-{name}"  # each machine's own lock files, at the same path
        own.mkdir()
        command = (
            f"mount --bind '{own}' '{locks}' && exec '{sys.executable}' -m "
            f"tests.worktrees.gc_racer '{board_path}' '{root}'"
        )
        racers.append(
            subprocess.Popen(
                ["unshare", *user, "-m", "--propagation", "private", "sh", "-c", command],
                cwd=REPO,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    try:
        for racer in racers:  # both judged it stale and are about to write
            assert racer.stdout is not None
            readable, _, _ = select.select([racer.stdout], [], [], 120)  # a hung racer fails
            assert readable and racer.stdout.readline() == "ready\n"
        reports = []
        for racer in racers:
            out, _ = racer.communicate("\n", timeout=120)
            reports.append(json.loads(out.splitlines()[-1]))
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
                racer.wait()
    assert sorted(len(r["stale"]) for r in reports) == [0, 1]
    lost = next(r for r in reports if not r["stale"])
    assert lost["skipped"] == [
        {"workspaceId": made.workspace_id, "why": "another janitor acted on it first"}
    ]
    with Board(board_path) as board:
        marks = [u for u in updates(board, task_id) if u.get("status") == "stale"]
        assert len(marks) == 1 and board.workspaces(task_id)[0].status == "stale"


def test_a_conditional_workspace_update_that_loses_changes_nothing(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    env.board.update_workspace(made.workspace_id, status="stale", actor="gc")
    before = (env.board.workspaces(task_id), env.board.events(task_id=task_id))
    with pytest.raises(BoardError) as refused:
        env.board.update_workspace(made.workspace_id, status="stale", only_from="active")
    assert refused.value.reason == "conflict"
    assert (env.board.workspaces(task_id), env.board.events(task_id=task_id)) == before
