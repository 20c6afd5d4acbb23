"""The lease protocol over HTTP: claim-next and every holder's and reviewer's verb, with the same
rules and reasons as the library, each honouring `epoch`, each checked against the stored row."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boardlib import transitions as t
from boardlib.config import BoardConfig
from tests.http.conftest import Api, serving


@pytest.fixture
def api(tmp_path: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path) as opened:
        yield opened


def post(api: Api, task_id: str, verb: str, body: dict[str, Any] | None = None) -> Any:
    return api.client.post(f"/api/board/{task_id}/{verb}", json=body)


def ok_task(answer: Any) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    assert answer.json()["ok"] is True
    return answer.json()["task"]  # type: ignore[no-any-return]


def refused(answer: Any, status: int, reason: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert (body["ok"], body["error"], body["reason"]) == (False, reason, reason)
    assert "retry-after" not in answer.headers
    return body  # type: ignore[no-any-return]


# -- claim-next --------------------------------------------------------------------------------


def test_claim_next_takes_the_best_ready_task_then_204(api: Api) -> None:
    api.create("low", priority=1)
    high = api.create("high", priority=9)
    answer = api.client.post("/api/board/claim-next", json={"agent": "alice", "minutes": 30})
    task = ok_task(answer)
    assert task["id"] == high["id"]
    stored = api.stored(high["id"])
    assert (stored.status, stored.assignee_agent_id, stored.claim_epoch) == (
        "in_progress",
        "alice",
        1,
    )
    assert stored.lease_until == api.clock.now_ms() + 30 * 60_000
    assert api.events()[-1].data["verb"] == "claim_next"
    ok_task(api.client.post("/api/board/claim-next", json={"agent": "bob"}))
    none = api.client.post("/api/board/claim-next", json={"agent": "carol"})
    assert none.status_code == 204 and none.content == b""


def test_claim_next_by_role_and_team(api: Api) -> None:
    api.create("red builder", teamId="red", role="builder")
    blue = api.create("blue builder", teamId="blue", role="builder", priority=5)
    api.create("blue reviewer", teamId="blue", role="reviewer", priority=9)
    task = ok_task(
        api.client.post(
            "/api/board/claim-next", json={"agent": "a", "role": "builder", "team": "blue"}
        )
    )
    assert task["id"] == blue["id"]
    assert (
        api.client.post(
            "/api/board/claim-next", json={"agent": "b", "role": "builder", "team": "blue"}
        ).status_code
        == 204
    )
    # `teamId`, the task's own name for it (found by hand: it was "extra inputs not permitted").
    red = api.client.post("/api/board/claim-next", json={"agent": "c", "teamId": "red"})
    assert ok_task(red)["teamId"] == "red"


def test_claim_next_takes_over_an_expired_lease(api: Api) -> None:
    task = api.claimed("alice")
    api.clock.advance(ms=BoardConfig().lease_ms + 1)
    again = ok_task(api.client.post("/api/board/claim-next", json={"agent": "bob"}))
    assert again["id"] == task["id"] and again["claimEpoch"] == 3
    refused(post(api, task["id"], "heartbeat", {"agent": "alice"}), 403, "not_assignee")


def test_claim_next_needs_an_agent_without_an_agent_token(api: Api) -> None:
    answer = api.client.post("/api/board/claim-next")
    assert answer.status_code == 400
    assert answer.json()["details"]["fieldErrors"] == {
        "agent": ["agent is required: name the agent that acts"]
    }
    bad = api.client.post("/api/board/claim-next", json={"agent": "a", "minutes": 0})
    assert bad.status_code == 400 and "minutes" in bad.json()["details"]["fieldErrors"]


# -- the holder's verbs ------------------------------------------------------------------------


def test_heartbeat_renews_the_lease_without_reordering(api: Api) -> None:
    task = api.claimed("alice")
    api.clock.advance(minutes=5)
    renewed = ok_task(post(api, task["id"], "heartbeat", {"agent": "alice", "epoch": 1}))
    stored = api.stored(task["id"])
    assert renewed == stored.to_json()
    assert stored.lease_until == api.clock.now_ms() + BoardConfig().lease_ms
    assert stored.updated_at == task["updatedAt"]
    assert api.kinds()[-1] == "lease_renewed"


def test_progress_is_a_comment_and_a_renewal(api: Api) -> None:
    task = api.claimed("alice")
    ok_task(post(api, task["id"], "progress", {"agent": "alice", "note": "half way"}))
    with api.reader() as other:
        assert [c.body for c in other.comments(task["id"])] == ["half way"]
    assert api.kinds()[-1] == "progress_logged"
    assert post(api, task["id"], "progress", {"agent": "alice"}).status_code == 400


def test_extend_lease_sets_the_lease_from_now(api: Api) -> None:
    task = api.claimed("alice")
    ok_task(post(api, task["id"], "extend-lease", {"agent": "alice", "minutes": 120}))
    assert api.stored(task["id"]).lease_until == api.clock.now_ms() + 120 * 60_000
    over = post(api, task["id"], "extend-lease", {"agent": "alice", "minutes": 100_000})
    assert over.status_code == 400


def test_complete_goes_to_review_and_approve_to_done(api: Api) -> None:
    task = api.claimed("alice")
    ok_task(post(api, task["id"], "complete", {"agent": "alice", "summary": "built it"}))
    assert api.stored(task["id"]).status == t.IN_REVIEW
    refused(post(api, task["id"], "approve", {"agent": "alice"}), 403, "self_review")
    refused(post(api, task["id"], "approve", {"agent": "bob", "epoch": 7}), 409, "stale_claim")
    # no caller names itself after the board's own passes (a "gate" approval), nor "operator:"
    before = api.fingerprint()
    for name in ("verification-gate", "system", "operator:"):
        answer = post(api, task["id"], "approve", {"agent": name})
        assert answer.status_code == 400 and answer.json()["reason"] == "invalid_input"
        assert "agent" in answer.json()["details"]["fieldErrors"]
    assert api.fingerprint() == before
    done = ok_task(post(api, task["id"], "approve", {"agent": "bob", "epoch": 1}))
    assert done["status"] == t.DONE == api.stored(task["id"]).status
    assert api.kinds()[-1] == "status_changed"


def test_reject_sends_the_work_back_with_its_reason(api: Api) -> None:
    task = api.claimed("alice")
    ok_task(post(api, task["id"], "complete", {"agent": "alice"}))
    assert post(api, task["id"], "reject", {"agent": "bob"}).status_code == 400
    ok_task(post(api, task["id"], "reject", {"agent": "bob", "reason": "tests fail"}))
    stored = api.stored(task["id"])
    assert (stored.status, stored.assignee_agent_id) == (t.TODO, None)
    with api.reader() as other:
        assert other.comments(task["id"])[-1].body == "rejected: tests fail"


def test_block_and_unblock(api: Api) -> None:
    task = api.claimed("alice")
    ok_task(post(api, task["id"], "block", {"agent": "alice", "reason": "needs a key"}))
    stored = api.stored(task["id"])
    assert (stored.status, stored.blocked_reason) == (t.BLOCKED, "needs a key")
    refused(post(api, task["id"], "unblock", {"epoch": 0}), 409, "stale_claim")
    ok_task(post(api, task["id"], "unblock", {"note": "key provided", "epoch": 1}))
    assert api.stored(task["id"]).status == t.TODO
    refused(post(api, task["id"], "unblock"), 409, "invalid_state")


def test_unblock_drop_and_restore_act_as_the_agent_the_body_names(api: Api) -> None:
    """These took no `agent` (400 "Extra inputs are not permitted") and acted as the operator,
    where the CLI's `--agent` and the page's table let an agent act as itself and be held to an
    agent's rules: the holder of a blocked task unblocks it, another agent may not."""
    task = api.claimed("alice")
    ok_task(post(api, task["id"], "block", {"agent": "alice", "reason": "needs a key"}))
    before = api.fingerprint()
    refused(post(api, task["id"], "unblock", {"agent": "bob", "epoch": 1}), 403, "not_assignee")
    assert api.fingerprint() == before
    ok_task(post(api, task["id"], "unblock", {"agent": "alice", "epoch": 1, "note": "got it"}))
    assert api.events()[-1].actor == "alice"
    with api.reader() as other:
        assert other.comments(task["id"])[-1].author_agent_id == "alice"
    for verb, kind in (("drop", "task_dropped"), ("restore", "task_restored")):
        ok_task(post(api, task["id"], verb, {"agent": "bob"}))
        assert (api.events()[-1].kind, api.events()[-1].actor) == (kind, "bob")
    ok_task(post(api, task["id"], "drop", {}))  # naming nobody: the operator, as before
    assert api.events()[-1].actor == "operator"


