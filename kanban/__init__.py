"""kanban: the agents' surfaces over the board core `boardlib`: the CLI (`kanban.cli`), the demo
(`kanban.demo`), the REST server (`kanban.http`) and the MCP server (`kanban.mcp`).

None of them decides a rule or writes SQL: they parse, ask `boardlib`, and render the answer or
the typed refusal in their own envelope.
"""
