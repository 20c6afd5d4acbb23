"""Every event the board writes is of a declared kind and carries its kind's payload: the keys
`boardlib.events` declares for it (camelized by the one rule), the required ones always. The stored
spellings are pinned here too, as agents and scripts read them from `kanban events` and the feed."""

import json
import sqlite3
from pathlib import Path
from typing import Any

from boardlib import Board, ManualClock
from boardlib import transitions as t
from boardlib.events import EventKind, read, wire, wire_key
from boardlib.landings import LandQueue
from boardlib.payloads import PAYLOADS
from boardlib.records import EXECUTION_SUCCEEDED, Event

# The log's contract as stored: kind -> its payload's keys. A change here changes what every
# reader of the log sees.
STORED: dict[str, set[str]] = {
    "task_created": {"status", "dependsOn"},
    "task_claimed": {"epoch", "verb"},
    "status_changed": {
        "verb", "from", "to", "assignee", "humanOverride", "via", "closedExecutions", "reason",
        "fields", "blocker",
    },
    "task_updated": {"verb", "reason", "fields", "leaseUntil"},
    "lease_renewed": {"leaseUntil", "verb"},
    "progress_logged": {"leaseUntil", "verb"},
    "lease_expired": {
        "from", "to", "assignee", "leaseUntil", "claimEpoch", "timedOutExecutions",
    },
    "task_transferred": {"to", "epoch", "verb", "closedExecutions"},
    "task_dropped": set(),
    "task_restored": set(),
    "dep_linked": {"dependsOn"},
    "dep_unlinked": {"dependsOn"},
    "comment_added": {"commentId", "path", "line", "leaseUntil"},
    "execution_started": {"executionId", "leaseUntil"},
    "execution_completed": {
        "executionId", "status", "costUsd", "agentId", "teamId", "runtime", "late",
    },
    "verification_started": {"holder", "until", "beatMs"},
    # An older build's gate verdict also carried `holder` and `until`, read by nothing now.
    "verification_recorded": {"status"},
    "verification_stopped": {"reason"},
    "workspace_provisioned": {"workspaceId", "branch", "worktreePath", "baseCommit"},
    "workspace_updated": {"workspaceId", "status", "from", "reason", "baseCommit"},
    "task_landed": {
        "verb", "landedCommit", "landedInto", "strategy", "baseBefore", "from", "to", "fields",
        "recovered", "recoveredBy", "startedAt", "unverified", "unverifiedDetail", "alreadyOn",
    },
    "budget_changed": {"scope", "unit", "from", "to", "reason", "teamId"},
}  # fmt: skip

FAIL = json.dumps({"status": "fail", "attempts": [], "updatedAt": 1})
PASS = json.dumps({"status": "pass", "attempts": [], "updatedAt": 1})


def declared(kind: EventKind) -> tuple[set[str], set[str]]:
    """The stored keys a kind may carry, and those it always carries."""
    payload: Any = PAYLOADS[kind]
    return (
        {wire_key(name) for name in payload.__annotations__},
        {wire_key(name) for name in payload.__required_keys__},
    )


def test_the_declarations_store_the_keys_they_always_stored() -> None:
    assert {kind.value: declared(kind)[0] for kind in EventKind} == STORED


