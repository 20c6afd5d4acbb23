"""schemathesis against `/openapi.json`: for every route, generated requests (valid and invalid)
never get a 500, every status is one the route declares, and every body matches the declared
schema. A real uvicorn on a free loopback port serves a board with a few tasks in every state.
Examples per route (`KANBAN_SCHEMATHESIS_EXAMPLES`, default 10; the agent-token run a third,
at least 5): each route's contract is structural (declared statuses, body schemas, refusals of
invalid data). Planted faults (a 500 on titles over 100 characters, an undeclared 418 on some
comment bodies) failed at 10 as at 25; 25 cost 2.5 times the CPU and found nothing more (a by-id
route's 200 body is rarely reached by generated ids at either count: the route tests pin those).
Each run draws new examples; raise the number locally for a deeper run. A session that also
runs the chaos REST fuzz (the same checks, ten times the examples) drops the token-less run
(`tests/http/conftest.py`)."""

import os
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.http.conftest import Live, bearer, live_server, seed_every_state, token_book

pytestmark = pytest.mark.slow  # schemathesis over every route, twice

EXAMPLES = int(os.environ.get("KANBAN_SCHEMATHESIS_EXAMPLES", "10"))


def rejects_invalid_data(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case
) -> bool | None:
    """schemathesis's negative_data_rejection, with 413 counted as a rejection: a generated
    body over 2 MB is refused for its size before anyone looks at what is wrong with it."""
    if response.status_code == 413:
        return None
    return negative_data_rejection(ctx, response, case)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    rejects_invalid_data,
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with live_server(tmp_path_factory.mktemp("schemathesis")) as server:
        seed_every_state(server.api)
        yield server


@pytest.fixture(scope="module")
def agent_live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """The same board behind per-caller tokens, called as an agent: identity refusals too."""
    with live_server(tmp_path_factory.mktemp("schemathesis-tokens"), tokens=token_book()) as server:
        api = server.api
        api.client.headers.update(bearer("ops"))
        api.create("for anyone")
        api.client.headers.update(bearer("bob"))
        api.client.post("/api/board/claim-next")
        yield server


@pytest.fixture(scope="module")
def agent_schema(agent_live: Live) -> schemathesis.BaseSchema:
    document = agent_live.api.client.get("/openapi.json").json()
    return schemathesis.openapi.from_dict(document)


as_agent = schemathesis.pytest.from_fixture("agent_schema")


@as_agent.parametrize()
@settings(
    max_examples=max(5, EXAMPLES // 3),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_route_keeps_its_contract_for_an_agent_token(
    case: schemathesis.Case, agent_live: Live
) -> None:
    if case.operation.path.endswith("/events") and case.operation.method.upper() == "GET":
        case.headers = {**(case.headers or {}), "Accept": "application/json"}
    case.call_and_validate(
        base_url=agent_live.url, checks=CHECKS, timeout=30, headers=bearer("alice")
    )


@pytest.fixture(scope="module")
def api_schema(live: Live) -> schemathesis.BaseSchema:
    document = live.api.client.get("/openapi.json").json()
    return schemathesis.openapi.from_dict(document)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_route_keeps_its_declared_contract(case: schemathesis.Case, live: Live) -> None:
    if case.operation.path.endswith("/events") and case.operation.method.upper() == "GET":
        case.headers = {**(case.headers or {}), "Accept": "application/json"}
    case.call_and_validate(base_url=live.url, checks=CHECKS, timeout=30)


def test_the_document_declares_every_route_and_error_shape(api_schema: object, live: Live) -> None:
    document = live.api.client.get("/openapi.json").json()
    paths = document["paths"]
    seed = {
        ("get", "/api/board"),
        ("post", "/api/board"),
        ("get", "/api/board/{task_id}"),
        ("post", "/api/board/{task_id}/claim"),
        ("patch", "/api/board/{task_id}"),
        ("post", "/api/board/{task_id}/comments"),
        ("get", "/api/board/{task_id}/executions"),
        ("post", "/api/board/{task_id}/executions"),
        ("patch", "/api/board/executions/{exec_id}"),
        ("post", "/api/board/{task_id}/deps"),
        ("post", "/api/board/{task_id}/cancel-dependents"),
        ("post", "/api/board/{task_id}/workspace"),
        ("get", "/api/board/{task_id}/workspace"),
        ("patch", "/api/board/{task_id}/workspace"),
        ("post", "/api/board/{task_id}/workspace/handoff"),
        ("get", "/api/board/{task_id}/workspace/detail"),
    }
    lease = {
        ("post", f"/api/board/{{task_id}}/{verb}")
        for verb in [
            "heartbeat",
            "progress",
            "extend-lease",
            "complete",
            "approve",
            "reject",
            "block",
            "unblock",
            "release",
            "transfer",
            "drop",
            "restore",
        ]
    } | {("post", "/api/board/claim-next")}
    other = {("get", "/api/board/events"), ("get", "/healthz"), ("get", "/readyz")}
    landing = {
        ("post", "/api/board/{task_id}/land"),
        ("post", "/api/board/{task_id}/land/abandon"),
        ("get", "/api/board/{task_id}/land"),
        ("post", "/api/board/{task_id}/workspace/sync"),
    }
    other |= landing
    budgets = {
        ("get", "/api/board/stats"),
        ("get", "/api/board/inbox"),
        ("get", "/api/board/budgets"),
        ("put", "/api/board/budgets/daily"),
        ("get", "/api/board/{task_id}/budget"),
        ("put", "/api/board/{task_id}/budget"),
    }
    declared = {(method, path) for path, item in paths.items() for method in item}
    assert declared == seed | lease | other | budgets
    for method, path in declared:
        responses = paths[path][method]["responses"]
        assert {"500"} <= set(responses), (method, path)
        assert ("401" in responses) == (path != "/healthz"), (method, path)
        if "requestBody" in paths[path][method]:
            assert {"400", "413"} <= set(responses), (method, path)
    claim = paths["/api/board/{task_id}/claim"]["post"]["responses"]
    assert claim["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/InvalidBody")
    # Seed 003's `error` words, enumerated where its routes enumerate them.
    schemas = document["components"]["schemas"]

    def words(path: str, method: str, status: str) -> set[str]:
        schema = paths[path][method]["responses"][status]["content"]["application/json"]["schema"]
        refs = [schema["$ref"]] if "$ref" in schema else [one["$ref"] for one in schema["anyOf"]]
        assert refs[1:] in ([], ["#/components/schemas/ErrorBody"]), refs
        error = schemas[refs[0].rsplit("/", 1)[1]]["properties"]["error"]
        assert schemas[refs[0].rsplit("/", 1)[1]]["properties"]["ok"]["const"] is False
        return {error["const"]} if "const" in error else set(error["enum"])

    assert words("/api/board/{task_id}/claim", "post", "404") == {"not_found"}
    assert words("/api/board/{task_id}/claim", "post", "409") == {"conflict"}
    assert words("/api/board/{task_id}", "patch", "404") == {"not_found"}
    assert words("/api/board/{task_id}", "patch", "409") == {
        "illegal_transition", "verification_required",
    }  # fmt: skip
    assert "204" in paths["/api/board/claim-next"]["post"]["responses"]
    assert "text/event-stream" in paths["/api/board/events"]["get"]["responses"]["200"]["content"]
