"""Tokens: the shared token guards every route but /healthz; per-caller tokens are identities,
and an agent cannot act as anyone else. Through the real app, with the stored rows checked."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boardlib import transitions as t
from kanban.http.auth import OPEN, Identity, TokenBook, TokenFileError
from tests.http.conftest import SHARED_TOKEN, TOKENS, Api, bearer, serving, token_book
from tests.http.test_tasks import failing_verdict


@pytest.fixture
def shared(tmp_path: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, tokens=TokenBook.shared(SHARED_TOKEN), db=board_path) as opened:
        yield opened


@pytest.fixture
def api(tmp_path: Path, board_path: Path) -> Iterator[Api]:
    with serving(tmp_path, tokens=token_book(), db=board_path) as opened:
        yield opened


def as_(api: Api, who: str, method: str, path: str, body: Any = None) -> Any:
    return api.client.request(method, path, json=body, headers=bearer(who))


# -- one shared token --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [None, "Bearer wrong-token-0123456789", "Basic c2hhcmVk", f"bearer{SHARED_TOKEN}", "Bearer "],
)
def test_every_route_but_healthz_needs_the_token(shared: Api, header: str | None) -> None:
    headers = {} if header is None else {"Authorization": header}
    before = shared.fingerprint()
    for method, path in [
        ("GET", "/api/board"),
        ("POST", "/api/board"),
        ("GET", "/api/board/events"),
        ("GET", "/readyz"),
        ("GET", "/openapi.json"),
        ("GET", "/docs"),
        ("GET", "/no/such/route"),
    ]:
        answer = shared.client.request(method, path, headers=headers, json={"title": "x"})
        assert answer.status_code == 401, (method, path)
        assert answer.json() == {"error": "unauthorized", "reason": "unauthorized"}
        assert answer.headers["www-authenticate"].startswith("Bearer")
    assert shared.fingerprint() == before
    assert shared.client.get("/healthz", headers=headers).json() == {"ok": True}


def test_a_refusal_made_before_the_app_carries_the_apps_headers(shared: Api) -> None:
    """The 401, the browser guard's 403, and the body cap's 413 and 415 are answered by the
    middlewares in front of the app, and came without the `X-Content-Type-Options: nosniff` and
    `Cache-Control: no-store` every answer of the app carries (found by hand with curl -i). Each
    now has both, and still writes nothing."""
    token = {"Authorization": f"Bearer {SHARED_TOKEN}"}
    json_type = {"Content-Type": "application/json"}
    before = shared.fingerprint()
    answers = {
        401: shared.client.post("/api/board", json={"title": "x"}),
        403: shared.client.post(
            "/api/board", json={"title": "x"}, headers={**token, "Origin": "https://evil.example"}
        ),
        413: shared.client.post(
            "/api/board", content=b" " * (2 * 1024 * 1024 + 1), headers={**token, **json_type}
        ),
        415: shared.client.post(
            "/api/board",
            content=b'{"title": "x"}',
            headers={**token, **json_type, "Content-Encoding": "br"},
        ),
    }
    app_answer = shared.client.get("/api/board/TASK-404", headers=token)
    assert app_answer.status_code == 404
    for status, answer in [*answers.items(), (404, app_answer)]:
        assert answer.status_code == status, answer.text
        assert answer.headers["content-type"] == "application/json", status
        assert answer.headers["x-content-type-options"] == "nosniff", status
        assert answer.headers["cache-control"] == "no-store", status
        assert answer.json()["reason"], status
    assert shared.fingerprint() == before


def test_the_right_token_opens_every_route(shared: Api) -> None:
    headers = {"Authorization": f"Bearer {SHARED_TOKEN}"}
    created = shared.client.post("/api/board", json={"title": "x"}, headers=headers)
    assert created.status_code == 200
    assert shared.client.get("/openapi.json", headers=headers).status_code == 200
    claimed = shared.client.post("/api/board/claim-next", json={"agent": "anyone"}, headers=headers)
    assert claimed.json()["task"]["assigneeAgentId"] == "anyone"
    # two Authorization headers are nobody (the first won)
    twice = [("Authorization", f"Bearer {SHARED_TOKEN}"), ("Authorization", "Bearer junk")]
    before = shared.fingerprint()
    for path in ("/api/board", "/api/board/claim-next"):
        answer = shared.client.post(path, json={"title": "y", "agent": "anyone"}, headers=twice)
        assert answer.status_code == 401, (path, answer.text)
    assert shared.fingerprint() == before


# -- per-caller tokens -------------------------------------------------------------------------


def test_the_agent_is_the_token_not_the_body(api: Api) -> None:
    task = as_(api, "ops", "POST", "/api/board", {"title": "work"}).json()["task"]
    before = api.fingerprint()
    impostor = as_(
        api, "alice", "POST", f"/api/board/{task['id']}/claim", {"assigneeAgentId": "bob"}
    )
    assert impostor.status_code == 403
    assert impostor.json()["ok"] is False and impostor.json()["error"] == "forbidden"
    assert api.fingerprint() == before
    mine = as_(api, "alice", "POST", "/api/board/claim-next", {})
    assert mine.json()["task"]["assigneeAgentId"] == "alice"
    assert api.stored(task["id"]).assignee_agent_id == "alice"
    for verb, body in [
        ("heartbeat", {"agent": "alice"}),
        ("progress", {"agent": "alice", "note": "as alice"}),
        ("complete", {"agent": "alice"}),
        ("release", {"agent": "alice"}),
    ]:
        before = api.fingerprint()
        stolen = as_(api, "bob", "POST", f"/api/board/{task['id']}/{verb}", body)
        assert stolen.status_code == 403, verb
        assert stolen.json()["reason"] == "forbidden"
        assert api.fingerprint() == before
    # Without naming anyone, bob is bob: the board says he is not the holder.
    bob = as_(api, "bob", "POST", f"/api/board/{task['id']}/heartbeat")
    assert bob.status_code == 403 and bob.json()["error"] == "not_assignee"
    assert as_(api, "alice", "POST", f"/api/board/{task['id']}/heartbeat").status_code == 200


def test_builder_is_not_judge_across_tokens(api: Api) -> None:
    task = as_(api, "ops", "POST", "/api/board", {"title": "work"}).json()["task"]
    as_(api, "alice", "POST", "/api/board/claim-next")
    assert as_(api, "alice", "POST", f"/api/board/{task['id']}/complete").status_code == 200
    before = api.fingerprint()
    own = as_(api, "alice", "POST", f"/api/board/{task['id']}/approve")
    assert own.status_code == 403 and own.json()["error"] == "self_review"
    as_bob = as_(api, "alice", "POST", f"/api/board/{task['id']}/approve", {"agent": "bob"})
    assert as_bob.status_code == 403 and as_bob.json()["error"] == "forbidden"
    assert api.fingerprint() == before
    judged = as_(api, "carol", "POST", f"/api/board/{task['id']}/approve")
    assert judged.status_code == 200
    assert api.stored(task["id"]).status == t.DONE
    review = api.events()[-1]
    assert (review.kind, review.actor) == ("status_changed", "carol")


def test_role_limited_tokens_claim_only_for_their_roles(api: Api) -> None:
    as_(api, "ops", "POST", "/api/board", {"title": "build", "role": "builder"})
    review = as_(api, "ops", "POST", "/api/board", {"title": "review", "role": "reviewer"})
    review_id = review.json()["task"]["id"]
    wrong = as_(api, "carol", "POST", "/api/board/claim-next", {"role": "builder"})
    assert wrong.status_code == 403 and wrong.json()["roles"] == ["reviewer"]
    mine = as_(api, "carol", "POST", "/api/board/claim-next")  # the one role is implied
    assert mine.status_code == 200 and mine.json()["task"]["id"] == review_id
    build = as_(api, "ops", "POST", "/api/board", {"title": "build 2", "role": "builder"})
    by_id = as_(
        api,
        "carol",
        "POST",
        f"/api/board/{build.json()['task']['id']}/claim",
        {"assigneeAgentId": "carol"},
    )
    assert by_id.status_code == 403


def test_comments_are_written_as_the_token(api: Api) -> None:
    task = as_(api, "ops", "POST", "/api/board", {"title": "x"}).json()["task"]
    path = f"/api/board/{task['id']}/comments"
    mine = as_(api, "alice", "POST", path, {"body": "from alice"})
    assert (mine.json()["comment"]["authorAgentId"], mine.json()["comment"]["authorType"]) == (
        "alice",
        "agent",
    )
    assert as_(api, "alice", "POST", path, {"body": "x", "authorAgentId": "bob"}).status_code == 403
    assert as_(api, "alice", "POST", path, {"body": "x", "authorType": "system"}).status_code == 403
    person = as_(api, "ops", "POST", path, {"body": "from ops"}).json()["comment"]
    assert (person["authorAgentId"], person["authorType"]) == ("operator:ops", "user")
    # An operator naming an agent as the author writes it as that agent's, as an open server
    # does (found by hand: a "user" comment by worker-1, a person the board has no name for).
    for body, expected in [
        ({"body": "relayed", "authorAgentId": "bob"}, ("bob", "agent")),
        ({"body": "said", "authorAgentId": "operator:dana"}, ("operator:dana", "user")),
        ({"body": "as told", "authorAgentId": "bob", "authorType": "user"}, ("bob", "user")),
    ]:
        written = as_(api, "ops", "POST", path, body).json()["comment"]
        assert (written["authorAgentId"], written["authorType"]) == expected, body
    relayed = api.client.get(f"/api/board/{task['id']}", headers=bearer("ops")).json()
    assert [c["authorType"] for c in relayed["comments"]][-3:] == ["agent", "user", "user"]


def test_a_create_the_creator_holds_is_a_claim_for_its_roles_only(api: Api) -> None:
    """A seed create in progress (or in review) is held by its creator, as a claim is: a
    role-limited agent token made and held a task of another role that way (found by hand:
    worker-1, refused the claim of a reviewer task by id, created one in_progress), though it
    claims only for its roles. Such a create is now the claim's 403 and writes nothing; a
    create it does not hold (todo, backlog), or one of its role or of none, is taken."""
    before = api.fingerprint()
    for status in ("in_progress", "in_review"):
        body = {"title": "not mine", "role": "worker", "status": status}
        refused = as_(api, "carol", "POST", "/api/board", body)
        assert refused.status_code == 403, refused.text
        assert refused.json()["reason"] == "forbidden"
        assert refused.json()["roles"] == ["reviewer"]
    assert api.fingerprint() == before
    for body in [
        {"title": "review it", "role": "reviewer", "status": "in_progress"},
        {"title": "anyone's", "status": "in_progress"},
        {"title": "filed for a worker", "role": "worker"},
        {"title": "triage", "role": "worker", "status": "backlog"},
    ]:
        made = as_(api, "carol", "POST", "/api/board", body)
        assert made.status_code == 200, (body, made.text)
        assert made.json()["task"]["status"] == body.get("status", "todo")


def test_creates_are_recorded_as_the_token_and_capped_for_agents(api: Api) -> None:
    root = as_(api, "alice", "POST", "/api/board", {"title": "root"}).json()["task"]
    assert api.events()[-1].actor == "alice"
    child = as_(api, "alice", "POST", "/api/board", {"title": "c", "parentTaskId": root["id"]})
    grandchild = as_(
        api,
        "alice",
        "POST",
        "/api/board",
        {"title": "gc", "parentTaskId": child.json()["task"]["id"]},
    )
    assert grandchild.status_code == 200
    before = api.fingerprint()
    too_deep = as_(
        api,
        "alice",
        "POST",
        "/api/board",
        {"title": "too deep", "parentTaskId": grandchild.json()["task"]["id"]},
    )
    assert too_deep.status_code == 429
    assert (too_deep.json()["reason"], too_deep.json()["cap"]) == ("cap_exceeded", "depth")
    assert api.fingerprint() == before
    operator = as_(
        api,
        "ops",
        "POST",
        "/api/board",
        {"title": "deep is fine", "parentTaskId": grandchild.json()["task"]["id"]},
    )
    assert operator.status_code == 200
    assert api.events()[-1].actor == "operator:ops"


def test_an_execution_is_closed_only_by_its_agent(api: Api) -> None:
    as_(api, "ops", "POST", "/api/board", {"title": "x"})
    task = as_(api, "alice", "POST", "/api/board/claim-next").json()["task"]
    run = as_(
        api, "alice", "POST", f"/api/board/{task['id']}/executions", {"executorType": "cc"}
    ).json()["execution"]
    assert run["agentId"] == "alice"
    stolen = as_(api, "bob", "PATCH", f"/api/board/executions/{run['id']}", {"status": "failed"})
    assert stolen.status_code == 403
    with api.reader() as other:
        assert other.get_execution(run["id"]).status == "running"
    closed = as_(api, "alice", "PATCH", f"/api/board/executions/{run['id']}", {"status": "failed"})
    assert closed.status_code == 200


# -- the tokens file ---------------------------------------------------------------------------


def write_private(path: Path, text: str) -> Path:
    path.write_text(text)
    os.chmod(path, 0o600)
    return path


def test_a_tokens_file_maps_tokens_to_identities(tmp_path: Path) -> None:
    path = write_private(
        tmp_path / "tokens",
        "# who may use this board\n"
        "a0123456789abcdef agent:alice builder,reviewer\n"
        "\n"
        "o0123456789abcdef operator:dana\n",
    )
    book = TokenBook.load(path)
    assert book.per_caller
    assert book.identify("a0123456789abcdef") == Identity(
        "agent", "alice", frozenset({"builder", "reviewer"})
    )
    assert book.identify("o0123456789abcdef") == Identity("operator", "dana")
    assert book.identify("a0123456789abcdeF") is None
    assert book.identify("") is None
    as_json = write_private(
        tmp_path / "tokens.json",
        '[{"token": "j0123456789abcdef", "identity": "agent:bob", "roles": ["x"]}]',
    )
    assert TokenBook.load(as_json).identify("j0123456789abcdef") == Identity(
        "agent", "bob", frozenset({"x"})
    )
    assert not TokenBook.shared("s" * 20).per_caller
    assert TokenBook.shared("s" * 20).identify("s" * 20) == OPEN


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("short agent:alice\n", "at least 16 characters"),
        ("a0123456789abcdef robot:alice\n", "agent:NAME or operator:NAME"),
        ("a0123456789abcdef agent:\n", "agent:NAME or operator:NAME"),
        ("a0123456789abcdef operator:dana admin\n", "roles apply to agent tokens only"),
        ("a0123456789abcdef agent:a\na0123456789abcdef agent:b\n", "appears twice"),
        ("a0123456789abcdef\n", "expected TOKEN IDENTITY"),
        ("# nothing\n", "holds no tokens"),
        ('[{"token": 5}]', "must be strings"),
        ('[{"token": "a0123456789abcdef", "identity": "agent:ev\u001b[2Jil"}]', "control"),
        ("a0123456789abcdef agent:bee worker\u202e\n", "a role holds a control"),
    ],
)
def test_a_bad_tokens_file_is_refused_with_its_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write_private(tmp_path / "tokens", text)
    with pytest.raises(TokenFileError, match=message):
        TokenBook.load(path)


def test_a_tokens_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("a0123456789abcdef agent:alice\n")
    os.chmod(path, 0o644)
    with pytest.raises(TokenFileError, match="chmod 600"):
        TokenBook.load(path)


def test_tokens_in_the_helper_are_what_the_tests_use() -> None:
    book = token_book()
    assert {book.identify(token).label for token in TOKENS.values()} == {  # type: ignore[union-attr]
        "agent:alice",
        "agent:bob",
        "agent:carol",
        "operator:ops",
    }


def test_only_an_operator_token_moves_edits_and_overrides_freely(api: Api) -> None:
    queued = as_(api, "ops", "POST", "/api/board", {"title": "queued", "priority": 1})
    queued_id = queued.json()["task"]["id"]
    held = as_(api, "ops", "POST", "/api/board", {"title": "held", "priority": 9}).json()["task"]
    as_(api, "alice", "POST", "/api/board/claim-next")
    api.board.record_verification(held["id"], failing_verdict())
    before = api.fingerprint()
    for who, body, reason in [
        ("bob", {"status": "todo"}, "not_assignee"),  # someone else's work
        ("bob", {"title": "mine now"}, "not_assignee"),
        ("bob", {"priority": 99}, "not_assignee"),  # no queue jumping either
        ("alice", {"status": "done"}, "self_review"),  # builder is not judge
        ("alice", {"status": "done", "humanOverride": True}, "self_review"),
    ]:
        path = f"/api/board/{held['id']}"
        answer = as_(api, who, "PATCH", path, body)
        assert answer.status_code == 403, (who, body, answer.text)
        assert answer.json()["reason"] == reason
    jump = as_(api, "bob", "PATCH", f"/api/board/{queued_id}", {"priority": 99})
    assert jump.status_code == 403
    assert api.fingerprint() == before
    own = as_(api, "alice", "PATCH", f"/api/board/{held['id']}", {"description": "notes"})
    assert own.status_code == 200 and api.stored(held["id"]).description == "notes"
    forced = as_(
        api, "ops", "PATCH", f"/api/board/{held['id']}", {"status": "done", "humanOverride": True}
    )
    assert forced.status_code == 200 and api.stored(held["id"]).status == t.DONE
    with api.reader() as other:
        assert other.audit(held["id"])[-1].actor == "operator:ops"


# -- web pages are kept out ------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Host": "evil.example:18790"},  # DNS rebinding onto an open loopback server
        # Names that only start like a loopback address, rebound likewise (the page's Origin
        # then matches its Host): found by hand, let through by a prefix check.
        {"Host": "127.0.0.1.evil.example:18790", "Origin": "http://127.0.0.1.evil.example:18790"},
        {"Host": "127.evil.example"},
        {"Host": "127.0.0.1@evil.example"},
        {"Host": "localhost.evil.example"},
    ],
    ids=["origin", "null-origin", "fetch-metadata", "rebound-host", "prefix-host",
         "short-prefix-host", "userinfo-host", "localhost-prefix-host"],
)  # fmt: skip
def test_a_web_page_cannot_drive_an_open_server(tmp_path: Path, headers: dict[str, str]) -> None:
    """A page in the operator's browser can fire a bodiless POST at 127.0.0.1 with no preflight
    (`<form method=post>`, `fetch(..., {mode: "no-cors"})`); on an open server that would approve
    or cancel work. The browser always marks such requests; they are refused."""
    from tests.http.conftest import serving as open_serving

    with open_serving(tmp_path) as api:
        task = api.create()
        before = api.fingerprint()
        for method, path in [
            ("POST", f"/api/board/{task['id']}/drop"),
            ("POST", f"/api/board/{task['id']}/cancel-dependents"),
            ("GET", "/api/board"),
        ]:
            answer = api.client.request(method, path, headers=headers)
            assert answer.status_code == 403, (method, path, answer.text)
            assert answer.json()["reason"] == "forbidden"
        assert api.fingerprint() == before
        same_origin = api.client.post(
            f"/api/board/{task['id']}/drop", headers={"Origin": "http://localhost"}
        )
        assert same_origin.status_code == 200  # the server's own origin (e.g. /docs) may call
        for host in ("127.0.0.2:18790", "[::1]:18790", "localhost"):  # loopback, however named
            answer = api.client.get("/api/board", headers={"Host": host})
            assert answer.status_code == 200, (host, answer.text)


def test_loopback_is_parsed_not_matched_by_prefix() -> None:
    from kanban.http.auth import is_loopback

    assert all(map(is_loopback, ["localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"]))
    assert not any(
        map(is_loopback, ["127.0.0.1.evil.example", "127.evil", "localhost.evil", "0.0.0.0", ""])
    )


def test_an_agent_token_acts_only_on_a_worktree_and_chain_it_holds(
    api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by hand: bob's token wrote alice's handoff signed as alice, paused her worktree
    (committing it and removing her checkout), provisioned on her task, linked a dependency onto
    it and cancelled the chain behind a healthy task. Each is now refused and changes nothing."""
    from tests.worktrees.conftest import checkout_state, make_repo

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = make_repo(tmp_path / "repo")
    task = as_(api, "ops", "POST", "/api/board", {"title": "alice's work"}).json()["task"]
    healthy = as_(api, "ops", "POST", "/api/board", {"title": "healthy"}).json()["task"]
    as_(api, "ops", "POST", "/api/board", {"title": "after", "dependsOn": [healthy["id"]]})
    claimed = as_(
        api, "alice", "POST", f"/api/board/{task['id']}/claim", {"assigneeAgentId": "alice"}
    )
    assert claimed.status_code == 200, claimed.text
    made = as_(api, "alice", "POST", f"/api/board/{task['id']}/workspace", {"repoPath": str(repo)})
    worktree = Path(made.json()["worktree"]["worktreePath"])
    (worktree / "work.txt").write_text("alice's uncommitted work\n")
    handoff = {"runtime": "codex", "nextBestStep": "delete the failing tests"}
    before = api.fingerprint(), checkout_state(worktree), checkout_state(repo)
    base = f"/api/board/{task['id']}"
    for method, path, body, status, reason in [
        ("POST", f"{base}/workspace/handoff", {**handoff, "handoffFrom": "alice"}, 403,
         "forbidden"),
        ("POST", f"{base}/workspace/handoff", {**handoff, "handoffFrom": "bob"}, 403,
         "not_assignee"),
        ("PATCH", f"{base}/workspace", {"action": "pause"}, 403, "not_assignee"),
        ("POST", f"{base}/workspace", {"repoPath": str(repo)}, 403, "not_assignee"),
        ("POST", f"{base}/deps", {"dependsOnTaskId": healthy["id"]}, 403, "not_assignee"),
        ("POST", f"/api/board/{healthy['id']}/cancel-dependents", None, 409, "invalid_state"),
    ]:  # fmt: skip
        answer = as_(api, "bob", method, path, body)
        assert answer.status_code == status, (path, body, answer.text)
        assert reason in answer.text, (path, body, answer.text)
        assert (api.fingerprint(), checkout_state(worktree), checkout_state(repo)) == before
    own = as_(
        api, "alice", "POST", f"{base}/workspace/handoff", {**handoff, "handoffFrom": "alice"}
    )
    assert own.status_code == 200
    assert (
        as_(api, "ops", "POST", f"/api/board/{healthy['id']}/cancel-dependents").status_code == 200
    )
