"""What the server's tool list costs a model's context, in tokens.

A runtime hands the model each tool's name, description and input schema on every turn (and
most add the server's instructions), so that text is the cost measured here: the `tools/list`
answer as the SDK's client receives it, reduced to those three fields, as compact JSON.

Tokens are estimated as ceil(UTF-8 bytes / 4), the usual rule of thumb for English and code. On
this tool list it reads 4-7% above OpenAI's o200k_base and cl100k_base (benchmarks/mcp_tools.py
counts both exactly when `bpe-openai` is installed); Claude's tokenizer is not public, so for
Claude the figure is an estimate of the same kind.
"""

import json
from pathlib import Path
from typing import Any

import anyio

from boardlib.config import BoardConfig

from .catalog import DEFAULT_TOOL_SET
from .server import build_server
from .session import AgentSession

TOKENIZER = "ceil(utf8_bytes / 4)"


def approx_tokens(text: str) -> int:
    """The token estimate of `text` (see the module docstring)."""
    return -(-len(text.encode("utf-8")) // 4)


def listed_tools(
    tool_set: str = DEFAULT_TOOL_SET, config: BoardConfig | None = None
) -> tuple[list[dict[str, Any]], str]:
    """The tools of `tool_set` as a model receives them (name, description, inputSchema), and
    the server's instructions, for a board with `config`. No board is opened."""
    session = AgentSession(Path("unopened.db"), "agent", config=config or BoardConfig())
    server = build_server(session, tool_set)
    tools = anyio.run(server.list_tools)
    listed = [
        {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
        for tool in tools
    ]
    return listed, server.instructions or ""


def tool_text(tool: dict[str, Any]) -> str:
    """One listed tool as the compact JSON that is counted."""
    return json.dumps(tool, ensure_ascii=False, separators=(",", ":"))


def footprint(
    tool_set: str = DEFAULT_TOOL_SET, config: BoardConfig | None = None
) -> dict[str, Any]:
    """The tool set's size: how many tools, their characters and estimated tokens, and the same
    with the server's instructions added."""
    tools, instructions = listed_tools(tool_set, config)
    texts = [tool_text(tool) for tool in tools]
    tokens = sum(approx_tokens(text) for text in texts)
    return {
        "toolSet": tool_set,
        "tools": [tool["name"] for tool in tools],
        "chars": sum(len(text) for text in texts),
        "approxTokens": tokens,
        "withInstructionsApproxTokens": tokens + approx_tokens(instructions),
        "tokenizer": TOKENIZER,
    }
