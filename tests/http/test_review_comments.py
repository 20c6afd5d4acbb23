"""Review comments anchored to lines over HTTP: `POST /api/board/:taskId/comments` with `path` and
`line` (a seed client's body still works as before), a reject carrying several, and the agent
reading them back from the task detail, the cold-resume read and the drawer's detail route."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.conftest import Api, serving
from tests.worktrees.conftest import make_repo

APP = "".join(f"line_{n} = {n}\n" for n in range(1, 21))


@pytest.fixture
def api(tmp_path: Path, board_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    make_repo(tmp_path / "repo")
    with serving(tmp_path, db=board_path) as opened:
        yield opened


def test_anchored_comments_reach_the_agent_over_http(api: Api, tmp_path: Path) -> None:
    task = api.claimed("alice", title="Fix the answer")
    task_id = task["id"]
    made = api.client.post(
        f"/api/board/{task_id}/workspace", json={"repoPath": str(tmp_path / "repo")}
    )
    worktree = Path(made.json()["worktree"]["worktreePath"])
    (worktree / "app.py").write_text(APP)
    api.board.complete(task_id, "alice")  # in review, no gate run (the route: gate_required)
    seed = api.client.post(f"/api/board/{task_id}/comments", json={"body": "looks close"})
    assert seed.status_code == 200 and seed.json()["comment"]["path"] is None  # as before
    anchored = api.client.post(
        f"/api/board/{task_id}/comments",
        json={"body": "twelve is off by one", "path": "app.py", "line": 12,
              "lineText": "line_12 = 12", "authorType": "user", "authorAgentId": "operator:ana"},
    )  # fmt: skip
    assert anchored.status_code == 200, anchored.text
    assert {k: anchored.json()["comment"][k] for k in ("path", "line", "side", "lineText")} == {
        "path": "app.py", "line": 12, "side": "new", "lineText": "line_12 = 12",
    }  # fmt: skip
    assert "twelve is off by one" in (worktree / "REVIEW.md").read_text()
    rejected = api.client.post(
        f"/api/board/{task_id}/reject",
        json={"agent": "grace", "reason": "see the comments", "comments": [
            {"path": "app.py", "line": 3, "body": "three too"},
            {"path": "app.py", "line": 5, "side": "old", "body": "why removed?"},
        ]},
    )  # fmt: skip
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["task"]["status"] == "todo"
    expected = [("app.py", 12, "twelve is off by one"), ("app.py", 3, "three too"),
                ("app.py", 5, "why removed?")]  # fmt: skip
    detail = api.client.get(f"/api/board/{task_id}").json()
    assert [(e["path"], e["line"], e["body"]) for e in detail["review"]] == expected
    assert [c["path"] for c in detail["comments"]] == [None, "app.py", None, "app.py", "app.py"]
    resumed = api.client.get(f"/api/board/{task_id}/workspace").json()
    assert [(e["path"], e["line"], e["body"]) for e in resumed["review"]] == expected
    assert resumed["review"][2]["side"] == "old"
    drawer = api.client.get(f"/api/board/{task_id}/workspace/detail").json()
    assert [e["commentId"] for e in drawer["review"]] == [e["commentId"] for e in detail["review"]]
    assert "REVIEW.md" in drawer["sorFiles"] and "REVIEW.md" not in drawer["diff"]


@pytest.mark.parametrize(
    "body",
    [
        {"body": "x", "line": 3},
        {"body": "x", "path": "/etc/passwd", "line": 1},
        {"body": "x", "path": "app.py", "line": 0},
        {"body": "x", "path": "app.py", "line": "12"},
        {"body": "x", "path": "app.py", "line": 1, "side": "left"},
        {"body": "x", "path": "a\x1b[2J", "line": 1},
        {"body": "x", "path": "app.py/", "line": 1},
        {"body": "x", "path": "./app.py", "line": 1},
    ],
)
def test_a_bad_anchor_is_the_seeds_400_and_writes_nothing(api: Api, body: dict) -> None:  # type: ignore[type-arg]
    task = api.create()
    before = api.fingerprint()
    answer = api.client.post(f"/api/board/{task['id']}/comments", json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid body"
    assert api.fingerprint() == before
