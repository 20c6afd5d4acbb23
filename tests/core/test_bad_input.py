"""Bad input gets a clear, typed error and changes nothing (read back to prove it)."""

from typing import Any

import pytest

from boardlib import Board, BoardError, Reason


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"title": ""}, Reason.INVALID_INPUT),
        ({"title": "   "}, Reason.INVALID_INPUT),
        ({"title": "x" * 501}, Reason.INVALID_INPUT),
        ({"title": 42}, Reason.INVALID_INPUT),
        ({"title": "ok", "description": "d" * 20_001}, Reason.INVALID_INPUT),
        ({"title": "ok", "priority": "high"}, Reason.INVALID_INPUT),
        ({"title": "ok", "priority": True}, Reason.INVALID_INPUT),
        ({"title": "ok", "status": "in_progress"}, Reason.INVALID_INPUT),
        ({"title": "ok", "status": "archived"}, Reason.INVALID_INPUT),
        ({"title": "ok", "status": []}, Reason.INVALID_INPUT),  # unhashable: found by the fuzz
        ({"title": "ok", "team_id": ""}, Reason.INVALID_INPUT),
        ({"title": "ok", "kind": ""}, Reason.INVALID_INPUT),
        ({"title": "ok", "parent_task_id": "TASK-9"}, Reason.NOT_FOUND),
        ({"title": "ok", "depends_on": ["TASK-9"]}, Reason.NOT_FOUND),
    ],
)
def test_bad_create_creates_nothing(board: Board, kwargs: dict[str, Any], reason: Reason) -> None:
    kwargs = dict(kwargs)  # the parameter is shared by both backends' runs
    title = kwargs.pop("title")
    with pytest.raises(BoardError) as refused:
        board.create_task(title, **kwargs)
    assert refused.value.reason is reason
    assert refused.value.message
    assert board.list_tasks(include_dropped=True) == []
    assert board.events() == []


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({}, Reason.INVALID_INPUT),
        ({"title": ""}, Reason.INVALID_INPUT),
        ({"priority": 1.5}, Reason.INVALID_INPUT),
        ({"status": "archived"}, Reason.INVALID_INPUT),
        ({"status": {}}, Reason.INVALID_INPUT),
        (
            {"status": "done", "title": "ok", "human_override": True, "actor": ""},
            Reason.INVALID_INPUT,
        ),
        ({"status": "in_review"}, Reason.ILLEGAL_TRANSITION),
    ],
)
def test_bad_update_changes_nothing(board: Board, kwargs: dict[str, Any], reason: Reason) -> None:
    task = board.create_task("stable", priority=2)
    with pytest.raises(BoardError) as refused:
        board.update_task(task.id, **kwargs)
    assert refused.value.reason is reason
    assert board.get_task(task.id) == task
    assert len(board.events()) == 1


@pytest.mark.parametrize("agent", ["", "   ", None, "x" * 201])
def test_bad_agent_names_are_refused(board: Board, agent: Any) -> None:
    task = board.create_task("job")
    with pytest.raises(BoardError) as refused:
        board.claim(task.id, agent)
    assert refused.value.reason is Reason.INVALID_INPUT
    assert board.claim_next("ok") is not None  # the task was still there to take
    with pytest.raises(BoardError):
        board.claim_next(agent)


def test_unknown_task_everywhere_is_not_found(board: Board) -> None:
    calls = [
        lambda: board.get_task("TASK-1"),
        lambda: board.view("TASK-1"),
        lambda: board.explain("TASK-1"),
        lambda: board.heartbeat("TASK-1", "a"),
        lambda: board.complete("TASK-1", "a"),
        lambda: board.approve("TASK-1", "a"),
        lambda: board.move("TASK-1", "done"),
        lambda: board.drop("TASK-1"),
        lambda: board.ancestors("TASK-1"),
        lambda: board.open_execution("TASK-1", "sh"),
        lambda: board.close_execution("EXEC-1", "failed", agent="a"),
    ]
    for call in calls:
        with pytest.raises(BoardError) as missing:
            call()
        assert missing.value.reason is Reason.NOT_FOUND
        assert missing.value.to_dict()["error"].endswith("not found")


