"""Seed 003's task routes through the real app: every route and every status code it documents,
asserting the body, the row stored afterwards, and the event appended (or, on a refusal, that
the board file did not change)."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from boardlib import transitions as t
from boardlib.models import VerificationResult
from boardlib.review import LINE_MAX
from tests.backends import is_postgres, raw_execute
from tests.http.conftest import Api, live_server, serving


@pytest.fixture
def api(tmp_path: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, db=board_path) as opened:
        yield opened


def invalid(answer: object, *, fields: set[str] | None = None, form: bool = False) -> dict:
    """A seed 400: `{error: 'invalid body', details: {formErrors, fieldErrors}}`."""
    assert answer.status_code == 400, answer.text  # type: ignore[attr-defined]
    body = answer.json()  # type: ignore[attr-defined]
    assert body["error"] == "invalid body"
    assert set(body["details"]) == {"formErrors", "fieldErrors"}
    if fields is not None:
        assert set(body["details"]["fieldErrors"]) == fields
    if form:
        assert body["details"]["formErrors"]
    return body  # type: ignore[no-any-return]


# -- GET /api/board ----------------------------------------------------------------------------


def test_list_is_newest_change_first_and_filters(api: Api) -> None:
    old = api.create("old", teamId="red")
    api.clock.advance(ms=1000)
    new = api.create("new", teamId="blue", status="backlog")
    listed = api.client.get("/api/board").json()["tasks"]
    assert [task["id"] for task in listed] == [new["id"], old["id"]]
    assert listed[0] == api.stored(new["id"]).to_json()
    red = api.client.get("/api/board", params={"teamId": "red"}).json()["tasks"]
    assert [task["id"] for task in red] == [old["id"]]
    backlog = api.client.get("/api/board", params={"status": "backlog"}).json()["tasks"]
    assert [task["id"] for task in backlog] == [new["id"]]


def test_ready_ranks_by_priority_and_skips_waiting_and_dropped(api: Api) -> None:
    low = api.create("low", priority=1)
    high = api.create("high", priority=9)
    waiting = api.create("waits", priority=5, dependsOn=[low["id"]])
    dropped = api.create("gone", priority=7)
    assert api.client.post(f"/api/board/{dropped['id']}/drop").status_code == 200
    ready = api.client.get("/api/board", params={"ready": "true", "status": "done"}).json()
    assert [task["id"] for task in ready["tasks"]] == [high["id"], low["id"]]
    assert waiting["unmetDeps"] == 1
    plain = api.client.get("/api/board").json()["tasks"]
    assert dropped["id"] not in {task["id"] for task in plain}
    everything = api.client.get("/api/board", params={"includeDropped": "true"}).json()["tasks"]
    assert dropped["id"] in {task["id"] for task in everything}


@pytest.mark.parametrize("flag", ["ready", "includeDropped"])
def test_a_list_flag_is_true_or_false_and_no_other_spelling(api: Api, flag: str) -> None:
    """The seed's flags are `'true'` (or `'false'`); `yes`, `1`, `on` were taken as true, where
    the seed reads anything but `'true'` as false: two readings of one request."""
    dropped = api.create("gone")
    assert api.client.post(f"/api/board/{dropped['id']}/drop").status_code == 200
    for spelling in ("true", "false"):
        assert api.client.get("/api/board", params={flag: spelling}).status_code == 200
    for spelling in ("yes", "1", "on", "True", "t", "no", "0", "off", ""):
        answer = api.client.get("/api/board", params={flag: spelling})
        assert answer.status_code == 400, (spelling, answer.text)
        body = answer.json()
        assert body["error"] == "invalid query" and body["reason"] == "invalid_input"
        assert body["details"]["fieldErrors"] == {flag: ["must be true or false"]}, spelling


def test_a_query_parameter_sent_twice_with_different_values_is_refused(api: Api) -> None:
    """FastAPI took the last of two values silently (found by hand): `?status=todo&status=done`
    listed the done tasks alone, `?ready=true&ready=false` every task, and a feed page with two
    `since` read from the second. Which one the client meant is not known, so each is the 400
    `invalid query` naming the parameter, as two `Last-Event-ID`s are; the same value twice is
    that value."""
    api.create("waiting")
    before = api.fingerprint()
    for path, query, name in [
        ("/api/board", "status=todo&status=done", "status"),
        ("/api/board", "ready=true&teamId=a&ready=false", "ready"),
        ("/api/board/events", "since=0&since=1", "since"),
    ]:
        answer = api.client.get(f"{path}?{query}")
        assert answer.status_code == 400, (path, query, answer.text)
        body = answer.json()
        assert (body["error"], body["reason"]) == ("invalid query", "invalid_input")
        assert list(body["details"]["fieldErrors"]) == [name]
        assert "more than once" in body["details"]["fieldErrors"][name][0]
    same = api.client.get("/api/board?status=todo&status=todo")
    assert [task["title"] for task in same.json()["tasks"]] == ["waiting"]
    assert api.fingerprint() == before


def test_list_refuses_an_unknown_status(api: Api) -> None:
    answer = api.client.get("/api/board", params={"status": "finished"})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid query"
    assert "status" in answer.json()["details"]["fieldErrors"]


# -- POST /api/board ---------------------------------------------------------------------------


def test_create_stores_the_task_and_emits_task_created(api: Api) -> None:
    answer = api.client.post(
        "/api/board",
        json={
            "title": "Implement /api/foo",
            "description": "details",
            "priority": 3,
            "teamId": "red",
            "status": "backlog",
            "assigneeRuntime": "claude-code",
            "sourceDelegationId": "d-1",
            "tenantId": "t-1",
        },
    )
    assert answer.status_code == 200
    task = answer.json()["task"]
    stored = api.stored(task["id"])
    assert task == stored.to_json()
    assert (stored.title, stored.status, stored.priority, stored.team_id) == (
        "Implement /api/foo",
        "backlog",
        3,
        "red",
    )
    assert (stored.assignee_runtime, stored.tenant_id) == ("claude-code", "t-1")
    assert api.kinds() == ["task_created"]
    assert api.events()[0].actor == "operator"


def test_a_body_without_a_json_content_type_is_told_which_header_to_send(api: Api) -> None:
    """`curl -d '{...}'` sends `application/x-www-form-urlencoded`: the 400 names the header,
    through FastAPI and through the lease verbs' fast lane alike, and nothing is written."""
    before = api.client.get("/api/board").json()
    for path in ("/api/board", "/api/board/claim-next"):
        answer = api.client.post(
            path,
            content=b'{"title": "x", "agent": "ada"}',
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        body = invalid(answer, form=True)
        assert "Content-Type: application/json" in body["details"]["formErrors"][0], body
    assert api.client.get("/api/board").json() == before


def test_a_whole_number_written_as_a_float_is_that_integer(api: Api) -> None:
    """Found against seed 003: its zod `z.number().int()` takes 5.0 and 1e2 (JavaScript has one
    number type); the strict body models refused them."""
    task = api.create("five", priority=5.0)
    assert api.stored(task["id"]).priority == 5
    assert api.create("hundred", priority=1e2)["priority"] == 100


PYDANTIC_ONLY_BOUNDS = {"ge", "gt", "le", "lt"}  # pydantic's names, no JSON Schema keyword


def test_an_integer_bound_is_one_the_document_and_the_refusal_state_exactly(api: Api) -> None:
    """A whole number's bounds sat after the 5.0-is-5 validator: /openapi.json then said
    `"ge": 1, "le": 1000000000` for a review comment's line and `"lt": 2**63` for a priority
    (no JSON Schema keyword: a client generator or validator never saw them), and a priority
    past 2**63 was told `Input should be less than 9223372036854776000` (the bound through a
    float: 9223372036854775900 is less, and refused). Every bound is now a JSON Schema keyword,
    an integer's written as an integer (exactly: FastAPI's floats made 2**63 - 1 read 2**63),
    and the 400 names the bound the server holds; nothing is written."""
    document = api.client.get("/openapi.json").json()
    stray: list[str] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            if "type" in node:
                stray.extend(f"{where}: {key}" for key in PYDANTIC_ONLY_BOUNDS & set(node))
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    walk(document, "")
    assert stray == []
    schemas = document["components"]["schemas"]
    priority = schemas["CreateTaskBody"]["properties"]["priority"]
    assert (priority["minimum"], priority["exclusiveMaximum"]) == (-(2**63), 2**63)
    assert all(type(priority[key]) is int for key in ("minimum", "exclusiveMaximum"))
    line = schemas["CommentBody"]["properties"]["line"]["anyOf"][0]
    assert (line["type"], line["minimum"], line["maximum"]) == ("integer", 1, LINE_MAX)
    task = api.create("bounded")
    before = api.fingerprint()
    over = api.client.patch(
        f"/api/board/{task['id']}",
        content=b'{"priority": 9223372036854775900}',
        headers={"Content-Type": "application/json"},
    )
    said = invalid(over, fields={"priority"})["details"]["fieldErrors"]["priority"]
    assert said == ["Input should be less than 9223372036854775808"]
    assert api.fingerprint() == before


def test_create_defaults_to_todo_and_links_dependencies(api: Api) -> None:
    first = api.create("first")
    second = api.create("second", dependsOn=[first["id"]], parentTaskId=first["id"])
    stored = api.stored(second["id"])
    assert (stored.status, stored.unmet_deps, stored.parent_task_id) == ("todo", 1, first["id"])


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"title"}),
        ({"title": ""}, {"title"}),
        ({"title": "x" * 501}, {"title"}),
        ({"title": "ok", "description": "d" * 20_001}, {"description"}),
        ({"title": "ok", "priority": "5"}, {"priority"}),
        ({"title": "ok", "priority": 1.5}, {"priority"}),
        ({"title": "ok", "priority": True}, {"priority"}),
        ({"title": "ok", "priority": 1e300}, {"priority"}),
        ({"title": "ok", "status": "finished"}, {"status"}),
        ({"title": "ok", "teamId": ""}, {"teamId"}),
        ({"title": "ok", "tenantId": ""}, {"tenantId"}),
        ({"titel": "ok"}, {"title"}),  # the misspelt field dropped (tests/http/test_seed_client.py)
        ({"title": "   "}, {"title"}),  # the board: blank after stripping
    ],
)
def test_create_refuses_a_bad_body_and_writes_nothing(
    api: Api, body: dict, fields: set[str]
) -> None:
    before = api.fingerprint()
    invalid(api.client.post("/api/board", json=body), fields=fields)
    assert api.fingerprint() == before


