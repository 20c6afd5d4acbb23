"""The agent contract (issue 9) in the library, where every surface (CLI, HTTP, MCP, TUI) gets it:
who may move what, runs that belong to their holder, caps that follow the actor, files that are
refused rather than rewritten, numbers and settings that are typed refusals. Each refusal is
checked for its reason and for an unchanged board (`tests/cli/conftest.py's unchanged`)."""

import json
import sqlite3
from pathlib import Path

import pytest

from boardlib import Board, BoardConfig, BoardError, ManualClock, Reason
from boardlib import transitions as t
from boardlib.actors import GATE, OPERATOR, is_agent, is_operator, is_system, operator_named
from boardlib.board import PlanItem
from boardlib.clock import moment
from boardlib.errors import HTTP_STATUS
from boardlib.location import DatabaseUrl
from boardlib.paths import board_location
from tests.backends import hold_write_lock, is_postgres, raw_execute
from tests.cli.conftest import file_digest, unchanged
from tests.conftest import task_in


def refused(board: Board, reason: Reason, call) -> BoardError:  # type: ignore[no-untyped-def]
    """`call` is refused with `reason` and writes nothing."""
    with unchanged(board.path), pytest.raises(BoardError) as caught:
        call()
    assert caught.value.reason is reason, caught.value
    return caught.value


def test_who_acts_is_decided_from_the_actor_string() -> None:
    assert is_operator(OPERATOR) and is_operator(operator_named("olga"))
    assert is_system("system") and is_system(GATE)
    for agent in ("alice", "worker-7", "operators", "sys"):
        assert is_agent(agent), agent
    for other in (OPERATOR, "operator:olga", "system", GATE, None):
        assert not is_agent(other), other


def test_every_new_reason_has_an_http_status() -> None:
    assert set(HTTP_STATUS) == set(Reason)
    assert HTTP_STATUS[Reason.NO_BOARD] == 404
    assert HTTP_STATUS[Reason.NOT_A_BOARD] == 422
    assert HTTP_STATUS[Reason.UNSUPPORTED_BACKEND] == 422


# -- moves --------------------------------------------------------------------------------------


def test_the_builder_never_moves_its_work_into_done_or_out_of_review(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="dana")
    refused(board, Reason.SELF_REVIEW, lambda: board.move(task.id, t.DONE, actor="dana"))
    board.complete(task.id, "dana")
    for target in (t.DONE, t.IN_PROGRESS, t.BLOCKED, t.CANCELLED):
        refused(
            board, Reason.SELF_REVIEW,
            lambda target=target: board.move(task.id, target, actor="dana", reason="x"),
        )  # fmt: skip
    # Another agent does not move it to done either: that is what approve is for.
    refused(board, Reason.NOT_ASSIGNEE, lambda: board.move(task.id, t.DONE, actor="rita"))
    assert board.approve(task.id, "rita").status == t.DONE


def test_an_agent_never_moves_another_agents_task(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="dana")
    for call in (
        lambda: board.move(task.id, t.TODO, actor="frank"),
        lambda: board.cancel(task.id, actor="frank"),
        lambda: board.update_task(task.id, status=t.BACKLOG, title="mine", actor="frank"),
    ):
        error = refused(board, Reason.NOT_ASSIGNEE, call)
        assert error.details["assignee"] == "dana"
    loose = board.create_task("unheld")
    refused(board, Reason.NOT_ASSIGNEE, lambda: board.move(loose.id, t.BACKLOG, actor="frank"))
    blocked = task_in(board, t.BLOCKED, builder="dana")
    refused(board, Reason.NOT_ASSIGNEE, lambda: board.unblock(blocked.id, actor="frank"))


