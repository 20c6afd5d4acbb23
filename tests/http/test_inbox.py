"""`GET /api/board/inbox`: the inbox in the seed's envelope, described in `/openapi.json`."""

from pathlib import Path

from tests.conftest import task_in
from tests.http.conftest import serving


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