@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"[1, 2]", b'"a string"', b"", b"null"],
    ids=["malformed", "array", "string", "empty", "null"],
)
def test_create_refuses_a_body_that_is_not_an_object(api: Api, raw: bytes) -> None:
    before = api.fingerprint()
    answer = api.client.post(
        "/api/board", content=raw, headers={"Content-Type": "application/json"}
    )
    invalid(answer, form=True)
    assert api.fingerprint() == before


@pytest.mark.parametrize("path", ["/api/board", "/api/board/claim-next"])
def test_malformed_json_is_told_where_without_a_dangling_word(api: Api, path: str) -> None:
    """Python's message for a raw control character is "Invalid control character at" and
    FastAPI drops the place, so the 400 said "...at" and nothing after it."""
    before = api.fingerprint()
    raw = b'{"title": "raw \x1b escape"}'
    answer = api.client.post(path, content=raw, headers={"Content-Type": "application/json"})
    message = invalid(answer, form=True)["details"]["formErrors"][0]
    assert message == "malformed JSON: Invalid control character (at character 15)"
    assert api.fingerprint() == before


@pytest.mark.parametrize("path", ["/api/board", "/api/board/claim-next"])
def test_json_nested_too_deeply_to_read_is_told_so(api: Api, path: str) -> None:
    """JSON nested past Python's recursion limit was FastAPI's "There was an error parsing the
    body", naming no cause; the fast lane's reader gives up earlier and hands it on."""
    api.create("claimable")
    before = api.fingerprint()
    raw = b'{"agent": "a", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    answer = api.client.post(path, content=raw, headers={"Content-Type": "application/json"})
    assert invalid(answer, form=True)["details"]["formErrors"] == [
        "malformed JSON: nested too deeply to read"
    ]
    assert api.fingerprint() == before


