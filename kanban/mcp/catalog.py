"""The MCP tools by name, the tool sets a session may be started with, and the lease sentence
their descriptions quote: declared here, without the SDK, so `kanban init` and the CLI's option
choices read the same lists the server registers.

A worker needs the agent loop and nothing else; a reviewer reads finished work and judges it.
Every tool a model cannot use in its role is context it pays for on every turn, so a session
started with `--tools worker` lists only the worker's tools.
"""

from boardlib.config import MINUTE_MS

# Every tool, in the order the server lists them.
TOOLS: tuple[str, ...] = (
    "claim_next",
    "heartbeat",
    "log_progress",
    "extend_lease",
    "complete_task",
    "block_task",
    "release_task",
    "start_run",
    "finish_run",
    "get_task",
    "list_tasks",
    "explain",
    "create_task",
    "create_subtask",
    "add_comment",
    "link_dependency",
    "approve_task",
    "reject_task",
    "land_task",
    "preview_landing",
    "sync_workspace",
    "inbox",
)

ALL = "all"
WORKER = "worker"
REVIEWER = "reviewer"

# What a session started with `--tools NAME` lists. A worker claims, renews, records its runs
# and their cost (budgets are enforced there), finishes (or blocks or releases) and comments; it
# reads its task and asks why nothing is claimable, and catches its worktree up with the base. A
# reviewer finds work in its inbox, reads it, approves or rejects it, previews and lands it, and
# comments.
TOOL_SETS: dict[str, tuple[str, ...]] = {
    ALL: TOOLS,
    WORKER: (
        "claim_next",
        "heartbeat",
        "log_progress",
        "extend_lease",
        "complete_task",
        "block_task",
        "release_task",
        "start_run",
        "finish_run",
        "get_task",
        "explain",
        "add_comment",
        "sync_workspace",
    ),
    REVIEWER: (
        "inbox",
        "list_tasks",
        "get_task",
        "approve_task",
        "reject_task",
        "preview_landing",
        "land_task",
        "add_comment",
    ),
}
DEFAULT_TOOL_SET = ALL
TOOL_SETS_ENV = "KANBAN_MCP_TOOLS"


def minutes_text(ms: int) -> str:
    """A duration as people read it: "15 minutes", "1 minute", "20 seconds"."""
    minutes = ms / MINUTE_MS
    if minutes >= 1:
        return f"{minutes:g} minute" + ("" if minutes == 1 else "s")
    return f"{ms / 1000:g} seconds"


def renew_every_ms(lease_ms: int) -> int:
    """How often a holder should renew: a third of the lease, so one late renewal still lands."""
    return max(1, lease_ms // 3)


def lease_rule(lease_ms: int) -> str:
    """The one sentence that states the lease protocol, with this board's lease."""
    return (
        f"A claim holds a lease of {minutes_text(lease_ms)}: call heartbeat or log_progress at "
        f"least every {minutes_text(renew_every_ms(lease_ms))} while working, or the task is "
        "released to someone else; complete when done; never approve your own work."
    )


def lease_reminder(lease_ms: int) -> str:
    """The short form, for the renewing tools (claim_next carries the whole rule)."""
    return (
        f"The lease lasts {minutes_text(lease_ms)}; renew at least every "
        f"{minutes_text(renew_every_ms(lease_ms))}."
    )
