"""One router per part of the API: health, the change feed, the lease verbs, seed 003's task
routes, executions and workspaces. Order matters where paths overlap: `/api/board/events` and
`/api/board/claim-next` are registered before `/api/board/{taskId}`."""
