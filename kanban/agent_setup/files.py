"""Changing kanban's own part of a file and nothing else.

Markdown and TOML files get a marked block: a begin line carrying the sha256 of what kanban
wrote between the markers, and an end line. A block whose body still matches its hash is
kanban's to replace; one that was edited by hand is not (`Edited`), unless the caller forces it.
Text outside the markers is never touched: a block is spliced in by offsets, and a new one is
appended after the file's last line.

JSON has no comments, so kanban's part of an MCP config is the `"kanban"` member of
`mcpServers`: found by offsets with the standard decoder, replaced or inserted as text, with the
file's own indentation. An existing member that differs from what kanban would write was edited
(or written with other options): `Edited` again. Every result is parsed back and compared, so a
splice that would change anything else is refused instead of written.
"""

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any, Literal

from boardlib.errors import BoardError, Reason

Style = Literal["markdown", "toml"]

_MARKERS: dict[Style, tuple[str, str, str]] = {
    # (begin prefix, begin suffix, end line)
    "markdown": ("<!-- kanban:begin", " -->", "<!-- kanban:end -->"),
    "toml": ("# kanban:begin", "", "# kanban:end"),
}
NOTE = "written by kanban init; edit outside this block, or re-run kanban init"
_HASH = re.compile(r"sha256:([0-9a-f]{12})")
_ENTRY = re.compile(r"entry:([0-9a-f]{12}(?:,[0-9a-f]{12})*)")


class Edited(Exception):
    """Kanban's part of a file holds something kanban did not write there."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def unreadable(path: str, why: str) -> BoardError:
    return BoardError(
        Reason.INVALID_INPUT,
        f"{path}: {why}; kanban init changes nothing in a file it cannot read",
        file=path,
    )


def _digest(body: str) -> str:
    return hashlib.sha256(body.replace("\r\n", "\n").encode("utf-8")).hexdigest()[:12]


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


@dataclass(frozen=True)
class Block:
    """Where a marked block sits in a text: [start, end) covers its lines, markers included."""

    start: int
    end: int
    body: str
    recorded: str | None  # the hash on its begin line
    entry: str | None  # the MCP entries kanban left in the JSON configs (`entry_digest`s)

    @property
    def entries(self) -> tuple[str, ...]:
        return tuple(self.entry.split(",")) if self.entry else ()

    @property
    def edited(self) -> bool:
        return self.recorded != _digest(self.body)


def find_block(text: str, style: Style) -> Block | None:
    """The one marked block of `text`, or None. Markers that do not pair up are `Edited`: there
    is no telling where kanban's part ends."""
    begin_prefix, _, end_line = _MARKERS[style]
    lines = text.splitlines(keepends=True)
    offset, begins, ends = 0, [], []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(begin_prefix):
            begins.append((offset, offset + len(line), stripped))
        elif stripped == end_line:
            ends.append((offset, offset + len(line)))
        offset += len(line)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0][0] < begins[0][1]:
        raise Edited(
            f"its kanban markers do not pair up ({len(begins)} begin, {len(ends)} end): "
            "leave exactly one block, or remove both markers"
        )
    (start, body_start, begin), (body_end, end) = begins[0], ends[0]
    found, entry = _HASH.search(begin), _ENTRY.search(begin)
    return Block(
        start,
        end,
        text[body_start:body_end],
        found.group(1) if found else None,
        entry.group(1) if entry else None,
    )


def entry_digest(entry: dict[str, Any]) -> str:
    """What an MCP server entry says (command, args, env; not the runtime's `type`), hashed: the
    AGENTS.md block records it, so a later run knows the entry in a JSON config is the one kanban
    wrote (and may be replaced) rather than one edited by hand."""
    said = {key: value for key, value in entry.items() if key != "type"}
    return hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()[:12]


def render_block(body: str, style: Style, newline: str = "\n", entry: str | None = None) -> str:
    begin_prefix, begin_suffix, end_line = _MARKERS[style]
    tag = f" entry:{entry}" if entry else ""
    begin = f"{begin_prefix} ({NOTE}) sha256:{_digest(body)}{tag}{begin_suffix}"
    text = begin + "\n" + body + end_line + "\n"
    return text.replace("\n", newline)


