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


# What JSON leaves raw in a string but a reader of lines, or a terminal, acts on: the C1 controls
# (U+0085 ends a line for Python's `str.splitlines`, U+009B starts a control sequence on some
# terminals), the line and paragraph separators, and the bidi controls (U+202E draws the rest of
# a title reversed: "invoice \u202etxt.exe" reads "invoice exe.txt"). Escaped, the document is the
# same JSON and one line stays one, drawn as written: the CLI's lines, the MCP tools' text and
# the HTTP bodies alike.
_LINE_BREAKERS = re.compile("[\x80-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# The same characters in UTF-8 (a lead byte is never a continuation byte, so no false match), and
# the bytes each starts with, looked for before the expression runs.
_LEADS = (b"\xc2", b"\xe2", b"\xd8")
_LEAD_A, _LEAD_B, _LEAD_C = _LEADS  # each looked for in turn: no generator made per answer
_LINE_BREAKERS_UTF8 = re.compile(
    b"\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c"
)


def one_line(text: str) -> str:
    """JSON text with the line breakers above written as `\\uXXXX`."""
    return _LINE_BREAKERS.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def one_line_utf8(body: bytes) -> bytes:
    """`one_line` for UTF-8 JSON bytes; a body without the lead bytes is returned as it is, after
    three one-byte scans that cost a 10,000-task list (5.7 MB) about a millisecond."""
    if _LEAD_A not in body and _LEAD_B not in body and _LEAD_C not in body:
        return body
    return _LINE_BREAKERS_UTF8.sub(lambda found: b"\\u%04x" % ord(found[0].decode()), body)
