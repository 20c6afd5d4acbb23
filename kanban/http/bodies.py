"""Request bodies: seed 003's zod schemas as pydantic models, plus the lease verbs' bodies.

Field names are the seed's camelCase; limits come from `boardlib.validation` and the worktree
subsystem, so every surface refuses the same input. A length the seed states is counted as zod
counts it (UTF-16 code units: `js_max`). Unknown fields of the seed's bodies are dropped, as a zod
object drops them; the board's own bodies refuse them (a misspelt `agent` is an error). Types are
strict: `"5"` is not a priority, though `5.0` is (the seed's `z.number().int()` takes it).
The board validates again when it is called; these models exist so a bad body gets seed 003's
400 with per-field details, and so `/openapi.json` describes every body exactly.
"""

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    WithJsonSchema,
    model_validator,
)

from boardlib import transitions as t
from boardlib.budgets import KEEP
from boardlib.config import DEFAULT_LEASE_MINUTES, MAX_LEASE_MINUTES
from boardlib.models import AgentHandoff, HandoffCommands, HandoffEvidence, RoomCursor
from boardlib.naming import camel
from boardlib.records import (
    ANCHOR_SIDES,
    AUTHOR_TYPES,
    EXECUTION_OUTCOMES,
    LAND_STRATEGIES,
    TOKENS_MAX,
    USD_MAX,
)
from boardlib.review import LINE_MAX, LINE_TEXT_MAX, NOTES_MAX, PATH_MAX
from boardlib.validation import EXECUTOR_MAX, NAME_MAX, TEXT_MAX, TITLE_MAX, utf16_units, whole
from boardlib.worktrees.manager import BASE_REF_MAX, KIND_MAX, REPO_PATH_MAX

# The 64-bit bounds are -2**63 and (exclusive) 2**63: both exact as a JSON double, where 2**63 - 1
# is not. A whole number's bounds go before `WholeNumber` in its `Annotated`: after it, pydantic
# kept them out of the integer schema, so /openapi.json said `ge`/`lt` (no JSON Schema keyword: a
# client never saw the bound) and the 400 named 2**63 rounded through a float.
INT64 = 2**63
WholeNumber = BeforeValidator(whole)


def _status(value: str) -> str:
    if not t.is_status(value):
        raise ValueError(f"must be one of {', '.join(t.STATUSES)}")
    return value


def _one_of(allowed: tuple[str, ...]) -> Any:
    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value

    return AfterValidator(check)


# A query flag's two spellings (seed 003: `ready=true`, `includeDropped=true`).
QUERY_FLAGS = {"true": True, "false": False}


def _flag(value: Any) -> bool:
    """Pydantic would take `yes`, `1`, `on`, `t` as true too, where the seed reads anything but
    `'true'` as false: one request, two readings. Only the two spellings are taken."""
    if isinstance(value, str) and value in QUERY_FLAGS:
        return QUERY_FLAGS[value]
    raise ValueError(f"must be {' or '.join(QUERY_FLAGS)}")


QueryFlag = Annotated[bool, BeforeValidator(_flag)]

Status = Annotated[
    str, AfterValidator(_status), Field(json_schema_extra={"enum": list(t.STATUSES)})
]
AuthorType = Annotated[
    str, _one_of(AUTHOR_TYPES), Field(json_schema_extra={"enum": list(AUTHOR_TYPES)})
]
Outcome = Annotated[
    str,
    _one_of(EXECUTION_OUTCOMES),
    Field(json_schema_extra={"enum": list(EXECUTION_OUTCOMES)}),
]
Side = Annotated[str, _one_of(ANCHOR_SIDES), Field(json_schema_extra={"enum": list(ANCHOR_SIDES)})]
AnchorPath = Annotated[
    str, Field(min_length=1, max_length=PATH_MAX, description="The file, from the repository's top")
]
AnchorLine = Annotated[
    int, Field(ge=1, le=LINE_MAX, description="The line of the file"), WholeNumber
]
LineText = Annotated[
    str, Field(max_length=LINE_TEXT_MAX, description="The line's text, to find it after edits")
]