NOT_UTF8 = "the body is not UTF-8 JSON (JSON over HTTP is UTF-8)"
AS_UTF8 = "send it encoded as UTF-8"
NOT_UTF8_BODIES = [
    (b'{"agent": "latin \xe9"}', f"{NOT_UTF8}: byte 0xe9 at offset 17"),
    *[
        ('{"agent": "alice"}'.encode(codec), f"{NOT_UTF8}: it looks like {looks}; {AS_UTF8}")
        for codec, looks in [
            ("utf-16", "UTF-16 with a byte-order mark"),
            ("utf-16-le", "UTF-16 little-endian, without a byte-order mark"),
            ("utf-16-be", "UTF-16 big-endian, without a byte-order mark"),
            ("utf-32", "UTF-32 with a byte-order mark"),
            ("utf-32-be", "UTF-32 big-endian, without a byte-order mark"),
        ]
    ],
]


@pytest.mark.parametrize(
    ("raw", "said"), NOT_UTF8_BODIES, ids=["latin-1", "utf-16", "le", "be", "32", "32-be"]
)
@pytest.mark.parametrize("path", ["/api/board", "/api/board/claim-next"])
def test_a_body_that_is_not_utf8_is_refused_saying_so(
    api: Api, path: str, raw: bytes, said: str
) -> None:
    """A byte that is not UTF-8 was FastAPI's "There was an error parsing the body", and
    Python's JSON read a UTF-16 or UTF-32 body as if it were UTF-8 (a claim-next claimed);
    RFC 8259: JSON over HTTP is UTF-8. Both are the seed's 400, saying why (and where)."""
    api.create("claimable")
    before = api.fingerprint()
    answer = api.client.post(path, content=raw, headers={"Content-Type": "application/json"})
    body = invalid(answer, form=True)
    assert body["reason"] == "invalid_input"
    assert body["details"]["formErrors"] == [said]
    assert api.fingerprint() == before


@pytest.mark.parametrize("path", ["/api/board", "/api/board/claim-next"])
def test_a_refused_body_is_told_in_words_never_echoing_a_control(api: Api, path: str) -> None:
    """A lone `\\ud800` escape was "Input should be a valid string, unable to parse raw data as
    a unicode string" (it was a string), and a made-up field's name came back as sent, an ESC
    included, to be drawn by whatever shows the error: now words, and the field drawn inert
    (where it is refused: a seed body drops it, as zod does)."""
    api.create("claimable")
    before = api.fingerprint()
    field = "title" if path == "/api/board" else "agent"
    answer = api.client.post(
        path,
        content=f'{{"{field}": "a\\ud800", "\\u001b[2Jx": 1}}'.encode(),
        headers={"Content-Type": "application/json"},
    )
    errors = invalid(answer)["details"]["fieldErrors"]
    assert errors[field] == [
        "not text: a \\u escape in \\ud800-\\udfff is half of a pair and needs its other half"
    ]
    if path == "/api/board":
        assert set(errors) == {"title"}, errors
    else:
        assert errors["\u241b[2Jx"] == ["Extra inputs are not permitted"], errors
    assert all(key.isprintable() for key in errors), errors
    assert api.fingerprint() == before


def test_a_streamed_body_that_is_not_utf8_is_refused_under_uvicorn(tmp_path: Path) -> None:
    """The same through a real server, the body chunked (read through the body cap's counter)."""
    with live_server(tmp_path) as live:
        live.api.create("claimable")
        before = live.api.fingerprint()
        for raw, said in NOT_UTF8_BODIES:
            answer = live.api.client.post(
                "/api/board/claim-next",
                content=iter([raw[:5], raw[5:]]),
                headers={"Content-Type": "application/json"},
            )
            assert answer.request.headers.get("transfer-encoding") == "chunked"
            assert invalid(answer, form=True)["details"]["formErrors"] == [said]
        assert live.api.fingerprint() == before


def test_create_under_a_missing_parent_is_404(api: Api) -> None:
    before = api.fingerprint()
    answer = api.client.post("/api/board", json={"title": "orphan", "parentTaskId": "TASK-404"})
    assert answer.status_code == 404
    assert answer.json()["error"] == "parent task not found"
    assert "ok" not in answer.json()
    assert api.fingerprint() == before


# -- GET /api/board/:taskId -------------------------------------------------------------------


def test_get_returns_the_task_its_comments_and_its_ancestor_chain(api: Api) -> None:
    root = api.create("root")
    child = api.create("child", parentTaskId=root["id"])
    grandchild = api.create("grandchild", parentTaskId=child["id"], dependsOn=[root["id"]])
    api.client.post(f"/api/board/{grandchild['id']}/comments", json={"body": "first"})
    api.client.post(f"/api/board/{grandchild['id']}/comments", json={"body": "second"})
    body = api.client.get(f"/api/board/{grandchild['id']}").json()
    assert body["task"] == api.stored(grandchild["id"]).to_json()
    assert [comment["body"] for comment in body["comments"]] == ["first", "second"]
    assert body["ancestors"] == [
        {"id": child["id"], "parent_task_id": root["id"], "title": "child", "status": "todo"},
        {"id": root["id"], "parent_task_id": None, "title": "root", "status": "todo"},
    ]
    assert [dep["id"] for dep in body["dependencies"]] == [root["id"]]