def test_an_empty_id_is_invalid_input_for_a_run_as_for_a_task(board: Board) -> None:
    """Stop 47's list: `exec finish ''` was not_found where `task view ''` is invalid_input."""
    for call in (
        lambda: board.get_task(""),
        lambda: board.get_execution(""),
        lambda: board.close_execution("", "failed", agent="a"),
    ):
        with pytest.raises(BoardError) as refused:
            call()
        assert refused.value.reason is Reason.INVALID_INPUT


def test_error_documents_are_json_ready(board: Board) -> None:
    task = board.create_task("job")
    board.claim(task.id, "alice")
    with pytest.raises(BoardError) as refused:
        board.claim(task.id, "bob")
    assert refused.value.to_dict() == {
        "error": (
            f"task {task.id} is not claimable: it is in progress, held by alice. Take other "
            "work with claim-next; this one is claimable again once alice releases it or its "
            "lease runs out"
        ),
        "reason": "conflict",
        "id": task.id,
        "current": "in_progress",
        "assignee": "alice",
    }


def test_text_no_store_can_keep_is_invalid_input_at_either_stores_door(board: Board) -> None:
    """Past every field check (here: straight at the store), a lone surrogate reaching a statement
    is the typed `invalid_input` on SQLite and on PostgreSQL, not a UnicodeEncodeError (a 500 over
    HTTP), and the write it was part of leaves nothing behind."""
    task = board.create_task("kept")
    before = board.last_event_seq()
    for door in (board.store.read, board.store.write):
        with pytest.raises(BoardError) as refused:
            door(lambda tx: tx.task("T-\udcff"))
        assert refused.value.reason is Reason.INVALID_INPUT
    assert board.get_task(task.id).title == "kept" and board.last_event_seq() == before


def test_a_nul_in_any_text_is_invalid_input_naming_the_field_on_either_backend(
    board: Board,
) -> None:
    """PostgreSQL text cannot hold a NUL (U+0000): every free text and id is refused with the
    field's name before anything is written, on SQLite as on PostgreSQL (there it was a
    DataError: a 500 over HTTP, `unexpected` on the CLI), so both boards hold the same."""
    from boardlib import PlanItem

    nul = "before\x00after"
    task = board.create_task("work")
    held = board.create_task("held")
    board.claim(held.id, "alice")
    before = (board.list_tasks(include_dropped=True), board.events(), board.comments(task.id))
    attempts = {
        "title": lambda: board.create_task(nul),
        "description": lambda: board.create_task("x", description=nul),
        "body": lambda: board.add_comment(task.id, nul),
        "reason": lambda: board.block(held.id, "alice", nul),
        "summary": lambda: board.complete(held.id, "alice", summary=nul),
        "note": lambda: board.log_progress(held.id, "alice", nul),
        "runReason": lambda: board.open_execution(held.id, "sh", agent="alice", run_reason=nul),
        "plan title": lambda: board.apply_plan([PlanItem("a", nul)], plan="p"),
        "plan key": lambda: board.apply_plan([PlanItem(nul, "t")], plan="p"),
        "id": lambda: board.get_task(f"{task.id}\x00"),
        "detail": lambda: board.record_verification(
            task.id, '{"status": "pass", "updatedAt": 1}', detail=nul
        ),
    }
    for what, attempt in attempts.items():
        with pytest.raises(BoardError) as refused:
            attempt()
        assert refused.value.reason is Reason.INVALID_INPUT, what
        field = what.split()[-1]
        assert refused.value.details.get("field") == field, (what, refused.value.to_dict())
    assert (
        board.list_tasks(include_dropped=True),
        board.events(),
        board.comments(task.id),
    ) == before