def js_max(limit: int) -> AfterValidator:
    """At most `limit` as seed 003's zod `.max(limit)` counts: JavaScript's string length, in
    UTF-16 code units, so 251 emoji are over a 500 limit. Beside the field's `max_length`, which
    /openapi.json states and which counts characters (a string over it is over this too)."""

    def check(value: str) -> str:
        units = utf16_units(value)
        if units > limit:
            raise ValueError(
                f"String should have at most {limit} characters as JavaScript counts them "
                f"(UTF-16 code units; a character beyond U+FFFF, as most emoji are, is two): "
                f"this one has {units}"
            )
        return value

    return AfterValidator(check)


Name = Annotated[str, Field(min_length=1, max_length=NAME_MAX)]
Title = Annotated[str, Field(min_length=1, max_length=TITLE_MAX), js_max(TITLE_MAX)]
Text = Annotated[str, Field(max_length=TEXT_MAX), js_max(TEXT_MAX)]
RequiredText = Annotated[str, Field(min_length=1, max_length=TEXT_MAX), js_max(TEXT_MAX)]
# Seed 003's other stated lengths (executions, provision): "1-100 chars", "<= 2000 chars"...
ExecutorType = Annotated[str, Field(min_length=1, max_length=EXECUTOR_MAX), js_max(EXECUTOR_MAX)]
RunReason = Annotated[str, Field(max_length=2000), js_max(2000)]
Commit = Annotated[str, Field(max_length=NAME_MAX), js_max(NAME_MAX)]
RepoPath = Annotated[str, Field(min_length=1, max_length=REPO_PATH_MAX), js_max(REPO_PATH_MAX)]
Kind = Annotated[str, Field(max_length=KIND_MAX), js_max(KIND_MAX)]
Priority = Annotated[int, Field(ge=-INT64, lt=INT64), WholeNumber]
# Seed 003's PATCH takes `title?`, `status?`, `priority?`, `description?` and `humanOverride?`,
# none nullable: a null was read as the field left out ("at least one field required" alone, a
# silent no-op beside another field), so a caller clearing a field was told it sent nothing.
# Each field's refusal says what to send instead (one table: `PATCH` below and its tests).
NULL_REFUSALS: dict[str, str] = {
    "title": "null is not a title: leave the field out to keep it",
    "status": "null is not a status: leave the field out to keep it",
    "priority": "null is not a priority: leave the field out to keep it (0 is the default)",
    "description": 'null is not a description: send "" to clear it',
    "humanOverride": "null is not a humanOverride: send true or false, or leave the field out",
}


def _refuse_null(field: str) -> BeforeValidator:
    """Optional in the body (left out: None), never null in it."""

    def check(value: Any) -> Any:
        if value is None:
            raise ValueError(NULL_REFUSALS[field])
        return value

    return BeforeValidator(check)


def _schema_of(kind: Any) -> WithJsonSchema:
    """/openapi.json describes the field as `kind`, not nullable."""
    return WithJsonSchema(TypeAdapter(kind).json_schema())


EditedTitle = Annotated[Title | None, _refuse_null("title"), _schema_of(Title)]
EditedStatus = Annotated[Status | None, _refuse_null("status"), _schema_of(Status)]
EditedPriority = Annotated[Priority | None, _refuse_null("priority"), _schema_of(Priority)]
EditedText = Annotated[Text | None, _refuse_null("description"), _schema_of(Text)]
Override = Annotated[bool | None, _refuse_null("humanOverride"), _schema_of(bool)]


def _blank_is_absent(value: Any) -> Any:
    return None if value == "" else value