def test_the_holder_moves_its_own_task_with_a_live_lease_and_epoch(
    board: Board, clock: ManualClock
) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="dana")
    stale = task.claim_epoch - 1
    refused(
        board, Reason.STALE_CLAIM, lambda: board.move(task.id, t.TODO, actor="dana", epoch=stale)
    )
    moved = board.move(task.id, t.BLOCKED, actor="dana", reason="waiting", epoch=task.claim_epoch)
    assert moved.status == t.BLOCKED
    assert board.unblock(task.id, actor="dana").status == t.TODO
    again = board.claim(task.id, "dana")
    clock.advance(ms=board.config.lease_ms + 1)
    refused(board, Reason.STALE_CLAIM, lambda: board.move(again.id, t.TODO, actor="dana"))


def test_operators_and_the_system_are_not_bound_by_the_agent_contract(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW, builder="dana")
    back = board.move(task.id, t.IN_PROGRESS, actor=GATE, holder="dana", reason="failed")
    assert (back.status, back.assignee_agent_id) == (t.IN_PROGRESS, "dana")
    assert board.move(task.id, t.DONE, actor=operator_named("olga")).status == t.DONE
    # Naming who takes the task is not an agent's to do.
    other = task_in(board, t.IN_REVIEW, builder="dana")
    refused(
        board, Reason.INVALID_INPUT,
        lambda: board.move(other.id, t.IN_PROGRESS, actor="rita", holder="dana"),
    )  # fmt: skip


# -- runs ---------------------------------------------------------------------------------------


def test_a_run_is_closed_only_by_its_holder(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="dana")
    run = board.open_execution(task.id, "sh", agent="dana")
    refused(
        board, Reason.NOT_ASSIGNEE,
        lambda: board.close_execution(run.id, "succeeded", agent="frank", cost_usd=9.0),
    )  # fmt: skip
    refused(
        board, Reason.STALE_CLAIM,
        lambda: board.close_execution(run.id, "succeeded", agent="dana", epoch=99),
    )  # fmt: skip
    closed = board.close_execution(
        run.id, "succeeded", agent="dana", epoch=task.claim_epoch, cost_usd=0.5
    )
    assert closed.status == "succeeded"
    assert board.events()[-1].actor == "dana"
    board.complete(task.id, "dana")
    board.approve(task.id, "rita")
    refused(
        board, Reason.NOT_FOUND,
        lambda: board.close_execution(run.id, "failed", agent="dana", cost_usd=99.0),
    )  # fmt: skip
    assert board.get_task(task.id).cost_usd == 0.5


def test_an_operator_may_close_any_running_run(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="dana")
    run = board.open_execution(task.id, "sh", agent="dana")
    assert board.close_execution(run.id, "failed", agent=OPERATOR).status == "failed"


@pytest.mark.parametrize("leave", ["complete", "block", "release", "transfer", "move", "cancel"])
def test_runs_left_open_end_with_their_holders_stay(board: Board, leave: str) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="dana")
    run = board.open_execution(task.id, "sh", agent="dana")
    {
        "complete": lambda: board.complete(task.id, "dana"),
        "block": lambda: board.block(task.id, "dana", "stuck"),
        "release": lambda: board.release(task.id, "dana"),
        "transfer": lambda: board.transfer(task.id, "dana", "erin"),
        "move": lambda: board.move(task.id, t.DONE),
        "cancel": lambda: board.cancel(task.id),
    }[leave]()
    ended = board.get_execution(run.id)
    assert (ended.status, ended.recovery_tombstone) == ("cancelled", 1)
    assert ended.completed_at is not None and ended.error
    last = board.events()[-1]
    assert last.data["closedExecutions"] == [run.id]


# -- caps ---------------------------------------------------------------------------------------


def chain(depth: int) -> list[PlanItem]:
    return [
        PlanItem(key=f"n{i}", title=f"N{i}", parent=f"n{i - 1}" if i else None)
        for i in range(depth)
    ]


def test_caps_follow_the_actor(board: Board) -> None:
    root = board.create_task("root")
    child = board.create_task("child", parent_task_id=root.id)
    grandchild = board.create_task("grandchild", parent_task_id=child.id)
    refused(
        board, Reason.CAP_EXCEEDED,
        lambda: board.create_task("too deep", parent_task_id=grandchild.id, actor="planner"),
    )  # fmt: skip
    assert board.create_task("operator", parent_task_id=grandchild.id).title == "operator"
    assert board.create_task("forced", parent_task_id=grandchild.id, actor="x", capped=False)


