"""`kanban init`: teach an agent runtime the board's protocol, in the runtime's own files.

- `instructions` writes the agent instructions (claim, renew, quote the epoch, complete, read
  refusals), generated from the declarations the CLI and the MCP server use: the exit codes
  (`kanban.cli.exitcodes`), the refusal reasons (`boardlib.errors.Reason`) with their next steps
  (`kanban.mcp.hints`), the lease (`boardlib.config`) and the tool sets (`kanban.mcp.catalog`).
- `files` changes a file only inside kanban's own part of it: a marked block in Markdown and
  TOML, the `kanban` server entry in JSON. Everything else stays byte for byte.
- `harnesses` says which files each runtime reads and in which format.
- `plan` puts them together: what each file would become, and whether kanban may write it.

Nothing here imports click; the command is `kanban.cli.init`.
"""
