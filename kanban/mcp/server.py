"""`kanban mcp`: the board's tools for agent runtimes (Claude Code, Codex, Cursor...) over MCP.

Each tool is one method of `BoardTools`, a thin call into the agent's `AgentSession` (and through it
into `boardlib.Board`). The method's docstring is the description the model reads, so it says when
to use the tool; parameter descriptions and bounds live in the `Annotated` types, from which the SDK
builds each tool's JSON schema.

Results are `CallToolResult`s built here rather than by the SDK: a result carries the board's
camelCase JSON both as structured content and as its text (many runtimes show the model only the
text), and a refusal is `is_error` with the board's reason, its message and a one-line hint of
what to do next (`hints.py`), with the whole error document as structured content. A refusal is
an answer, not a failure: the session goes on.
"""

import inspect
import json
import os
import re
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema
from pydantic_core import ErrorDetails

from boardlib import transitions
from boardlib.config import MAX_LEASE_MINUTES
from boardlib.errors import BoardError, Reason
from boardlib.inert import inert
from boardlib.location import DatabaseUrl
from boardlib.naming import snake
from boardlib.records import EXECUTION_OUTCOMES, LAND_STRATEGIES, TOKENS_MAX, USD_MAX
from boardlib.review import LINE_MAX, NOTES_MAX, PATH_MAX
from boardlib.store.base import StoreError
from boardlib.validation import EXECUTOR_MAX, NAME_MAX, TEXT_MAX, TITLE_MAX
from boardlib.worktrees.manager import BASE_REF_MAX, REPO_PATH_MAX
from boardlib.worktrees.results import GitFailure
from kanban.documents import one_line, verdicts_as_objects

from . import catalog
from .catalog import DEFAULT_TOOL_SET, TOOL_SETS, describe, instructions
from .hints import MCP_VERBS, UNKNOWN_TOOL_HINT, hint_for, inbox_action, mcp_verbs
from .session import LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, AgentSession, Doc

SERVER_NAME = "kanban"

# The parameter types, declared once: the SDK turns each into a JSON schema property with this
# description and these bounds (the board checks them again).
# An id comes from the board's own answers, so its listed schema is its type and an example:
# the bounds (1 to NAME_MAX characters) are still checked, and 24 tools stop paying for them.
TaskId = Annotated[
    str,
    Field(min_length=1, max_length=NAME_MAX),
    WithJsonSchema({"type": "string", "description": "e.g. TASK-12"}),
]
Team = Annotated[
    str | None,
    Field(
        description="Only tasks of this team (a task's teamId). Default: any team.",
        max_length=NAME_MAX,
    ),
]
Role = Annotated[
    str | None,
    Field(
        description="A role, e.g. worker (tasks with no role suit any). Default: this "
        "session's role.",
        max_length=NAME_MAX,
    ),
]
Title = Annotated[
    str, Field(description="A short imperative title.", min_length=1, max_length=TITLE_MAX)
]
Description = Annotated[
    str | None,
    Field(description="What done looks like: context, acceptance criteria.", max_length=TEXT_MAX),
]
Priority = Annotated[int, Field(description="Higher is claimed first.")]
AnchorPath = Annotated[
    str | None,
    Field(description="The file of the diff it is about.", min_length=1, max_length=PATH_MAX),
]
AnchorLine = Annotated[
    int | None, Field(description="The line of that file (new side).", ge=1, le=LINE_MAX)
]


# The handoff's own schema is boardlib's (`AgentHandoff`, checked when it is written); the listing
# names its fields, without the nested models pydantic would spell out.
HANDOFF_SCHEMA = {
    "type": "object",
    "description": "runtime (default: your client's name), completedSubtasks, brokenOrUnverified, "
    "nextBestStep, whyBlocked, commands {init, verify, start}, evidence {testResults, "
    "lintResults}, warnings, nativeSessionId; handoffFrom is you.",
}


class LineComment(BaseModel):
    """One review comment a reject carries."""

    model_config = ConfigDict(extra="forbid")
    path: Annotated[str, Field(min_length=1, max_length=PATH_MAX)]
    line: Annotated[int | None, Field(ge=1, le=LINE_MAX)] = None
    body: Annotated[str, Field(min_length=1, max_length=TEXT_MAX)]


ClaimedBy = Annotated[
    str | None,
    Field(description="Who may claim it (default: any role).", max_length=NAME_MAX),
]
DependsOn = Annotated[
    list[str] | None,
    Field(description="Tasks that must be done before this one is claimable."),
]
BudgetUsd = Annotated[
    float | None,
    Field(
        description="A dollar budget over this task and its subtasks.",
        ge=0,
        le=USD_MAX,
        allow_inf_nan=False,  # NaN is no number: said so, not `must be at most` (as HTTP's)
    ),
]
BudgetTokens = Annotated[
    int | None, Field(description="A token budget, likewise.", ge=0, le=TOKENS_MAX)
]
InputTokens = Annotated[int | None, Field(description="Input tokens.", ge=0, le=TOKENS_MAX)]
OutputTokens = Annotated[int | None, Field(description="Output tokens.", ge=0, le=TOKENS_MAX)]
CacheRead = Annotated[int | None, Field(description="Cache-read tokens.", ge=0, le=TOKENS_MAX)]
CacheWrite = Annotated[int | None, Field(description="Cache-write tokens.", ge=0, le=TOKENS_MAX)]
if TYPE_CHECKING:
    Status = str
    Strategy = str
    Outcome = str