def test_get_a_missing_task_is_404(api: Api) -> None:
    answer = api.client.get("/api/board/TASK-404")
    assert answer.status_code == 404
    assert answer.json()["error"] == "task not found"
    # An id that cannot be one names no task either (found against seed 003: it was 400
    # "invalid body" on routes that take no body).
    before = api.fingerprint()
    for path, said in [
        ("/api/board/" + "x" * 201, "task not found"),
        ("/api/board/" + "x" * 201 + "/workspace", "workspace not found"),
        ("/api/board/" + "x" * 201 + "/workspace/detail", "workspace not found"),
        ("/api/board/a%20b/executions", "task not found"),
        # a NUL no store can keep: it was a 500 (DataError) on PostgreSQL
        ("/api/board/TASK%00-1", "task not found"),
        ("/api/board/TASK%00-1/executions", "task not found"),
        ("/api/board/TASK%00-1/workspace", "workspace not found"),
    ]:
        answer = api.client.get(path)
        assert (answer.status_code, answer.json()["error"]) == (404, said), (path, answer.text)
    assert api.fingerprint() == before


def test_a_nul_in_agent_text_is_a_typed_400_naming_the_field(api: Api) -> None:
    """A NUL (U+0000) in free text is refused alike on both backends (on PostgreSQL it was a
    500, `internal error (DataError)`), and nothing is written."""
    task = api.create("kept")
    before = api.fingerprint()
    for path, body, field in [
        ("/api/board", {"title": "a\u0000b"}, "title"),
        (f"/api/board/{task['id']}/comments", {"body": "a\u0000b"}, "body"),
        ("/api/board", {"title": "t", "description": "a\u0000b"}, "description"),
    ]:
        answer = api.client.post(path, json=body)
        assert answer.status_code == 400, answer.text
        refusal = answer.json()
        assert refusal["reason"] == "invalid_input"
        assert "U+0000" in refusal["details"]["fieldErrors"][field][0]
    assert api.fingerprint() == before


# -- POST /api/board/:taskId/claim -------------------------------------------------------------


def test_claim_wins_and_emits_task_claimed(api: Api) -> None:
    task = api.create("claim me")
    answer = api.client.post(
        f"/api/board/{task['id']}/claim",
        json={"assigneeAgentId": "native-leader-abc", "assigneeRuntime": "clawboo-native"},
    )
    assert answer.status_code == 200
    body = answer.json()
    assert body["ok"] is True
    stored = api.stored(task["id"])
    assert body["task"] == stored.to_json()
    assert (stored.status, stored.assignee_agent_id, stored.assignee_runtime) == (
        "in_progress",
        "native-leader-abc",
        "clawboo-native",
    )
    assert stored.claim_epoch == 1 and stored.lease_until is not None
    assert api.kinds()[-1] == "task_claimed"


def test_a_lost_claim_is_409_conflict_and_never_invites_a_retry(api: Api) -> None:
    task = api.claimed("alice")
    before = api.fingerprint()
    answer = api.client.post(f"/api/board/{task['id']}/claim", json={"assigneeAgentId": "bob"})
    assert answer.status_code == 409
    body = answer.json()
    assert (body["ok"], body["error"], body["assignee"]) == (False, "conflict", "alice")
    assert "retry-after" not in answer.headers
    assert "try again" not in json.dumps(body)
    assert api.fingerprint() == before
    assert api.stored(task["id"]).assignee_agent_id == "alice"


def test_claim_of_a_task_waiting_on_dependencies_is_409(api: Api) -> None:
    blocker = api.create("first")
    waiting = api.create("second", dependsOn=[blocker["id"]])
    answer = api.client.post(f"/api/board/{waiting['id']}/claim", json={"assigneeAgentId": "a"})
    assert answer.status_code == 409
    assert (answer.json()["error"], answer.json()["reason"]) == ("conflict", "unmet_dependencies")
    assert answer.json()["unmet"] == [blocker["id"]]


def test_claim_of_a_missing_task_is_404_in_the_ok_false_form(api: Api) -> None:
    answer = api.client.post("/api/board/TASK-404/claim", json={"assigneeAgentId": "alice"})
    assert answer.status_code == 404
    assert answer.json()["ok"] is False and answer.json()["error"] == "not_found"


@pytest.mark.parametrize(
    "body", [{}, {"assigneeAgentId": ""}, {"assigneeAgentId": 7}, {"assignee": "a", "x": 1}]
)
def test_claim_refuses_a_bad_body(api: Api, body: dict) -> None:
    task = api.create()
    before = api.fingerprint()
    invalid(api.client.post(f"/api/board/{task['id']}/claim", json=body))
    assert api.fingerprint() == before


# -- PATCH /api/board/:taskId ------------------------------------------------------------------


def test_patch_moves_and_edits_in_one_transaction_with_one_event(api: Api) -> None:
    task = api.create("draft")
    seq = api.last_seq()
    answer = api.client.patch(
        f"/api/board/{task['id']}", json={"status": "backlog", "priority": 5, "title": "Updated"}
    )
    assert answer.status_code == 200
    stored = api.stored(task["id"])
    assert answer.json() == {"ok": True, "task": stored.to_json()}
    assert (stored.status, stored.priority, stored.title) == ("backlog", 5, "Updated")
    assert api.kinds(seq) == ["status_changed"]


def test_patch_fields_only_emits_a_task_update(api: Api) -> None:
    task = api.create("draft")
    seq = api.last_seq()
    answer = api.client.patch(f"/api/board/{task['id']}", json={"description": "more"})
    assert answer.status_code == 200
    assert api.stored(task["id"]).description == "more"
    assert api.kinds(seq) == ["task_updated"]


