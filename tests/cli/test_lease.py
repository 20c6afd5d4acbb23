"""The lease protocol of seed 002 through the real `kanban` script, with a clock the test drives."""

from pathlib import Path

import pytest

from tests.cli.conftest import LEASE_MS, MINUTE_MS, START_MS, Kanban


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def test_seed_002_walkthrough_alice_crashes_and_bob_reclaims(kanban: Kanban) -> None:
    task = kanban.ok("task", "dispatch", "--title", "Write the parser", "--role", "worker")
    task_id = task["id"]

    # Alice claims: assigned to her, lease = now + 15 min, with the epoch she quotes back.
    alice = kanban.ok("task", "claim-next", "--agent", "alice", "--role", "worker")
    assert alice["id"] == task_id
    assert alice["status"] == "in_progress"
    assert alice["assigneeAgentId"] == "alice"
    assert alice["leaseUntil"] == START_MS + LEASE_MS
    epoch = alice["claimEpoch"]
    assert epoch >= 1

    # Ten minutes later progress renews the lease from this call.
    kanban.advance(minutes=10)
    renewed = kanban.ok(
        "task", "log-progress", task_id, "--agent", "alice", "--note", "Working",
        "--epoch", str(epoch),
    )  # fmt: skip
    assert renewed["leaseUntil"] == kanban.now + LEASE_MS
    assert renewed["updatedAt"] == alice["updatedAt"]  # liveness is not a change

    # Alice crashes. Fourteen minutes on, the renewed lease still holds: nothing for bob.
    kanban.advance(minutes=14)
    idle = kanban.run("task", "claim-next", "--agent", "bob", "--role", "worker", "--explain")
    assert idle.code == 3, str(idle)
    assert idle.doc["task"] is None
    assert idle.doc["explain"]["nextLeaseExpiry"] == renewed["leaseUntil"]
    assert kanban.row(task_id)["assigneeAgentId"] == "alice"

    # Fifteen minutes after her last renewal the lease has lapsed: bob's claim-next gets it.
    kanban.advance(minutes=1, ms=1)
    bob = kanban.ok("task", "claim-next", "--agent", "bob", "--role", "worker")
    assert bob["id"] == task_id
    assert bob["assigneeAgentId"] == "bob"
    assert bob["leaseUntil"] == kanban.now + LEASE_MS
    assert bob["claimEpoch"] > epoch
    assert bob["attempts"] == 2

    # Alice comes back: she no longer holds it, and bob's row is untouched by her attempt.
    before = kanban.row(task_id)
    kanban.refused(
        "task", "log-progress", task_id, "--agent", "alice", "--note", "back", reason="not_assignee"
    )
    assert kanban.row(task_id) == before

    kinds = [event["kind"] for event in kanban.ok("events", "--task", task_id)]
    assert kinds == [
        "task_created", "task_claimed", "progress_logged", "lease_expired", "task_claimed",
    ]  # fmt: skip
    view = kanban.ok("task", "view", task_id)
    assert [comment["body"] for comment in view["comments"]] == ["Working"]


def test_nothing_claimable_is_exit_3_with_task_null(kanban: Kanban) -> None:
    result = kanban.run("task", "claim-next", "--agent", "alice")
    assert result.code == 3, str(result)
    assert result.doc == {"task": None}
    assert result.err == ""

    kanban.ok("task", "dispatch", "--title", "for reviewers", "--role", "reviewer")
    explained = kanban.run(
        "task", "claim-next", "--agent", "alice", "--role", "worker", "--explain"
    )
    assert explained.code == 3
    assert explained.doc["explain"]["otherRoles"] == ["TASK-1"]


def test_an_empty_claim_next_names_the_tasks_still_yours(kanban: Kanban) -> None:
    """An agent restarted without its notes asks for work: the empty answer says which task it
    still holds, and --explain says so in words; another agent hears only {"task": null}."""
    kanban.ok("task", "dispatch", "--title", "mine")
    task_id = kanban.ok("task", "claim-next", "--agent", "alice")["id"]
    again = kanban.run("task", "claim-next", "--agent", "alice")
    assert again.code == 3 and again.doc == {"task": None, "heldByYou": [task_id]}
    assert kanban.run("task", "claim-next", "--agent", "bob").doc == {"task": None}
    why = kanban.run("task", "claim-next", "--agent", "alice", "--explain")
    assert why.code == 3 and why.doc["explain"]["heldByYou"] == [task_id]
    assert any(f"already hold {task_id}" in reason for reason in why.doc["reasons"])


