"""The JSON documents the agent surfaces print, where they differ from the records' own JSON.

The board stores a verdict as JSON text (seed 003's `verification: string`, which the REST surface
keeps). The CLI and the MCP tools hand it over as a JSON object in every document, so `jq
.verification.status` works on `task get` as on `workspace complete`, and a model reads one shape.
"""

import contextlib
import json
import re
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


# What JSON leaves raw in a string but a reader of lines acts on: the C1 controls (U+0085 ends a
# line for Python's `str.splitlines`, U+009B starts a control sequence on some terminals) and the
# line and paragraph separators. Escaped, the document is the same JSON and one line stays one:
# the CLI's lines, the MCP tools' text and the HTTP bodies alike.
_LINE_BREAKERS = re.compile("[\x80-\x9f\u2028\u2029]")
# The same characters in UTF-8 (a lead byte is never a continuation byte, so no false match).
_LINE_BREAKERS_UTF8 = re.compile(b"\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]")


def one_line(text: str) -> str:
    """JSON text with the line breakers above written as `\\uXXXX`."""
    return _LINE_BREAKERS.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def one_line_utf8(body: bytes) -> bytes:
    """`one_line` for UTF-8 JSON bytes; a body without the lead bytes is returned as it is, after
    two scans that cost a 10,000-task list about a millisecond."""
    if b"\xc2" not in body and b"\xe2\x80" not in body:
        return body
    return _LINE_BREAKERS_UTF8.sub(lambda found: b"\\u%04x" % ord(found[0].decode()), body)
