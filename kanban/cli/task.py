"""`kanban task ...`: every verb on tasks, loaded per module so a claim imports only its own."""

import click

from .lazy import LazyGroup

PROTOCOL = "kanban.cli.protocol"
MANAGE = "kanban.cli.manage"
READING = "kanban.cli.reading"


@click.group(
    cls=LazyGroup,
    sections=[
        (
            "Agent loop (lease protocol)",
            {
                "claim-next": f"{PROTOCOL}:claim_next",
                "claim": f"{PROTOCOL}:claim",
                "heartbeat": f"{PROTOCOL}:heartbeat",
                "log-progress": f"{PROTOCOL}:log_progress",
                "extend-lease": f"{PROTOCOL}:extend_lease",
                "complete": f"{PROTOCOL}:complete",
                "block": f"{PROTOCOL}:block",
                "release": f"{PROTOCOL}:release",
                "transfer": f"{PROTOCOL}:transfer",
            },
        ),
        (
            "Review",
            {
                "approve": "kanban.cli.review:approve",
                "reject": "kanban.cli.review:reject",
                "land": "kanban.cli.land:land",
            },
        ),
        (
            "Create and change",
            {
                "dispatch": f"{MANAGE}:dispatch",
                "edit": f"{MANAGE}:edit",
                "move": f"{MANAGE}:move",
                "unblock": f"{MANAGE}:unblock",
                "reclaim": f"{MANAGE}:reclaim",
                "cancel": f"{MANAGE}:cancel",
                "cancel-dependents": f"{MANAGE}:cancel_dependents",
                "drop": f"{MANAGE}:drop",
                "restore": f"{MANAGE}:restore",
                "comment": f"{MANAGE}:comment",
                "deps": "kanban.cli.deps:deps",
            },
        ),
        (
            "Read",
            {
                "view": f"{READING}:view",
                "get": f"{READING}:get",
                "list": f"{READING}:list_tasks",
                "search": f"{READING}:search",
                "why": f"{READING}:why",
            },
        ),
        (
            "Runs",
            {
                "exec": "kanban.cli.executions:exec_group",
                "workspace": "kanban.cli.workspace:workspace",
            },
        ),
    ],
)
def task() -> None:
    """Claim, work on, review and manage tasks.

    Every command prints one document on stdout: JSON, or a table for people with --format
    table. IDs are opaque strings (e.g. TASK-42).
    """
