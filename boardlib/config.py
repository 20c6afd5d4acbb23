"""Tunable limits of one board, with the defaults of the seeds. Environment overrides use the
`KANBAN_` prefix so an operator can tune a fleet without touching code."""

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

MINUTE_MS = 60_000


def minutes_to_ms(minutes: float) -> int:
    """Minutes as whole milliseconds (rounded, at least 1): every surface converts with this."""
    return max(1, round(minutes * MINUTE_MS))


MAX_LEASE_MINUTES = 24 * 60  # no lease is longer than a day


@dataclass(frozen=True, slots=True)
class BoardConfig:
    lease_ms: int = 15 * MINUTE_MS  # a claim's lease; heartbeats renew it
    max_depth: int = (
        2  # capped create: refuse a child once the parent's ancestor chain is this long
    )
    max_live_children: int = 24  # capped create: live (non-terminal) children per parent
    root_create_limit: int = 30  # capped create: parentless tasks per rolling window
    root_create_window_ms: int = 5 * MINUTE_MS
    event_ttl_seconds: int | None = 3 * 24 * 3600  # None keeps events forever
    retry_budget_ms: int = 1500  # wall-clock budget for re-running a transaction on lock errors
    retry_jitter_ms: tuple[int, int] = (20, 150)
    retry_max_attempts: int = 24  # backstop under the wall-clock budget
    verification_attempt_budget: int = 3  # failed gate runs before a task is blocked
    reconcile_interval_ms: int = 30_000  # how often long-running processes sweep leases

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "BoardConfig":
        """Defaults, overridden by `KANBAN_<FIELD>` integers (e.g. `KANBAN_LEASE_MS=60000`)."""
        env = os.environ if environ is None else environ
        overrides: dict[str, Any] = {}
        for field in fields(cls):
            raw = env.get(f"KANBAN_{field.name.upper()}")
            if raw is not None and field.name != "retry_jitter_ms":
                try:
                    overrides[field.name] = int(raw)
                except ValueError:
                    continue
        return replace(cls(), **overrides) if overrides else cls()