def test_copy_refuses_a_source_whose_column_names_could_carry_sql(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`kanban db copy` builds its INSERTs from the source's column names: a board file whose
    table has a quoted column name holding SQL is refused (`invalid_input`, exit 2), the target
    file it made is removed again, and the source is left byte for byte as it was."""
    import hashlib
    import sqlite3

    from boardlib.paths import board_files
    from tests.cli.conftest import Kanban

    source = tmp_path / "source.db"
    with Board(source) as board:
        board.create_task("one")
    conn = sqlite3.connect(source)
    conn.execute('ALTER TABLE task_comments ADD COLUMN "x) VALUES (1); DROP TABLE tasks; --"')
    conn.execute(
        "INSERT INTO task_comments (id, task_id, body, author_type, created_at, seq) "
        "VALUES ('C-1', 'TASK-1', 'hi', 'user', 0, 1)"
    )
    conn.commit()
    conn.close()  # the last connection out: the file is whole before it is hashed
    before = hashlib.sha256(source.read_bytes()).hexdigest()
    target = tmp_path / "target.db"
    error = Kanban(source).refused(
        "db", "copy", "--from", str(source), "--to", str(target), reason="invalid_input"
    )
    assert "not plain identifiers" in error["error"]
    assert hashlib.sha256(source.read_bytes()).hexdigest() == before
    assert not any(path.exists() for path in board_files(target))  # the file it made is gone


CONTROL_NAMES = ["ev\x1b[2Jil", "bell\x07", "new\nline", "rtl\u202eeman", "nul\x00", "c1\x9b31m"]


@pytest.mark.parametrize("bad", CONTROL_NAMES)
def test_a_name_with_a_control_or_format_character_is_refused_and_writes_nothing(
    board: Board, bad: str
) -> None:
    """Agent and actor names are drawn on operators' terminals and kept in audit rows: one with a
    control or format character is `invalid_input` for every verb, before anything is written."""
    task = board.create_task("work")
    held = board.create_task("held")
    board.claim(held.id, "alice")
    before = (board.list_tasks(include_dropped=True), board.events(), board.comments(task.id))
    attempts = [
        lambda: board.claim(task.id, bad),
        lambda: board.claim_next(bad),
        lambda: board.create_task("x", actor=bad),
        lambda: board.add_comment(task.id, "hi", author_agent_id=bad),
        lambda: board.cancel(task.id, actor=bad),
        lambda: board.transfer(held.id, "alice", bad),
        lambda: board.move(task.id, "blocked", actor=bad, reason="r"),
        lambda: board.create_task("x", team_id=bad),
    ]
    for attempt in attempts:
        with pytest.raises(BoardError) as refused:
            attempt()
        assert refused.value.reason is Reason.INVALID_INPUT
        assert f"U+{ord(next(c for c in bad if not c.isprintable())):04X}" in refused.value.message
    assert (
        board.list_tasks(include_dropped=True),
        board.events(),
        board.comments(task.id),
    ) == before


def test_printable_names_in_any_script_are_still_names(board: Board) -> None:
    task = board.create_task("work")
    for name in ("worker-1", "agent ada", "ремонт", "工人"):
        board.claim(task.id, name)
        board.release(task.id, name)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"pages": None}, "pages"),  # what the library fuzz found: a TypeError, not a refusal
        ({"pages": "done"}, "pages"),
        ({"pages": [None]}, "pages"),
        ({"anchors": ["done"]}, "anchors"),
        ({"anchors": {"done": None}}, "anchors"),
        ({"anchors": {"done": (1, "2")}}, "anchors"),
        ({"rematch": "yes"}, "rematch"),
        ({"changes": None}, "changes"),
    ],
)
def test_a_live_view_asked_badly_is_refused_typed(
    board: Board, kwargs: dict[str, Any], field: str
) -> None:
    board.create_task("stable")
    before = board.last_event_seq()
    with pytest.raises(BoardError) as refused:
        board.live_view(**kwargs)
    assert refused.value.reason is Reason.INVALID_INPUT
    assert refused.value.details.get("field") == field
    assert board.last_event_seq() == before
