"""What `kanban mcp`'s tool list costs an agent's context, per tool set, against a 4,000-token
budget (issue 26; a peer's 59-tool server ate 45-50k tokens of its users' context).

Counted: each tool's name, description and input schema, as the SDK's client receives them from
`tools/list`, as compact JSON (`kanban.mcp.footprint`), and the same plus the server's
instructions. The estimate is ceil(UTF-8 bytes / 4). With `bpe-openai` installed (MIT, GitHub's
Rust BPE with the tables built in; `pip install bpe-openai`, not a project dependency), every
line also carries exact cl100k_base and o200k_base counts, which calibrate the estimate;
Claude's tokenizer is not public.

The baseline, counted in the same run: the same tools with the schemas pydantic generates
(titles, `anyOf [T, null]`), as the server listed them before `compact_schema`.

    python benchmarks/mcp_tools.py [--save] [--note TEXT]
"""

import argparse
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import record

from boardlib.config import BoardConfig
from kanban.mcp.catalog import TOOL_SETS
from kanban.mcp.footprint import TOKENIZER, approx_tokens, listed_tools, tool_text
from kanban.mcp.server import BoardTools
from kanban.mcp.session import AgentSession

BUDGET = 4_000


def exact_counters() -> dict[str, Any]:
    """`name -> encode` for the exact tokenizers, when bpe-openai is installed."""
    try:
        import bpe_openai  # type: ignore[import-not-found]
    except ImportError:
        return {}
    return {name: bpe_openai.get_encoding(name).encode for name in ("cl100k_base", "o200k_base")}


def raw_texts(tool_set: str) -> list[str]:
    """The baseline: the tools with pydantic's schemas as generated."""
    tools = BoardTools(AgentSession(Path("unopened.db"), "agent", config=BoardConfig()))
    return [
        tool_text({"name": tool.name, "description": tool.description, "inputSchema": schema})
        for tool in tools.tools(tool_set)
        for schema in [tool.fn_metadata.arg_model.model_json_schema(by_alias=True)]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    record.add_arguments(parser)
    args = parser.parse_args()
    with record.Run("mcp_tools", args) as bench:
        measure(bench)


def measure(bench: record.Run) -> None:
    counters = exact_counters()
    for tool_set in TOOL_SETS:
        tools, instructions = listed_tools(tool_set)
        texts = [tool_text(tool) for tool in tools]
        baseline = raw_texts(tool_set)
        tokens = sum(approx_tokens(text) for text in texts)
        baseline_tokens = sum(approx_tokens(text) for text in baseline)
        line: dict[str, Any] = {
            "measurement": "mcp_tool_list",
            "tool_set": tool_set,
            "tools": len(tools),
            "chars": sum(len(text) for text in texts),
            "approx_tokens": tokens,
            "with_instructions_approx_tokens": tokens + approx_tokens(instructions),
            "tokenizer": TOKENIZER,
            "exact_tokenizers": sorted(counters) or "none (pip install bpe-openai)",
            "budget_tokens": BUDGET,
            "budget_ratio": round(tokens / BUDGET, 3),
            "within_budget": tokens <= BUDGET,
            "baseline_approx_tokens": baseline_tokens,
            "ratio_to_baseline": round(tokens / baseline_tokens, 3),
        }
        for name, encode in counters.items():
            exact = sum(len(encode(text)) for text in texts)
            line[f"{name}_tokens"] = exact
            line[f"{name}_with_instructions_tokens"] = exact + len(encode(instructions))
            line[f"baseline_{name}_tokens"] = sum(len(encode(text)) for text in baseline)
            line[f"estimate_over_{name}"] = round(tokens / exact, 3)
        bench.emit(line)


if __name__ == "__main__":
    main()