# The optional identifiers of seed 003's bodies whose zod schema takes `""` (the seed names only
# `teamId` and `tenantId` non-empty): the board stores no empty identifier, so `""` is the field
# left out, as an empty `kind` is; /openapi.json says `""` is taken.
BlankIsAbsent = BeforeValidator(_blank_is_absent)
OptionalId = Annotated[
    Name | None,
    BlankIsAbsent,
    _schema_of(Annotated[str, Field(max_length=NAME_MAX)] | None),
]
OptionalRef = Annotated[
    Annotated[str, Field(min_length=1, max_length=BASE_REF_MAX), js_max(BASE_REF_MAX)] | None,
    BlankIsAbsent,
    _schema_of(Annotated[str, Field(max_length=BASE_REF_MAX)] | None),
]
OptionalSha = Annotated[
    Annotated[Name, js_max(NAME_MAX)] | None,
    BlankIsAbsent,
    _schema_of(Annotated[str, Field(max_length=NAME_MAX)] | None),
]


Epoch = Annotated[
    int,
    Field(
        ge=0,
        lt=INT64,
        description="The claimEpoch your claim returned: refused as stale_claim once the task "
        "has moved to another claim.",
    ),
    WholeNumber,
]
Minutes = Annotated[float, Field(gt=0, le=MAX_LEASE_MINUTES, allow_inf_nan=False)]
Usd = Annotated[float, Field(ge=0, le=USD_MAX, allow_inf_nan=False)]
Tokens = Annotated[int, Field(ge=0, le=TOKENS_MAX), WholeNumber]
ChangeReason = Annotated[str, Field(min_length=1, max_length=2000)]


class Body(BaseModel):
    """camelCase keys, unknown keys refused, no type coercion."""

    model_config = ConfigDict(
        alias_generator=camel, populate_by_name=True, extra="forbid", strict=True
    )


AgentField = Field(
    default=None,
    description="Who acts. With an agent token it is the token's agent (naming another is "
    "refused); otherwise required.",
)
# Where the operator may act too, as the CLI's `--agent` defaults to operator.
ActorField = Field(
    default=None,
    description="Who acts. With an agent token it is the token's agent (naming another is "
    "refused); without one, the agent named, else the caller (the operator).",
)


class SeedBody(Body):
    """One of seed 003's bodies: an unknown key is dropped, as a zod object (not `.strict()`)
    drops it, so a seed client's extra field is no 400. A known field is judged as ever."""

    model_config = ConfigDict(extra="ignore")


# -- seed 003 ---------------------------------------------------------------------------------


class CreateTaskBody(SeedBody):
    """`createTaskBody`, plus `role`, `kind` and `dependsOn` (the board's own task fields)."""

    title: Title
    description: Text | None = None
    status: Status = Field(
        default=t.TODO,
        description="todo (claimable) or backlog (triage); any other status is reached from "
        "todo by legal moves as the task is filed: in_progress and in_review are held or built "
        "by the caller, blocked records a default reason naming the caller and the route.",
    )
    priority: Priority = 0
    team_id: Name | None = None
    assignee_runtime: OptionalId = None
    parent_task_id: OptionalId = None
    source_delegation_id: OptionalId = None
    tenant_id: Name | None = None
    role: Name | None = None
    kind: Annotated[str, Field(min_length=1, max_length=KIND_MAX)] = "code"
    depends_on: list[Name] = Field(default_factory=list, max_length=100)
    budget_usd: Usd | None = Field(default=None, description="Dollars over the whole subtree.")
    budget_tokens: Tokens | None = Field(default=None, description="Tokens, likewise.")


class ClaimBody(SeedBody):
    """`claimBody`, plus an optional lease length."""

    assignee_agent_id: Name
    assignee_runtime: OptionalId = None
    minutes: Minutes | None = Field(
        default=None, description=f"Lease length (default {DEFAULT_LEASE_MINUTES})."
    )


class UpdateTaskBody(SeedBody):
    """`updateTaskBody`: a status change and/or field edits, at least one; `reason` is kept with
    the change (and in the audit log of an override; a move to blocked without one records a
    default reason naming the caller and the route, as seed 003's body has none); `epoch` refuses
    a move of a task that was reclaimed since (`stale_claim`)."""

    status: EditedStatus = None
    priority: EditedPriority = None
    title: EditedTitle = None
    description: EditedText = None
    human_override: Override = None
    reason: Annotated[str, Field(max_length=2000)] | None = None
    epoch: Epoch | None = None

    @model_validator(mode="after")
    def _something(self) -> "UpdateTaskBody":
        fields = (self.status, self.priority, self.title, self.description)
        if all(value is None for value in fields):
            raise ValueError("at least one field required")
        return self


