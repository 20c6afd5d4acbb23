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