def test_patch_to_todo_releases_the_holder(api: Api) -> None:
    task = api.claimed("alice")
    answer = api.client.patch(f"/api/board/{task['id']}", json={"status": "todo"})
    assert answer.status_code == 200
    stored = api.stored(task["id"])
    assert (stored.status, stored.assignee_agent_id) == ("todo", None)


def test_empty_patch_is_400_with_the_seed_form_error(api: Api) -> None:
    task = api.create()
    before = api.fingerprint()
    body = invalid(api.client.patch(f"/api/board/{task['id']}", json={}))
    assert body["details"] == {"formErrors": ["at least one field required"], "fieldErrors": {}}
    assert api.fingerprint() == before


@pytest.mark.parametrize("body", [{"description": None}, {"title": "new", "description": None}])
def test_a_null_description_is_refused_saying_empty_clears_it(api: Api, body: dict) -> None:
    """Seed 003's `description?: string` takes no null: it was read as the field left out, so a
    caller clearing the description got "at least one field required", or a silent no-op."""
    task = api.create(description="old")
    before = api.fingerprint()
    refused = invalid(
        api.client.patch(f"/api/board/{task['id']}", json=body), fields={"description"}
    )
    assert refused["details"]["fieldErrors"]["description"] == [
        'null is not a description: send "" to clear it'
    ]
    assert api.fingerprint() == before
    cleared = api.client.patch(f"/api/board/{task['id']}", json={"description": ""})
    assert cleared.status_code == 200, cleared.text
    assert api.stored(task["id"]).description is None


@pytest.mark.parametrize("field", ["title", "status", "priority", "humanOverride"])
@pytest.mark.parametrize("beside", [{}, {"description": "new"}])
def test_a_null_field_is_refused_on_that_field_saying_what_to_send(
    api: Api, field: str, beside: dict
) -> None:
    """Seed 003's PATCH fields are optional, never nullable: a null was read as the field left
    out, so alone it was "at least one field required" and beside another field a silent no-op.
    Now the seed's 400 names the field and says what to send instead; nothing is written."""
    task = api.create(title="kept", description="old", priority=3)
    before = api.fingerprint()
    refused = invalid(
        api.client.patch(f"/api/board/{task['id']}", json={field: None, **beside}),
        fields={field},
    )
    [said] = refused["details"]["fieldErrors"][field]
    assert said.startswith(f"null is not a {field}: "), said
    assert api.fingerprint() == before
    kept = api.stored(task["id"])
    assert (kept.title, kept.status, kept.priority, kept.description) == ("kept", "todo", 3, "old")
    schema = api.client.get("/openapi.json").json()["components"]["schemas"]["UpdateTaskBody"]
    assert "anyOf" not in schema["properties"][field], schema["properties"][field]
    from kanban.http.bodies import NULL_REFUSALS  # the one table of what each null is told

    assert said == NULL_REFUSALS[field]


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"status": "finished"}, {"status"}),
        ({"priority": "high"}, {"priority"}),
        ({"title": ""}, {"title"}),
        ({"title": "x" * 501}, {"title"}),
        ({"status": "todo", "humanOverride": "yes"}, {"humanOverride"}),
        ({"status": "todo", "humanOverride": True}, {"humanOverride"}),  # the board: done only
    ],
)
def test_patch_refuses_a_bad_body(api: Api, body: dict, fields: set[str]) -> None:
    task = api.create()
    before = api.fingerprint()
    invalid(api.client.patch(f"/api/board/{task['id']}", json=body), fields=fields)
    assert api.fingerprint() == before


def test_patch_of_a_missing_task_is_404_in_either_seed_form(api: Api) -> None:
    moved = api.client.patch("/api/board/TASK-404", json={"status": "todo"})
    assert moved.status_code == 404
    assert moved.json()["ok"] is False and moved.json()["error"] == "not_found"
    edited = api.client.patch("/api/board/TASK-404", json={"title": "x"})
    assert edited.status_code == 404
    assert edited.json()["error"] == "task not found" and "ok" not in edited.json()


def test_an_illegal_transition_is_409_and_changes_nothing(api: Api) -> None:
    task = api.create()
    before = api.fingerprint()
    answer = api.client.patch(f"/api/board/{task['id']}", json={"status": "done", "title": "x"})
    assert answer.status_code == 409
    body = answer.json()
    assert (body["ok"], body["error"]) == (False, "illegal_transition")
    assert (body["current"], body["requested"]) == ("todo", "done")
    assert "retry-after" not in answer.headers
    assert api.fingerprint() == before
    assert api.stored(task["id"]).title == "task"


def failing_verdict() -> str:
    return VerificationResult(status="fail", updated_at=1).dumps()


def test_the_done_gate_is_409_verification_required_unless_overridden(api: Api) -> None:
    task = api.claimed("alice")
    api.board.record_verification(task["id"], failing_verdict())
    before = api.fingerprint()
    refused = api.client.patch(f"/api/board/{task['id']}", json={"status": "done"})
    assert refused.status_code == 409
    assert refused.json()["error"] == "verification_required"
    assert api.fingerprint() == before
    forced = api.client.patch(
        f"/api/board/{task['id']}",
        json={"status": "done", "humanOverride": True, "reason": "shipping anyway"},
    )
    assert forced.status_code == 200
    assert api.stored(task["id"]).status == t.DONE
    with api.reader() as other:
        audit = other.audit(task["id"])
    assert [entry.action for entry in audit][-1] == "human_override"
    assert audit[-1].detail == "shipping anyway"


# -- POST /api/board/:taskId/comments ---------------------------------------------------------


def test_comment_is_stored_and_emits_comment_added(api: Api) -> None:
    task = api.create()
    answer = api.client.post(
        f"/api/board/{task['id']}/comments",
        json={"body": "Blocked on the upstream schema.", "authorAgentId": "native-leader-abc"},
    )
    assert answer.status_code == 200
    comment = answer.json()["comment"]
    assert answer.json()["ok"] is True
    assert (comment["authorType"], comment["authorAgentId"]) == ("agent", "native-leader-abc")
    with api.reader() as other:
        assert [c.to_json() for c in other.comments(task["id"])] == [comment]
    assert api.kinds()[-1] == "comment_added"