def test_release_gives_the_task_back(api: Api) -> None:
    task = api.claimed("alice")
    ok_task(post(api, task["id"], "release", {"agent": "alice", "epoch": 1}))
    stored = api.stored(task["id"])
    assert (stored.status, stored.assignee_agent_id) == (t.TODO, None)


def test_transfer_hands_the_task_on_with_a_new_epoch(api: Api) -> None:
    task = api.claimed("alice")
    moved = ok_task(post(api, task["id"], "transfer", {"agent": "alice", "to": "bob", "epoch": 1}))
    assert (moved["assigneeAgentId"], moved["claimEpoch"]) == ("bob", 2)
    assert api.kinds()[-1] == "task_transferred"
    refused(post(api, task["id"], "heartbeat", {"agent": "alice"}), 403, "not_assignee")
    before = api.fingerprint()
    body = refused(
        post(api, task["id"], "heartbeat", {"agent": "bob", "epoch": 1}), 409, "stale_claim"
    )
    # bob holds it now, under epoch 2: the refusal says so (its claim is not gone), alice's not
    assert (body["heldByYou"], body["currentEpoch"]) == (True, 2)
    assert f"you hold {task['id']} under epoch 2 now" in body["message"]
    body = refused(
        post(api, task["id"], "extend-lease", {"agent": "alice", "epoch": 1, "minutes": 5}),
        409,
        "stale_claim",
    )
    assert body["heldByYou"] is False and "you hold" not in body["message"]
    assert api.fingerprint() == before
    same = post(api, task["id"], "transfer", {"agent": "bob", "to": "bob"})
    assert same.status_code == 400


