"""What a model should do next after each refusal: one line per reason, in one table.

The reason and its message come from the board (`boardlib.errors.BoardError`); the hint is
presentation for a model reading a tool error, so it lives with the MCP surface. Each hint names
the tool to call next, because a model recovers by calling tools, not by reading prose. The tools
are placeholders (`{claim_next}`): for a session started with a reduced tool set they become
only tools it lists (`mcp_verbs`), and the same table also speaks CLI (`CLI_VERBS`): the agent
instructions `kanban init` writes list each reason with this hint, in commands. Where the next
step depends on where the task stands (who resolves a conflict at landing), a refusal that says
(its `status`) gets that status's wording (`hint_for`); the plain one holds in every status.
Which details choose is declared by reason (`CHOSEN_BY`), never read off the details' order.
"""

import re
from collections.abc import Collection, Mapping
from typing import Any

from boardlib import attention
from boardlib import transitions as t
from boardlib.config import WORKTREES_VARIABLE
from boardlib.errors import Reason
from boardlib.records import EXECUTION_OUTCOMES
from boardlib.worktrees.results import DONE_SYNC, OUTSIDE_WORKTREES, REPLAYED

from .catalog import TOOLS

# Done work is judged work: only an operator may sync or change it (docs/landing.md), and done
# work that has not landed already waits in the operators' inbox.
_DONE_CONFLICT = (
    f"{DONE_SYNC}: tell one which files conflict (the board lists it for them already; they "
    "sync it, resolve them and land again)"
)
_DONE_FAILURE = (
    "only an operator may change done work: tell one what failed (the board lists it for them "
    "already; they fix it and land again)"
)


def when(placeholder: str, field: str, value: str) -> str:
    """The key of `placeholder`'s wording for a refusal whose document says `field: value` (the
    task's `status`, or `what` was not found)."""
    return f"{placeholder}/{field}={value}"