def test_an_operator_named_author_writes_as_a_person(api: Api) -> None:
    """`operator:NAME` was written as an agent, and an operator's comment naming nobody was logged
    with no actor."""
    task = api.create()
    path = f"/api/board/{task['id']}/comments"
    named = api.client.post(path, json={"body": "x", "authorAgentId": "operator:alice"})
    assert named.json()["comment"]["authorType"] == "user"
    api.client.post(path, json={"body": "y", "authorType": "user"})
    assert [e.actor for e in api.events() if e.kind == "comment_added"] == [
        "operator:alice", "operator",
    ]  # fmt: skip


def test_comment_refusals(api: Api) -> None:
    task = api.create()
    before = api.fingerprint()
    invalid(
        api.client.post(f"/api/board/{task['id']}/comments", json={"body": ""}), fields={"body"}
    )
    invalid(
        api.client.post(
            f"/api/board/{task['id']}/comments", json={"body": "x", "authorType": "robot"}
        ),
        fields={"authorType"},
    )
    missing = api.client.post("/api/board/TASK-404/comments", json={"body": "hello"})
    assert missing.status_code == 404 and missing.json()["error"] == "task not found"
    assert api.fingerprint() == before


# -- executions --------------------------------------------------------------------------------


def test_the_execution_ledger_opens_lists_and_closes(api: Api) -> None:
    task = api.claimed("alice", teamId="team-x")
    opened = api.client.post(
        f"/api/board/{task['id']}/executions",
        json={"executorType": "claude-code", "beforeCommit": "abc123", "runReason": "first run"},
    )
    assert opened.status_code == 200
    run = opened.json()["execution"]
    assert (run["status"], run["executorType"], run["agentId"]) == (
        "running",
        "claude-code",
        "alice",
    )
    assert api.kinds()[-1] == "execution_started"
    listed = api.client.get(f"/api/board/{task['id']}/executions").json()
    assert listed == {"ok": True, "executions": [run]}
    closed = api.client.patch(
        f"/api/board/executions/{run['id']}",
        json={"status": "succeeded", "inputTokens": 1200, "outputTokens": 340, "costUsd": 0.012},
    )
    assert closed.status_code == 200 and closed.json()["ok"] is True
    with api.reader() as other:
        stored = other.get_execution(run["id"])
    assert (stored.status, stored.input_tokens, stored.cost_usd) == ("succeeded", 1200, 0.012)
    assert api.stored(task["id"]).cost_usd == pytest.approx(0.012)
    last = api.events()[-1]
    assert last.kind == "execution_completed"
    assert (last.data["agentId"], last.data["runtime"]) == ("alice", "claude-code")
    assert last.data["teamId"] == "team-x"  # seed 003: the event carries the run's team
    again = api.client.patch(f"/api/board/executions/{run['id']}", json={"status": "failed"})
    assert again.status_code == 404 and again.json()["error"] == "execution not found"


def test_a_runs_executor_with_a_control_character_is_refused_and_nothing_changes(
    api: Api,
) -> None:
    """An executorType with an escape, a bell or a bidi override was stored, where a role or a
    team, names as well, is refused."""
    task = api.claimed("alice")
    before = api.fingerprint()
    for executor in ("codex\x1b[2J", "sh\x07", "claude\u202ecode"):
        answer = api.client.post(
            f"/api/board/{task['id']}/executions", json={"executorType": executor}
        )
        assert answer.status_code == 400, answer.text
        assert "executorType" in answer.text and "U+" in answer.text, answer.text
    assert api.fingerprint() == before


def test_a_run_starts_and_ends_as_its_holder_on_an_open_server(api: Api) -> None:
    """With no tokens the seed's bodies name nobody: the start was recorded as the holder (the
    board's rule), the close as the operator, so one agent's run read as two people's."""
    task = api.claimed("alice")
    opened = api.client.post(f"/api/board/{task['id']}/executions", json={"executorType": "cc"})
    run = opened.json()["execution"]
    closed = api.client.patch(f"/api/board/executions/{run['id']}", json={"status": "succeeded"})
    assert closed.status_code == 200, closed.text
    actors = {event.kind: event.actor for event in api.events()}
    assert actors["execution_started"] == actors["execution_completed"] == "alice"


def test_execution_refusals(api: Api) -> None:
    task = api.create()  # not claimed
    before = api.fingerprint()
    not_claimed = api.client.post(
        f"/api/board/{task['id']}/executions", json={"executorType": "claude-code"}
    )
    assert not_claimed.status_code == 409
    assert not_claimed.json()["reason"] == "invalid_state"
    invalid(
        api.client.post(f"/api/board/{task['id']}/executions", json={"executorType": ""}),
        fields={"executorType"},
    )
    missing = api.client.post("/api/board/TASK-404/executions", json={"executorType": "x"})
    assert missing.status_code == 404 and missing.json()["error"] == "task not found"
    unknown = api.client.patch("/api/board/executions/EXEC-404", json={"status": "succeeded"})
    assert unknown.status_code == 404 and unknown.json()["error"] == "execution not found"
    invalid(
        api.client.patch("/api/board/executions/EXEC-404", json={"status": "running"}),
        fields={"status"},
    )
    invalid(
        api.client.patch(
            "/api/board/executions/EXEC-404", json={"status": "failed", "inputTokens": -1}
        ),
        fields={"inputTokens"},
    )
    assert api.client.get("/api/board/TASK-404/executions").status_code == 404
    held = api.claimed("alice")
    before = api.fingerprint()
    for workspace in ("WS-404", "WS-1"):  # found by hand: a run took any workspace id at all
        invalid(
            api.client.post(
                f"/api/board/{held['id']}/executions",
                json={"executorType": "x", "workspaceId": workspace},
            ),
            fields={"workspaceId"},
        )
    assert api.fingerprint() == before


