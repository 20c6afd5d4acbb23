"""Events (one per mutation, TTL purge), atomic edits, comments, soft delete, search."""

import pytest

from boardlib import Board, BoardConfig, BoardError, ManualClock, Reason
from boardlib import transitions as t
from boardlib.watch import Consumers
from tests.conftest import row, task_in


def test_every_mutation_appends_exactly_one_event(board: Board) -> None:
    steps = [
        ("task_created", lambda: board.create_task("a")),
        ("task_claimed", lambda: board.claim("TASK-1", "alice")),
        ("lease_renewed", lambda: board.heartbeat("TASK-1", "alice")),
        ("progress_logged", lambda: board.log_progress("TASK-1", "alice", "half way")),
        ("execution_started", lambda: board.open_execution("TASK-1", "sh")),
        (
            "execution_completed",
            lambda: board.close_execution("EXEC-1", "succeeded", agent="alice"),
        ),
        ("comment_added", lambda: board.add_comment("TASK-1", "note")),
        ("status_changed", lambda: board.complete("TASK-1", "alice")),
        ("status_changed", lambda: board.approve("TASK-1", "bob")),
        ("task_created", lambda: board.create_task("b")),
        ("dep_linked", lambda: board.link_dependency("TASK-2", "TASK-1")),
        ("task_updated", lambda: board.update_task("TASK-2", priority=3)),
        ("task_dropped", lambda: board.drop("TASK-2")),
        ("task_restored", lambda: board.restore("TASK-2")),
    ]
    for kind, step in steps:
        before = board.events()
        step()
        after = board.events(since=before[-1].seq if before else 0)
        assert [event.kind for event in after] == [kind]


def test_events_follow_a_cursor(board: Board) -> None:
    board.create_task("a")
    cursor = board.events()[-1].seq
    board.create_task("b")
    newer = board.events(since=cursor)
    assert [event.data.get("status") for event in newer] == ["todo"]
    assert newer[0].task_id == "TASK-2"


def test_purge_drops_expired_events_but_keeps_live_tasks_history(
    board_path: object, clock: ManualClock
) -> None:
    config = BoardConfig(event_ttl_seconds=60)
    with Board(board_path, clock=clock, config=config) as board:  # type: ignore[arg-type]
        finished = task_in(board, t.CANCELLED)
        live = board.create_task("live")
        clock.advance(seconds=61)
        purged = board.purge_events()
        assert purged == 2  # the cancelled task's create + cancel
        assert {event.task_id for event in board.events()} == {live.id}
        assert finished.id not in {event.task_id for event in board.events()}


