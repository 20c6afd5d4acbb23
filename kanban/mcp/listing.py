"""The server's tool list as the SDK serves it, and `listing.json`, the copy `footprint` reads.

`python -m kanban.mcp.listing` rewrites `listing.json` after a tool's signature, bounds or
docstring changed (tests/mcp/test_listing.py fails until it is). The file holds each tool's
name, its description template (the docstring on one line, `{placeholders}` unfilled) and its
compact input schema, in the server's order.
"""

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from boardlib.config import BoardConfig

from .catalog import DEFAULT_TOOL_SET, TOOLS
from .footprint import LISTING
from .server import BoardTools, build_server
from .session import AgentSession


def served_tools(
    tool_set: str = DEFAULT_TOOL_SET, config: BoardConfig | None = None, agent: str = "agent"
) -> tuple[list[dict[str, Any]], str]:
    """What the server itself lists for `tool_set` (name, description, inputSchema) and its
    instructions, on a board with `config`. No board is opened."""
    session = AgentSession(Path("unopened.db"), agent, config=config or BoardConfig())
    server = build_server(session, tool_set)
    tools = anyio.run(server.list_tools)
    listed = [
        {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
        for tool in tools
    ]
    return listed, server.instructions or ""


def listing() -> dict[str, Any]:
    """The content of `listing.json`: every tool with its description template."""
    served, _ = served_tools()
    schemas = {tool["name"]: tool["inputSchema"] for tool in served}
    return {
        "tools": [
            {"name": name, "description": BoardTools.template(name), "inputSchema": schemas[name]}
            for name in TOOLS
        ]
    }


def listing_text() -> str:
    return json.dumps(listing(), ensure_ascii=False, indent=1) + "\n"


def main() -> int:
    LISTING.write_text(listing_text(), encoding="utf-8")
    print(f"wrote {LISTING}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