# What each placeholder of a hint becomes for a model calling tools: the first of its wordings
# that names only tools the session lists (a worker has no list_tasks, a reviewer no claim_next),
# so a hint never sends a model to a tool it does not have. The last wording names none.
MCP_WORDINGS: dict[str, tuple[str, ...]] = {
    "claim_next": ("claim_next", "list_tasks", "an operator"),
    "get_task": ("get_task",),
    "check_id": (
        "Check the id with list_tasks or get_task; task ids look like TASK-12",
        "Check the id with get_task; task ids look like TASK-12",
    ),
    # A run's id is start_run's answer, not a task's (finish_run with a lost id).
    when("check_id", "what", "execution"): (
        "Use the id start_run returned (runs look like EXEC-3); get_task with detail=true "
        "lists the task's runs",
        "Check the run's id; get_task with detail=true lists a task's runs",
        "Check the run's id (runs look like EXEC-3)",
    ),
    # The run is there and closed already (closed twice, or cancelled by a budget's block): the
    # message says how, and its id was right (the hint said "Use the id start_run returned" under a
    # message saying the run was closed). `CHOSEN_BY` reads a not_found's `status` before its
    # `what`, so this wording is chosen first.
    # Its cost was counted, at its close or at its one late report (`finish_run` on a run the
    # board closed counts what it cost: the hint said only "leave it be", as if it were lost).
    **{
        when("check_id", "status", outcome): (
            "That run is already closed (the message says how) and stays as it closed; what it "
            "cost was counted when first reported, once; start_run opens a new one if you go on "
            "working on the task",
            "That run is already closed (the message says how) and stays as it closed; what it "
            "cost was counted when first reported, once; leave it be",
        )
        for outcome in EXECUTION_OUTCOMES
    },
    # The board closed the run before its cost was reported, and this call reported none: the
    # cost is still taken, once (`Board._record_late`).
    when("check_id", "costPending", "true"): (
        "That run is already closed (the message says how) and stays as it closed, but what it "
        "cost is not counted yet: call finish_run on it again with cost_usd and the token "
        "counts, counted once",
        "That run is already closed (the message says how) and what it cost is not counted yet: "
        "its holder reports it once, with its cost and tokens",
    ),
    # The run is closed and a budget over its task is spent, so start_run would be refused too
    # (the hint offered it after the budget's block). Its cost may still be taken (the block
    # cancelled it): the message says so, and finish_run with the cost counts it.
    when("check_id", "budgetSpent", "true"): tuple(
        "That run is already closed (the message says how, and if what it cost is still taken: "
        "report it once, finish_run with cost_usd) and no new one starts while a budget over "
        "the task is spent (the message says which; only an operator raises it): stop working "
        f"on the task and {then} for other work"
        for then in ("call claim_next", "call list_tasks", "ask an operator")
    ),
    # The task is there; it has no live worktree (the message says why).
    when("check_id", "what", "workspace"): (
        "The task has no live worktree (the message says why): provision_workspace makes one or "
        "checks it out again; get_task with detail=true shows its workspaces",
        "The task has no live worktree (the message says why); get_task with detail=true shows "
        "its workspaces",
        "The task has no live worktree (the message says why)",
    ),
    "conflict": tuple(
        f"Someone else has it or it is not claimable; {then} for other work (retrying this one "
        "will not help)."
        for then in ("call claim_next", "call list_tasks", "ask an operator")
    ),
    # The task's worktree was made under another worktrees folder than this server's: nobody else
    # has it, and other work would not help; the server's config lacks the shell's folder.
    when("conflict", "why", OUTSIDE_WORKTREES): (
        "The task's worktree was made under another worktrees folder than this server's (the "
        f"message names both): this server runs with another {WORKTREES_VARIABLE} than the "
        "process that made it. Tell an operator to give this server's config the same "
        f"{WORKTREES_VARIABLE} (kanban init run with it writes it); retrying will not help.",
    ),
    "explain_task": ("explain(task_id)", "get_task"),
    "reject_task": ("reject_task", "ask a reviewer to reject it"),
    "block_task": (
        "call block_task saying so (it goes to the operator's inbox)",
        "say so in add_comment on the task",
    ),
    "preview_landing": ("preview_landing or get_task", "get_task"),
    # Who resolves a conflict (or fixes work whose verification failed) depends on where the
    # task stands: its holder while in progress, its builder once a reviewer rejects it back from
    # review, an operator once it is done (an agent may neither reject nor sync done work). The
    # plain wording holds in each case; a refusal carrying the task's status gets its own below.
    "resolve_conflict": (
        "if you hold the task, resolve them in its worktree and complete_workspace again; if it "
        "is in review, reject_task with the files (back in its builder's hands, it calls "
        f"sync_workspace and resolves them); if it is done, {_DONE_CONFLICT}",
        "if it is in review, reject_task with the files (its builder resolves them); if it is "
        f"done, {_DONE_CONFLICT}",
        "resolve the files in your worktree and complete_workspace again",
        "tell an operator which files conflict",
    ),
    when("resolve_conflict", "status", t.IN_PROGRESS): (
        "resolve the files in your worktree and complete_workspace again",
        "resolve the files in the task's worktree and have it completed again",
    ),
    when("resolve_conflict", "status", t.IN_REVIEW): (
        "reject_task with the files; back in its builder's hands, it calls sync_workspace, "
        "resolves them and completes again",
        "reject_task with the files; its builder resolves them and completes again",
        "ask a reviewer to reject it with the files",
    ),
    when("resolve_conflict", "status", t.DONE): (f"the task is done, and {_DONE_CONFLICT}",),
    # Replaying its commits conflicted (rebase); the work as one change may merge, and whoever
    # may land it can try that before anyone syncs.
    when("resolve_conflict", "why", REPLAYED): (
        "call land_task again with strategy squash or merge, which lands the work as one change; "
        "if that conflicts too, its refusal says who resolves it",
        "land it with strategy squash or merge, which lands the work as one change",
    ),
    "fix_failure": (
        "if it is in review, reject_task with the output tail so its builder fixes it; if it "
        f"is done, {_DONE_FAILURE}",
        f"if it is in review, ask a reviewer to reject it; if it is done, {_DONE_FAILURE}",
    ),
    when("fix_failure", "status", t.IN_REVIEW): (
        "reject_task with the output tail so its builder fixes it",
        "ask a reviewer to reject it with the output tail",
    ),
    when("fix_failure", "status", t.DONE): (f"the task is done, and {_DONE_FAILURE}",),
    "land_again": ("Call land_task again", "Make the same call again"),
    "complete_workspace": ("complete_workspace", "the workspace's complete"),
    "stale_claim": (
        "Your claim is gone (the lease lapsed, the task may belong to someone else now): stop "
        "working on it and call claim_next.",
        "Your claim is gone (the lease lapsed, the task may belong to someone else now): stop "
        "working on it and call list_tasks for other work.",
        "Your claim is gone (the lease lapsed, the task may belong to someone else now): stop "
        "working on it and ask an operator for other work.",
    ),
    # The caller's name holds the task under a newer epoch. A shell agent given it back by a
    # failed gate uses that epoch (the refusal says so); a session keeps the epochs it was
    # given itself (a failed gate's too), so a newer one is a claim made since by another
    # process under its name, whose work it must not touch: not "your claim is gone", and
    # not "use it" either.
    when("stale_claim", "heldByYou", "true"): (
        "Your name holds this task under a newer epoch (currentEpoch) than this session's: "
        "another session or process under your name claimed it since. Leave it to that claim "
        "and call claim_next for other work.",
        "Your name holds this task under a newer epoch (currentEpoch) than this session's: "
        "another session or process under your name claimed it since. Leave it to that claim.",
    ),
}
# The same placeholders for an agent using the CLI (the instructions `kanban init` writes).
CLI_VERBS: dict[str, str] = {
    "claim_next": "`kanban task claim-next`",
    "get_task": "`kanban task get ID`",
    "check_id": "Check the id with `kanban task list` or `kanban task get ID`; task ids look "
    "like TASK-12, runs like EXEC-3 (`kanban task exec list ID` lists a task's)",
    "conflict": "Someone else has it or it is not claimable; call `kanban task claim-next` for "
    "other work (retrying this one will not help).",
    "explain_task": "`kanban task why ID`",
    "reject_task": "`kanban task reject ID --reason ...`",
    "block_task": "run `kanban task block ID --reason ...` saying so (it goes to the operator's "
    "inbox)",
    "preview_landing": "`kanban task land ID --dry-run` or `kanban task get ID`",
    "resolve_conflict": (
        "if you hold the task, resolve them in its worktree and complete it again; if it is in "
        "review, `kanban task reject ID --reason ...` with the files (back in its builder's "
        "hands, it runs `kanban task workspace sync ID` and resolves them); if it is done, "
        f"{_DONE_CONFLICT}"
    ),
    "fix_failure": (
        "if it is in review, `kanban task reject ID --reason ...` with the output tail so its "
        f"builder fixes it; if it is done, {_DONE_FAILURE}"
    ),
    "land_again": "Run `kanban task land ID` again",
    "complete_workspace": "`kanban task workspace complete ID`",
    "stale_claim": "Your claim is gone (the lease lapsed, the task may belong to someone else "
    "now): stop working on it and run `kanban task claim-next`.",
}

