"""Builder is not judge: approve/reject and the verification gate on -> done."""

import contextlib
import json

import pytest

from boardlib import Board, BoardError, ManualClock, Reason
from boardlib import transitions as t
from boardlib.actors import GATE
from boardlib.lifecycle import override_reaches_done
from tests.conftest import row, task_in

FAIL = json.dumps({"status": "fail", "attempts": [], "updatedAt": 1})
GREEN_DEBT = json.dumps(
    {
        "status": "completed_with_debt",
        "attempts": [
            {
                "attempt": 1,
                "at": 1,
                "status": "pass",
                "deterministic": {"command": "make test", "exitCode": 0, "passed": True},
            }
        ],
        "debtNotes": [{"criterion": "docs", "severity": "low", "justification": "later"}],
        "updatedAt": 1,
    }
)
RED_DEBT = GREEN_DEBT.replace('"passed": true', '"passed": false').replace(
    '"exitCode": 0', '"exitCode": 1'
)


def test_approve_records_a_pass_verdict(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW)
    done = board.approve(task.id, "judge")
    assert done.status == t.DONE and done.completed_at == board.now()
    verdict = json.loads(done.verification or "")
    assert verdict["status"] == "pass"
    assert verdict["reviews"][0]["reviewer"] == "judge"


def test_the_builder_cannot_approve_or_reject(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW, builder="alice")
    before = row(board, task.id)
    for call in (
        lambda: board.approve(task.id, "alice"),
        lambda: board.reject(task.id, "alice", "meh"),
    ):
        with pytest.raises(BoardError) as refused:
            call()
        assert refused.value.reason is Reason.SELF_REVIEW
    assert row(board, task.id) == before


def test_every_holder_of_the_attempt_is_excluded(board: Board, clock: ManualClock) -> None:
    task = board.create_task("job")
    board.claim(task.id, "alice")
    board.transfer(task.id, "alice", "bob")
    clock.advance(ms=board.config.lease_ms + 1)
    board.claim_next("carol")  # reclaim after bob's lease lapsed
    board.complete(task.id, "carol")
    for holder in ("alice", "bob", "carol"):
        with pytest.raises(BoardError) as refused:
            board.approve(task.id, holder)
        assert refused.value.reason is Reason.SELF_REVIEW
    assert board.approve(task.id, "dave").status == t.DONE


def test_reject_sends_it_back_for_a_fresh_attempt(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW, builder="alice")
    rejected = board.reject(task.id, "judge", "tests are missing")
    assert rejected.status == t.TODO
    assert rejected.assignee_agent_id is None and rejected.holders == []
    assert board.comments(task.id)[-1].body == "rejected: tests are missing"
    with pytest.raises(BoardError) as refused:
        board.reject(task.id, "judge", "again")
    assert refused.value.reason is Reason.INVALID_STATE
    assert refused.value.message == (
        f"cannot reject {task.id}: only work in review is judged; nothing is built yet: an agent "
        "claims and completes it first (current state: todo, expected: in_review)"
    )


def test_approve_on_done_names_the_states(board: Board) -> None:
    task = task_in(board, t.DONE)
    with pytest.raises(BoardError) as refused:
        board.approve(task.id, "someone")
    assert refused.value.message == (
        f"cannot approve {task.id}: only work in review is judged; it was judged (or moved to "
        "done) already (current state: done, expected: in_review)"
    )


@pytest.mark.parametrize(
    ("verdict", "blocks"), [(FAIL, True), (RED_DEBT, True), (GREEN_DEBT, False)]
)
def test_done_gate(board: Board, verdict: str, blocks: bool) -> None:
    task = task_in(board, t.IN_REVIEW)
    board.record_verification(task.id, verdict)
    before = row(board, task.id)
    if blocks:
        with pytest.raises(BoardError) as refused:
            board.move(task.id, t.DONE)
        assert refused.value.reason is Reason.VERIFICATION_REQUIRED
        assert row(board, task.id) == before
        with pytest.raises(BoardError):
            board.approve(task.id, "judge")
        assert board.audit(task.id)[-1].action == "verification"  # no override row yet
    else:
        assert board.move(task.id, t.DONE).status == t.DONE


def test_human_override_bypasses_the_gate_and_is_audited(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS)
    board.record_verification(task.id, FAIL)
    done = board.move(task.id, t.DONE, human_override=True, actor="operator:maria", reason="hotfix")
    assert done.status == t.DONE
    override = board.audit(task.id)[-1]
    assert (override.actor, override.action, override.from_status, override.to_status) == (
        "operator:maria", "human_override", t.IN_PROGRESS, t.DONE,
    )  # fmt: skip
    assert override.verdict_overridden == row(board, task.id).verification
    assert override.detail == "hotfix"


