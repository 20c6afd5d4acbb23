"""The MCP tools by name, the tool sets a session may be started with, the lease sentence
their descriptions quote, the board settings filled into them and the server's instructions:
declared here, without the SDK, so `kanban init` and the CLI's option choices read the same lists
and text the server registers.

A worker needs the agent loop and nothing else; a reviewer reads finished work and judges it.
Every tool a model cannot use in its role is context it pays for on every turn, so a session
started with `--tools worker` lists only the worker's tools.
"""

from boardlib.config import MINUTE_MS, BoardConfig

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
    "provision_workspace",
    "write_handoff",
    "resume_workspace",
    "complete_workspace",
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
        "provision_workspace",
        "write_handoff",
        "resume_workspace",
        "complete_workspace",
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


def tool_sets_text() -> str:
    """Each tool set with its tools, read from `TOOL_SETS`, for `kanban mcp --help`: words kept
    by hand there left out the worktree and landing tools."""
    named = [f"{name} ({', '.join(tools)})" for name, tools in TOOL_SETS.items() if name != ALL]
    return ", ".join(named) + f" or {ALL} (every tool)"


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


def settings(config: BoardConfig) -> dict[str, str]:
    """What each `{placeholder}` in a tool's description becomes on a board with `config`."""
    return {
        "{lease}": lease_rule(config.lease_ms),
        "{lease_short}": lease_reminder(config.lease_ms),
        "{max_depth}": str(config.max_depth),
        "{max_live_children}": str(config.max_live_children),
        "{root_create_limit}": str(config.root_create_limit),
        "{root_window}": minutes_text(config.root_create_window_ms),
    }


def describe(template: str, config: BoardConfig) -> str:
    """A tool's description (its docstring on one line) with this board's settings."""
    text = " ".join(template.split())
    for placeholder, value in settings(config).items():
        text = text.replace(placeholder, value)
    return text


def instructions(agent: str, lease_ms: int, tool_set: str = DEFAULT_TOOL_SET) -> str:
    """What the model reads about the server as a whole, for the tools it was given. Code that
    passes its gate is done, not in review: a reviewer finds it in the inbox and lands it."""
    board = (
        f"A shared kanban board for a team of agents. You act as agent {agent!r}; every call is "
        "made under that name. "
    )
    if "claim_next" not in TOOL_SETS[tool_set]:
        return board + (
            "You judge others' work: inbox lists what waits (code that passed its gate is done, "
            "not in review); read each task with get_task detail=true. A task with a worktree: "
            "preview_landing, then land_task; other work: approve_task, or reject_task saying "
            "what must change. Never judge work you held yourself (self_review)."
        )
    return board + (
        "The loop: claim_next, do the work, log_progress as you go, complete_task with a "
        "summary (to review, for another agent to judge). A code task: provision_workspace, "
        "change files in its worktree, write_handoff with commands.verify (its gate runs it), "
        "then complete_workspace. When claim_next finds nothing, explain says why. "
        + lease_rule(lease_ms)
    )