else:  # the schema's enums come from the one list of statuses, of strategies and of outcomes
    Status = Literal[transitions.STATUSES]
    Strategy = Literal[LAND_STRATEGIES]
    Outcome = Literal[EXECUTION_OUTCOMES]

# What each tool does to the board, as MCP tool annotations (hints a runtime may use to decide
# what to run without asking): reads, changes, idempotent changes, additions. The board is a
# closed world.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
CHANGES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def answer(doc: Doc) -> CallToolResult:
    """A result: the board's JSON as the CLI prints it (verdicts as objects), as structured
    content and, for runtimes that show the model only text, as the text."""
    doc = verdicts_as_objects(doc)
    text = one_line(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=doc)


def refusal(
    reason: str,
    message: str,
    document: dict[str, Any],
    verbs: Mapping[str, str] = MCP_VERBS,
    *,
    hint: str | None = None,
) -> CallToolResult:
    """A refusal as a tool error: `<reason>: <message>` and the next step on the line below,
    naming only tools the session lists (`verbs`, from `hints.mcp_verbs`; `hint` instead of the
    reason's own where that would mislead) and fitting what the refusal says (the task's status,
    what was not found). The message names agent text (titles, file names) and is made inert:
    one line, so nothing in it can pose as the `Next:` line."""
    hint = hint if hint is not None else hint_for(reason, verbs, document)
    text = f"{reason}: {inert(message)}\nNext: {hint}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={**document, "hint": hint},
        is_error=True,
    )


def call_board(work: Callable[[], Doc], verbs: Mapping[str, str] = MCP_VERBS) -> CallToolResult:
    """Run one board call and turn its outcome into a tool result. A refusal (`BoardError`) or an
    environment failure (an unreadable file, a broken database) is a tool error the model can
    read; anything else is a bug, left to the SDK (a generic tool error, the traceback logged)."""
    try:
        return answer(work())
    except BoardError as refused:
        document = refused.to_dict()
        document["error"] = with_validation(refused.message, document.get("details"))
        return refusal(refused.reason.value, document["error"], document, verbs)
    except GitFailure as failed:  # a landing's or a sync's git command failed
        document = failed.to_dict()
        return refusal("git_failed", str(failed), document, verbs)
    except StoreError as gone:  # the database went away under the session (PostgreSQL)
        return refusal(gone.reason, gone.message, gone.to_dict(), verbs)
    except sqlite3.Error as broken:
        message = f"database error: {broken}"
        return refusal("unexpected", message, {"error": message, "reason": "unexpected"}, verbs)
    except OSError as broken:
        where = f": {broken.filename}" if broken.filename else ""
        message = f"{broken.strerror or broken}{where}"
        return refusal("unexpected", message, {"error": message, "reason": "unexpected"}, verbs)


def with_validation(message: str, details: Any) -> str:
    """`message` with what a validation's `details` ({formErrors, fieldErrors}, as the board
    flattens a handoff's) says is wrong: many runtimes show the model only the text, where
    "invalid handoff" alone names nothing to fix."""
    if not isinstance(details, dict):
        return message
    problems = [str(problem) for problem in details.get("formErrors") or ()]
    for field, said in (details.get("fieldErrors") or {}).items():
        problems += [f"{field}: {problem}" for problem in said]
    return f"{message}: {'; '.join(problems)}" if problems else message


def runtime_name(ctx: Context) -> str | None:
    """The client's name from its handshake (`claude-code`, `cursor`...), recorded on a claim as
    the task's runtime so operators see what holds it. Trimmed to a name the board accepts."""
    try:
        params = ctx.session.client_params
    except ValueError:  # called outside a client's request (in-process, by the server itself)
        return None
    name = params.client_info.name.strip()[:NAME_MAX] if params is not None else ""
    return name or None


