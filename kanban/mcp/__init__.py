"""The board over the Model Context Protocol, for agent runtimes that call tools natively.

`kanban mcp --agent NAME` serves one agent's session over stdio (`server.serve_stdio`): the tools of
`server.BoardTools`, each a thin call into `session.AgentSession` and through it into
`boardlib.Board`. Importing this package imports nothing; the SDK loads with `server`.
"""
