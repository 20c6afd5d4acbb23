"""The REST surface: seed 003's Board API route for route, the lease protocol of seed 002 over
HTTP, a live change feed, and health probes, served by `kanban serve` (uvicorn).

    from kanban.http.app import ServerSettings, create_app
    app = create_app(ServerSettings(db="board.db"))

Like every surface it decides no rule and writes no SQL: it authenticates the caller, validates
the body, asks `boardlib`, and renders the answer or the refusal in the seed's envelope. Nothing
here is imported on an agent's CLI claim path.
"""