class BoardTools:
    """The tools, one method each; `tools` builds them under their method names, for one of the
    tool sets of `catalog.TOOL_SETS`.

    Docstrings are the descriptions a model reads; `{lease}`, `{lease_short}` and the caps'
    `{names}` in them become this board's settings (`descriptions`).
    """

    HOLDER_TOOLS = ("heartbeat", "log_progress", "extend_lease")

    def __init__(self, session: AgentSession, tool_set: str = DEFAULT_TOOL_SET) -> None:
        self.session = session
        self.listed = TOOL_SETS[tool_set]
        self.verbs = mcp_verbs(self.listed)  # a refusal's hint names only these tools

    def call(self, work: Callable[[], Doc]) -> CallToolResult:
        return call_board(work, self.verbs)

    # -- claiming and the lease ------------------------------------------------------------------

    def claim_next(self, ctx: Context, role: Role = None, team_id: Team = None) -> CallToolResult:
        """Claim the best ready task for your role. Returns the task (keep its id); when nothing
        is claimable it returns {"task": null}, not an error: call explain to learn why, or wait
        and try again; "heldByYou" lists tasks still yours. {lease}"""
        runtime = runtime_name(ctx)
        return self.call(lambda: self.session.claim_next(role, team_id=team_id, runtime=runtime))

    def heartbeat(self, task_id: TaskId) -> CallToolResult:
        """Renew the lease on a task you hold, without a note. Use it during long steps with
        nothing to report. {lease_short}"""
        return self.call(lambda: self.session.heartbeat(task_id))

    def log_progress(
        self,
        task_id: TaskId,
        note: Annotated[
            str,
            Field(description="What you did or found (kept as a comment).", max_length=TEXT_MAX),
        ],
    ) -> CallToolResult:
        """Record progress on a task you hold (kept as a comment) and renew its lease. Prefer it
        over heartbeat whenever there is something to say. {lease_short}"""
        return self.call(lambda: self.session.log_progress(task_id, note))

    def extend_lease(
        self,
        task_id: TaskId,
        minutes: Annotated[
            float | None,
            Field(
                description="New lease length from now, in minutes (default: the board's lease).",
                gt=0,
                le=MAX_LEASE_MINUTES,
                allow_inf_nan=False,
            ),
        ] = None,
    ) -> CallToolResult:
        """Set the lease on a task you hold to now + minutes, before one long quiet step (a build,
        a long test run). {lease_short}"""
        return self.call(lambda: self.session.extend_lease(task_id, minutes))

    # -- finishing -------------------------------------------------------------------------------

    def complete_task(
        self,
        task_id: TaskId,
        summary: Annotated[
            str | None,
            Field(
                description="What you did and how to check it (kept as a comment for the "
                "reviewer).",
                max_length=TEXT_MAX,
            ),
        ] = None,
    ) -> CallToolResult:
        """Finish a task you hold: it goes to in_review with no owner, for another agent or a
        person to approve or reject. You cannot approve it yourself. Call it when the work is
        done and checked."""
        return self.call(lambda: self.session.complete_task(task_id, summary))

    def block_task(
        self,
        task_id: TaskId,
        reason: Annotated[
            str,
            Field(
                description="Why you cannot go on and what would unblock it.",
                max_length=TEXT_MAX,
            ),
        ],
    ) -> CallToolResult:
        """Stop work on a task you hold because something outside your reach is missing (access,
        a decision, a broken dependency). The task is blocked with your reason and the lease
        ends; an operator unblocks it."""
        return self.call(lambda: self.session.block_task(task_id, reason))

    def release_task(self, task_id: TaskId) -> CallToolResult:
        """Give a task you hold back to todo, untouched or handed over, for another agent to
        claim. Use it when you cannot or should not finish it yourself."""
        return self.call(lambda: self.session.release_task(task_id))

    # -- the run ledger --------------------------------------------------------------------------

    def start_run(
        self,
        task_id: TaskId,
        executor: Annotated[
            str,
            Field(description="What runs: claude-code, codex, a script.", max_length=EXECUTOR_MAX),
        ],
        reason: Annotated[str | None, Field(description="Why this run.", max_length=2000)] = None,
    ) -> CallToolResult:
        """Open a run on a task you hold before you spend tokens on it; keep its id for
        finish_run. Refused with budget_exceeded when a budget over the task is spent: stop,
        block_task saying so; retrying will not help."""
        return self.call(lambda: self.session.start_run(task_id, executor, reason))

    def finish_run(
        self,
        execution_id: Annotated[
            str, Field(description="The id start_run returned.", max_length=NAME_MAX)
        ],
        status: Annotated[Outcome, Field(description="How the run ended.")],
        cost_usd: Annotated[
            float | None,
            Field(description="What it cost.", ge=0, le=USD_MAX, allow_inf_nan=False),
        ] = None,
        input_tokens: InputTokens = None,
        output_tokens: OutputTokens = None,
        cache_read: CacheRead = None,
        cache_write: CacheWrite = None,
        summary: Annotated[
            str | None, Field(description="What the run did.", max_length=TEXT_MAX)
        ] = None,
    ) -> CallToolResult:
        """Close your run once with its cost and tokens. If that spends a budget the cost is
        kept, the task is blocked and the answer's budgetExceeded names the budget: stop work
        on it."""
        return self.call(
            lambda: self.session.finish_run(
                execution_id,
                status,
                cost_usd=cost_usd,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cache_read=cache_read,
                cache_write=cache_write,
                summary=summary,
            )
        )

    # -- reading ---------------------------------------------------------------------------------

    def get_task(
        self,
        task_id: TaskId,
        detail: Annotated[
            bool,
            Field(
                description="Also return comments, parents, dependencies both ways, runs and "
                "workspaces (use it before reviewing)."
            ),
        ] = False,
    ) -> CallToolResult:
        """Read one task: its status, holder, lease (leaseUntil, epoch milliseconds) and fields;
        with detail=true, everything around it."""
        return self.call(lambda: self.session.get_task(task_id, detail=detail))

    def list_tasks(
        self,
        status: Annotated[Status | None, Field(description="Only tasks in this status.")] = None,
        ready: Annotated[
            bool, Field(description="Only claimable tasks, in the order claim_next takes them.")
        ] = False,
        role: Annotated[
            str | None, Field(description="Only tasks for this role.", max_length=NAME_MAX)
        ] = None,
        mine: Annotated[bool, Field(description="Only tasks you hold.")] = False,
        limit: Annotated[
            int, Field(description="How many tasks at most in this page.", ge=1, le=LIST_LIMIT_MAX)
        ] = LIST_LIMIT_DEFAULT,
    ) -> CallToolResult:
        """List tasks, newest change first (ready=true: in claim order). Returns one page
        (tasks, count, truncated: narrow with the filters). Use it to find work to review
        (status=in_review) or to see the board."""
        return self.call(
            lambda: self.session.list_tasks(
                status=status, ready=ready, role=role, mine=mine, limit=limit
            )
        )

    def explain(
        self,
        task_id: TaskId | None = None,
        role: Role = None,
    ) -> CallToolResult:
        """Say why nothing is claimable for you (no task_id: what the todo column waits on, and
        when the next lease runs out), or why one task is or is not claimable (its status,
        holder, lease, unfinished dependencies, role)."""
        return self.call(lambda: self.session.explain(task_id, role))

    # -- creating --------------------------------------------------------------------------------

    def create_task(
        self,
        title: Title,
        description: Description = None,
        priority: Priority = 0,
        role: ClaimedBy = None,
        depends_on: DependsOn = None,
        budget_usd: BudgetUsd = None,
        budget_tokens: BudgetTokens = None,
    ) -> CallToolResult:
        """File a new top-level task in todo, for any agent to claim. Only for work that is
        really separate from yours; to split your own task, use create_subtask. The board takes
        at most {root_create_limit} new top-level tasks per {root_window} (cap_exceeded)."""
        return self.call(
            lambda: self.session.create_task(
                title,
                description=description,
                priority=priority,
                role=role,
                depends_on=depends_on or (),
                budget_usd=budget_usd,
                budget_tokens=budget_tokens,
            )
        )

    def create_subtask(
        self,
        parent_task_id: TaskId,
        title: Title,
        description: Description = None,
        priority: Priority = 0,
        role: ClaimedBy = None,
        depends_on: DependsOn = None,
        budget_usd: BudgetUsd = None,
        budget_tokens: BudgetTokens = None,
    ) -> CallToolResult:
        """File a subtask under a parent task, in todo, for any agent to claim. The board caps
        delegation: a parent chain at most {max_depth} deep, {max_live_children} unfinished
        children per parent (cap_exceeded past either); do small work yourself instead of
        splitting it."""
        return self.call(
            lambda: self.session.create_task(
                title,
                description=description,
                priority=priority,
                role=role,
                depends_on=depends_on or (),
                parent_task_id=parent_task_id,
                budget_usd=budget_usd,
                budget_tokens=budget_tokens,
            )
        )

    # -- collaborating ---------------------------------------------------------------------------

    def add_comment(
        self,
        task_id: TaskId,
        body: Annotated[
            str, Field(description="The comment, plain text.", min_length=1, max_length=TEXT_MAX)
        ],
        path: AnchorPath = None,
        line: AnchorLine = None,
    ) -> CallToolResult:
        """Leave a comment on any task (a question, a finding, a note for its holder or
        reviewer); with path and line, a review comment on that line of its diff. It does not
        renew a lease."""
        return self.call(lambda: self.session.add_comment(task_id, body, path=path, line=line))

    def link_dependency(
        self,
        task_id: TaskId,
        depends_on: Annotated[
            str,
            Field(
                description="The task that must be done first.",
                min_length=1,
                max_length=NAME_MAX,
            ),
        ],
    ) -> CallToolResult:
        """Make task_id wait until depends_on is done: it is not claimable before. A link that
        would close a cycle is refused (dependency_cycle)."""
        return self.call(lambda: self.session.link_dependency(task_id, depends_on))

    # -- reviewing -------------------------------------------------------------------------------

    def approve_task(self, task_id: TaskId) -> CallToolResult:
        """Accept finished work another agent completed: in_review becomes done. Read it first
        (get_task with detail=true). Never approve your own work (self_review): nobody who
        held the task may."""
        return self.call(lambda: self.session.approve_task(task_id))

    def reject_task(
        self,
        task_id: TaskId,
        reason: Annotated[
            str,
            Field(
                description="What must change (kept as a comment for the next attempt).",
                min_length=1,
                max_length=TEXT_MAX,
            ),
        ],
        comments: Annotated[
            list[LineComment] | None,
            Field(
                description="Review comments on lines of the diff, kept with the reason.",
                max_length=NOTES_MAX,
            ),
        ] = None,
    ) -> CallToolResult:
        """Send finished work another agent completed back to todo for a fresh attempt, saying
        what must change (and where: comments). Never judge your own work (self_review)."""
        notes = [note.model_dump(exclude_none=True) for note in comments or ()]
        return self.call(lambda: self.session.reject_task(task_id, reason, comments=notes))

    # -- landing ---------------------------------------------------------------------------------

    def land_task(
        self,
        task_id: TaskId,
        strategy: Annotated[
            Strategy,
            Field(
                description="squash: one commit titled with the task; rebase: its commits "
                "replayed on the base; merge: a merge commit."
            ),
        ] = "squash",
        into: Annotated[
            str | None,
            Field(
                description="The branch to land on (default: the task's base branch).",
                max_length=NAME_MAX,
            ),
        ] = None,
        dry_run: Annotated[
            bool,
            Field(description="Build and verify the landing, report it, and change nothing."),
        ] = False,
    ) -> CallToolResult:
        """Land a reviewed task's work on its base branch, merged onto the base's tip and
        verified first: in_review work is approved and landed as one decision (done only if it
        lands), done work is landed. Read it first (get_task with detail=true; preview_landing).
        Never land your own work (self_review). A conflict (merge_conflict) or failed
        verification leaves the base untouched."""
        return self.call(
            lambda: self.session.land_task(task_id, strategy=strategy, into=into, dry_run=dry_run)
        )

    def preview_landing(
        self,
        task_id: TaskId,
        strategy: Annotated[
            Strategy,
            Field(description="As land_task's (rebase may conflict where squash does not)."),
        ] = "squash",
    ) -> CallToolResult:
        """Say whether a task's work would land cleanly on its base branch now: clean (onto
        which commit), conflicts (which files), how far the base moved, or why it cannot land.
        Reads only; verifies nothing."""
        return self.call(lambda: self.session.preview_landing(task_id, strategy=strategy))

    def provision_workspace(
        self,
        task_id: TaskId,
        repo_path: Annotated[
            str,
            Field(
                description="The git repository to branch from.",
                min_length=1,
                max_length=REPO_PATH_MAX,
            ),
        ],
        base_ref: Annotated[
            str, Field(description="The branch point.", min_length=1, max_length=BASE_REF_MAX)
        ] = "HEAD",
    ) -> CallToolResult:
        """Give a code task you hold its own git worktree and branch (reused if it has one).
        Change files only under the answer's worktree.worktreePath, never in the repository;
        finish with complete_workspace."""
        return self.call(
            lambda: self.session.provision_workspace(task_id, repo_path, base_ref=base_ref)
        )

    def write_handoff(
        self,
        ctx: Context,
        task_id: TaskId,
        handoff: Annotated[dict[str, Any], WithJsonSchema(HANDOFF_SCHEMA)],
    ) -> CallToolResult:
        """Write AGENT_HANDOFF.json, the clock-out file anyone resumes from, into the worktree
        of a task you hold; its commands.verify is what the gate runs at complete_workspace."""
        runtime = runtime_name(ctx)
        return self.call(lambda: self.session.write_handoff(task_id, handoff, runtime=runtime))

    def resume_workspace(self, task_id: TaskId) -> CallToolResult:
        """Read a task's worktree as a cold resume: its path (workspace.worktreePath), the
        handoff, the state rebuilt from its files, and reviewers' comments on lines."""
        return self.call(lambda: self.session.resume_workspace(task_id))

    def complete_workspace(
        self,
        task_id: TaskId,
        summary: Annotated[
            str | None, Field(description="What you did (kept as a comment).", max_length=TEXT_MAX)
        ] = None,
    ) -> CallToolResult:
        """Finish a code task you hold (not complete_task): its worktree is committed and the
        gate runs the verify command there. verified pass: done, for a reviewer to land; fail:
        back to you with the output (fix it, call again) until attempts run out, then blocked;
        debt (no verify command): blocked for an operator."""
        return self.call(lambda: self.session.complete_workspace(task_id, summary))

    def sync_workspace(
        self,
        task_id: TaskId,
        strategy: Annotated[
            Literal["merge", "rebase"],
            Field(
                description="merge: merge the base's tip into your task branch; rebase: "
                "rebase your branch onto it."
            ),
        ] = "merge",
    ) -> CallToolResult:
        """Bring the latest base branch into the worktree of a task you hold, before you finish
        or after a landing conflicted. Uncommitted work is committed first. Conflicts are left
        in the worktree (merge_conflict names the files): resolve them, then complete_workspace
        again."""
        return self.call(lambda: self.session.sync_workspace(task_id, strategy=strategy))

    def inbox(self) -> CallToolResult:
        """What needs a person or a judge now, oldest first, but for your own work: tasks in
        review, blocked, passed with debt, done but not landed, refused landings, lapsed leases,
        held deliveries. Each item: taskId, kind, why, since (epoch ms), its action."""

        def with_tools() -> Doc:
            answer = self.session.inbox()
            for item in answer["items"]:
                item["action"] = inbox_action(item["action"], self.listed)
            return answer

        return self.call(with_tools)

    # -- registration ----------------------------------------------------------------------------

    TOOLS: dict[str, ToolAnnotations] = {
        "claim_next": CHANGES,
        "heartbeat": IDEMPOTENT,
        "log_progress": ADDS,
        "extend_lease": IDEMPOTENT,
        "complete_task": CHANGES,
        "block_task": CHANGES,
        "release_task": CHANGES,
        "start_run": ADDS,
        "finish_run": CHANGES,
        "get_task": READ_ONLY,
        "list_tasks": READ_ONLY,
        "explain": READ_ONLY,
        "create_task": ADDS,
        "create_subtask": ADDS,
        "add_comment": ADDS,
        "link_dependency": IDEMPOTENT,
        "approve_task": CHANGES,
        "reject_task": CHANGES,
        "land_task": CHANGES,
        "preview_landing": READ_ONLY,
        "provision_workspace": IDEMPOTENT,
        "write_handoff": IDEMPOTENT,
        "resume_workspace": READ_ONLY,
        "complete_workspace": CHANGES,
        "sync_workspace": CHANGES,
        "inbox": READ_ONLY,
    }

    def descriptions(self, names: tuple[str, ...] = catalog.TOOLS) -> dict[str, str]:
        """Each tool's description: its docstring on one line, with this board's settings."""
        return {name: describe(self.template(name), self.session.config) for name in names}

    @classmethod
    def template(cls, name: str) -> str:
        """A tool's description before the board's settings: its docstring on one line."""
        return " ".join((getattr(cls, name).__doc__ or "").split())

    def parameters(self, names: tuple[str, ...] = catalog.TOOLS) -> dict[str, tuple[str, ...]]:
        """Each tool's parameter names as the model sees them, in signature order (the SDK fills
        a `Context` parameter itself)."""
        return {
            name: tuple(
                parameter.name
                for parameter in inspect.signature(getattr(self, name)).parameters.values()
                if parameter.annotation is not Context
            )
            for name in names
        }

    def tools(self, tool_set: str = DEFAULT_TOOL_SET) -> list[Tool]:
        """The tools of `tool_set`, each with its description and a compact input schema."""
        return [
            tool.model_copy(update={"parameters": compact_schema(tool.parameters)})
            for tool in (
                Tool.from_function(
                    getattr(self, name),
                    name=name,
                    description=description,
                    annotations=self.TOOLS[name],
                )
                for name, description in self.descriptions(TOOL_SETS[tool_set]).items()
            )
        ]


