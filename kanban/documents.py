"""The JSON documents the agent surfaces print, where they differ from the records' own JSON.

The board stores a verdict as JSON text (seed 003's `verification: string`, which the REST surface
keeps). The CLI and the MCP tools hand it over as a JSON object in every document, so `jq
.verification.status` works on `task get` as on `workspace complete`, and a model reads one shape.
"""

import contextlib
import json
from typing import Any

VERDICT_FIELDS = frozenset({"verification", "verdictOverridden"})


def verdicts_as_objects(doc: Any) -> Any:
    """`doc` with every verdict field parsed from its JSON text (left as stored if it is not
    JSON after all), at any depth."""
    if isinstance(doc, list):
        return [verdicts_as_objects(item) for item in doc]
    if not isinstance(doc, dict):
        return doc
    out = {}
    for key, value in doc.items():
        if key in VERDICT_FIELDS and isinstance(value, str):
            with contextlib.suppress(ValueError):  # not JSON after all: shown as stored
                value = json.loads(value)
        else:
            value = verdicts_as_objects(value)
        out[key] = value
    return out
