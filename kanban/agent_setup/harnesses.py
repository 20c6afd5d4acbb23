"""Which files each agent runtime reads, and in which format: its documented convention.

- Claude Code reads CLAUDE.md, not AGENTS.md, and imports a file with an `@path` line
  (code.claude.com/docs/en/memory); project MCP servers are `.mcp.json` at the root, as
  `claude mcp add --scope project` writes it (code.claude.com/docs/en/mcp).
- Codex reads AGENTS.md; MCP servers are `[mcp_servers.<name>]` tables in ~/.codex/config.toml
  or a project's `.codex/config.toml`, loaded only for a trusted project
  (developers.openai.com/codex/config-basic). kanban init writes the project file: the user
  file applies to every project, a board to one.
- Cursor reads AGENTS.md (cursor.com/docs/rules) and `.cursor/mcp.json` (cursor.com/docs/mcp).
- `generic`: AGENTS.md alone; the MCP entry is printed for the operator to register.
"""

from dataclasses import dataclass
from typing import Literal

FileKind = Literal["agents", "claude", "mcp_json", "codex_toml"]


@dataclass(frozen=True)
class Target:
    path: str  # relative to the repository root, with `/`
    kind: FileKind


@dataclass(frozen=True)
class Harness:
    name: str
    label: str  # how the instructions name it ("in Claude Code, as `cc`")
    targets: tuple[Target, ...]
    stdio_type: bool  # whether its JSON entries carry "type": "stdio"
    note: str


AGENTS = Target("AGENTS.md", "agents")

HARNESSES: dict[str, Harness] = {
    harness.name: harness
    for harness in (
        Harness(
            "claude-code",
            "Claude Code",
            (AGENTS, Target("CLAUDE.md", "claude"), Target(".mcp.json", "mcp_json")),
            stdio_type=True,
            note="Claude Code reads CLAUDE.md (it imports AGENTS.md) and the project's .mcp.json; "
            "it asks once before starting the project's MCP servers (see `claude mcp list`). Its "
            "file tools work in the project's folder: add the worktrees' folder (`--add-dir`, or "
            "permissions.additionalDirectories; docs/agent-setup.md, Sandboxed runtimes).",
        ),
        Harness(
            "codex",
            "Codex",
            (AGENTS, Target(".codex/config.toml", "codex_toml")),
            stdio_type=False,
            note="Codex reads AGENTS.md, and .codex/config.toml only once you trust the project; "
            "~/.codex/config.toml is left alone (see `codex mcp list`). Its workspace-write "
            "sandbox lets the agent's commands write only in the project and /tmp: allow the "
            "board's and the worktrees' folders (docs/agent-setup.md, Sandboxed runtimes).",
        ),
        Harness(
            "cursor",
            "Cursor",
            (AGENTS, Target(".cursor/mcp.json", "mcp_json")),
            stdio_type=False,
            note="Cursor reads AGENTS.md and .cursor/mcp.json; turn the kanban server on in "
            "Cursor's MCP settings if it is off.",
        ),
        Harness(
            "generic",
            "other runtimes",
            (AGENTS,),
            stdio_type=False,
            note="AGENTS.md only: register the MCP server printed under mcpServer with your "
            "runtime, if it speaks MCP.",
        ),
    )
}
DEFAULT_HARNESS = "generic"
SERVER_NAME = "kanban"  # the entry's name in every MCP config


def default_agent(harness: str) -> str:
    """The agent name a runtime's sessions act under unless `--agent` says otherwise."""
    return "agent" if harness == "generic" else harness