# Bounds that are sanity ceilings against runaway input, not limits a call plans around: a
# string's length (ids, names, texts: 100 to 20,000 characters) and a number's bound from a
# billion up (USD_MAX, TOKENS_MAX, LINE_MAX). Bounds a model does plan around stay listed: a
# page's `limit`, a lease's `minutes`, how many comments a reject carries, `minLength: 1`.
SANITY_CEILING = 10**9


def _sanity_ceiling(key: str, value: Any) -> bool:
    if key == "maxLength":
        return True
    return key == "maximum" and isinstance(value, (int, float)) and value >= SANITY_CEILING


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema pydantic generates, without what only costs a model's context: the
    `title` of the schema and of each property (the name again, "Task Id"), for an optional
    parameter the `anyOf [T, null]` with `default: null` (it is simply not required), and the
    sanity ceilings (`_sanity_ceiling`). Defaults that say something (`false`, `50`) stay.
    Arguments are still validated by the tool's pydantic model, so a client that sends `null` for
    an optional parameter, or 30,000 characters for a note, is answered as before. The models a
    parameter refers to (`$defs`, reject_task's LineComment) are compacted alike: they once kept
    both."""
    compact = {key: value for key, value in schema.items() if key != "title"}
    if "properties" in schema:
        compact["properties"] = {
            name: _compact_property(spec) for name, spec in schema["properties"].items()
        }
    if "$defs" in schema:
        compact["$defs"] = {name: compact_schema(model) for name, model in schema["$defs"].items()}
    return compact


def _compact_property(spec: dict[str, Any]) -> dict[str, Any]:
    """One property without its title or sanity ceilings, and an optional one (`anyOf [T,
    null]`, `default: null`) as plain T."""
    spec = {
        key: value
        for key, value in spec.items()
        if key != "title" and not _sanity_ceiling(key, value)
    }
    options = spec.get("anyOf")
    if (
        isinstance(options, list)
        and len(options) == 2
        and {"type": "null"} in options
        and "default" in spec
        and spec["default"] is None
    ):
        (kept,) = [
            {key: value for key, value in option.items() if not _sanity_ceiling(key, value)}
            for option in options
            if option != {"type": "null"}
        ]
        rest = {key: value for key, value in spec.items() if key not in ("anyOf", "default")}
        spec = {**kept, **rest}
    return spec


class BoardServer(MCPServer):
    """The SDK's server with every bad call answered as a board refusal, in the one place all
    tool calls pass (`call_tool`: the stdio handler and an embedding caller alike):

    - a tool this session does not list is `not_found`, naming the tools it has (the SDK says
      only "Unknown tool: X");
    - an argument the tool does not take is `invalid_input` naming it, instead of being dropped
      silently (the SDK's default): a model passing `agent`, or a filter list_tasks does not
      have, learns so at once rather than acting on an answer it misreads;
    - arguments that fail the tool's input schema (the SDK's pydantic validation, before the
      tool runs) are `invalid_input` saying in plain words which argument is wrong and how
      (`title must not be empty`), instead of pydantic's dump.

    Each is `<reason>: <message>`, a `Next:` line and the error document as structured content,
    like a refusal from the board; none reaches the board, and the session goes on."""

    def __init__(
        self,
        *args: Any,
        parameters: dict[str, tuple[str, ...]],
        verbs: Mapping[str, str] = MCP_VERBS,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.parameters = parameters  # the tools this session lists -> their argument names
        self.schemas = {tool.name: tool.parameters for tool in kwargs.get("tools") or ()}
        self.verbs = verbs

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        known = self.parameters.get(name)
        if known is None:
            return self.unknown_tool(name)
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            message = (
                f"{name} takes no argument {', '.join(map(repr, unknown))}; "
                f"its arguments: {', '.join(known) or 'none'}"
            )
            return self.invalid_input(message, unknown=unknown)
        mistyped = wrong_types(arguments, self.schemas.get(name, {}))
        if mistyped:
            fields = [field for field, _ in mistyped]
            message = "; ".join(problem for _, problem in mistyped)
            return self.invalid_input(message, field=fields[0], fields=fields)
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as failed:
            # The SDK raises a ToolError caused by the ValidationError for arguments that fail
            # the input schema, and only for those (a crash is an UnexpectedToolError, a
            # ToolError the tool raised is the cause of its own wrapper).
            errors = failed.__cause__
            if isinstance(failed, UnexpectedToolError) or not isinstance(errors, ValidationError):
                raise
            problems = [
                (argument_path(error["loc"]), plain_problem(error)) for error in errors.errors()
            ]
            fields = list(dict.fromkeys(path for path, _ in problems))
            message = "; ".join(problem for _, problem in problems)
            return self.invalid_input(message, field=fields[0], fields=fields)
        return self.named_as_taken(result, known)

    def named_as_taken(
        self, result: CallToolResult | InputRequiredResult, known: tuple[str, ...]
    ) -> CallToolResult | InputRequiredResult:
        """A board refusal naming a field in its JSON's camelCase (`repoPath`) names it as the
        tool takes it (`repo_path`), in the message and its `field`, where the tool takes it. Fields
        of an argument's own object (a handoff's `handoffFrom`) keep their names."""
        if not isinstance(result, CallToolResult) or not result.is_error:
            return result
        document = result.structured_content
        field = document.get("field") if document else None
        taken = snake(field) if isinstance(field, str) else None
        if document is None or taken is None or taken == field or taken not in known:
            return result
        said = re.sub(rf"\b{re.escape(str(field))}\b", taken, str(document["error"]), count=1)
        renamed = {key: value for key, value in document.items() if key != "hint"}
        renamed |= {"error": said, "field": taken}
        return refusal(str(document["reason"]), said, renamed, self.verbs)

    def invalid_input(self, message: str, **details: Any) -> CallToolResult:
        reason = Reason.INVALID_INPUT.value
        return refusal(reason, message, {"error": message, "reason": reason, **details}, self.verbs)

    def unknown_tool(self, name: str) -> CallToolResult:
        tools = list(self.parameters)
        message = f"this session has no tool {name!r}; its tools: {', '.join(tools)}"
        reason = Reason.NOT_FOUND.value
        document = {"error": message, "reason": reason, "tool": name, "tools": tools}
        return refusal(reason, message, document, self.verbs, hint=UNKNOWN_TOOL_HINT)


_WANTED = {"integer": "a whole number", "number": "a number", "string": "a string",
           "boolean": "true or false", "array": "an array", "object": "an object"}  # fmt: skip


def _of_type(value: Any, wanted: str) -> bool:
    if wanted == "integer":
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        return whole and not isinstance(value, bool)
    if wanted == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    kinds = {"string": str, "boolean": bool, "array": list, "object": dict}
    return wanted not in kinds or isinstance(value, kinds[wanted])


def wrong_types(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Arguments whose JSON type is not the one their schema names: the SDK's pydantic is lax,
    and took `true` for 1 token, "12" for 12 and "yes" for true, where HTTP refuses them. A whole
    number written 5.0 stays an integer (as zod takes it); null is pydantic's to judge. Items of
    a list and fields of an object are judged alike (reject_task's comments: "3" was line 3)."""
    properties = schema.get("properties", {})
    definitions = schema.get("$defs", {})
    problems = []
    for name, value in arguments.items():
        problems += _mistyped((name,), value, properties.get(name, {}), definitions)
    return problems