# The inbox's actions (`boardlib.attention`, the one declaration of the inbox rule) that an
# agent takes with a tool, by that tool's name; the others are an operator's (`inbox_action`).
INBOX_TOOLS: dict[str, str] = {attention.APPROVE: "approve_task", attention.LAND: "land_task"}


def inbox_action(action: str, listed: Collection[str] = TOOLS) -> str:
    """An inbox item's action as a model calling tools reads it: the tool that does it, if the
    session lists one, else whose it is (`ask an operator (unblock)`), never a name that looks
    like a tool and is none."""
    tool = INBOX_TOOLS.get(action)
    return tool if tool is not None and tool in listed else f"ask an operator ({action})"


_TOOL_NAME = re.compile(r"\b(" + "|".join(TOOLS) + r")\b")


def tools_named(text: str) -> set[str]:
    """The MCP tools a text names."""
    return set(_TOOL_NAME.findall(text))


def mcp_verbs(listed: Collection[str] = TOOLS) -> dict[str, str]:
    """The placeholders' wordings for a session that lists the tools `listed`."""
    return {
        placeholder: next(
            (text for text in wordings if tools_named(text) <= set(listed)), wordings[-1]
        )
        for placeholder, wordings in MCP_WORDINGS.items()
    }


MCP_VERBS = mcp_verbs()