def test_drop_and_restore(api: Api) -> None:
    task = api.create()
    assert ok_task(post(api, task["id"], "drop"))["dropped"] == 1
    assert api.stored(task["id"]).dropped == 1
    assert api.kinds()[-1] == "task_dropped"
    refused(post(api, task["id"], "restore", {"epoch": 4}), 409, "stale_claim")
    assert ok_task(post(api, task["id"], "restore", {"epoch": 0}))["dropped"] == 0
    held = api.claimed("alice")
    refused(post(api, held["id"], "drop"), 409, "invalid_state")


@pytest.mark.parametrize(
    ("verb", "body"),
    [
        ("heartbeat", {}),
        ("progress", {"note": "n"}),
        ("extend-lease", {"minutes": 5}),
        ("complete", {}),
        ("block", {"reason": "r"}),
        ("release", {}),
        ("transfer", {"to": "zed"}),
    ],
)
def test_every_holder_verb_honours_epoch_and_holder(api: Api, verb: str, body: dict) -> None:
    task = api.claimed("alice")
    before = api.fingerprint()
    refused(post(api, task["id"], verb, {**body, "agent": "alice", "epoch": 9}), 409, "stale_claim")
    refused(post(api, task["id"], verb, {**body, "agent": "mallory"}), 403, "not_assignee")
    missing = post(api, "TASK-404", verb, {**body, "agent": "alice"})
    refused(missing, 404, "not_found")
    assert api.fingerprint() == before
    ok_task(post(api, task["id"], verb, {**body, "agent": "alice", "epoch": 1}))


@pytest.mark.parametrize(
    ("verb", "body"),
    [
        ("approve", {"agent": "bob"}),
        ("reject", {"agent": "bob", "reason": "r"}),
        ("unblock", {}),
        ("drop", {}),
        ("restore", {}),
    ],
)
def test_the_other_verbs_404_on_a_missing_task(api: Api, verb: str, body: dict) -> None:
    refused(post(api, "TASK-404", verb, body), 404, "not_found")


def test_a_holder_verb_on_a_task_in_the_wrong_state_is_409(api: Api) -> None:
    task = api.create()
    refused(post(api, task["id"], "heartbeat", {"agent": "alice"}), 409, "invalid_state")
    refused(post(api, task["id"], "approve", {"agent": "bob"}), 409, "invalid_state")