# -- dependencies ------------------------------------------------------------------------------


def test_link_dependency_and_its_refusals(api: Api) -> None:
    step1 = api.create("step 1")
    step2 = api.create("step 2")
    linked = api.client.post(
        f"/api/board/{step2['id']}/deps", json={"dependsOnTaskId": step1["id"]}
    )
    assert linked.status_code == 200 and linked.json()["ok"] is True
    assert api.stored(step2["id"]).unmet_deps == 1
    assert api.kinds()[-1] == "dep_linked"

    before = api.fingerprint()
    cycle = api.client.post(f"/api/board/{step1['id']}/deps", json={"dependsOnTaskId": step2["id"]})
    assert cycle.status_code == 409
    assert (cycle.json()["ok"], cycle.json()["error"]) == (False, "task_dependency_cycle")
    assert cycle.json()["cycle"] == [step1["id"], step2["id"], step1["id"]]
    for path, blocker in (("TASK-404", step1["id"]), (step1["id"], "TASK-404")):
        missing = api.client.post(f"/api/board/{path}/deps", json={"dependsOnTaskId": blocker})
        assert missing.status_code == 404
        assert missing.json()["error"] == "task not found" and "ok" not in missing.json()
    invalid(api.client.post(f"/api/board/{step1['id']}/deps", json={}), fields={"dependsOnTaskId"})
    assert api.fingerprint() == before


def test_a_link_onto_a_cancelled_task_is_409_and_writes_nothing(api: Api) -> None:
    gone = api.create("gone")
    cancelled = api.client.patch(f"/api/board/{gone['id']}", json={"status": "cancelled"})
    assert cancelled.status_code == 200
    task = api.create("task")
    before = api.fingerprint()
    refused = api.client.post(f"/api/board/{task['id']}/deps", json={"dependsOnTaskId": gone["id"]})
    assert refused.status_code == 409, refused.text
    assert gone["id"] in refused.json()["error"] and "cancelled" in refused.json()["error"]
    assert api.fingerprint() == before


def test_cancel_dependents_cancels_the_pending_chain(api: Api) -> None:
    failed = api.claimed("alice", title="failed")
    pending = api.create("pending", dependsOn=[failed["id"]])
    downstream = api.create("downstream", dependsOn=[pending["id"]], status="backlog")
    seq = api.last_seq()
    answer = api.client.post(f"/api/board/{failed['id']}/cancel-dependents")
    assert answer.status_code == 200
    assert sorted(answer.json()["cancelled"], key=lambda c: c["id"]) == [
        {"id": pending["id"], "title": "pending"},
        {"id": downstream["id"], "title": "downstream"},
    ]
    assert api.stored(pending["id"]).status == t.CANCELLED
    assert api.stored(downstream["id"]).status == t.CANCELLED
    events = api.events(seq)
    assert [event.kind for event in events] == ["status_changed", "status_changed"]
    assert {event.data["reason"] for event in events} == {"blocker_failed"}
    # Each says the status it left, as every other move does (found by a seed-only client).
    moved = {event.task_id: (event.data["from"], event.data["to"]) for event in events}
    assert moved == {
        pending["id"]: ("todo", "cancelled"),
        downstream["id"]: ("backlog", "cancelled"),
    }
    missing = api.client.post("/api/board/TASK-404/cancel-dependents")
    assert missing.status_code == 404 and missing.json()["error"] == "task not found"


# -- anything else -----------------------------------------------------------------------------


def test_unknown_routes_and_methods_answer_in_the_plain_envelope(api: Api) -> None:
    """Each with a reason, as every other refusal (found by hand: `{"error": "not found"}` and
    `{"error": "method not allowed"}` alone, the one refusals a client could not switch on)."""
    before = api.fingerprint()
    nothing = api.client.get("/api/nothing")
    assert nothing.status_code == 404
    assert nothing.json() == {"error": "not found", "reason": "not_found"}
    wrong = api.client.delete("/api/board")
    assert wrong.status_code == 405
    assert wrong.json() == {"error": "method not allowed", "reason": "method_not_allowed"}
    executions = api.client.get("/api/board/executions/EXEC-1")
    assert (executions.status_code, executions.headers["allow"]) == (405, "PATCH")
    assert executions.json()["reason"] == "method_not_allowed"
    assert api.fingerprint() == before
    # `Allow` names every method of the path (found by hand: only the first route's).
    for path, allowed in [
        ("/api/board", "GET, HEAD, POST"),
        ("/api/board/TASK-1", "GET, HEAD, PATCH"),
        ("/api/board/TASK-1/workspace", "GET, HEAD, PATCH, POST"),
        ("/api/board/TASK-1/heartbeat", "POST"),
    ]:
        answer = api.client.delete(path)
        assert (answer.status_code, answer.headers["allow"]) == (405, allowed), path
    # A trailing slash names the route it missed (found by hand: a 307 with an empty body).
    before = api.fingerprint()
    slash = api.client.post("/api/board/", json={"title": "x"}, follow_redirects=False)
    assert slash.status_code == 404
    assert slash.json() == {
        "error": "not found: no route ends in '/' (did you mean /api/board?)",
        "reason": "not_found",
    }
    assert api.fingerprint() == before


def test_head_answers_as_get_without_the_content_and_writes_nothing(api: Api) -> None:
    """RFC 9110: HEAD wherever GET, the same status and headers, no content (a monitor's
    `curl -I`); a path that takes no GET is a 405 that says what it takes."""
    task = api.create("probed")
    before = api.fingerprint()
    for path in ("/healthz", "/api/board", f"/api/board/{task['id']}", "/api/board/TASK-404"):
        got, head = api.client.get(path), api.client.head(path)
        assert head.status_code == got.status_code, path
        assert head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert head.headers["content-length"] == str(len(got.content)), path
    refused = api.client.head(f"/api/board/{task['id']}/heartbeat")
    assert (refused.status_code, refused.headers["allow"], refused.content) == (405, "POST", b"")
    assert api.fingerprint() == before