def test_an_agents_plan_is_refused_whole_naming_every_violation(board_path: Path) -> None:
    config = BoardConfig(max_live_children=2, root_create_limit=3)
    with Board(board_path, config=config) as board:
        board.create_task("old root", actor="another-agent")
        items = [
            *chain(4),  # n3 is one level too deep
            PlanItem(key="r1", title="R1"),
            PlanItem(key="r2", title="R2"),  # the fourth agents' root in the window (n0, r1, old)
            *[PlanItem(key=f"c{i}", title=f"C{i}", parent="r1") for i in range(3)],  # c2
        ]
        error = refused(board, Reason.CAP_EXCEEDED, lambda: board.create_plan(items, actor="pl"))
        named = [(v["key"], v["cap"]) for v in error.details["violations"]]
        assert named == [("n3", "depth"), ("r2", "root_rate"), ("c2", "children")]
        assert len(board.create_plan(items, actor=OPERATOR)) == len(items)


def test_dropping_children_makes_no_room_and_an_agents_restore_is_capped(
    board_path: Path,
) -> None:
    """Seed 000's per-parent ceiling is there so that a create loop cannot fill the board with
    rows: a dropped child is still one (one restore away from live), so dropping 24 and creating
    24 more, then restoring them all, is refused at the first create past the ceiling."""
    config = BoardConfig(max_live_children=2)
    with Board(board_path, config=config) as board:
        parent = board.create_task("parent")
        kids = [board.create_task(f"kid {i}", parent_task_id=parent.id, actor="a") for i in "01"]
        for kid in kids:
            board.drop(kid.id, actor="a")
        error = refused(
            board, Reason.CAP_EXCEEDED,
            lambda: board.create_task("one more", parent_task_id=parent.id, actor="a"),
        )  # fmt: skip
        assert error.details["cap"] == "children"
        # The operator's creates are not capped: past the ceiling, an agent's restore is refused.
        board.create_task("the operator's", parent_task_id=parent.id)
        error = refused(board, Reason.CAP_EXCEEDED, lambda: board.restore(kids[0].id, actor="a"))
        assert (error.details["cap"], error.details["limit"]) == ("children", 2)
        assert "finish or cancel some first" in str(error)
        assert board.restore(kids[0].id).dropped == 0  # the operator may
        board.cancel(kids[0].id)
        assert board.restore(kids[1].id, actor="a").dropped == 0  # back at the ceiling: fits


def test_the_operators_roots_use_up_no_agents_root_quota(board_path: Path) -> None:
    config = BoardConfig(root_create_limit=2)
    with Board(board_path, config=config) as board:
        for n in range(3):
            board.create_task(f"operator root {n}")
        assert board.create_task("first", actor="ag1").parent_task_id is None
        board.create_task("second", actor="ag2")
        error = refused(board, Reason.CAP_EXCEEDED, lambda: board.create_task("3", actor="ag1"))
        assert error.details["cap"] == "root_rate"
        assert "agents created 2 in the last 300 s (ag1 1, ag2 1" in str(error)
        assert "the operator's creates do not count" in str(error)
        assert board.create_task("the operator's fourth").parent_task_id is None


def test_a_task_cannot_depend_on_its_own_future_id(board: Board) -> None:
    board.create_task("one")
    error = refused(
        board, Reason.DEPENDENCY_CYCLE, lambda: board.create_task("me", depends_on=["TASK-2"])
    )
    assert error.details["cycle"] == ["TASK-2", "TASK-2"]
    assert board.find_task("TASK-2") is None


