"""Seed 003's `error` values on the claim and the status change: `{ok: false, error: <reason>}`
with the reason one of `not_found | conflict | illegal_transition | verification_required`, per
status as each route documents them. A refusal by a rule the seed does not name (unmet
dependencies, a spent budget, a stale epoch) answers the seed's word for its status and keeps
the board's own in `reason`; each writes nothing (fingerprint)."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.http.conftest import Api, bearer, serving, token_book

# The seed's words, per route and status (docs.claw.boo/reference/rest-api/board).
CLAIM = {404: {"not_found"}, 409: {"conflict"}}
STATUS_CHANGE = {404: {"not_found"}, 409: {"illegal_transition", "verification_required"}}


@pytest.fixture
def api(tmp_path: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path) as opened:
        yield opened


def seed_refusal(answer: Any, words: dict[int, set[str]], status: int, reason: str) -> Any:
    """The seed's `{ok: false, error}` with `error` its word for `status`, `reason` the board's."""
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["ok"] is False
    assert body["error"] in words[status], body
    assert body["reason"] == reason, body
    return body


def claim(api: Api, task_id: str, agent: str = "bob") -> Any:
    return api.client.post(f"/api/board/{task_id}/claim", json={"assigneeAgentId": agent})


def spent(api: Api) -> str:
    """A task whose budget a run spent: the board blocked it."""
    task = api.claimed("alice", budgetUsd=1.0)
    opened = api.client.post(f"/api/board/{task['id']}/executions", json={"executorType": "sh"})
    run_id = opened.json()["execution"]["id"]
    closed = api.client.patch(
        f"/api/board/executions/{run_id}", json={"status": "succeeded", "costUsd": 2.0}
    )
    assert closed.status_code == 200, closed.text
    assert api.stored(task["id"]).status == "blocked"
    return str(task["id"])


def test_a_claim_waiting_on_dependencies_is_the_seed_s_conflict(api: Api) -> None:
    blocker = api.create("first")
    waiting = api.create("second", dependsOn=[blocker["id"]])
    before = api.fingerprint()
    body = seed_refusal(claim(api, waiting["id"]), CLAIM, 409, "unmet_dependencies")
    assert body["error"] == "conflict" and body["unmet"] == [blocker["id"]]
    assert body["message"] == f"task {waiting['id']} has unmet dependencies: {blocker['id']}"
    assert api.fingerprint() == before


def test_every_refused_claim_answers_a_seed_word(api: Api) -> None:
    held = api.claimed("alice")
    finished = api.create("finished", status="done")
    budgeted = spent(api)
    before = api.fingerprint()
    seed_refusal(claim(api, held["id"]), CLAIM, 409, "conflict")
    seed_refusal(claim(api, finished["id"]), CLAIM, 409, "conflict")
    seed_refusal(claim(api, budgeted), CLAIM, 409, "conflict")
    seed_refusal(claim(api, "TASK-404"), CLAIM, 404, "not_found")
    assert api.fingerprint() == before


def test_a_move_under_a_stale_epoch_is_the_seed_s_illegal_transition(api: Api) -> None:
    task = api.claimed("alice")
    before = api.fingerprint()
    stale = api.client.patch(f"/api/board/{task['id']}", json={"status": "todo", "epoch": 0})
    body = seed_refusal(stale, STATUS_CHANGE, 409, "stale_claim")
    assert (body["error"], body["epoch"], body["currentEpoch"]) == ("illegal_transition", 0, 1)
    assert api.fingerprint() == before
    assert api.stored(task["id"]).assignee_agent_id == "alice"


def test_a_future_epoch_is_called_one_the_task_never_had_not_stale(api: Api) -> None:
    """An epoch above the task's was never one of its claims (found by a seed-only client: the
    refusal called it "stale"): the seed's word and `stale_claim` stay, the message says what
    it is; an older epoch is still called stale. Each writes nothing."""
    task = api.claimed("alice")
    before = api.fingerprint()
    path = f"/api/board/{task['id']}"
    move = api.client.patch(path, json={"status": "in_review", "epoch": 7})
    body = seed_refusal(move, STATUS_CHANGE, 409, "stale_claim")
    assert (body["epoch"], body["currentEpoch"]) == (7, 1)
    said = f"claim epoch 7 is one {task['id']} never had (its newest is 1)"
    assert said in body["message"] and "stale" not in body["message"]
    edit = api.client.patch(path, json={"title": "renamed", "epoch": 7})
    assert edit.status_code == 409 and edit.json()["reason"] == "stale_claim"
    assert said in edit.json()["error"] and "stale" not in edit.json()["error"]
    beat = api.client.post(f"{path}/heartbeat", json={"agent": "alice", "epoch": 7})
    assert beat.status_code == 409 and "never had" in beat.json()["message"]
    assert "under which you hold it" in beat.json()["message"]
    old = api.client.patch(path, json={"status": "in_review", "epoch": 0})
    assert "claim epoch 0 is stale" in old.json()["message"]
    assert api.fingerprint() == before


def test_a_move_under_a_spent_budget_is_the_seed_s_illegal_transition(api: Api) -> None:
    task_id = spent(api)
    before = api.fingerprint()
    moved = api.client.patch(f"/api/board/{task_id}", json={"status": "todo"})
    body = seed_refusal(moved, STATUS_CHANGE, 409, "budget_exceeded")
    assert body["error"] == "illegal_transition" and body["budget"]["limit"] == 1.0
    assert body["message"].startswith(f"cannot move {task_id} to todo: the budget")
    assert api.fingerprint() == before
    assert api.stored(task_id).status == "blocked"


def test_the_seed_s_own_move_refusals_keep_their_words(api: Api) -> None:
    task = api.create()
    before = api.fingerprint()
    illegal = api.client.patch(f"/api/board/{task['id']}", json={"status": "done"})
    assert seed_refusal(illegal, STATUS_CHANGE, 409, "illegal_transition")["error"] == (
        "illegal_transition"
    )
    missing = api.client.patch("/api/board/TASK-404", json={"status": "todo"})
    assert seed_refusal(missing, STATUS_CHANGE, 404, "not_found")["error"] == "not_found"
    assert api.fingerprint() == before


def test_an_edit_alone_keeps_the_plain_envelope(api: Api) -> None:
    """No status: the seed's field edit, `{error: <message>}` (no `ok`), not a status word."""
    task = api.claimed("alice")
    before = api.fingerprint()
    stale = api.client.patch(f"/api/board/{task['id']}", json={"title": "x", "epoch": 0})
    assert stale.status_code == 409
    body = stale.json()
    assert "ok" not in body and body["reason"] == "stale_claim"
    assert body["error"].startswith(f"cannot edit {task['id']}")
    assert api.fingerprint() == before


def test_identity_refusals_keep_their_own_reasons(tmp_path: Path) -> None:
    """403 is no status the seed's claim or move answers: the board's reason stays `error`."""
    with serving(tmp_path, tokens=token_book()) as api:

        def as_(who: str, method: str, path: str, body: dict[str, Any]) -> Any:
            return api.client.request(method, path, json=body, headers=bearer(who))

        task_id = as_("ops", "POST", "/api/board", {"title": "x"}).json()["task"]["id"]
        claimed = as_("alice", "POST", f"/api/board/{task_id}/claim", {"assigneeAgentId": "alice"})
        assert claimed.status_code == 200, claimed.text
        before = api.fingerprint()
        moved = as_("bob", "PATCH", f"/api/board/{task_id}", {"status": "todo"})
        assert moved.status_code == 403
        assert (moved.json()["error"], moved.json()["reason"]) == ("not_assignee", "not_assignee")
        posing = as_("bob", "POST", f"/api/board/{task_id}/claim", {"assigneeAgentId": "alice"})
        assert posing.status_code == 403 and posing.json()["error"] == "forbidden"
        assert api.fingerprint() == before
