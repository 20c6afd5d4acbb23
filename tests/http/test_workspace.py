"""Seed 003's workspace routes over real git repositories: provision, cold resume, pause,
complete through the verification gate, the handoff and the detail drawer, with every documented
status and the stored rows (and files) checked afterwards."""

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boardlib import transitions as t
from boardlib.worktrees import SOR_FILES
from tests.http.conftest import Api, bearer, serving, token_book
from tests.worktrees.conftest import git, make_repo, repo_state

HANDOFF = {
    "handoffFrom": "native-specialist-abc",
    "runtime": "clawboo-native",
    "completedSubtasks": ["wired the route"],
    "brokenOrUnverified": ["the e2e test is flaky"],
    "nextBestStep": "stabilize the flaky test",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return make_repo(tmp_path / "repo")


@pytest.fixture
def api(tmp_path: Path, repo: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path) as opened:
        yield opened


def provision(api: Api, task_id: str, repo: Path, **body: Any) -> Any:
    return api.client.post(f"/api/board/{task_id}/workspace", json={"repoPath": str(repo), **body})


def provisioned(api: Api, repo: Path, agent: str = "alice") -> tuple[str, Path]:
    task = api.claimed(agent, title="Fix the answer")
    made = provision(api, task["id"], repo)
    assert made.status_code == 200, made.text
    return task["id"], Path(made.json()["worktree"]["worktreePath"])


# -- POST .../workspace ------------------------------------------------------------------------


def test_provision_answers_the_seed_shape_records_it_and_reuses(api: Api, repo: Path) -> None:
    task = api.claimed("alice")
    before = repo_state(repo)
    made = provision(api, task["id"], repo, kind="code")
    assert made.status_code == 200
    body = made.json()
    assert (body["ok"], body["isolation"]) == (True, "worktree")
    tree = body["worktree"]
    assert (tree["taskId"], tree["branch"], tree["detached"]) == (
        task["id"],
        f"kanban/task-{task['id']}",
        False,
    )
    assert Path(tree["worktreePath"]).is_dir() and len(tree["baseCommit"]) == 40
    assert repo_state(repo)[0] == before[0]
    stored = api.stored(task["id"])
    assert (stored.worktree_ref, stored.branch_ref) == (tree["worktreePath"], tree["branch"])
    assert api.kinds()[-1] == "workspace_provisioned"
    again = provision(api, task["id"], repo)
    assert again.json()["workspaceId"] == body["workspaceId"]
    with api.reader() as other:
        assert len(other.workspaces(task["id"])) == 1


def test_provision_refusals(api: Api, repo: Path, tmp_path: Path) -> None:
    research = api.create("Survey the options", kind="research")
    code = api.create("Write it")
    before = api.fingerprint()
    refused = provision(api, research["id"], repo)
    assert refused.status_code == 422
    body = refused.json()
    assert (body["ok"], body["error"], body["isolation"]) == (False, "no_isolation", "none")
    assert "without a worktree" in body["message"]  # the seed's error, and a sentence beside it
    missing = provision(api, "TASK-404", repo)
    assert missing.status_code == 404
    assert missing.json()["ok"] is False and missing.json()["error"] == "task not found"
    for bad, field in [
        ({}, "repoPath"),
        ({"repoPath": ""}, "repoPath"),
        ({"repoPath": "x" * 4001}, "repoPath"),
        ({"repoPath": str(repo), "baseRef": "--upload-pack=evil"}, "baseRef"),
        ({"repoPath": str(repo), "kind": "k" * 101}, "kind"),
        ({"repoPath": str(tmp_path / "not-a-repo")}, "repoPath"),
    ]:
        answer = api.client.post(f"/api/board/{code['id']}/workspace", json=bad)
        assert answer.status_code == 400, (bad, answer.text)
        assert answer.json()["error"] == "invalid body"
        assert field in answer.json()["details"]["fieldErrors"], answer.json()
    assert api.fingerprint() == before
    assert not (tmp_path / "state" / "worktrees").exists()


def test_provision_is_limited_to_the_repo_roots(tmp_path: Path, repo: Path) -> None:
    other = make_repo(tmp_path / "elsewhere" / "repo")
    with serving(tmp_path, repo_roots=(tmp_path / "repo",)) as api:
        task = api.create()
        outside = provision(api, task["id"], other)
        assert outside.status_code == 403 and outside.json()["reason"] == "forbidden"
        assert api.stored(task["id"]).worktree_ref is None
        # Under the root, a `.git` file naming the repository elsewhere, and a folder of the outside
        # repository given as the root itself
        pointer = tmp_path / "repo" / "pointer"
        pointer.mkdir()
        (pointer / ".git").write_text(f"gitdir: {other / '.git'}\n")
        (other / "src").mkdir()
        before = repo_state(other), git(other, "branch", "--list"), git(other, "worktree", "list")
        via_file = provision(api, task["id"], pointer)
        assert via_file.status_code == 403 and via_file.json()["reason"] == "forbidden"
        assert api.stored(task["id"]).worktree_ref is None
        assert provision(api, task["id"], repo).status_code == 200
    with serving(tmp_path, repo_roots=(other / "src",)) as api:
        task = api.create()
        inside = provision(api, task["id"], other / "src")
        assert inside.status_code == 403 and inside.json()["reason"] == "forbidden"
    after = repo_state(other), git(other, "branch", "--list"), git(other, "worktree", "list")
    assert after == before


# -- GET .../workspace -------------------------------------------------------------------------


def test_cold_resume_reads_the_worktree_alone(api: Api, repo: Path) -> None:
    task_id, _ = provisioned(api, repo)
    assert api.client.post(f"/api/board/{task_id}/workspace/handoff", json=HANDOFF).json() == {
        "ok": True
    }
    body = api.client.get(f"/api/board/{task_id}/workspace").json()
    assert body["ok"] is True
    assert body["workspace"]["taskId"] == task_id and body["workspace"]["status"] == "active"
    assert body["resume"]["hasHandoff"] is True
    assert body["resume"]["done"] == ["wired the route"]
    assert body["resume"]["next"] == "stabilize the flaky test"
    assert body["handoff"]["handoffFrom"] == "native-specialist-abc"


def test_resume_without_a_workspace_is_404(api: Api) -> None:
    task = api.create()
    for task_id in (task["id"], "TASK-404"):
        answer = api.client.get(f"/api/board/{task_id}/workspace")
        assert answer.status_code == 404
        assert answer.json()["error"] == "workspace not found" and "ok" not in answer.json()


# -- POST .../workspace/handoff ----------------------------------------------------------------


def test_handoff_is_written_into_the_worktree(api: Api, repo: Path) -> None:
    task_id, path = provisioned(api, repo)
    answer = api.client.post(f"/api/board/{task_id}/workspace/handoff", json=HANDOFF)
    assert answer.json() == {"ok": True}
    written = json.loads((path / "AGENT_HANDOFF.json").read_text())
    assert written["nextBestStep"] == "stabilize the flaky test"
    assert written["commands"] == {"init": "./init.sh", "verify": "", "start": ""}
    assert written["timestamp"].startswith("2027-01-15")  # the board's clock, not the wall's
    assert api.kinds()[-1] == "workspace_updated"


def test_handoff_refusals(api: Api, repo: Path) -> None:
    task_id, path = provisioned(api, repo)
    no_workspace = api.create()
    before = api.fingerprint()
    for bad in [
        {},
        {"handoffFrom": "", "runtime": "x"},
        {**HANDOFF, "completedSubtasks": "not a list"},
        {**HANDOFF, "timestamp": "yesterday"},
        {**HANDOFF, "nextBestStep": 5, "nextBestStp": "typo"},  # the known field is judged
        {**HANDOFF, "commands": {"verify": ["pytest"], "deploy": "x"}},
    ]:
        answer = api.client.post(f"/api/board/{task_id}/workspace/handoff", json=bad)
        assert answer.status_code == 400, bad
        assert answer.json()["error"] == "invalid handoff"
        assert set(answer.json()["details"]) == {"formErrors", "fieldErrors"}
    malformed = api.client.post(
        f"/api/board/{task_id}/workspace/handoff",
        content=b"{",
        headers={"Content-Type": "application/json"},
    )
    assert malformed.status_code == 400 and malformed.json()["error"] == "invalid handoff"
    assert not (path / "AGENT_HANDOFF.json").exists()
    missing = api.client.post(f"/api/board/{no_workspace['id']}/workspace/handoff", json=HANDOFF)
    assert missing.status_code == 404
    assert missing.json()["ok"] is False and missing.json()["error"] == "workspace not found"
    assert api.fingerprint() == before


def test_a_handoff_s_unknown_keys_are_dropped_at_every_level(api: Api, repo: Path) -> None:
    """`agentHandoffSchema` is a zod object, which drops a key it does not know: a seed client's
    extra field was 400 `invalid handoff`. The file written holds only the schema's fields."""
    task_id, path = provisioned(api, repo)
    body = {
        **HANDOFF,
        "mood": "tired",
        "commands": {"verify": "pytest -q", "deploy": "make ship"},
        "evidence": {"testResults": "12 passed", "coverage": 0.9},
        "roomCursor": {"roomId": "room-1", "lastSeenSeq": 3, "cursor": "x"},
    }
    answer = api.client.post(f"/api/board/{task_id}/workspace/handoff", json=body)
    assert answer.status_code == 200, answer.text
    written = json.loads((path / "AGENT_HANDOFF.json").read_text())
    assert "mood" not in written
    assert written["commands"]["verify"] == "pytest -q" and "deploy" not in written["commands"]
    assert written["evidence"]["testResults"] == "12 passed"
    assert "coverage" not in written["evidence"]
    assert written["roomCursor"] == {"roomId": "room-1", "lastSeenSeq": 3}
    resumed = api.client.get(f"/api/board/{task_id}/workspace")  # and it reads back
    assert resumed.status_code == 200 and resumed.json()["handoff"]["handoffFrom"], resumed.text


def test_a_room_cursor_seq_is_a_64_bit_number_or_the_handoff_is_refused(
    api: Api, repo: Path
) -> None:
    """`roomCursor.lastSeenSeq` took `"1"` and `true` (pydantic's lax int) and any size: a seq
    past 64 bits was written with a 200, then every cold-resume read of it was a 500 (orjson
    cannot encode it). Now such a handoff is the 400 and writes nothing; the largest seq, and
    `5.0` (zod's number), still round-trip; a hand-written file with a bad seq is ignored with a
    warning, never a 500."""
    task_id, path = provisioned(api, repo)
    before = api.fingerprint()
    for bad in ["1", True, 2**63, 10**22, -1, 1.5]:
        body = {**HANDOFF, "roomCursor": {"roomId": "room-1", "lastSeenSeq": bad}}
        answer = api.client.post(f"/api/board/{task_id}/workspace/handoff", json=body)
        assert answer.status_code == 400, (bad, answer.text)
        assert answer.json()["error"] == "invalid handoff"
        assert list(answer.json()["details"]["fieldErrors"]) == ["roomCursor.lastSeenSeq"]
    assert not (path / "AGENT_HANDOFF.json").exists()
    assert api.fingerprint() == before
    for good, stored in [(2**63 - 1, 2**63 - 1), (5.0, 5)]:
        body = {**HANDOFF, "roomCursor": {"roomId": "room-1", "lastSeenSeq": good}}
        written = api.client.post(f"/api/board/{task_id}/workspace/handoff", json=body)
        assert written.status_code == 200, written.text
        resumed = api.client.get(f"/api/board/{task_id}/workspace")
        assert resumed.status_code == 200, resumed.text
        assert resumed.json()["handoff"]["roomCursor"]["lastSeenSeq"] == stored
    by_hand = {**HANDOFF, "roomCursor": {"roomId": "room-1", "lastSeenSeq": 10**22}}
    (path / "AGENT_HANDOFF.json").write_text(json.dumps(by_hand))
    resumed = api.client.get(f"/api/board/{task_id}/workspace")
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["handoff"] is None
    assert any("AGENT_HANDOFF.json is invalid" in w for w in resumed.json()["resume"]["warnings"])


# -- PATCH .../workspace -----------------------------------------------------------------------


def test_pause_commits_drops_the_checkout_and_keeps_the_branch(api: Api, repo: Path) -> None:
    task_id, path = provisioned(api, repo)
    (path / "app.py").write_text("def answer():\n    return 43\n")
    answer = api.client.patch(f"/api/board/{task_id}/workspace", json={"action": "pause"})
    assert answer.status_code == 200
    body = answer.json()
    assert (body["ok"], body["action"], body["pause"]["committed"]) == (True, "pause", True)
    assert len(body["pause"]["head"]) == 40
    assert not path.exists()
    with api.reader() as other:
        assert other.workspaces(task_id)[-1].status == "active"


def test_complete_with_an_empty_diff_lands_done(api: Api, repo: Path) -> None:
    task_id, path = provisioned(api, repo)
    answer = api.client.patch(f"/api/board/{task_id}/workspace", json={"action": "complete"})
    assert answer.status_code == 200
    body = answer.json()
    assert (body["ok"], body["action"], body["taskStatus"]) == (True, "complete", "done")
    assert body["complete"]["dirty"] is False and body["complete"]["cleaned"] is True
    assert "verified" not in body
    assert api.stored(task_id).status == t.DONE
    assert not path.exists()


def test_complete_with_work_runs_the_gate(api: Api, repo: Path) -> None:
    task_id, path = provisioned(api, repo)
    verify = 'python3 -c "import app; assert app.answer() == 43"'
    handoff = {**HANDOFF, "handoffFrom": "alice", "brokenOrUnverified": []}
    handoff["commands"] = {"verify": verify}
    api.client.post(f"/api/board/{task_id}/workspace/handoff", json=handoff)
    (path / "app.py").write_text("def answer():\n    return 43\n")
    answer = api.client.patch(
        f"/api/board/{task_id}/workspace", json={"action": "complete", "epoch": 1}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["taskStatus"], body["verified"]) == ("done", "pass")
    assert body["complete"]["dirty"] is True
    assert body["complete"]["diffStat"]["filesChanged"] == 1
    stored = api.stored(task_id)
    assert stored.status == t.DONE
    assert json.loads(stored.verification or "{}")["status"] == "pass"


def test_the_worktree_routes_record_the_agent_the_body_names(api: Api, repo: Path) -> None:
    """Provision and pause over HTTP recorded `operator` even for the task's holder, where the
    CLI and MCP record the agent: the body may name it (held to an agent's rules), and a seed
    client that names nobody acts as the operator, as before."""
    task = api.claimed("alice")
    before = api.fingerprint()
    theirs = provision(api, task["id"], repo, agent="bob")
    assert theirs.status_code == 403 and theirs.json()["reason"] == "not_assignee"
    assert api.fingerprint() == before
    assert provision(api, task["id"], repo, agent="alice", epoch=1).status_code == 200
    assert (api.events()[-1].kind, api.events()[-1].actor) == ("workspace_provisioned", "alice")
    route = f"/api/board/{task['id']}/workspace"
    paused = api.client.patch(route, json={"action": "pause", "agent": "alice"})
    assert paused.status_code == 200, paused.text
    assert api.events()[-1].actor == "alice"
    assert provision(api, task["id"], repo).status_code == 200
    assert api.events()[-1].actor == "operator"
    theirs = api.client.patch(route, json={"action": "complete", "agent": "bob"})
    assert theirs.status_code == 403 and theirs.json()["reason"] == "not_assignee"


def test_workspace_action_refusals(api: Api, repo: Path) -> None:
    task_id, _ = provisioned(api, repo)
    plain = api.create()
    before = api.fingerprint()
    for bad in [{}, {"action": "archive"}, {"action": "pause", "epoch": "1", "extra": 1}]:
        answer = api.client.patch(f"/api/board/{task_id}/workspace", json=bad)
        assert answer.status_code == 400 and answer.json()["error"] == "invalid body"
    stale = api.client.patch(
        f"/api/board/{task_id}/workspace", json={"action": "complete", "epoch": 5}
    )
    assert stale.status_code == 409 and stale.json()["reason"] == "stale_claim"
    missing = api.client.patch(f"/api/board/{plain['id']}/workspace", json={"action": "pause"})
    assert missing.status_code == 404
    assert missing.json()["ok"] is False and missing.json()["error"] == "workspace not found"
    assert api.fingerprint() == before


def test_an_agent_token_completes_only_its_own_work(tmp_path: Path, repo: Path) -> None:
    with serving(tmp_path, tokens=token_book()) as api:
        task = api.client.post("/api/board", json={"title": "x"}, headers=bearer("ops"))
        task_id = task.json()["task"]["id"]
        api.client.post("/api/board/claim-next", headers=bearer("alice"))
        made = api.client.post(
            f"/api/board/{task_id}/workspace", json={"repoPath": str(repo)}, headers=bearer("alice")
        )
        assert made.status_code == 200
        before = api.fingerprint()
        theirs = api.client.patch(
            f"/api/board/{task_id}/workspace", json={"action": "complete"}, headers=bearer("bob")
        )
        assert theirs.status_code == 403 and theirs.json()["reason"] == "not_assignee"
        assert api.fingerprint() == before
        mine = api.client.patch(
            f"/api/board/{task_id}/workspace", json={"action": "complete"}, headers=bearer("alice")
        )
        assert mine.status_code == 200 and mine.json()["taskStatus"] == "done"


# -- GET .../workspace/detail ------------------------------------------------------------------


def test_detail_serves_only_sor_files_and_the_diff(api: Api, repo: Path, tmp_path: Path) -> None:
    task_id, path = provisioned(api, repo)
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve me")
    (path / "app.py").write_text("def answer():\n    return 43\n")
    (path / "notes.txt").write_text("not a SoR file")
    os.remove(path / "DECISIONS.json")
    os.symlink(secret, path / "DECISIONS.json")  # a planted link is never followed
    answer = api.client.get(f"/api/board/{task_id}/workspace/detail")
    assert answer.status_code == 200
    body = answer.json()
    assert set(body) == {
        "ok", "workspace", "sorFiles", "diffStat", "diff", "diffTruncated", "review",
    }  # fmt: skip
    assert set(body["sorFiles"]) <= set(SOR_FILES)
    assert "TASK.md" in body["sorFiles"] and "DECISIONS.json" not in body["sorFiles"]
    assert "do not serve me" not in answer.text
    assert "return 43" in body["diff"] and "TASK.md" not in body["diff"]
    assert body["diffStat"]["filesChanged"] >= 2 and body["diffStat"]["dirty"] is True
    assert body["workspace"]["taskId"] == task_id


def test_detail_without_a_workspace_is_404(api: Api) -> None:
    task = api.create()
    answer = api.client.get(f"/api/board/{task['id']}/workspace/detail")
    assert answer.status_code == 404
    assert answer.json()["error"] == "workspace not found" and "ok" not in answer.json()


def test_a_failing_git_is_500_git_failed_in_the_plain_envelope(api: Api, repo: Path) -> None:
    """An environment failure, not a refusal: the worktree's index is corrupt, so git itself
    fails. 500 with the failing command, never a traceback."""
    task_id, path = provisioned(api, repo)
    (path / "app.py").write_text("def answer():\n    return 43\n")
    (index,) = (repo / ".git" / "worktrees").glob("*/index")
    index.write_bytes(b"not an index")
    answer = api.client.patch(f"/api/board/{task_id}/workspace", json={"action": "pause"})
    assert answer.status_code == 500, answer.text
    body = answer.json()
    assert (body["reason"], body["command"][0]) == ("git_failed", "git")
    assert "ok" not in body and "Traceback" not in answer.text
