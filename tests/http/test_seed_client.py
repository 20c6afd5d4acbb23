"""What a client written from seed 003's text alone meets, through a real uvicorn: `ready=true`
overrides `status` and `includeDropped` whatever they say; an unknown field of a seed body is
dropped as zod drops it (the board's own bodies still refuse one); a length the seed states is
counted in UTF-16 code units, as zod counts; a `%2F` in a path stays inside its segment."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.http.conftest import Api, live_server

EMOJI = "\U0001f600"  # beyond U+FFFF: one character, two UTF-16 code units


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with live_server(tmp_path_factory.mktemp("seed-client")) as live:
        yield live.api


def refused(answer: Any, fields: set[str], error: str = "invalid body") -> dict[str, Any]:
    assert answer.status_code == 400, answer.text
    body: dict[str, Any] = answer.json()
    assert (body["error"], body["reason"]) == (error, "invalid_input")
    assert set(body["details"]) == {"formErrors", "fieldErrors"}
    assert set(body["details"]["fieldErrors"]) == fields, body
    return body


# -- 1. GET /api/board: `ready=true` "Overrides status/includeDropped" -------------------------


def test_ready_ignores_status_and_include_dropped_whatever_they_say(api: Api) -> None:
    """Seed 003: `status` "Ignored when ready=true"; `ready` "Overrides status/includeDropped".
    A bad `status` beside `ready=true` was 400 `invalid query`."""
    api.create("ready one")
    ready = api.client.get("/api/board", params={"ready": "true"})
    assert ready.status_code == 200 and ready.json()["tasks"], ready.text
    for extra in ({"status": "bogus"}, {"includeDropped": "yes"}, {"status": "done"}):
        answer = api.client.get("/api/board", params={"ready": "true", **extra})
        assert answer.status_code == 200, (extra, answer.text)
        assert answer.json() == ready.json()


def test_without_ready_a_bad_filter_is_still_refused_naming_each(api: Api) -> None:
    answer = api.client.get("/api/board", params={"status": "bogus", "includeDropped": "yes"})
    errors = refused(answer, {"status", "includeDropped"}, "invalid query")
    assert errors["details"]["fieldErrors"]["includeDropped"] == ["must be true or false"]
    for params in ({"ready": "false", "status": "bogus"}, {"ready": "yes", "status": "todo"}):
        field = "status" if params["ready"] == "false" else "ready"
        refused(api.client.get("/api/board", params=params), {field}, "invalid query")
    listed = api.client.get("/api/board", params={"status": "todo", "includeDropped": "true"})
    assert listed.status_code == 200 and listed.json()["tasks"]


# -- 2. unknown fields: zod objects drop them --------------------------------------------------


def test_a_seed_body_s_unknown_field_is_dropped(api: Api) -> None:
    task = api.create("extra", labels=["a"], assigneeAgentId="nobody")
    stored = api.stored(task["id"])
    assert (stored.title, stored.assignee_agent_id) == ("extra", None)
    edit = api.client.patch(f"/api/board/{task['id']}", json={"priority": 3, "colour": "red"})
    assert edit.status_code == 200, edit.text
    assert api.stored(task["id"]).priority == 3
    claim = api.client.post(
        f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "ann", "leaseMinutes": 9}
    )
    assert claim.status_code == 200, claim.text
    comment = api.client.post(f"/api/board/{task['id']}/comments", json={"body": "hi", "x": 1})
    assert comment.status_code == 200, comment.text


def test_a_known_field_with_a_bad_value_is_still_refused_and_writes_nothing(api: Api) -> None:
    task = api.create("strict")
    before = api.fingerprint()
    for method, path, body, fields in (
        ("POST", "/api/board", {"title": "", "labels": ["a"]}, {"title"}),
        ("PATCH", f"/api/board/{task['id']}", {"priority": "5", "colour": "red"}, {"priority"}),
        ("PATCH", f"/api/board/{task['id']}", {"humanOveride": True}, set()),  # nothing left
        ("POST", f"/api/board/{task['id']}/claim", {"assignee": "ann"}, {"assigneeAgentId"}),
    ):
        answer = api.client.request(method, path, json=body)
        refused(answer, fields)
    assert api.fingerprint() == before
    # The board's own bodies (the lease verbs) still refuse a field they do not know.
    held = api.claimed("ann")
    before = api.fingerprint()
    answer = api.client.post(f"/api/board/{held['id']}/heartbeat", json={"agent": "ann", "e": 1})
    assert refused(answer, {"e"})["details"]["fieldErrors"]["e"] == [
        "Extra inputs are not permitted"
    ]
    assert api.fingerprint() == before


# -- 3. lengths as zod counts them: UTF-16 code units ------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "field", "limit", "extra"),
    [
        ("POST", "/api/board", "title", 500, {}),
        ("PATCH", "/api/board/{id}", "title", 500, {}),
        ("POST", "/api/board", "description", 20_000, {"title": "t"}),
        ("POST", "/api/board/{id}/comments", "body", 20_000, {}),
    ],
)
def test_a_seed_length_counts_utf16_code_units(
    api: Api, method: str, path: str, field: str, limit: int, extra: dict[str, Any]
) -> None:
    """Seed 003: `title: string // required, 1-500 chars` is zod's `.max(500)`, JavaScript's
    length: 251 emoji are 502 code units, over it (they were taken, being 251 characters)."""
    task = api.create("target")
    url = path.format(id=task["id"])
    before = api.fingerprint()
    over = api.client.request(method, url, json={**extra, field: EMOJI * (limit // 2 + 1)})
    said = refused(over, {field})["details"]["fieldErrors"][field][0]
    assert f"at most {limit} characters as JavaScript counts them" in said
    assert f"this one has {limit + 2}" in said
    assert api.fingerprint() == before
    taken = api.client.request(method, url, json={**extra, field: EMOJI * (limit // 2)})
    assert taken.status_code == 200, taken.text
    plain = api.client.request(method, url, json={**extra, field: "é" * limit})
    assert plain.status_code == 200, plain.text  # U+00E9 is one code unit


def test_the_execution_and_provision_lengths_count_code_units(api: Api) -> None:
    task = api.claimed("ann")
    before = api.fingerprint()
    for path, body, field in (
        ("executions", {"executorType": EMOJI * 51}, "executorType"),
        ("executions", {"executorType": "x", "runReason": EMOJI * 1001}, "runReason"),
        ("executions", {"executorType": "x", "beforeCommit": EMOJI * 101}, "beforeCommit"),
        ("workspace", {"repoPath": "/r", "kind": EMOJI * 51}, "kind"),
        ("workspace", {"repoPath": "/r", "baseRef": EMOJI * 201}, "baseRef"),
        ("workspace", {"repoPath": "/r", "baseSha": EMOJI * 101}, "baseSha"),
    ):
        refused(api.client.post(f"/api/board/{task['id']}/{path}", json=body), {field})
    assert api.fingerprint() == before


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