def test_a_reclaimed_task_fences_the_stale_worker_by_epoch(kanban: Kanban) -> None:
    """Same agent name, new claim: the old process's epoch is refused, the new one works."""
    kanban.ok("task", "dispatch", "--title", "long job")
    first = kanban.ok("task", "claim-next", "--agent", "alice")
    kanban.advance(minutes=16)
    second = kanban.ok("task", "claim-next", "--agent", "alice")
    assert second["id"] == first["id"]
    assert second["claimEpoch"] > first["claimEpoch"]

    before = kanban.row(first["id"])
    error = kanban.refused(
        "task", "complete", first["id"], "--agent", "alice", "--epoch", str(first["claimEpoch"]),
        reason="stale_claim",
    )  # fmt: skip
    assert error["currentEpoch"] == second["claimEpoch"]
    assert kanban.row(first["id"]) == before

    done = kanban.ok(
        "task", "complete", first["id"], "--agent", "alice", "--epoch", str(second["claimEpoch"])
    )
    assert done["status"] == "in_review"


def test_a_stale_epoch_from_the_holder_now_is_told_it_holds_the_task(kanban: Kanban) -> None:
    """An agent that still held its task under a newer epoch (a failed gate gave it back) was told
    its claim was gone. The refusal stands (the epoch fences) and says what is true: `heldByYou`,
    and the epoch to use; to anyone else, not."""
    task = kanban.ok("task", "dispatch", "--title", "long job")
    first = kanban.ok("task", "claim", task["id"], "--agent", "alice")
    kanban.ok(
        "task", "release", task["id"], "--agent", "alice", "--epoch", str(first["claimEpoch"])
    )
    second = kanban.ok("task", "claim", task["id"], "--agent", "alice")
    before = kanban.snapshot()
    for verb in ("heartbeat", "complete"):
        error = kanban.refused(
            "task", verb, task["id"], "--agent", "alice", "--epoch", str(first["claimEpoch"]),
            reason="stale_claim",
        )  # fmt: skip
        assert (error["heldByYou"], error["currentEpoch"]) == (True, second["claimEpoch"])
        assert f"you hold {task['id']} under epoch {second['claimEpoch']} now" in error["error"]
    assert kanban.snapshot() == before

    kanban.ok("task", "transfer", task["id"], "--agent", "alice", "--to", "bob",
              "--epoch", str(second["claimEpoch"]))  # fmt: skip
    before = kanban.snapshot()
    error = kanban.refused(
        "task", "heartbeat", task["id"], "--agent", "alice", "--epoch", str(second["claimEpoch"]),
        reason="stale_claim",
    )  # fmt: skip
    assert error["heldByYou"] is False and "you hold" not in error["error"]
    assert kanban.snapshot() == before


def test_an_expired_holder_cannot_renew_before_anyone_reclaims(kanban: Kanban) -> None:
    task = kanban.ok("task", "dispatch", "--title", "t")
    kanban.ok("task", "claim", task["id"], "--agent", "alice")
    kanban.advance(minutes=15, ms=1)
    before = kanban.row(task["id"])
    kanban.refused("task", "heartbeat", task["id"], "--agent", "alice", reason="stale_claim")
    assert kanban.row(task["id"]) == before