def test_db_check_names_dependency_cycles(board: Board) -> None:
    a, b = board.create_task("a"), board.create_task("b")
    for statement in (
        "INSERT INTO task_deps (task_id, depends_on_task_id, created_at) VALUES "
        f"('{a.id}', '{b.id}', 0), ('{b.id}', '{a.id}', 0), ('{b.id}', '{b.id}', 0)",
        f"UPDATE tasks SET unmet_deps = 2 WHERE id = '{b.id}'",
        f"UPDATE tasks SET unmet_deps = 1 WHERE id = '{a.id}'",
    ):
        raw_execute(board.path, statement)  # behind the board's back
    problems = board.check().problems
    assert any(p.startswith(f"dependency cycle: {a.id} -> {b.id} -> {a.id}") for p in problems)
    assert any(p.startswith(f"dependency cycle: {b.id} -> {b.id}") for p in problems)


def test_plan_references_to_nothing_are_named_all_at_once(board: Board) -> None:
    items = [
        PlanItem(key="a", title="A", depends_on=("TASK-404",)),
        PlanItem(key="b", title="B", parent="ghost"),
    ]
    error = refused(board, Reason.INVALID_INPUT, lambda: board.create_plan(items))
    refs = [(p["kind"], p["key"], p["field"], p["ref"]) for p in error.details["problems"]]
    assert refs == [
        ("unknown_key", "a", "depends_on", "TASK-404"),
        ("unknown_key", "b", "parent", "ghost"),
    ]


# -- opening files --------------------------------------------------------------------------------


def test_a_foreign_sqlite_file_is_not_a_board_and_stays_untouched(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = file_digest(other)
    for kwargs in ({}, {"read_only": True}, {"create": False}):
        with pytest.raises(BoardError) as caught:
            Board(other, **kwargs)  # type: ignore[arg-type]
        assert caught.value.reason is Reason.NOT_A_BOARD
    assert file_digest(other) == before
    assert [p.name for p in tmp_path.iterdir()] == ["other.db"]


def test_a_missing_file_is_no_board_unless_created(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "bored.db"
    with pytest.raises(BoardError) as caught:
        Board(missing, create=False)
    assert caught.value.reason is Reason.NO_BOARD
    assert caught.value.details["path"] == str(missing)
    assert not missing.parent.exists()
    with Board(missing) as made:
        assert made.created
    with Board(missing, create=False) as opened:
        assert not opened.created


def test_a_database_url_is_told_from_a_path_in_one_place(tmp_path: Path) -> None:
    for url in ("postgresql://u:pw@host/db", "postgres://h/d"):
        assert isinstance(board_location(url), DatabaseUrl)
        assert "pw" not in str(board_location(url))
    for url in ("mysql://u:pw@h/d", "redis://h"):
        with pytest.raises(BoardError) as caught:
            board_location(url)
        assert caught.value.reason is Reason.UNSUPPORTED_BACKEND
        assert "pw" not in caught.value.message
    assert board_location("sqlite:///srv/kanban/board.db") == Path("/srv/kanban/board.db")
    assert board_location("boards/x.db") == Path("boards/x.db")


@pytest.mark.slow  # a lock held for seconds by another process
def test_opening_to_read_never_needs_the_write_lock(board_path: Path, clock: ManualClock) -> None:
    with Board(board_path, clock=clock) as board:
        task = board.create_task("held")
        board.claim(task.id, "dana")
    clock.advance(ms=BoardConfig().lease_ms + 1)
    if is_postgres(board_path):
        # The release is a shared write (rows locked one by one): it goes on beside the lock.
        with hold_write_lock(board_path), Board(board_path, clock=clock) as r:
            assert r.get_task(task.id).status == t.TODO
        return
    with hold_write_lock(board_path), unchanged(board_path), Board(board_path, clock=clock) as r:
        assert r.get_task(task.id).status == t.IN_PROGRESS  # recovery skipped
    with Board(board_path, clock=clock) as writer:  # the next open does it
        assert writer.get_task(task.id).status == t.TODO


# -- numbers and settings -----------------------------------------------------------------------


@pytest.mark.parametrize("priority", [2**63, -(2**63) - 1, 10**40])
def test_priorities_beyond_64_bits_are_invalid_input(board: Board, priority: int) -> None:
    refused(board, Reason.INVALID_INPUT, lambda: board.create_task("x", priority=priority))
    task = board.create_task("y")
    refused(board, Reason.INVALID_INPUT, lambda: board.update_task(task.id, priority=priority))


@pytest.mark.parametrize("minutes", [float("nan"), float("inf"), -1.0, 0.0, 10**9])
def test_bad_minutes_are_invalid_input(board: Board, minutes: float) -> None:
    from boardlib.config import minutes_to_ms

    with pytest.raises(BoardError) as caught:
        minutes_to_ms(minutes)
    assert caught.value.reason is Reason.INVALID_INPUT
    task = task_in(board, t.IN_PROGRESS)
    refused(
        board, Reason.INVALID_INPUT,
        lambda: board.extend_lease(task.id, "builder", minutes=minutes),
    )  # fmt: skip


def test_text_that_is_not_utf8_is_invalid_input(board: Board) -> None:
    broken = b"caf\xe9".decode("utf-8", "surrogateescape")
    refused(board, Reason.INVALID_INPUT, lambda: board.create_task(broken))


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("KANBAN_LEASE_MS", "1e20"),
        ("KANBAN_LEASE_MS", "-5"),
        ("KANBAN_LEASE_MS", "0"),
        ("KANBAN_LEASE_MS", str(10**30)),
        ("KANBAN_MAX_DEPTH", "two"),
        ("KANBAN_RETRY_MAX_ATTEMPTS", "0"),
        ("KANBAN_RETRY_JITTER_MS", "150,20"),
        ("KANBAN_VERIFY_FROM", "anyone"),
        ("KANBAN_EVENT_TTL_SECONDS", "nan"),
    ],
)
def test_a_bad_setting_is_an_error_naming_its_variable(variable: str, value: str) -> None:
    with pytest.raises(BoardError) as caught:
        BoardConfig.from_env({variable: value})
    assert caught.value.reason is Reason.INVALID_INPUT
    assert caught.value.details["variable"] == variable
    assert variable in caught.value.message


