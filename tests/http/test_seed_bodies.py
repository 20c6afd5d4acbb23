"""Seed 003's contract for seed 003's clients: every route's example body, exactly as the seed
prints it (its `curl -d '...'`, with the ids of the session in place of `<task-id>`), answered
with the status code the seed documents; and bodies that are valid under the seed's schemas but
that the board's own surfaces refuse (a move to blocked without a reason, a create in any
status, an empty `kind`) taken with the seed's meaning. The 409 of a claim names the holder when
someone holds the task, and says the task is finished when it is."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boardlib import transitions as t
from tests.http.conftest import Api, serving
from tests.worktrees.conftest import make_repo

SEED_CREATE = "POST /api/board"
SEED_UPDATE = "PATCH /api/board/:taskId"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return make_repo(tmp_path / "repo")


@pytest.fixture
def api(tmp_path: Path, repo: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path) as opened:
        yield opened


def send(api: Api, method: str, path: str, body: Any = None) -> Any:
    if body is None:
        return api.client.request(method, path)
    return api.client.request(method, path, json=body)


def test_every_routes_seed_example_gets_the_seeds_status(api: Api, repo: Path) -> None:
    """Seed 003's examples in the order a seed client's session makes them."""
    ids: dict[str, str] = {}

    def step(method: str, path: str, body: Any = None, status: int = 200) -> Any:
        text = json.dumps([path, body])
        for name, value in ids.items():
            text = text.replace(f"<{name}>", value)
        path, body = json.loads(text)
        answer = send(api, method, path, body)
        assert answer.status_code == status, f"{method} {path} {body}: {answer.text}"
        return answer.json()

    # GET /api/board: ready-to-work tasks for a team; a team's in-progress tasks.
    step("GET", "/api/board?teamId=team-1&ready=true")
    step("GET", "/api/board?teamId=team-1&status=in_progress")
    # POST /api/board
    created = step("POST", "/api/board", {"title": "Implement /api/foo", "teamId": "team-1",
                                           "priority": 1})  # fmt: skip
    ids["task-id"] = created["task"]["id"]
    assert (created["task"]["status"], created["task"]["priority"]) == (t.TODO, 1)
    # GET /api/board/:taskId
    assert step("GET", "/api/board/<task-id>")["task"]["title"] == "Implement /api/foo"
    # POST /api/board/:taskId/claim
    claim = {"assigneeAgentId": "native-leader-abc", "assigneeRuntime": "clawboo-native"}
    claimed = step("POST", "/api/board/<task-id>/claim", claim)
    assert (claimed["ok"], claimed["task"]["status"]) == (True, t.IN_PROGRESS)
    # PATCH /api/board/:taskId: bump priority + retitle
    edited = step("PATCH", "/api/board/<task-id>", {"priority": 5, "title": "Updated title"})
    assert (edited["task"]["priority"], edited["task"]["title"]) == (5, "Updated title")
    # POST /api/board/:taskId/comments
    comment = step("POST", "/api/board/<task-id>/comments",
                   {"body": "Blocked on the upstream schema.", "authorType": "agent",
                    "authorAgentId": "native-leader-abc"})  # fmt: skip
    assert comment["comment"]["authorAgentId"] == "native-leader-abc"
    # POST /api/board/:taskId/executions, then PATCH /api/board/executions/:execId, then GET
    run = step("POST", "/api/board/<task-id>/executions",
               {"executorType": "claude-code", "beforeCommit": "<sha>"})  # fmt: skip
    ids["exec-id"] = run["execution"]["id"]
    assert run["execution"]["status"] == "running"
    closed = step("PATCH", "/api/board/executions/<exec-id>",
                  {"status": "succeeded", "inputTokens": 1200, "outputTokens": 340,
                   "costUsd": 0.012})  # fmt: skip
    assert closed["ok"] is True
    assert [r["status"] for r in step("GET", "/api/board/<task-id>/executions")["executions"]] == [
        "succeeded"
    ]
    # POST /api/board/:taskId/deps: step 2 waits on step 1
    ids["step-1-id"] = ids["task-id"]
    ids["step-2-id"] = step("POST", "/api/board", {"title": "step 2"})["task"]["id"]
    step("POST", "/api/board/<step-2-id>/deps", {"dependsOnTaskId": "<step-1-id>"})
    # The seed client's failure flow: block the failed step (its body has no reason), then
    # cancel the dead chain behind it.
    blocked = step("PATCH", "/api/board/<step-1-id>", {"status": "blocked"})
    assert blocked["task"]["status"] == t.BLOCKED
    assert blocked["task"]["blockedReason"] == (
        f"blocked by operator via {SEED_UPDATE} (the request gave no reason)"
    )
    ids["failed-task-id"] = ids["step-1-id"]
    cancelled = step("POST", "/api/board/<failed-task-id>/cancel-dependents")
    assert cancelled == {"cancelled": [{"id": ids["step-2-id"], "title": "step 2"}]}
    # PATCH /api/board/:taskId: ship despite the verdict (audited)
    ids["task-id"] = step("POST", "/api/board", {"title": "ship it"})["task"]["id"]
    step("POST", "/api/board/<task-id>/claim", {"assigneeAgentId": "native-leader-abc"})
    shipped = step("PATCH", "/api/board/<task-id>", {"status": "done", "humanOverride": True})
    assert shipped["task"]["status"] == t.DONE
    # The worktree routes: provision, cold resume, handoff, detail, pause, complete.
    ids["task-id"] = step("POST", "/api/board", {"title": "Fix the answer"})["task"]["id"]
    step("POST", "/api/board/<task-id>/claim", {"assigneeAgentId": "native-specialist-abc"})
    made = step("POST", "/api/board/<task-id>/workspace", {"repoPath": str(repo), "kind": "code"})
    assert (made["ok"], made["isolation"]) == (True, "worktree")
    assert step("GET", "/api/board/<task-id>/workspace")["workspace"]["status"] == "active"
    handed = step("POST", "/api/board/<task-id>/workspace/handoff",
                  {"handoffFrom": "native-specialist-abc", "runtime": "clawboo-native",
                   "completedSubtasks": ["wired the route"],
                   "brokenOrUnverified": ["the e2e test is flaky"],
                   "nextBestStep": "stabilize the flaky test"})  # fmt: skip
    assert handed == {"ok": True}
    assert "AGENT_HANDOFF.json" in step("GET", "/api/board/<task-id>/workspace/detail")["sorFiles"]
    assert step("PATCH", "/api/board/<task-id>/workspace", {"action": "pause"})["action"] == "pause"
    done = step("PATCH", "/api/board/<task-id>/workspace", {"action": "complete"})
    assert done["action"] == "complete"


def test_a_move_to_blocked_without_a_reason_records_who_and_by_which_route(api: Api) -> None:
    task = api.create("seed client's task")
    blocked = api.client.patch(f"/api/board/{task['id']}", json={"status": "blocked"})
    assert blocked.status_code == 200, blocked.text
    reason = f"blocked by operator via {SEED_UPDATE} (the request gave no reason)"
    stored = api.stored(task["id"])
    assert (stored.status, stored.blocked_reason) == (t.BLOCKED, reason)
    (event,) = [e for e in api.events() if e.kind == "status_changed"]
    assert (event.actor, event.data["to"], event.data["reason"]) == ("operator", t.BLOCKED, reason)
    # A reason given is the reason kept; an already blocked task keeps its own.
    other = api.create("with a reason")
    given = {"status": "blocked", "reason": "waiting on legal"}
    answer = api.client.patch(f"/api/board/{other['id']}", json=given)
    assert answer.json()["task"]["blockedReason"] == "waiting on legal"
    again = api.client.patch(f"/api/board/{other['id']}", json={"status": "blocked"})
    assert again.json()["task"]["blockedReason"] == "waiting on legal"


@pytest.mark.parametrize("status", t.STATUSES)
def test_a_create_in_any_status_files_the_task_there(api: Api, status: str) -> None:
    """createTaskBody allows all seven statuses: the task is filed in the one asked for, reached
    from todo by legal moves, in one row and one `task_created` event."""
    answer = api.client.post("/api/board", json={"title": f"born {status}", "status": status})
    assert answer.status_code == 200, answer.text
    task = answer.json()["task"]
    stored = api.stored(task["id"])
    assert stored.to_json() == task and stored.status == status
    held = status == t.IN_PROGRESS
    # Done keeps whoever held it last, as a task moved there from in progress does.
    assert stored.assignee_agent_id == ("operator" if status in (t.IN_PROGRESS, t.DONE) else None)
    assert (stored.lease_until is not None) is held
    assert stored.holders == (
        ["operator"] if status in (t.IN_PROGRESS, t.IN_REVIEW, t.DONE) else []
    )
    if status == t.BLOCKED:
        assert stored.blocked_reason == (
            f"blocked by operator via {SEED_CREATE} (the request gave no reason)"
        )
    assert (stored.completed_at is not None) is (status == t.DONE)
    assert [(e.kind, e.data["status"]) for e in api.events()] == [("task_created", status)]


def test_an_empty_kind_provisions_by_the_tasks_own_kind(api: Api, repo: Path) -> None:
    task = api.claimed("alice", title="no kind given")
    made = api.client.post(
        f"/api/board/{task['id']}/workspace", json={"repoPath": str(repo), "kind": ""}
    )
    assert made.status_code == 200, made.text
    assert made.json()["isolation"] == "worktree"


def test_an_empty_optional_identifier_is_the_field_left_out(api: Api, repo: Path) -> None:
    """The seed's zod takes `""` in every optional string it does not name non-empty (it names
    `teamId` and `tenantId`): such a body is a 200 with the field read as not given."""
    created = api.client.post("/api/board", json={
        "title": "t", "assigneeRuntime": "", "parentTaskId": "", "sourceDelegationId": "",
    })  # fmt: skip
    assert created.status_code == 200, created.text
    task = created.json()["task"]
    assert (task["assigneeRuntime"], task["parentTaskId"], task["sourceDelegationId"]) == (
        None, None, None,
    )  # fmt: skip
    claim = {"assigneeAgentId": "alice", "assigneeRuntime": ""}
    claimed = api.client.post(f"/api/board/{task['id']}/claim", json=claim)
    assert claimed.status_code == 200, claimed.text
    assert claimed.json()["task"]["assigneeRuntime"] is None
    comment = {"body": "hello", "authorAgentId": ""}
    commented = api.client.post(f"/api/board/{task['id']}/comments", json=comment)
    assert commented.status_code == 200, commented.text
    assert commented.json()["comment"]["authorAgentId"] is None
    run = {"executorType": "claude-code", "workspaceId": ""}
    opened = api.client.post(f"/api/board/{task['id']}/executions", json=run)
    assert opened.status_code == 200, opened.text
    assert opened.json()["execution"]["workspaceId"] is None
    where = {"repoPath": str(repo), "baseSha": "", "baseRef": ""}
    made = api.client.post(f"/api/board/{task['id']}/workspace", json=where)
    assert made.status_code == 200, made.text
    assert api.stored(task["id"]).worktree_ref == made.json()["worktree"]["worktreePath"]
    # The two the seed names non-empty are still refused.
    before = api.fingerprint()
    for field in ("teamId", "tenantId"):
        refused = api.client.post("/api/board", json={"title": "t", field: ""})
        assert refused.status_code == 400 and field in refused.json()["details"]["fieldErrors"]
    assert api.fingerprint() == before


def test_a_claim_409_names_the_holder_or_says_the_task_is_finished(api: Api) -> None:
    held = api.claimed("worker-1", title="held")
    lost = api.client.post(f"/api/board/{held['id']}/claim", json={"assigneeAgentId": "worker-2"})
    assert lost.status_code == 409
    body = lost.json()
    assert (body["ok"], body["error"], body["current"], body["assignee"]) == (
        False, "conflict", t.IN_PROGRESS, "worker-1",
    )  # fmt: skip
    assert "held by worker-1" in body["message"]
    assert api.client.post(f"/api/board/{held['id']}/complete", json={"agent": "worker-1"})
    assert api.client.post(f"/api/board/{held['id']}/approve", json={"agent": "reviewer-1"})
    finished = api.client.post(
        f"/api/board/{held['id']}/claim", json={"assigneeAgentId": "worker-2"}
    )
    assert finished.status_code == 409
    body = finished.json()
    assert (body["error"], body["current"]) == ("conflict", t.DONE)
    assert "assignee" not in body  # nobody holds a done task, whoever built it
    assert "it is done, and finished work is not claimed again" in body["message"]
    cancelled = api.client.post("/api/board", json={"title": "dropped plan", "status": "cancelled"})
    gone = api.client.post(
        f"/api/board/{cancelled.json()['task']['id']}/claim", json={"assigneeAgentId": "w"}
    )
    assert gone.status_code == 409 and gone.json()["current"] == t.CANCELLED
    assert "it is cancelled" in gone.json()["message"]


def test_the_boards_own_surfaces_still_ask_for_a_reason(api: Api, tmp_path: Path) -> None:
    """The default reason is the seed clients' alone: the board's verbs (the CLI's move and
    block, MCP's block_task, the TUI's prompt) all call without a seed route."""
    from boardlib import Board, BoardError, Reason

    task = api.create("ours")
    with Board(api.path, reconcile_orphans=False) as board:
        with pytest.raises(BoardError) as refused:
            board.move(task["id"], t.BLOCKED)
        assert refused.value.reason is Reason.INVALID_INPUT
        assert "needs a reason" in refused.value.message
        with pytest.raises(BoardError) as created:
            board.create_task("born blocked", status=t.BLOCKED)
        assert created.value.reason is Reason.INVALID_INPUT
    assert api.stored(task["id"]).status == t.TODO
