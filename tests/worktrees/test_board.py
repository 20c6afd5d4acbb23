"""The board's workspace pointers (the small `Board` methods the worktree subsystem writes with)."""

import pytest

from boardlib import Board, BoardError, ManualClock, Reason


@pytest.fixture
def board(tmp_path):
    with Board(tmp_path / "b.db", clock=ManualClock()) as b:
        yield b


def record(board, task_id, **kw):
    values = dict(repo_path="/r", branch="kanban/task-x", worktree_path="/w/x", base_commit="abc")
    return board.record_workspace(task_id, **{**values, **kw})


def test_record_workspace_writes_the_row_the_task_refs_and_one_event(board):
    task = board.create_task("t")
    seq = board.check().last_event_seq
    ws = record(board, task.id, actor="alice")
    assert (ws.status, ws.repo_path, ws.base_commit) == ("active", "/r", "abc")
    fresh = board.get_task(task.id)
    assert (fresh.worktree_ref, fresh.branch_ref) == ("/w/x", "kanban/task-x")
    events = board.events(since=seq)
    assert [(e.kind, e.actor) for e in events] == [("workspace_provisioned", "alice")]
    assert events[0].data["workspaceId"] == ws.id
    assert board.workspaces_with_status("active") == [ws]


def test_record_workspace_refuses_bad_input_and_changes_nothing(board):
    task = board.create_task("t")
    with pytest.raises(BoardError) as missing:
        record(board, "TASK-404")
    assert missing.value.reason == Reason.NOT_FOUND
    with pytest.raises(BoardError) as empty:
        record(board, task.id, branch="  ")
    assert empty.value.reason == Reason.INVALID_INPUT
    assert board.workspaces(task.id) == [] and board.get_task(task.id).worktree_ref is None


def test_update_workspace_moves_the_lifecycle_with_one_event(board):
    task = board.create_task("t")
    ws = record(board, task.id)
    board.clock.advance(seconds=5)
    seq = board.check().last_event_seq
    stale = board.update_workspace(ws.id, status="stale", actor="gc", reason="vanished")
    assert stale.status == "stale" and stale.last_used_at == ws.last_used_at + 5000
    [event] = board.events(since=seq)
    assert (event.kind, event.actor) == ("workspace_updated", "gc")
    assert event.data == {"workspaceId": ws.id, "status": "stale", "from": "active",
                          "reason": "vanished"}  # fmt: skip
    touched = board.update_workspace(ws.id)
    assert touched.status == "stale"
    assert board.workspaces_with_status("stale") == [touched]


def test_update_workspace_refusals(board):
    task = board.create_task("t")
    ws = record(board, task.id)
    with pytest.raises(BoardError) as bad:
        board.update_workspace(ws.id, status="paused")
    assert bad.value.reason == Reason.INVALID_INPUT
    with pytest.raises(BoardError) as missing:
        board.update_workspace("WS-404", status="stale")
    assert missing.value.reason == Reason.NOT_FOUND
    with pytest.raises(BoardError):
        board.workspaces_with_status("paused")
    assert board.workspaces(task.id)[0] == ws