class CommentBody(SeedBody):
    """Seed 003's `commentBody`; with `path` (and `line`, `side`, `lineText`) a review comment
    anchored to a line of the task's diff."""

    body: RequiredText
    author_agent_id: OptionalId = None
    author_type: AuthorType | None = None
    path: AnchorPath | None = None
    line: AnchorLine | None = None
    side: Side | None = None
    line_text: LineText | None = None

    @property
    def anchored(self) -> bool:
        return any(v is not None for v in (self.path, self.line, self.side, self.line_text))


class ReviewCommentBody(Body):
    """One review comment a reject carries, anchored to a file (and a line of it)."""

    path: AnchorPath
    body: RequiredText
    line: AnchorLine | None = None
    side: Side | None = None
    line_text: LineText | None = None


class CreateExecutionBody(SeedBody):
    """`createExecutionBody`, plus the holder's `epoch`."""

    executor_type: ExecutorType
    workspace_id: OptionalId = None
    run_reason: RunReason | None = None
    before_commit: Commit | None = None
    epoch: Epoch | None = None


class CompleteExecutionBody(SeedBody):
    """`completeExecutionBody`, plus the holder's `epoch`."""

    status: Outcome
    summary: Text | None = None
    error: Text | None = None
    after_commit: Commit | None = None
    input_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    cache_read: Tokens | None = None
    cache_write: Tokens | None = None
    cost_usd: Usd | None = None
    epoch: Epoch | None = None


class LinkDepBody(SeedBody):
    depends_on_task_id: Name


class ProvisionBody(SeedBody):
    """`provisionWorkspaceBody`, plus the holder's `epoch` and the `agent` that acts."""

    repo_path: RepoPath
    base_sha: OptionalSha = None
    base_ref: OptionalRef = None
    kind: Kind | None = None
    epoch: Epoch | None = None
    agent: Name | None = ActorField


class WorkspaceActionBody(SeedBody):
    """`workspaceActionBody`, plus the holder's `epoch`, the `agent` that acts and, for
    `complete`, a `summary`."""

    action: Literal["pause", "complete"]
    epoch: Epoch | None = None
    summary: Text | None = None
    agent: Name | None = Field(
        default=None,
        description="Who acts. With an agent token it is the token's agent (naming another is "
        "refused); without one, the agent named, else for pause the caller (the operator) and "
        "for complete the task's holder, its builder.",
    )


class HandoffCommandsBody(HandoffCommands):
    model_config = ConfigDict(extra="ignore")


class HandoffEvidenceBody(HandoffEvidence):
    model_config = ConfigDict(extra="ignore")


class RoomCursorBody(RoomCursor):
    model_config = ConfigDict(extra="ignore")


class HandoffBody(AgentHandoff):
    """`agentHandoffSchema`, a zod object like the others: an unknown key is dropped at every
    level (the file it writes, `AgentHandoff`, still refuses one when it is read)."""

    model_config = ConfigDict(extra="ignore")

    commands: HandoffCommandsBody = Field(default_factory=HandoffCommandsBody)
    evidence: HandoffEvidenceBody | None = None
    room_cursor: RoomCursorBody | None = None


# -- the lease protocol (beyond the seed) -----------------------------------------------------


class ClaimNextBody(Body):
    agent: Name | None = AgentField
    role: Name | None = None
    # `teamId` too, as the task itself and every other route name it.
    team: Name | None = Field(default=None, validation_alias=AliasChoices("team", "teamId"))
    runtime: Name | None = None
    minutes: Minutes | None = Field(
        default=None, description=f"Lease length (default {DEFAULT_LEASE_MINUTES})."
    )
    respect_deps: bool = True


class HolderBody(Body):
    """heartbeat, release: the holder and its epoch."""

    agent: Name | None = AgentField
    epoch: Epoch | None = None


