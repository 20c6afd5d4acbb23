"""What the server's tool list costs a model's context, in tokens, without loading the SDK.

A runtime hands the model each tool's name, description and input schema on every turn (and
most add the server's instructions), so that text is the cost measured here: the `tools/list`
answer as the SDK's client receives it, reduced to those three fields, as compact JSON.
`kanban init` reports it, and must not pay a second for the SDK and pydantic to build schemas:
the schemas and description templates are read from `listing.json`, which `listing.py` writes
from the server and tests/mcp/test_listing.py holds equal to what the server lists.

Tokens are estimated as ceil(UTF-8 bytes / 4), the usual rule of thumb for English and code. On
this tool list it reads 4-7% above OpenAI's o200k_base and cl100k_base (benchmarks/mcp_tools.py
counts both exactly when `bpe-openai` is installed); Claude's tokenizer is not public.
"""

import json
from pathlib import Path
from typing import Any

from boardlib.config import BoardConfig

from .catalog import DEFAULT_TOOL_SET, TOOL_SETS, describe, instructions

TOKENIZER = "ceil(utf8_bytes / 4)"
LISTING = Path(__file__).with_name("listing.json")


def approx_tokens(text: str) -> int:
    """The token estimate of `text` (see the module docstring)."""
    return -(-len(text.encode("utf-8")) // 4)


def templates() -> dict[str, dict[str, Any]]:
    """Every tool's listing before the board's settings: `name -> {name, description template,
    inputSchema}`, as `listing.py` wrote it."""
    listed: list[dict[str, Any]] = json.loads(LISTING.read_text(encoding="utf-8"))["tools"]
    return {tool["name"]: tool for tool in listed}


def listed_tools(
    tool_set: str = DEFAULT_TOOL_SET, config: BoardConfig | None = None, agent: str = "agent"
) -> tuple[list[dict[str, Any]], str]:
    """The tools of `tool_set` as a model receives them (name, description, inputSchema), and
    the server's instructions, for a board with `config`. No board is opened."""
    config = config or BoardConfig()
    known = templates()
    listed = [
        {
            "name": name,
            "description": describe(known[name]["description"], config),
            "inputSchema": known[name]["inputSchema"],
        }
        for name in TOOL_SETS[tool_set]
    ]
    return listed, instructions(agent, config.lease_ms, tool_set)


def tool_text(tool: dict[str, Any]) -> str:
    """One listed tool as the compact JSON that is counted."""
    return json.dumps(tool, ensure_ascii=False, separators=(",", ":"))


def footprint(
    tool_set: str = DEFAULT_TOOL_SET, config: BoardConfig | None = None
) -> dict[str, Any]:
    """The tool set's size: how many tools, their characters and estimated tokens, and the same
    with the server's instructions added."""
    tools, instructions_text = listed_tools(tool_set, config)
    texts = [tool_text(tool) for tool in tools]
    tokens = sum(approx_tokens(text) for text in texts)
    return {
        "toolSet": tool_set,
        "tools": [tool["name"] for tool in tools],
        "chars": sum(len(text) for text in texts),
        "approxTokens": tokens,
        "withInstructionsApproxTokens": tokens + approx_tokens(instructions_text),
        "tokenizer": TOKENIZER,
    }
