"""Pydantic models for what the board validates: structured JSON it stores (the verification
verdict), raw recursive-query rows, and inputs from outside (plan files, request bodies).

Rows themselves are declared once in `records.py`; this module is imported lazily, only on the paths
that validate, so an agent's claim never pays for pydantic.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt
from pydantic.alias_generators import to_camel

from . import transitions

Verdict = Literal["pass", "fail", "completed_with_debt"]


class CamelModel(BaseModel):
    """camelCase in JSON, snake_case in Python, unknown keys refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

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


class VerificationAttempt(CamelModel):
    attempt: int = Field(ge=1)
    at: int  # epoch ms
    deterministic: DeterministicResult | None = None
    status: Literal["pass", "fail"]


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

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    status: Verdict
    attempts: list[VerificationAttempt] = []
    debt_notes: list[DebtNote] = []
    reviews: list[Review] = []
    updated_at: int

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