def test_no_verdict_lands_done_normally(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS)
    assert board.move(task.id, t.DONE).status == t.DONE
    assert board.audit(task.id) == []


def test_human_override_only_with_a_move_to_done(board: Board) -> None:
    task = task_in(board, t.TODO)
    with pytest.raises(BoardError) as refused:
        board.update_task(task.id, status=t.BLOCKED, reason="x", human_override=True)
    assert refused.value.reason is Reason.INVALID_INPUT
    assert row(board, task.id).status == t.TODO


def test_unreadable_verdict_is_refused_on_record_and_blocks_done(board: Board) -> None:
    task = task_in(board, t.IN_PROGRESS)
    with pytest.raises(BoardError) as refused:
        board.record_verification(task.id, '{"status": "great"}')
    assert refused.value.reason is Reason.INVALID_INPUT
    assert row(board, task.id).verification is None


def parked_by_the_gate(board: Board, verdict: str = RED_DEBT) -> str:
    """A task the verification gate sent to blocked, as it does with debt it cannot promote:
    the builder's work in review, the verdict recorded, then blocked by the gate."""
    task = task_in(board, t.IN_REVIEW, builder="alice")
    board.record_verification(task.id, verdict)
    board.move(task.id, t.BLOCKED, actor=GATE, reason="verification could not judge the work")
    return task.id


def test_an_override_takes_a_debt_blocked_task_to_done_in_one_step(board: Board) -> None:
    task_id = parked_by_the_gate(board)
    before = row(board, task_id)
    done = board.move(task_id, t.DONE, human_override=True, actor="operator:maria", reason="ok")
    assert done.status == t.DONE and done.blocked_reason is None
    # Passing through in progress on the way takes nothing: no holder, lease or new attempt.
    assert done.assignee_agent_id is None and done.lease_until is None
    assert (done.claimed_by, done.holders) == (before.claimed_by, before.holders)
    assert (done.claim_epoch, done.attempts) == (before.claim_epoch, before.attempts)
    override = board.audit(task_id)[-1]
    assert (override.actor, override.action, override.from_status, override.to_status) == (
        "operator:maria", "human_override", t.BLOCKED, t.DONE,
    )  # fmt: skip
    assert override.verdict_overridden == before.verification
    moved = [e for e in board.events(task_id=task_id) if e.kind == "status_changed"][-1]
    assert moved.data["from"] == t.BLOCKED and moved.data["to"] == t.DONE
    assert moved.data["via"] == [t.IN_PROGRESS] and moved.data["humanOverride"] is True


def test_without_the_override_a_debt_blocked_task_is_refused_and_unchanged(board: Board) -> None:
    task_id = parked_by_the_gate(board)
    before = row(board, task_id)
    with pytest.raises(BoardError) as refused:
        board.move(task_id, t.DONE, actor="operator:maria")
    assert refused.value.reason is Reason.ILLEGAL_TRANSITION
    for agent in ("alice", "judge"):  # the builder, and any other agent: never an override
        with pytest.raises(BoardError):
            board.move(task_id, t.DONE, human_override=True, actor=agent)
    assert row(board, task_id) == before
    assert [entry.action for entry in board.audit(task_id)].count("human_override") == 0


def test_an_override_from_blocked_needs_a_verdict_to_override(board: Board) -> None:
    """A task blocked by an agent's question never went through the gate: nothing to override,
    the table decides (unblock it, or move it on)."""
    task = task_in(board, t.BLOCKED)
    before = row(board, task.id)
    assert not override_reaches_done(before)
    with pytest.raises(BoardError) as refused:
        board.move(task.id, t.DONE, human_override=True, actor="operator:maria")
    assert refused.value.reason is Reason.ILLEGAL_TRANSITION
    assert row(board, task.id) == before


@pytest.mark.parametrize("status", list(t.STATUSES))
def test_the_override_rule_agrees_with_the_board(board: Board, status: str) -> None:
    """`override_reaches_done` (what the TUI greys `d` by) says yes exactly when the board's
    override writes one (done to done is a no-op: nothing is overridden)."""
    task = task_in(board, status)
    if status == t.BLOCKED:
        task = board.get_task(parked_by_the_gate(board))
    elif status in (t.IN_PROGRESS, t.IN_REVIEW):
        board.record_verification(task.id, FAIL)
        task = board.get_task(task.id)
    expected = override_reaches_done(task)
    with contextlib.suppress(BoardError):
        board.move(task.id, t.DONE, human_override=True, actor="operator:maria")
    overrides = [entry for entry in board.audit(task.id) if entry.action == "human_override"]
    assert len(overrides) == (1 if expected else 0)
    assert row(board, task.id).status == (t.DONE if expected else task.status)