def test_purge_goes_in_short_transactions_and_keeps_what_a_consumer_has_not_read(
    board_path: object, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backlog of expired events is purged a batch per transaction (small batches here), by
    a reconcile pass too; nothing after a consumer's cursor (`boardlib.watch`) goes, however old."""
    import boardlib.board as board_module

    monkeypatch.setattr(board_module, "PURGE_BATCH", 3)
    config = BoardConfig(event_ttl_seconds=60)
    with Board(board_path, clock=clock, config=config) as board:  # type: ignore[arg-type]
        finished = [task_in(board, t.CANCELLED) for _ in range(10)]
        seqs = [event.seq for event in board.events()]
        consumers = Consumers(board)
        consumers.open("mirror", since=seqs[11])
        consumers.release("mirror")
        writes = []
        real_write = board.store.write
        monkeypatch.setattr(
            board.store, "write", lambda work, **how: writes.append(1) or real_write(work, **how)
        )
        clock.advance(seconds=61)
        report = board.reconcile_stale_tasks()
        assert report.purged_events == 12 and len(writes) == 6  # the release, 3+3+3+3+an empty one
        assert [event.seq for event in board.events()] == seqs[12:]
        consumers.forget("mirror")
        assert board.purge_events() == len(seqs) - 12 - 1  # all but the newest
        assert {event.task_id for event in board.events()} == {finished[-1].id}


def test_status_and_fields_change_together_or_not_at_all(board: Board) -> None:
    task = task_in(board, t.DONE)
    with pytest.raises(BoardError):
        board.update_task(task.id, status=t.TODO, title="renamed")
    assert row(board, task.id).title == "task"
    todo = board.create_task("todo")
    moved = board.update_task(todo.id, status=t.BACKLOG, title="later", priority=4)
    assert (moved.status, moved.title, moved.priority) == (t.BACKLOG, "later", 4)
    assert board.events(task_id=todo.id)[-1].data["fields"] == ["priority", "title"]


def test_drop_hides_and_restore_returns(board: Board) -> None:
    task = board.create_task("hide me")
    board.drop(task.id)
    assert board.list_tasks() == []
    assert [x.id for x in board.list_tasks(include_dropped=True)] == [task.id]
    assert board.search("hide") == []
    board.restore(task.id)
    assert [x.id for x in board.search("HIDE")] == [task.id]


def test_active_tasks_cannot_be_dropped(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS)
    with pytest.raises(BoardError) as refused:
        board.drop(task.id)
    assert refused.value.reason is Reason.INVALID_STATE
    assert row(board, task.id).dropped == 0


def test_search_matches_id_title_description_and_escapes_wildcards(board: Board) -> None:
    board.create_task("Parser", description="handles 100% of input")
    board.create_task("Lexer")
    assert [x.title for x in board.search("100%")] == ["Parser"]
    assert [x.title for x in board.search("%")] == ["Parser"]
    assert [x.title for x in board.search("TASK-2")] == ["Lexer"]
    assert [x.title for x in board.search("ex")] == ["Lexer"]


def test_search_finds_an_id_as_the_filter_does_any_case_anywhere(board: Board) -> None:
    """Found by use: `kanban task view task-1` is refused "find it with `kanban task search
    TEXT`", and `kanban task search task-1` found nothing, where the TUI's filter and
    docs/tui.md find an id holding the text in any case. The exact id still comes first, so a
    limit never cuts it for the longer ids after it."""
    made = [board.create_task(f"t{n}").id for n in range(1, 13)]
    board.update_task(made[0], title="t1 edited first")
    board.update_task(made[11], title="t12 edited last")
    assert [x.id for x in board.search("task-1", limit=1)] == ["TASK-1"]
    assert [x.id for x in board.search("TASK-1", limit=1)] == ["TASK-1"]
    found = [x.id for x in board.search("ask-1")]  # no exact id: newest change first
    assert found[0] == "TASK-12" and sorted(found) == ["TASK-1", "TASK-10", "TASK-11", "TASK-12"]
    assert board.search("Task-1")[0].id == "TASK-1"
    assert [x.id for x in board.search("K-7")] == ["TASK-7"]


def test_a_search_typed_from_the_screen_finds_what_was_written(board: Board) -> None:
    """Agent text is drawn inert (ESC as ␛): a search typed or pasted from the screen (`␛[31m`)
    matched nothing, on both backends. It finds the task with the control written, and one whose
    title holds the picture itself."""
    from boardlib.columns import TaskSearch
    from boardlib.inert import inert

    written = board.create_task("\x1b[31mred alert\x07", description="line one\nline two")
    pictured = board.create_task("a literal \u241b[31m in its title")
    board.create_task("plain")
    shown = inert(written.title)
    assert shown == "\u241b[31mred alert\u2407"
    assert {x.id for x in board.search(shown[:5])} == {written.id, pictured.id}
    assert [x.id for x in board.search(shown)] == [written.id]
    assert [x.id for x in board.search("one\u2424line")] == [written.id]  # a newline, one line
    found = board.find_tasks(TaskSearch(words=(shown[:6], "alert\u2407")))
    assert [x.id for x in found] == [written.id]
    assert board.search("\u2400") == []  # no board keeps a NUL: nothing to find, no error


def test_list_filters(board: Board) -> None:
    a = board.create_task("a", team_id="red", role="worker")
    board.create_task("b", team_id="blue", role="reviewer")
    board.claim(a.id, "alice")
    assert [x.id for x in board.list_tasks(team_id="red")] == [a.id]
    assert [x.id for x in board.list_tasks(assignee="alice")] == [a.id]
    assert [x.title for x in board.list_tasks(role="reviewer")] == ["b"]
    assert [x.title for x in board.list_tasks(status=t.TODO)] == ["b"]
    with pytest.raises(BoardError):
        board.list_tasks(status="archived")


def test_comments_are_typed_and_ordered(board: Board) -> None:
    task = board.create_task("a")
    board.add_comment(task.id, "first", author_agent_id="alice")
    board.add_comment(task.id, "second", author_type="user", author_agent_id="maria")
    assert [(c.body, c.author_type) for c in board.comments(task.id)] == [
        ("first", "agent"), ("second", "user"),
    ]  # fmt: skip
    with pytest.raises(BoardError) as bad:
        board.add_comment(task.id, "x", author_type="robot")
    assert bad.value.reason is Reason.INVALID_INPUT
    with pytest.raises(BoardError) as missing:
        board.add_comment("TASK-99", "x")
    assert missing.value.reason is Reason.NOT_FOUND
    assert len(board.comments(task.id)) == 2


def test_a_comment_naming_nobody_is_logged_as_the_operator_or_the_system(board: Board) -> None:
    """The operator's comment was logged with no actor and read "unnamed actor", which is only for
    older rows."""
    task = board.create_task("a")
    seq = board.last_event_seq()
    board.add_comment(task.id, "a person's note", author_type="user")
    board.add_comment(task.id, "the gate's note", author_type="system")
    board.add_comment(task.id, "alice's note", author_agent_id="alice")
    assert [event.actor for event in board.events(since=seq)] == ["operator", "system", "alice"]