HINTS: dict[str, str] = {
    Reason.NOT_FOUND: "{check_id}.",
    Reason.ILLEGAL_TRANSITION: (
        "The board's transition table refuses that move; call {get_task} to see where the task is."
    ),
    Reason.INVALID_STATE: (
        "The task is not in the state this tool needs; call {get_task} to see where it is, "
        "or {claim_next} for new work."
    ),
    Reason.VERIFICATION_REQUIRED: (
        "Its verification verdict does not allow done: {reject_task} with what must change, "
        "or leave it for an operator."
    ),
    Reason.CONFLICT: "{conflict}",
    Reason.UNMET_DEPENDENCIES: (
        "Its dependencies are not done yet; {explain_task} lists them. Take other work with "
        "{claim_next}."
    ),
    Reason.DEPENDENCY_CYCLE: "That link would close a cycle; leave it out or link the other way.",
    Reason.NOT_ASSIGNEE: (
        "You do not hold this task, and only its holder may do this; call {claim_next} to get "
        "work of your own."
    ),
    Reason.STALE_CLAIM: "{stale_claim}",
    # Said to a builder approving or rejecting its work in review, and landing it done too.
    Reason.SELF_REVIEW: (
        "You worked on this task, so you may not judge it or land it; leave that to another "
        "agent or a person."
    ),
    Reason.CAP_EXCEEDED: (
        "A create ceiling was reached (depth, live children per parent, or new root tasks per "
        "window); do the work in the tasks you have, or ask an operator."
    ),
    Reason.NO_ISOLATION: "This task kind gets no worktree; work without one.",
    Reason.INVALID_INPUT: "Fix the argument the message names and call again.",
    Reason.READ_ONLY: "This board is open read-only; nothing can be changed through it.",
    Reason.NO_BOARD: (
        "The board file this session was started on does not exist; an operator must fix "
        "KANBAN_DB/--db or create it (kanban db init). Tell them; retrying will not help."
    ),
    Reason.NOT_A_BOARD: (
        "The file this session was started on is not a kanban board; an operator must point "
        "KANBAN_DB/--db at the team's board. Tell them; retrying will not help."
    ),
    Reason.PERMISSION_DENIED: (
        "This user may not read the board file or a folder on its way; an operator must grant "
        "access or fix KANBAN_DB/--db. Tell them; retrying will not help."
    ),
    Reason.UNSUPPORTED_BACKEND: (
        "This kanban cannot open that database URL; an operator must fix KANBAN_DB/--db. "
        "Tell them; retrying will not help."
    ),
    Reason.NEWER_SCHEMA: (
        "The board was written by a newer kanban than this server; an operator must upgrade "
        "kanban. Tell them; retrying will not help."
    ),
    Reason.DISK_FULL: (
        "The disk holding the board is full; nothing was written. Tell an operator; the same "
        "call works again once space is freed."
    ),
    Reason.DATABASE_UNAVAILABLE: (
        "The board's database cannot be reached (its server is down or refused the login, or "
        "its file was removed); nothing was written. Try again in a while; if it lasts, tell "
        "an operator."
    ),
    Reason.NOT_LANDABLE: (
        "The task cannot land as it is (its why says: not reviewed, no worktree, nothing to land, "
        "already landed); call {preview_landing} to see why, and do not retry as is."
    ),
    Reason.MERGE_CONFLICT: (
        "The work conflicts with its base in the files named; the base is untouched. Next: "
        "{resolve_conflict}."
    ),
    Reason.VERIFICATION_FAILED: (
        "The verify command failed on the work merged with the latest base; nothing landed. "
        "Next: {fix_failure}."
    ),
    Reason.BASE_MOVED: (
        "The base branch kept moving while the landing verified; nothing landed. {land_again} "
        "in a moment."
    ),
    Reason.BASE_CHECKED_OUT_DIRTY: (
        "A checkout of the base branch holds a person's changes or files in the landing's way "
        "(the error names them and what to do); nothing landed or was touched. Tell an "
        "operator; land again once they have dealt with them."
    ),
    Reason.BUDGET_EXCEEDED: (
        "A budget over this task is spent and only an operator can raise it: stop working on "
        "it and {block_task}, then {claim_next} "
        "for other work. Retrying will not help."
    ),
    Reason.OPERATOR_ONLY: (
        "Only a person may do this (agents never set budgets or land unverified work); ask an "
        "operator. Retrying will not help."
    ),
    Reason.GATE_REQUIRED: (
        "The task's work is in its worktree: finish it with {complete_workspace}, which commits "
        "it and runs its verify gate (the plain complete would put it in review unverified)."
    ),
    Reason.BUSY: (
        "Transient: the board stayed busy and nothing was written; it is safe to retry the "
        "same call in a moment."
    ),
}