def a_life_with_every_kind(board: Board, clock: ManualClock) -> list[Event]:
    first = board.create_task("first")
    waits = board.create_task("waits", depends_on=[first.id])
    board.link_dependency(waits.id, board.create_task("other").id)
    board.unlink_dependency(waits.id, "TASK-3")
    held = board.claim(first.id, "ada")
    board.heartbeat(first.id, "ada", epoch=held.claim_epoch)
    board.log_progress(first.id, "ada", "half way")
    board.extend_lease(first.id, "ada", minutes=30)
    run = board.open_execution(first.id, "sh", agent="ada")
    board.close_execution(run.id, EXECUTION_SUCCEEDED, agent="ada", cost_usd=0.5)
    board.add_comment(first.id, "a note")
    board.open_execution(first.id, "sh", agent="ada")  # still open: the transfer closes it
    board.transfer(first.id, "ada", "bob")
    space = board.record_workspace(
        first.id, repo_path="/r", branch="b", worktree_path="/w", base_commit="abc"
    )
    board.update_workspace(space.id, base_commit="def", reason="synced with main")
    board.update_workspace(space.id, status="archived", reason="paused")
    board.open_execution(first.id, "sh", agent="bob")  # still open: the move closes it
    board.complete(first.id, "bob")
    board.reject(first.id, "rita", "again")
    board.claim(first.id, "bob")
    board.complete(first.id, "bob", gate_ms=60_000)  # the gate's start goes with the move
    board.gate_stopped(first.id, "the gate stopped without a verdict")
    board.gate_started(first.id, gate_ms=60_000)  # run again, on the task in review
    board.record_verification(first.id, PASS)
    board.approve(first.id, "rita")
    board.update_task("TASK-3", priority=3)
    board.drop("TASK-3")
    board.restore("TASK-3")
    lapsing = board.create_task("lapsing")
    board.claim(lapsing.id, "eve", lease_ms=1000)
    clock.advance(ms=1001)
    board.reconcile_orphans()
    blocker = board.create_task("blocker")
    board.create_task("downstream", depends_on=[blocker.id])
    board.cancel_dependents(blocker.id)
    overridden = board.create_task("overridden")
    board.claim(overridden.id, "fay")
    board.record_verification(overridden.id, FAIL)
    board.move(overridden.id, t.DONE, human_override=True, actor="operator:maria", reason="ship")
    board.claim_next("gus")
    landing = board.create_task("landing")  # approve-and-land: one task_landed carries the move
    board.claim(landing.id, "hal")
    board.complete(landing.id, "hal")
    LandQueue(board).record_landed(
        landing.id, commit="c" * 40, into="main", strategy="squash", actor="rita", approve=True,
        old_tip="b" * 40, unverified="no verify command", recovered_by="operator:carol",
    )  # fmt: skip
    board.set_budget(overridden.id, usd=5, reason="a cap for the retry")
    board.set_daily_budget(team_id="web", tokens=10_000, reason="a quiet week")
    return board.events(limit=10_000)


def test_every_event_carries_its_kinds_payload(board: Board, clock: ManualClock) -> None:
    events = a_life_with_every_kind(board, clock)
    assert {event.kind for event in events} == set(EventKind)
    seen: dict[str, set[str]] = {}
    for event in events:
        allowed, required = declared(EventKind(event.kind))
        keys = set(event.data)
        assert required <= keys <= allowed, (event.kind, keys)
        seen.setdefault(event.kind, set()).update(keys)
        assert wire(read(event.data)) == event.data  # read and wire are each other's inverse
        assert list(wire(read(event.data))) == list(event.data)  # key order kept
    assert seen["status_changed"] == STORED["status_changed"] - {"assignee"}
    assert seen["task_transferred"] == STORED["task_transferred"]
    assert seen["workspace_updated"] == STORED["workspace_updated"]


def test_a_payload_is_stored_as_the_standard_librarys_compact_json(tmp_path: Path) -> None:
    """The stores write a payload with one prebuilt encoder (`store.base.compact_json`): the
    stored text is still `json.dumps(payload, separators=(",", ":"))`, byte for byte (non-ASCII
    escaped, key order kept), which readers and the archive have always seen."""
    from boardlib.store.base import compact_json

    payloads: list[Any] = [
        {"epoch": 3, "verb": "claim_next"},
        {"reason": "caf\u00e9 \u2028 \U0001f600 \x1b[31m", "n": -0.0, "x": 2.5, "no": None},
        {"nested": {"list": [1, True, "\u0000"], "empty": {}}, "big": 2**70},
        {"nan": float("nan"), "inf": float("-inf")},
        {},
        [1, "a"],
        "text",
    ]
    for payload in payloads:
        assert compact_json(payload) == json.dumps(payload, separators=(",", ":"))
    with Board(tmp_path / "board.db") as board:
        task = board.create_task("t")
        board.claim(task.id, "builder")
        board.block(task.id, "builder", "caf\u00e9 \u2028 \U0001f600")
    with sqlite3.connect(tmp_path / "board.db") as conn:
        stored = conn.execute(
            "SELECT data FROM events WHERE task_id = ? AND kind = 'status_changed' "
            "ORDER BY seq DESC LIMIT 1",
            (task.id,),
        ).fetchone()[0]
    assert stored == json.dumps(json.loads(stored), separators=(",", ":"))
    assert "\\u00e9 \\u2028 \\ud83d\\ude00" in stored