def with_block(
    text: str | None, body: str, style: Style, *, force: bool = False, entry: str | None = None
) -> str:
    """`text` with its marked block holding `body` (and recording `entry`): replaced in place,
    or appended after a blank line. A block edited by hand is `Edited` unless `force`."""
    if not body.endswith("\n"):
        body += "\n"
    if text is None or text == "":
        return render_block(body, style, entry=entry)
    newline = _newline(text)
    block = find_block(text, style)
    rendered = render_block(body, style, newline, entry)
    if block is None:
        lead = "" if text.endswith(newline) else newline
        return text + lead + newline + rendered
    if not force and block.edited:
        raise Edited("the kanban block was edited by hand since kanban init wrote it")
    current = block.body.replace("\r\n", "\n") == body and not block.edited
    if current and block.entry == entry:
        return text
    return text[: block.start] + rendered + text[block.end :]


def outside_block(text: str, style: Style) -> str:
    """`text` without its marked block: what is the user's."""
    block = find_block(text, style)
    return text if block is None else text[: block.start] + text[block.end :]


# -- JSON: the "kanban" member of "mcpServers" ----------------------------------------------------

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class Member:
    key: str
    key_start: int  # offset of the key's opening quote
    value_start: int
    value_end: int


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _members(text: str, at: int) -> tuple[list[Member], int]:
    """The members of the object whose `{` is at `at`, and the offset of its `}`."""
    members: list[Member] = []
    at = _skip(text, at + 1)
    if text[at] == "}":
        return members, at
    while True:
        key, after_key = _DECODER.raw_decode(text, at)
        colon = _skip(text, after_key)
        value_start = _skip(text, colon + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append(Member(str(key), at, value_start, value_end))
        at = _skip(text, value_end)
        if text[at] == "}":
            return members, at
        at = _skip(text, at + 1)  # the comma


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    match = re.match(r"[ \t]*", text[line_start:])
    return match.group(0) if match else ""


def _dump(value: Any, indent: str, unit: str, newline: str) -> str:
    """`value` as JSON indented by `unit`, its continuation lines starting at `indent` and
    ending in `newline` (the file's)."""
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", newline + indent)


def _insert(text: str, brace: int, close: int, members: list[Member], key: str, value: Any) -> str:
    """`text` with `"key": value` added as the last member of the object at [brace, close], in
    the file's indentation and line ending."""
    newline = _newline(text)
    outer = _line_indent(text, brace)
    if members:
        inner = _line_indent(text, members[-1].key_start)
        same_line = "\n" not in text[brace : members[0].key_start]
        unit = inner[len(outer) :] or "  "
        if same_line:  # {"a": 1} on one line: keep it on one line
            return (
                text[: members[-1].value_end]
                + f", {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
                + text[members[-1].value_end :]
            )
        member = f",{newline}{inner}{json.dumps(key)}: {_dump(value, inner, unit, newline)}"
        return text[: members[-1].value_end] + member + text[members[-1].value_end :]
    unit = "  "
    inner = outer + unit
    dumped = _dump(value, inner, unit, newline)
    member = f"{newline}{inner}{json.dumps(key)}: {dumped}{newline}{outer}"
    return text[: brace + 1] + member + text[close:]


def _parse_json(path: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise unreadable(path, f"not valid JSON ({error})") from None


def with_server(
    path: str,
    text: str | None,
    servers_key: str,
    name: str,
    entry: dict[str, Any],
    *,
    force: bool,
    written: tuple[str, ...] = (),
) -> str:
    """`text` (a JSON MCP config) with `servers_key.name` set to `entry`, all else as it was. An
    existing entry other than `entry` is replaced only if it is the one kanban wrote last
    (one of `written`, the `entry_digest`s AGENTS.md records), or with `force`."""
    if text is None or not text.strip():
        return json.dumps({servers_key: {name: entry}}, indent=2, ensure_ascii=False) + "\n"
    before = _parse_json(path, text)
    if not isinstance(before, dict):
        raise unreadable(path, "its top level is not a JSON object")
    servers = before.get(servers_key, {})
    if not isinstance(servers, dict):
        raise unreadable(path, f"its {servers_key!r} is not a JSON object")
    if name in servers and servers[name] == entry:
        return text
    ours = name in servers and isinstance(servers[name], dict)
    if name in servers and not force and not (ours and entry_digest(servers[name]) in written):
        raise Edited(
            f"its {servers_key}.{name} entry was edited by hand (or written by another kanban "
            "init than the one AGENTS.md records)"
        )
    top = _skip(text, 0)
    top_members, top_close = _members(text, top)
    found = next((m for m in top_members if m.key == servers_key), None)
    if found is None:
        after = _insert(text, top, top_close, top_members, servers_key, {name: entry})
    else:
        members, close = _members(text, found.value_start)
        mine = next((m for m in members if m.key == name), None)
        if mine is None:
            after = _insert(text, found.value_start, close, members, name, entry)
        else:
            indent = _line_indent(text, mine.key_start)
            unit = indent[len(_line_indent(text, found.key_start)) :] or "  "
            dumped = _dump(entry, indent, unit, _newline(text))
            after = text[: mine.value_start] + dumped + text[mine.value_end :]
    check = _parse_json(path, after)
    expected = {**before, servers_key: {**servers, name: entry}}
    if check != expected:  # pragma: no cover - a splice bug must never reach the disk
        raise unreadable(path, "kanban init could not change only its own entry")
    return after


def toml_servers(path: str, text: str) -> dict[str, Any]:
    """The file's `mcp_servers` table, outside kanban's block (a parse error is refused)."""
    try:
        parsed = tomllib.loads(outside_block(text, "toml"))
    except tomllib.TOMLDecodeError as error:
        raise unreadable(path, f"not valid TOML ({error})") from None
    return _servers_table(path, parsed)


def _servers_table(path: str, parsed: dict[str, Any]) -> dict[str, Any]:
    """`parsed["mcp_servers"]`: a table, or refused (`[[mcp_servers]]`, a string...), since
    kanban's `[mcp_servers.kanban]` means a table of that name and nothing else."""
    servers = parsed.get("mcp_servers", {})
    if not isinstance(servers, dict):
        shape = "an array ([[mcp_servers]]?)" if isinstance(servers, list) else "a value"
        raise unreadable(
            path,
            f"its mcp_servers is {shape}, not a table: Codex reads one [mcp_servers.NAME] table "
            "per server",
        )
    return servers


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, with `\\uXXXX` for the rest)."""
    return json.dumps(value, ensure_ascii=True)


def toml_server_table(name: str, entry: dict[str, Any]) -> str:
    """`[mcp_servers.NAME]` with command, args and env (an inline table), as Codex reads it."""
    args = ", ".join(toml_string(arg) for arg in entry["args"])
    env = ", ".join(f"{key} = {toml_string(value)}" for key, value in entry["env"].items())
    return (
        f"[mcp_servers.{name}]\n"
        f"command = {toml_string(entry['command'])}\n"
        f"args = [{args}]\n"
        f"env = {{ {env} }}\n"
    )


def with_toml_server(
    path: str, text: str | None, name: str, entry: dict[str, Any], *, force: bool
) -> str:
    """`text` (a Codex config.toml) with kanban's block declaring `mcp_servers.NAME`. A table of
    that name outside the block is the user's own: refused, since two would not parse."""
    if text is not None and name in toml_servers(path, text):
        # The user's own table, not kanban's part edited (`edited`): as docs/agent-setup.md
        # says, invalid_input, like an `mcp_servers` that is not a table.
        raise unreadable(
            path,
            f"it already declares mcp_servers.{name} outside kanban's block: remove that table "
            "(or rename it) and run kanban init again",
        )
    after = with_block(text, toml_server_table(name, entry), "toml", force=force)
    try:
        parsed = tomllib.loads(after)
    except tomllib.TOMLDecodeError as error:
        raise unreadable(path, f"adding kanban's table would not parse ({error})") from None
    if _servers_table(path, parsed).get(name) != entry:
        raise unreadable(
            path,
            f"the lines right after kanban's block would belong to its [mcp_servers.{name}] "
            "table; start them with a table header of their own",
        )
    return after