def test_good_settings_are_read() -> None:
    config = BoardConfig.from_env(
        {
            "KANBAN_LEASE_MS": "60000",
            "KANBAN_EVENT_TTL_SECONDS": "none",
            "KANBAN_RETRY_JITTER_MS": "5, 10",
            "KANBAN_VERIFY_FROM": "operator",
            "KANBAN_VERIFY_CMD": "make check",
        }
    )
    assert (config.lease_ms, config.event_ttl_seconds, config.retry_jitter_ms) == (
        60000, None, (5, 10),
    )  # fmt: skip
    assert (config.verify_from, config.verify_command) == ("operator", "make check")


def test_sentences_carry_readable_times(board: Board, clock: ManualClock) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="dana")
    (reason,) = board.explain(task.id).reasons or ["claimable"]
    assert reason.startswith("held by dana under a lease until ")
    assert reason.endswith(", in 15 min") and str(task.lease_until) not in reason
    assert moment(clock.now_ms() - 3 * 60_000, clock.now_ms()).endswith(", 3 min ago")
    clock.advance(ms=board.config.lease_ms + 5_000)
    error = refused(board, Reason.STALE_CLAIM, lambda: board.heartbeat(task.id, "dana"))
    assert "5 s ago" in error.message and str(task.lease_until) not in error.message
    assert json.dumps(board.explain(task.id).to_json())  # the JSON still has milliseconds


def test_the_tui_always_acts_as_an_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.app import default_operator

    monkeypatch.setenv("KANBAN_OPERATOR", "olga")
    assert default_operator() == "operator:olga"
    monkeypatch.setenv("KANBAN_OPERATOR", "operator:olga")
    assert default_operator() == "operator:olga"
    monkeypatch.delenv("KANBAN_OPERATOR")
    assert is_operator(default_operator())