class ProgressBody(HolderBody):
    note: RequiredText


class ExtendLeaseBody(HolderBody):
    minutes: Minutes | None = Field(
        default=None, description=f"New lease from now (default {DEFAULT_LEASE_MINUTES})."
    )


class CompleteBody(HolderBody):
    summary: Text | None = None


class BlockBody(HolderBody):
    reason: RequiredText


class TransferBody(HolderBody):
    to: Name


class ReviewBody(Body):
    """approve: the reviewer, and the epoch of the attempt it judged."""

    agent: Name | None = ActorField
    epoch: Epoch | None = None


class RejectBody(ReviewBody):
    reason: RequiredText
    comments: Annotated[list[ReviewCommentBody], Field(max_length=NOTES_MAX)] | None = None


class ActorBody(Body):
    """drop, restore: who acts (an agent names itself, as the holder of a blocked task or an
    agent whose restore the children ceiling holds to), and the epoch it read."""

    agent: Name | None = ActorField
    epoch: Epoch | None = None


class UnblockBody(ActorBody):
    note: Text | None = None


# -- landing (beyond the seed) ----------------------------------------------------------------


class LandBody(Body):
    """`kanban task land`'s options: approve and land (in_review) or land (done)."""

    agent: Name | None = Field(
        default=None,
        description="Who lands. With an agent token it is the token's agent; without one, the "
        "operator unless named.",
    )
    into: Annotated[str, Field(min_length=1, max_length=BASE_REF_MAX)] | None = Field(
        default=None, description="The branch to land on (default: the task's base branch)."
    )
    strategy: Annotated[str, _one_of(LAND_STRATEGIES)] = Field(
        default="squash", json_schema_extra={"enum": list(LAND_STRATEGIES)}
    )
    dry_run: bool = Field(default=False, description="Build and verify, change nothing.")
    keep: bool = Field(default=False, description="Keep the worktree and the task branch.")
    allow_unverified: bool = Field(
        default=False, description="Operators only: land without a verify command (audited)."
    )
    unverified_reason: Annotated[str, Field(min_length=1, max_length=500)] | None = Field(
        default=None,
        description="With allowUnverified: why it lands unverified (in the audit and the history).",
    )
    epoch: Epoch | None = None
    expect_source: Annotated[str, Field(min_length=7, max_length=64)] | None = Field(
        default=None,
        description="The preview's sourceTree the decision was made on: refused if the work "
        "changed since.",
    )


class AbandonBody(Body):
    """`kanban task land --abandon`: an operator decides done work won't land."""

    agent: Name | None = ActorField
    reason: Annotated[str, Field(min_length=1, max_length=500)] = Field(
        description="Why it won't land (in the audit and the history)."
    )


class SyncBody(Body):
    """`kanban task workspace sync`: bring the base branch's tip into the task's worktree."""

    agent: Name | None = ActorField
    strategy: Literal["merge", "rebase"] = "merge"
    into: Annotated[str, Field(min_length=1, max_length=BASE_REF_MAX)] | None = None
    epoch: Epoch | None = None


# -- budgets (operators only) -----------------------------------------------------------------


class _BudgetChange(Body):
    """A field left out keeps its budget; `null` removes it; `reason` goes to the audit log."""

    reason: ChangeReason

    def given(self, name: str) -> Any:
        """The field's value if the body names it, else `KEEP`."""
        return getattr(self, name) if name in self.model_fields_set else KEEP

    @model_validator(mode="after")
    def _something(self) -> "_BudgetChange":
        if not set(self.model_fields_set) - {"reason", "team_id"}:
            raise ValueError("name a budget to set")
        return self


class TaskBudgetBody(_BudgetChange):
    budget_usd: Usd | None = None
    budget_tokens: Tokens | None = None


class DailyBudgetBody(_BudgetChange):
    team_id: Name | None = Field(default=None, description="A team's budget (default: board's).")
    daily_usd: Usd | None = None
    daily_tokens: Tokens | None = None
