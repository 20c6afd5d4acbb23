"""`GET /api/board/inbox`: the inbox in the seed's envelope, described in `/openapi.json`."""

from pathlib import Path

from tests.conftest import task_in
from tests.http.conftest import bearer, serving, token_book


def test_the_inbox_route_and_its_schema(tmp_path: Path) -> None:
    with serving(tmp_path) as api:
        empty = api.client.get("/api/board/inbox").json()
        assert (empty["items"], empty["count"]) == ([], 0)
        task = task_in(api.board, "in_review", builder="alice")
        body = api.client.get("/api/board/inbox").json()
        assert body["count"] == 1 and body["now"] == api.clock.now_ms()
        [item] = body["items"]
        assert (item["kind"], item["taskId"], item["action"]) == ("review", task.id, "approve")
        document = api.client.get("/openapi.json").json()
        route = document["paths"]["/api/board/inbox"]["get"]
        reply = route["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        schema = document["components"]["schemas"][reply.rsplit("/", 1)[1]]
        assert set(schema["required"]) == {"items", "count", "now"}
        fields = document["components"]["schemas"]["InboxItem"]["properties"]
        assert {"kind", "taskId", "why", "since", "action"} <= set(fields)


def test_an_agent_token_reads_the_inbox_without_its_own_work(tmp_path: Path) -> None:
    """A reviewer taking the oldest inbox item took its own work, refused self_review, again and
    again. With an agent token the inbox is read for that agent (as `kanban inbox --as`): its own
    work is left out and counted; each item names its builders. An operator's token and an open
    server see everything."""
    with serving(tmp_path, tokens=token_book()) as api:
        mine = task_in(api.board, "in_review", title="alice's", builder="alice")
        theirs = task_in(api.board, "in_review", title="bob's", builder="bob")
        alice = api.client.get("/api/board/inbox", headers=bearer("alice")).json()
        assert [i["taskId"] for i in alice["items"]] == [theirs.id]
        assert (alice["count"], alice["leftOut"]) == (1, 1)
        ops = api.client.get("/api/board/inbox", headers=bearer("ops")).json()
        assert [(i["taskId"], i["builders"]) for i in ops["items"]] == [
            (mine.id, ["alice"]),
            (theirs.id, ["bob"]),
        ]
        assert ops["leftOut"] == 0


def test_a_task_under_its_running_gate_is_said_verifying_beside_the_seeds_fields(
    tmp_path: Path,
) -> None:
    """A task its gate judges is no inbox item; the inbox lists it under `verifying`, and the
    task's read says since when in `verifyingSince`, an extension field: the seed's `task` and
    its siblings are as they were."""
    with serving(tmp_path) as api:
        gated = task_in(api.board, "in_progress", builder="alice")
        plain = task_in(api.board, "in_progress", builder="bob")
        before = api.client.get(f"/api/board/{gated.id}").json()
        began = api.clock.now_ms()
        api.board.complete(gated.id, "alice", gate_ms=600_000, beat_ms=20_000)
        api.board.complete(plain.id, "bob")
        body = api.client.get("/api/board/inbox").json()
        assert [item["taskId"] for item in body["items"]] == [plain.id]
        assert body["verifying"] == [{"taskId": gated.id, "since": began, "title": gated.title}]
        read = api.client.get(f"/api/board/{gated.id}").json()
        assert read["verifyingSince"] == began
        assert set(read) == set(before)  # the same keys: the extension is there, null, before
        assert before["verifyingSince"] is None
        assert set(read["task"]) == set(before["task"])  # the seed's task: no new field
        assert api.client.get(f"/api/board/{plain.id}").json()["verifyingSince"] is None
        document = api.client.get("/openapi.json").json()
        assert "verifyingSince" in document["components"]["schemas"]["TaskDetail"]["properties"]
        assert "verifying" in document["components"]["schemas"]["InboxReply"]["properties"]


def test_a_task_being_landed_is_said_landing_beside_the_seeds_fields(tmp_path: Path) -> None:
    """A task a landing of which is under way is no inbox item; the inbox lists it under
    `landing`, and the task's read says by whom and since when in `landing`, an extension
    field (null when none runs): the seed's `task` and its siblings are as they were."""
    from boardlib.landings import LandQueue

    with serving(tmp_path) as api:
        landing = task_in(api.board, "in_review", builder="alice")
        plain = task_in(api.board, "in_review", builder="bob")
        before = api.client.get(f"/api/board/{landing.id}").json()
        began = api.clock.now_ms()
        LandQueue(api.board, lease_ms=60_000).join(
            landing.id, repo_path="/repo", ref="refs/heads/main", lander="carol",
            holder="another-machine/4242/1/abc", strategy="squash", fence="0" * 40,
        )  # fmt: skip
        body = api.client.get("/api/board/inbox").json()
        assert [item["taskId"] for item in body["items"]] == [plain.id]
        [run] = body["landing"]
        assert (run["taskId"], run["lander"], run["since"]) == (landing.id, "carol", began)
        read = api.client.get(f"/api/board/{landing.id}").json()
        assert (read["landing"]["lander"], read["landing"]["since"]) == ("carol", began)
        assert set(read) == set(before) and before["landing"] is None
        assert set(read["task"]) == set(before["task"])
        assert api.client.get(f"/api/board/{plain.id}").json()["landing"] is None
        document = api.client.get("/openapi.json").json()
        assert "landing" in document["components"]["schemas"]["TaskDetail"]["properties"]
        assert "landing" in document["components"]["schemas"]["InboxReply"]["properties"]
