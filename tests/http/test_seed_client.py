"""What a client written from seed 003's text alone meets, through a real uvicorn: a `%2F` in a
path stays inside its segment."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.http.conftest import Api, live_server


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with live_server(tmp_path_factory.mktemp("seed-client")) as live:
        yield live.api


# -- 4. `%2F` stays inside its segment --------------------------------------------------------


def test_an_encoded_slash_is_part_of_the_id_not_a_route(api: Api) -> None:
    """`POST /api/board/TASK-n%2Fclaim` was routed as `/api/board/TASK-n/claim` and claimed
    TASK-n; it is the path `/api/board/{taskId}` (no POST there: 405), and nothing changes."""
    task = api.create("not to be claimed")
    before = api.fingerprint()
    answer = api.client.post(f"/api/board/{task['id']}%2Fclaim", json={"assigneeAgentId": "ann"})
    assert answer.status_code == 405, answer.text
    assert api.fingerprint() == before
    assert api.stored(task["id"]).assignee_agent_id is None


EXEC_NOT_FOUND = {"error": "execution not found"}
NOT_FOUND = {"ok": False, "error": "not_found"}  # the claim's seed words (and the lease verbs')


@pytest.mark.parametrize(
    ("method", "path", "body", "answer"),
    [
        ("GET", "/api/board/a%2Fb", None, {"error": "task not found"}),
        ("GET", "/api/board/a%2fb", None, {"error": "task not found"}),
        ("PATCH", "/api/board/a%2Fb", {"priority": 1}, {"error": "task not found"}),
        ("POST", "/api/board/a%2Fb/claim", {"assigneeAgentId": "ann"}, NOT_FOUND),
        ("POST", "/api/board/a%2Fb/heartbeat", {"agent": "ann"}, NOT_FOUND),
        ("GET", "/api/board/a%2Fb/workspace", None, {"error": "workspace not found"}),
        ("PATCH", "/api/board/executions/a%2Fb", {"status": "failed"}, EXEC_NOT_FOUND),
    ],
)
def test_an_id_with_an_encoded_slash_reaches_its_route_and_is_not_found(
    api: Api, method: str, path: str, body: Any, answer: dict[str, Any]
) -> None:
    before = api.fingerprint()
    got = api.client.request(method, path, json=body)
    assert got.status_code == 404, got.text
    document = got.json()
    assert document["reason"] == "not_found"
    assert {key: document[key] for key in answer} == answer
    assert document.get("id") in ("a/b", None), document
    assert api.fingerprint() == before


def test_other_escapes_still_decode_and_a_percent_is_kept(api: Api) -> None:
    task = api.create("escaped")
    number = task["id"].removeprefix("TASK-")
    found = api.client.get(f"/api/board/TASK%2D{number}")  # `-` escaped: the same id
    assert found.status_code == 200 and found.json()["task"]["id"] == task["id"]
    kept = api.client.get(f"/api/board/{task['id']}%25")
    assert (kept.status_code, kept.json().get("id")) == (404, f"{task['id']}%")
    routed = api.client.get("/api/board%2Fevents")  # one segment, not the feed
    assert routed.status_code == 404, routed.text


def test_segments_helpers_are_inverse() -> None:
    from kanban.http.segments import escaped, unescaped

    for text in ("a/b", "50%", "%2F", "a%2Fb/c", "plain", "é/ü"):
        assert unescaped(escaped(text)) == text