# Which details of a refusal choose its hint's wordings (`when`), by the refusal's reason, the
# first detail that has a wording first: the order is this table's, never the order of the
# refusal's details (a closed run's hint hung on its `status` coming before its `what`). A
# detail not named here changes no hint.
CHOSEN_BY: dict[str, tuple[str, ...]] = {
    # A closed run: how it closed (its status) says more than that it is not running.
    # A spent budget first: then no run starts, however this one closed.
    # A run whose cost is still taken: report it, whatever its status.
    Reason.NOT_FOUND: ("budgetSpent", "costPending", "status", "what"),
    # A replay's conflict (`why`) may land as one change before anyone need resolve it.
    Reason.MERGE_CONFLICT: ("why", "status"),
    Reason.VERIFICATION_FAILED: ("status",),
    # A stale epoch from the task's holder now: use the new one (`true`), not stop work.
    Reason.STALE_CLAIM: ("heldByYou",),
    # A worktree of another worktrees folder: nobody else's, so not "call claim_next".
    Reason.CONFLICT: ("why",),
}

_UNEXPECTED = (
    "Something outside the board's rules went wrong; call {get_task} to see where things stand, "
    "and tell an operator if it happens again."
)


UNEXPECTED_HINT = _UNEXPECTED.format_map(MCP_VERBS)
# A call to a tool the session does not list (`not_found`, whose own hint is about task ids).
UNKNOWN_TOOL_HINT = "Call one of the tools the message names (this session's tool list)."


def _word(value: str | bool) -> str:
    """A detail's value as `when` keys it: a flag as `true` or `false`."""
    return str(value).lower() if isinstance(value, bool) else value


def hint_for(
    reason: str, verbs: Mapping[str, str] = MCP_VERBS, document: Mapping[str, Any] | None = None
) -> str:
    """The next step for `reason`, naming the tools (or with `CLI_VERBS`, the commands), in the
    wording the refusal's `document` calls for where one is declared (`when`, read in the order
    `CHOSEN_BY` gives: a conflict at landing is its builder's to resolve while in review, an
    operator's once done); a reason this table does not know yet gets a safe default."""
    fields = CHOSEN_BY.get(reason, ())
    if document and fields:
        said = [(f, _word(document[f])) for f in fields if isinstance(document.get(f), str | bool)]
        verbs = {
            name: next(
                (verbs[key] for field, value in said if (key := when(name, field, value)) in verbs),
                text,
            )
            for name, text in verbs.items()
        }
    return HINTS.get(reason, _UNEXPECTED).format_map(verbs)