def test_heartbeat_and_extend_lease_renew_only_the_lease(kanban: Kanban) -> None:
    task = kanban.ok("task", "dispatch", "--title", "t")
    claimed = kanban.ok("task", "claim", task["id"], "--agent", "alice", "--minutes", "5")
    assert claimed["leaseUntil"] == kanban.now + 5 * MINUTE_MS

    kanban.advance(minutes=4)
    beat = kanban.ok("task", "heartbeat", task["id"], "--agent", "alice")
    assert beat["leaseUntil"] == kanban.now + LEASE_MS
    assert beat["lastHeartbeatAt"] == kanban.now
    assert beat["updatedAt"] == claimed["updatedAt"]

    longer = kanban.ok("task", "extend-lease", task["id"], "--agent", "alice", "--minutes", "90")
    assert longer["leaseUntil"] == kanban.now + 90 * MINUTE_MS
    default = kanban.ok("task", "extend-lease", task["id"], "--agent", "alice")
    assert default["leaseUntil"] == kanban.now + LEASE_MS

    for bad in ("0", "-5", "100000", "soon"):
        result = kanban.run(
            "task", "extend-lease", task["id"], "--agent", "alice", "--minutes", bad
        )
        assert result.code == 2, str(result)
        assert "--minutes" in result.err
    assert kanban.row(task["id"])["leaseUntil"] == default["leaseUntil"]


def test_block_clears_the_lease_and_complete_leaves_no_owner(kanban: Kanban) -> None:
    first = kanban.ok("task", "dispatch", "--title", "a", "--priority", "2")
    second = kanban.ok("task", "dispatch", "--title", "b")
    kanban.ok("task", "claim", first["id"], "--agent", "alice")
    blocked = kanban.ok("task", "block", first["id"], "--agent", "alice", "--reason", "need keys")
    assert blocked["status"] == "blocked"
    assert blocked["blockedReason"] == "need keys"
    assert blocked["leaseUntil"] is None

    # A blocked task is not claimable: claim-next moves on to the next ready one.
    assert kanban.ok("task", "claim-next", "--agent", "bob")["id"] == second["id"]
    unblocked = kanban.ok("task", "unblock", first["id"], "--note", "keys sent")
    assert unblocked["status"] == "todo"
    assert kanban.ok("task", "claim-next", "--agent", "carol")["id"] == first["id"]

    reviewed = kanban.ok("task", "complete", first["id"], "--agent", "carol", "-m", "all done")
    assert reviewed["status"] == "in_review"
    assert reviewed["assigneeAgentId"] is None
    assert reviewed["leaseUntil"] is None
    assert reviewed["claimedBy"] == "alice"

    released = kanban.ok("task", "release", second["id"], "--agent", "bob")
    assert released["status"] == "todo"
    assert released["assigneeAgentId"] is None


def test_reconcile_releases_expired_leases_once(kanban: Kanban) -> None:
    with kanban.board() as board:
        stale = board.create_task("stale")
        live = board.create_task("live")
        board.claim(stale.id, "alice")
    run = kanban.ok("task", "exec", "start", stale.id, "--executor", "script")
    kanban.advance(minutes=10)
    with kanban.board() as board:
        board.claim(live.id, "bob")
    kanban.advance(minutes=6)

    report = kanban.ok("reconcile")
    assert [task["id"] for task in report["released"]] == [stale.id]
    assert report["released"][0]["status"] == "todo"
    assert report["timedOutExecutions"] == [run["id"]]
    assert kanban.ok("task", "exec", "show", run["id"])["status"] == "timed_out"
    assert kanban.row(live.id)["assigneeAgentId"] == "bob"

    again = kanban.ok("reconcile")
    assert again == {"released": [], "timedOutExecutions": [], "purgedEvents": 0}


def test_respect_deps_false_claims_a_task_whose_dependencies_are_unfinished(
    kanban: Kanban,
) -> None:
    blocker = kanban.ok("task", "dispatch", "--title", "first", "--role", "x")
    waiting = kanban.ok(
        "task", "dispatch", "--title", "second", "--depends-on", blocker["id"], "--priority", "9"
    )
    for respecting in ((), ("--respect-deps",), ("--respect-deps=true",)):
        result = kanban.run("task", "claim-next", "--agent", "b", "--role", "y", *respecting)
        assert result.code == 3, str(result)

    claimed = kanban.ok("task", "claim-next", "--agent", "b", "--role", "y", "--respect-deps=false")
    assert claimed["id"] == waiting["id"]
    assert claimed["unmetDeps"] == 1
    assert kanban.row(blocker["id"])["status"] == "todo"
