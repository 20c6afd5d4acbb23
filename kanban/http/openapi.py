"""The `/openapi.json` document: FastAPI's, with the API's description, the bearer scheme, and
without the 422 FastAPI adds to every route (this API answers a bad request with seed 003's 400).
An integer's bounds are written as integers: FastAPI's model holds them as floats (`1.0`)."""

import json
from typing import Any

from fastapi import FastAPI

DESCRIPTION = """\
The board's REST surface: seed 003's Board API route for route, plus the lease protocol
(claim-next, heartbeat, complete, review...) and a live change feed.

**Envelopes.** Refusals answer `{ok: false, error}` (claim, status changes, workspace actions)
or `{error}` as each route documents, always with the board's `reason`. Where seed 003 names a
route's `error` values (the claim's `conflict`...), its schema enumerates them and `reason`
keeps the board's more precise one (`unmet_dependencies`). A 400 carries
`details: {formErrors, fieldErrors}`. **A 409 is data, not a transient error: do not retry it.**
503 (busy) is the one refusal to retry, after `Retry-After` seconds.

**Identity.** With tokens, send `Authorization: Bearer <token>`. A per-agent token *is* the
agent: lease verbs take it from the token and refuse a body that names someone else.
"""


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document without the 422 it adds to every route with parameters: this API
    answers a bad request with seed 003's 400 (422 is only provision's `no_isolation`)."""
    if app.openapi_schema is None:
        from fastapi.openapi.utils import get_openapi

        document = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        for item in document["paths"].values():
            for operation in item.values():
                answers = operation.get("responses", {})
                if answers.get("422", {}).get("description") == "Validation Error":
                    del answers["422"]
        # Bearer tokens: optional (an open loopback server takes none), /healthz never needs one.
        components = document.setdefault("components", {})
        components["securitySchemes"] = {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "--token / KANBAN_TOKEN, or a per-caller token of --tokens FILE",
            }
        }
        document["security"] = [{"bearer": []}, {}]
        document["paths"]["/healthz"]["get"]["security"] = [{}]
        schemas = components.get("schemas", {})
        text = json.dumps(document["paths"])
        for name in ("HTTPValidationError", "ValidationError"):
            if f'/{name}"' not in text:
                schemas.pop(name, None)
        _integer_bounds(document)
        app.openapi_schema = document
    return app.openapi_schema


BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _integer_bounds(node: object) -> None:
    """`"minimum": 1.0` as `1` wherever the schema is an integer's. Exact: the bounds the bodies
    declare are doubles exactly (`bodies.INT64` is 2**63, not 2**63 - 1)."""
    if isinstance(node, dict):
        if node.get("type") == "integer":
            for key in BOUNDS:
                value = node.get(key)
                if isinstance(value, float) and value.is_integer():
                    node[key] = int(value)
        for value in node.values():
            _integer_bounds(value)
    elif isinstance(node, list):
        for item in node:
            _integer_bounds(item)
