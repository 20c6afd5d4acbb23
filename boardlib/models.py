"""Pydantic models for what the board validates: structured JSON it stores (the verification
verdict), raw recursive-query rows, and inputs from outside (plan files, request bodies).

Rows themselves are declared once in `records.py`; this module is imported lazily, only on the paths
that validate, so an agent's claim never pays for pydantic.
"""

import time
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    NonNegativeInt,
    StrictInt,
    StringConstraints,
)

from . import transitions
from .naming import camel
from .validation import INT64_MAX, whole

Verdict = Literal["pass", "fail", "completed_with_debt"]


class CamelModel(BaseModel):
    """camelCase in JSON, snake_case in Python, unknown keys refused."""

    model_config = ConfigDict(alias_generator=camel, populate_by_name=True, extra="forbid")

    def to_json(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True)


class DeterministicResult(CamelModel):
    """One run of the verify command: what ran, how it ended, the tails of its output."""

    command: str
    exit_code: int | None
    passed: bool
    stdout_tail: str = ""
    stderr_tail: str = ""
    duration_ms: NonNegativeInt = 0
    timed_out: bool = False


CommandSource = Literal["handoff", "init.sh"]
VerifyFrom = Literal["builder", "operator"]


class VerificationAttempt(CamelModel):
    attempt: int = Field(ge=1)
    at: int  # epoch ms
    deterministic: DeterministicResult | None = None
    status: Literal["pass", "fail"]
    source: CommandSource | None = None  # where this run's command came from
    author: str | None = None  # who wrote that command (the builder, or `operator`)


class DebtNote(CamelModel):
    criterion: str
    severity: Literal["low", "medium", "high"] = "medium"
    justification: str


class Review(CamelModel):
    """A reviewer's judgement, kept beside the deterministic attempts."""

    reviewer: str
    decision: Literal["approve", "reject"]
    at: int
    reason: str | None = None


class VerificationResult(CamelModel):
    """The typed verdict stored in `tasks.verification` (seed 003's `verification` field)."""

    model_config = ConfigDict(alias_generator=camel, populate_by_name=True, extra="ignore")

    status: Verdict
    attempts: list[VerificationAttempt] = []
    debt_notes: list[DebtNote] = []
    reviews: list[Review] = []
    updated_at: int
    # Who judged, for everyone who reads the verdict: the latest gate run's command came from the
    # handoff or init.sh, written by `command_author` (the builder chose its own judge when that
    # is the builder), under the board's `verify_from` policy (`KANBAN_VERIFY_FROM`).
    command_source: CommandSource | None = None
    command_author: str | None = None
    verify_from: VerifyFrom | None = None

    @property
    def promotable(self) -> bool:
        """Whether this verdict lets the task reach done: a pass, or debt whose last deterministic
        gate passed (red-gate debt is not promotable)."""
        if self.status == "pass":
            return True
        if self.status == "completed_with_debt" and self.attempts:
            last = self.attempts[-1].deterministic
            return last is not None and last.passed
        return False

    def dumps(self) -> str:
        return self.model_dump_json(by_alias=True)


def parse_verdict(raw: str) -> VerificationResult:
    return VerificationResult.model_validate_json(raw)


# -- the clock-out handoff (seed 003, `POST .../workspace/handoff`) --------------------------------

HANDOFF_TEXT_MAX = 20_000
HANDOFF_LIST_MAX = 500

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Text = Annotated[str, StringConstraints(max_length=HANDOFF_TEXT_MAX)]
Command = Annotated[str, StringConstraints(strip_whitespace=True, max_length=4000)]


def iso_timestamp(epoch_ms: int) -> str:
    """Epoch milliseconds as ISO-8601 UTC with a `Z`, the form handoffs carry."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _check_iso(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("timestamp must be an ISO-8601 date-time") from None
    return value


IsoTimestamp = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=64), AfterValidator(_check_iso)
]


class HandoffCommands(CamelModel):
    """How to set up, verify and start the work; the verification gate runs `verify`."""

    init: Command = "./init.sh"
    verify: Command = ""
    start: Command = ""


class HandoffEvidence(CamelModel):
    test_results: Text | None = None
    lint_results: Text | None = None


# A seq as a number, as seed 003's zod `number` takes it (`5.0` is 5; `"5"` and `true` are not),
# within 64 bits: a bigger one was written, then every read of the handoff failed (orjson
# cannot encode it), so the cold-resume GET was a 500 until the file was rewritten.
Seq = Annotated[StrictInt, Field(ge=0, le=INT64_MAX), BeforeValidator(whole)]


class RoomCursor(CamelModel):
    room_id: Name
    last_seen_seq: Seq


class AgentHandoff(CamelModel):
    """`AGENT_HANDOFF.json`: structured clock-out state, so a different runtime (or a person) can
    resume the task from the worktree alone. Fields and defaults are seed 003's handoff body;
    unknown keys are refused so a misspelt field is an error rather than silently lost."""

    handoff_from: Name
    runtime: Name
    timestamp: IsoTimestamp = Field(default_factory=lambda: iso_timestamp(time.time_ns() // 10**6))
    completed_subtasks: list[Text] = Field(default_factory=list, max_length=HANDOFF_LIST_MAX)
    broken_or_unverified: list[Text] = Field(default_factory=list, max_length=HANDOFF_LIST_MAX)
    next_best_step: Text = ""
    why_blocked: Text | None = None
    commands: HandoffCommands = Field(default_factory=HandoffCommands)
    evidence: HandoffEvidence | None = None
    warnings: list[Text] = Field(default_factory=list, max_length=HANDOFF_LIST_MAX)
    native_session_id: Name | None = None
    room_cursor: RoomCursor | None = None


def validation_details(error: Exception) -> dict[str, object]:
    """A pydantic `ValidationError` flattened like zod's `flatten()` (seed 003's 400 `details`):
    `formErrors` for the body as a whole, `fieldErrors` keyed by the camelCase path."""
    from pydantic import ValidationError

    form: list[str] = []
    by_field: dict[str, list[str]] = {}
    if isinstance(error, ValidationError):
        for item in error.errors(include_url=False):
            path = ".".join(str(part) for part in item["loc"])
            if path:
                by_field.setdefault(path, []).append(item["msg"])
            else:
                form.append(item["msg"])
    else:
        form.append(str(error))
    return {"formErrors": form, "fieldErrors": by_field}


class AncestorRow(BaseModel):
    """A row of the recursive parent-chain query, checked at runtime rather than trusted."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    parent_task_id: str | None
    title: str
    status: str
    depth: int = Field(ge=1)

    def model_post_init(self, _context: object) -> None:
        if not transitions.is_status(self.status):
            raise ValueError(f"unknown status {self.status!r} in parent chain")