def _mistyped(
    loc: tuple[int | str, ...], value: Any, spec: Mapping[str, Any], definitions: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """`value` at `loc` against its schema `spec`, and what it holds against theirs. A nested
    list or object of the wrong kind is left to pydantic, which coerces no scalar into one and
    says what else is wrong around it."""
    reference = spec.get("$ref")
    if isinstance(reference, str):
        spec = definitions.get(reference.rsplit("/", 1)[-1], {})
    wanted = spec.get("type")
    if value is None or not isinstance(wanted, str):
        return []
    if not _of_type(value, wanted):
        if len(loc) > 1 and wanted in ("array", "object"):
            return []
        where = argument_path(loc)
        return [(where, f"{where} must be {_WANTED.get(wanted, wanted)}")]
    problems = []
    if wanted == "array":
        for index, item in enumerate(value):
            problems += _mistyped((*loc, index), item, spec.get("items", {}), definitions)
    elif wanted == "object":
        fields = spec.get("properties", {})
        for key, item in value.items():
            if key in fields:
                problems += _mistyped((*loc, key), item, fields[key], definitions)
    return problems


def argument_path(loc: tuple[int | str, ...]) -> str:
    """Where in the arguments an error is, as a model would write it: `title`, `depends_on[1]`,
    `comments[0].path`. A key that is not a plain name (a model's typo) is quoted."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.isidentifier():
            path += f".{part}" if path else part
        else:
            path += f"[{part!r}]"
    return path or "the arguments"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


# What pydantic's error types mean, in plain words after the argument's path. `{...}` are the
# error's context (its bounds); a type not listed keeps pydantic's own one-line message.
PROBLEMS: dict[str, str] = {
    "missing": "is required",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "literal_error": "must be one of {expected}",
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "string_too_long": "must be at most {max_length} characters",
    "too_long": "must have at most {max_length} items",
}


def plain_problem(error: ErrorDetails) -> str:
    """One pydantic error as `<argument> <what is wrong>`, without the value the model sent or
    pydantic's link: `title must not be empty`, `limit must be at most 200`."""
    loc = tuple(error["loc"])
    kind = error["type"]
    bounds = {key: _number(value) for key, value in (error.get("ctx") or {}).items()}
    if kind == "extra_forbidden" and loc:
        return f"{argument_path(loc[:-1])} takes no field {str(loc[-1])!r}"
    where = argument_path(loc)
    if kind in ("string_too_short", "too_short"):
        if bounds.get("min_length") == "1":
            return f"{where} must not be empty"
        unit = "characters" if kind == "string_too_short" else "items"
        return f"{where} must have at least {bounds.get('min_length')} {unit}"
    if kind in PROBLEMS:
        try:
            return f"{where} {PROBLEMS[kind].format_map(bounds)}"
        except KeyError:  # a bound this pydantic does not report: its own words
            pass
    message = " ".join(error["msg"].split())
    return f"{where}: {message[:1].lower()}{message[1:]}"


def build_server(session: AgentSession, tool_set: str = DEFAULT_TOOL_SET) -> MCPServer:
    """The server for one session, listing the tools of `tool_set` (see `catalog.TOOL_SETS`)."""
    board_tools = BoardTools(session, tool_set)
    return BoardServer(
        SERVER_NAME,
        instructions=instructions(session.agent, session.config.lease_ms, tool_set),
        version=_version(),
        log_level="DEBUG" if os.environ.get("KANBAN_DEBUG", "") not in ("", "0") else "WARNING",
        tools=board_tools.tools(tool_set),
        parameters=board_tools.parameters(TOOL_SETS[tool_set]),
        verbs=board_tools.verbs,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kanban")
    except PackageNotFoundError:
        return "0"


def serve_stdio(
    location: str | Path | DatabaseUrl,
    agent: str,
    *,
    role: str | None = None,
    create: bool = False,
    tool_set: str = DEFAULT_TOOL_SET,
) -> None:
    """Serve one agent's session over stdin/stdout until the client closes it. `create`: the
    first call may create the board (the per-user default only, as the CLI does); `tool_set`:
    which tools it lists (`catalog.TOOL_SETS`)."""
    session = AgentSession(location, agent, role=role, create=create)
    try:
        build_server(session, tool_set).run("stdio")
    finally:
        session.close()