def test_head_under_uvicorn_keeps_the_connection_in_step(tmp_path: Path) -> None:
    """On a real server, over one keep-alive connection: a HEAD's answer carries the GET's
    length and no body, so the GET after it on the same connection reads its own answer."""
    import socket

    with live_server(tmp_path) as live:
        live.api.create("one")
        host, port = live.url.removeprefix("http://").split(":")
        head = f"HEAD /api/board HTTP/1.1\r\nhost: {host}:{port}\r\n\r\n".encode()
        get = f"GET /healthz HTTP/1.1\r\nhost: {host}:{port}\r\n\r\n".encode()
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(head + get)
            data = b""
            while not data.endswith(b'{"ok":true}') and len(data) < 65536:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        answers = data.split(b"HTTP/1.1 ")[1:]
        assert [answer.split(b"\r\n", 1)[0] for answer in answers] == [b"200 OK", b"200 OK"]
        assert answers[0].endswith(b"\r\n\r\n")  # the HEAD's: headers only
        assert b"content-length: " in answers[0].lower()
        assert answers[1].endswith(b'{"ok":true}')


def test_agent_text_is_json_escaped_never_interpreted(api: Api) -> None:
    hostile = "\x1b]52;c;aGk=\x07<script>alert(1)</script>\r\n"
    task = api.create(hostile)
    answer = api.client.get(f"/api/board/{task['id']}")
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert b"\x1b" not in answer.content and b"\x07" not in answer.content
    assert b"\\u001b]52" in answer.content
    assert answer.json()["task"]["title"] == hostile.strip()


# a line break to str.splitlines, a CSI, two separators, and two bidi controls (a title drawn
# reversed from U+202E on: raw in the CLI's JSON)
LINE_BREAKERS = "\x85\x9b\u2028\u2029\u202e\u2066"


def test_text_a_line_reader_would_split_travels_escaped(api: Api) -> None:
    """Found by hand: JSON (and orjson) leave U+0085, U+2028 and the other C1 controls raw, so a
    client splitting a body with `splitlines()` broke it, where the CLI escapes them. A record,
    a list, a page and the claim lane's answer carry them escaped, and decode as written."""
    title = f"a{LINE_BREAKERS}b é°"
    task = api.create(title)
    raw = [
        api.client.get(f"/api/board/{task['id']}").content,
        api.client.get("/api/board").content,
        api.client.get("/api/board?limit=5").content,
        api.client.post("/api/board/claim-next", json={"agent": "ada"}).content,
    ]
    for body in raw:
        assert len(body.decode().splitlines()) == 1, body
        assert b"\\u2028" in body and b"\\u0085" in body and "é°".encode() in body
        assert b"\\u202e" in body and "\u202e".encode() not in body
    assert api.client.get(f"/api/board/{task['id']}").json()["task"]["title"] == title


def test_an_unexpected_failure_is_500_in_the_plain_envelope_without_internals(api: Api) -> None:
    """A damaged file (a table gone, dropped behind the server's back): the one failure the
    board cannot type. 500 `{error}`, no traceback, no SQL; the server goes on serving."""
    task = api.create()
    raw_execute(api.path, "DROP TABLE task_comments")
    answer = api.client.post(f"/api/board/{task['id']}/comments", json={"body": "hello"})
    assert answer.status_code == 500
    kind = "UndefinedTable" if is_postgres(api.path) else "OperationalError"
    assert answer.json() == {"error": f"internal error ({kind})", "reason": "unexpected"}
    assert api.client.get(f"/api/board/{task['id']}/executions").status_code == 200


def test_patch_honours_a_quoted_epoch(api: Api) -> None:
    task = api.claimed("alice")
    before = api.fingerprint()
    stale = api.client.patch(f"/api/board/{task['id']}", json={"status": "todo", "epoch": 0})
    assert stale.status_code == 409 and stale.json()["reason"] == "stale_claim"
    assert api.fingerprint() == before
    moved = api.client.patch(f"/api/board/{task['id']}", json={"status": "todo", "epoch": 1})
    assert moved.status_code == 200 and api.stored(task["id"]).status == "todo"


@pytest.mark.parametrize(
    "edit",
    [{"title": "rewritten"}, {"priority": 9}, {"description": "new"}, {"status": "in_progress",
                                                                     "title": "rewritten"}],
)  # fmt: skip
def test_a_quoted_epoch_holds_an_edit_as_it_holds_a_move(api: Api, edit: dict) -> None:
    """An edit quoting the epoch of a claim since taken over is that claim's caller acting on
    another's attempt: refused as a move would be, in the route's envelope, writing nothing."""
    task = api.claimed("alice")
    handed = {"agent": "alice", "epoch": 1, "to": "bob"}
    moved_on = api.client.post(f"/api/board/{task['id']}/transfer", json=handed)
    assert moved_on.json()["task"]["claimEpoch"] == 2
    before = api.fingerprint()
    stale = api.client.patch(f"/api/board/{task['id']}", json={**edit, "epoch": 1})
    assert stale.status_code == 409, stale.text
    body = stale.json()
    assert (body["reason"], body["epoch"], body["currentEpoch"]) == ("stale_claim", 1, 2)
    assert api.fingerprint() == before
    stored = api.stored(task["id"])
    assert (stored.title, stored.priority, stored.description) == ("task", 0, None)
    fresh = api.client.patch(f"/api/board/{task['id']}", json={**edit, "epoch": 2})
    assert fresh.status_code == 200, fresh.text
