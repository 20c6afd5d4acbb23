"""`POST /api/board/{taskId}/land`, its preview (`GET`) and `POST .../workspace/sync` over real
repositories, both backends: the landing's JSON, the landed fields in the task's JSON, and
refusals in the lease verbs' envelope that change nothing."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib.worktrees import Worktrees
from tests.http.conftest import Api, bearer, serving, token_book
from tests.worktrees.conftest import checkout_state, git, make_repo, set_verify

ANSWER = "def answer():\n    return 43\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return make_repo(tmp_path / "repo")


@pytest.fixture
def api(tmp_path: Path, repo: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path, tokens=token_book()) as opened:
        yield opened


def reviewed(api: Api, repo: Path, tmp_path: Path) -> str:
    """A task alice built in a worktree and completed: in review, its change uncommitted."""
    trees = Worktrees(api.board, root=tmp_path / "state" / "worktrees")
    task = api.board.create_task("Fix the answer")
    api.board.claim(task.id, "alice")
    made = trees.provision(task.id, repo)
    path = Path(made.worktree.worktree_path)
    set_verify(path, "grep -q 43 app.py")
    (path / "app.py").write_text(ANSWER)
    api.board.complete(task.id, "alice")
    return task.id


def test_a_reviewer_previews_then_approves_and_lands(api: Api, repo: Path, tmp_path: Path) -> None:
    task_id = reviewed(api, repo, tmp_path)
    answer = api.client.get(f"/api/board/{task_id}/land", headers=bearer("bob"))
    assert answer.status_code == 200, answer.text
    preview = answer.json()["preview"]
    assert preview["state"] == "clean" and preview["into"] == "main"
    answer = api.client.post(
        f"/api/board/{task_id}/land",
        json={"expectSource": preview["sourceTree"]},
        headers=bearer("bob"),
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    head = git(repo, "rev-parse", "main")
    assert body["ok"] is True and body["landed"] is True and body["commit"] == head
    assert body["verifiedAhead"] is False  # it waited behind nobody: verified in its turn
    assert body["task"]["status"] == "done" and body["task"]["landedBy"] == "bob"
    assert body["verification"]["exitCode"] == 0
    shown = api.client.get(f"/api/board/{task_id}", headers=bearer("bob")).json()["task"]
    assert shown["landedCommit"] == head and shown["landedInto"] == "main"
    again = api.client.post(f"/api/board/{task_id}/land", headers=bearer("bob"))
    assert again.status_code == 409
    assert again.json()["error"] == "not_landable" and again.json()["why"] == "already_landed"


def test_refusals_answer_in_the_envelope_and_change_nothing(
    api: Api, repo: Path, tmp_path: Path
) -> None:
    task_id = reviewed(api, repo, tmp_path)
    before = api.fingerprint(), checkout_state(repo)
    builder = api.client.post(f"/api/board/{task_id}/land", headers=bearer("alice"))
    assert builder.status_code == 403
    assert builder.json()["ok"] is False and builder.json()["error"] == "self_review"
    override = api.client.post(
        f"/api/board/{task_id}/land", json={"allowUnverified": True}, headers=bearer("bob")
    )
    assert override.status_code == 403 and override.json()["reason"] == "operator_only"
    why = api.client.post(
        f"/api/board/{task_id}/land", json={"unverifiedReason": "hotfix"}, headers=bearer("bob")
    )
    assert why.status_code == 400 and why.json()["reason"] == "invalid_input"
    bad = api.client.post(
        f"/api/board/{task_id}/land", json={"strategy": "octopus"}, headers=bearer("bob")
    )
    assert bad.status_code == 400 and "strategy" in bad.json()["details"]["fieldErrors"]
    missing = api.client.post("/api/board/TASK-404/land", headers=bearer("bob"))
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    assert (api.fingerprint(), checkout_state(repo)) == before
    assert api.stored(task_id).status == "in_review"


def test_sync_brings_the_base_into_the_worktree(api: Api, repo: Path, tmp_path: Path) -> None:
    trees = Worktrees(api.board, root=tmp_path / "state" / "worktrees")
    task = api.board.create_task("Catch up")
    api.board.claim(task.id, "alice")
    path = Path(trees.provision(task.id, repo).worktree.worktree_path)
    (repo / "main.txt").write_text("from main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main moved")
    other = api.client.post(f"/api/board/{task.id}/workspace/sync", headers=bearer("bob"))
    assert other.status_code == 403 and other.json()["reason"] == "not_assignee"
    answer = api.client.post(f"/api/board/{task.id}/workspace/sync", headers=bearer("alice"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["ok"] is True and body["action"] == "sync" and body["commits"] == 1
    assert (path / "main.txt").read_text() == "from main\n"


def test_the_plain_complete_of_work_in_a_worktree_is_refused_for_the_gate(
    api: Api, repo: Path, tmp_path: Path
) -> None:
    """`POST .../complete` put a worktree's work in review with no gate run (one holding git's
    conflict markers too), where a reviewer took it for verified: 409 `gate_required` now,
    changing nothing; the workspace's complete runs the gate. A task without a worktree completes
    as seed 003's client expects."""
    trees = Worktrees(api.board, root=tmp_path / "state" / "worktrees")
    task = api.board.create_task("Catch up")
    api.board.claim(task.id, "alice")
    path = Path(trees.provision(task.id, repo).worktree.worktree_path)
    set_verify(path, "true")
    (path / "app.py").write_text(ANSWER)
    (repo / "app.py").write_text("def answer():\n    return 44\n")
    git(repo, "commit", "-qam", "main moved")
    answer = api.client.post(f"/api/board/{task.id}/workspace/sync", headers=bearer("alice"))
    assert answer.status_code == 409 and answer.json()["reason"] == "merge_conflict"
    for fix in (None, ANSWER):  # with git's markers, then resolved
        if fix is not None:
            (path / "app.py").write_text(fix)
        before = api.fingerprint(), checkout_state(path)
        answer = api.client.post(f"/api/board/{task.id}/complete", headers=bearer("alice"))
        assert answer.status_code == 409, answer.text
        body = answer.json()
        assert (body["reason"], body["use"]) == ("gate_required", "workspace complete")
        assert (api.fingerprint(), checkout_state(path)) == before
    assert api.stored(task.id).status == "in_progress"
    answer = api.client.patch(
        f"/api/board/{task.id}/workspace", json={"action": "complete"}, headers=bearer("alice")
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["verified"] == "pass"
    plain = api.board.create_task("Write the notes")  # no worktree
    api.board.claim(plain.id, "alice")
    answer = api.client.post(f"/api/board/{plain.id}/complete", headers=bearer("alice"))
    assert answer.status_code == 200 and answer.json()["task"]["status"] == "in_review"


def test_work_already_on_main_lands_and_an_operator_abandons_what_wont(
    api: Api, repo: Path, tmp_path: Path
) -> None:
    """Both sat in the inbox for ever: every landing refused, nothing to clear them with."""
    first = reviewed(api, repo, tmp_path)  # in review: approve and land finds main has it
    (repo / "app.py").write_text(ANSWER)
    git(repo, "commit", "-qam", "the same fix, by hand")
    tip = git(repo, "rev-parse", "main")
    answer = api.client.post(f"/api/board/{first}/land", headers=bearer("bob"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["alreadyOn"], body["commit"], body["task"]["status"]) == (True, tip, "done")
    assert git(repo, "rev-parse", "main") == tip
    second = reviewed(api, repo, tmp_path)  # its verify command fails on what main has now
    trees = Worktrees(api.board, root=tmp_path / "state" / "worktrees")
    path = Path(trees.checkout_path(second))
    (path / "app.py").write_text("def answer():\n    return 44\n")
    api.board.approve(second, "bob")
    refused = api.client.post(f"/api/board/{second}/land", headers=bearer("bob"))
    assert refused.json()["error"] == "verification_failed", refused.text
    inbox = api.client.get("/api/board/inbox", headers=bearer("ops")).json()["items"]
    assert [item["taskId"] for item in inbox] == [second]
    before = api.fingerprint(), checkout_state(repo)
    agent = api.client.post(
        f"/api/board/{second}/land/abandon", json={"reason": "no"}, headers=bearer("bob")
    )
    assert agent.status_code == 403 and agent.json()["reason"] == "operator_only"
    missing = api.client.post(f"/api/board/{second}/land/abandon", json={}, headers=bearer("ops"))
    assert missing.status_code == 400
    assert (api.fingerprint(), checkout_state(repo)) == before
    decided = api.client.post(
        f"/api/board/{second}/land/abandon", json={"reason": "44 was wrong"}, headers=bearer("ops")
    )
    assert decided.status_code == 200, decided.text
    assert decided.json()["archived"] is True and decided.json()["task"]["status"] == "done"
    assert api.client.get("/api/board/inbox", headers=bearer("ops")).json()["items"] == []
    assert checkout_state(repo)[:2] == before[1][:2]  # the user's files and status
    # the task read says it won't land, by whom and why (an extension field: the seed's stay)
    read = api.client.get(f"/api/board/{second}", headers=bearer("ops")).json()
    assert read["wontLand"]["by"] == "operator:ops" and read["wontLand"]["reason"] == "44 was wrong"
    assert set(read["wontLand"]) == {"by", "at", "reason", "kept"}
    assert api.client.get(f"/api/board/{first}", headers=bearer("ops")).json()["wontLand"] is None
