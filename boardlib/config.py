"""Tunable limits of one board, with the defaults of the seeds. Environment overrides use the
`KANBAN_` prefix so an operator can tune a fleet without touching code.

A bad setting is an error naming the variable (`invalid_input`), never silently dropped or taken
as given: `KANBAN_LEASE_MS=-5` would otherwise make every claim born expired, and `1e20`
overflow SQLite's integers on the first claim. Each field has its range here, checked for the
environment and for a `BoardConfig` built in code alike. The settings of one machine's processes
(the worktrees' folder, a gate's time limit...) are not the board's: `MACHINE_SETTINGS` declares
them, each read from the environment of the process that needs it.
"""

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .errors import BoardError, invalid_input

MINUTE_MS = 60_000
DEFAULT_LEASE_MINUTES = 15  # a claim's lease unless the board says otherwise (help texts quote it)
MAX_LEASE_MINUTES = 24 * 60  # no lease is longer than a day
MAX_LEASE_MS = MAX_LEASE_MINUTES * MINUTE_MS
_FAR = 10**12  # an upper bound for counts and durations that keeps every sum inside SQLite's int64

VERIFY_FROM = ("builder", "operator")  # who may choose the verification gate's command


def minutes_to_ms(minutes: float) -> int:
    """Minutes as whole milliseconds (rounded, at least 1): every surface converts with this.
    A number that is not a positive, finite count of minutes up to a day is `invalid_input`."""
    from .validation import positive_number

    checked = positive_number(minutes, "minutes", maximum=MAX_LEASE_MINUTES, unit="minutes")
    return max(1, round(checked * MINUTE_MS))


# field: (minimum, maximum, what it is), for the integer settings.
_RANGES: dict[str, tuple[int, int, str]] = {
    "lease_ms": (1, MAX_LEASE_MS, "milliseconds"),
    "max_depth": (0, 1_000, "ancestors"),
    "max_live_children": (0, _FAR, "tasks"),
    "root_create_limit": (0, _FAR, "tasks"),
    "root_create_window_ms": (1, _FAR, "milliseconds"),
    "event_ttl_seconds": (0, _FAR, "seconds"),
    "retry_budget_ms": (0, 3_600_000, "milliseconds"),
    "retry_max_attempts": (1, 1_000_000, "attempts"),
    "verification_attempt_budget": (1, 1_000, "attempts"),
    "reconcile_interval_ms": (1, _FAR, "milliseconds"),
    "overdue_leases": (1, 1_000, "leases"),
    "watch_hold_after": (1, 1_000_000, "failures"),
}


@dataclass(frozen=True, slots=True)
class BoardConfig:
    lease_ms: int = DEFAULT_LEASE_MINUTES * MINUTE_MS  # a claim's lease; heartbeats renew it
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
    reconcile_interval_ms: int = 30_000  # stale-task reconciliation, in long-running processes
    # The inbox: a running execution whose task has had no beat for this many leases (the board's
    # `lease_ms`) needs a person, even while an extended lease has not run out.
    overdue_leases: int = 3
    # `kanban watch`: a delivery that failed this many times in a row is held (shown in the inbox;
    # still retried, never skipped).
    watch_hold_after: int = 5
    # Who chooses the gate's verify command: "builder" (the handoff's commands.verify, else
    # init.sh's VERIFY_CMD) or "operator" (only the command fixed at provision time).
    verify_from: str = "builder"
    verify_command: str | None = None  # the board's verify command, written into init.sh

    def __post_init__(self) -> None:
        for name, (low, high, unit) in _RANGES.items():
            value = getattr(self, name)
            if name == "event_ttl_seconds" and value is None:
                continue
            _check_int(value, name, low, high, unit)
        low, high = self.retry_jitter_ms
        if not (0 <= low <= high <= 60_000) or isinstance(low, bool) or isinstance(high, bool):
            raise invalid_input(
                "retry_jitter_ms must be two whole numbers LOW,HIGH with 0 <= LOW <= HIGH <= 60000",
                field="retry_jitter_ms",
            )
        if self.verify_from not in VERIFY_FROM:
            raise invalid_input(
                f"verify_from must be one of {', '.join(VERIFY_FROM)}, not {self.verify_from!r}",
                field="verify_from",
            )
        if self.verify_command is not None and (
            not isinstance(self.verify_command, str) or "\n" in self.verify_command
        ):
            raise invalid_input("verify_command must be one line of text", field="verify_command")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "BoardConfig":
        """Defaults, overridden by `KANBAN_<FIELD>` (e.g. `KANBAN_LEASE_MS=60000`). Integers are
        written as whole numbers; `KANBAN_EVENT_TTL_SECONDS=none` keeps events forever;
        `KANBAN_RETRY_JITTER_MS=20,150`; `KANBAN_VERIFY_FROM=operator`; `KANBAN_VERIFY_CMD` is the
        board's verify command. A bad value is `invalid_input` naming the variable."""
        env = os.environ if environ is None else environ
        overrides: dict[str, Any] = {}
        for field in fields(cls):
            variable = _variable(field.name)
            raw = env.get(variable)
            if raw is None:
                continue
            overrides[field.name] = _parse(field.name, variable, raw)
        try:
            return replace(cls(), **overrides) if overrides else cls()
        except BoardError as error:  # a check across values: name the variable, not the field
            variable = _variable(str(error.details.get("field", "")))
            raise invalid_input(f"{variable}: {error.message}", variable=variable) from None

    def to_env(self) -> dict[str, str]:
        """The `KANBAN_<FIELD>` variables that give another process this config (a server
        `kanban init` registers, say): the settings that differ from the defaults, written as
        `from_env` reads them back."""
        defaults = type(self)()
        return {
            _variable(field.name): _format(getattr(self, field.name))
            for field in fields(self)
            if getattr(self, field.name) != getattr(defaults, field.name)
        }


def _format(value: Any) -> str:
    if value is None:
        return "none"  # event_ttl_seconds: keep events forever (verify_command has no default)
    if isinstance(value, tuple):
        return ",".join(str(part) for part in value)
    return str(value)


def _variable(field_name: str) -> str:
    return "KANBAN_VERIFY_CMD" if field_name == "verify_command" else f"KANBAN_{field_name.upper()}"


def _check_int(value: Any, name: str, low: int, high: int, unit: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid_input(
            f"{name} must be a whole number of {unit} from {low} to {high}, not {value!r}",
            field=name,
        )


def _parse(name: str, variable: str, raw: str) -> Any:
    text = raw.strip()
    if name == "verify_from":
        if text not in VERIFY_FROM:
            raise invalid_input(
                f"{variable} must be one of {', '.join(VERIFY_FROM)}, not {raw!r}",
                variable=variable,
            )
        return text
    if name == "verify_command":
        return text or None
    if name == "event_ttl_seconds" and text.lower() in ("none", "forever"):
        return None
    if name == "retry_jitter_ms":
        parts = [part.strip() for part in text.split(",")]
        if len(parts) != 2 or not all(_is_whole(part) for part in parts):
            raise invalid_input(
                f"{variable} must be LOW,HIGH in whole milliseconds, not {raw!r}",
                variable=variable,
            )
        return (int(parts[0]), int(parts[1]))
    low, high, unit = _RANGES[name]
    if not _is_whole(text) or not low <= int(text) <= high:
        raise invalid_input(
            f"{variable} must be a whole number of {unit} from {low} to {high}, not {raw!r}",
            variable=variable,
        )
    return int(text)


def _is_whole(text: str) -> bool:
    """Digits with an optional sign, and nothing else (no `1e5`, `nan`, `0x10`, `1_000`)."""
    body = text[1:] if text[:1] in "+-" else text
    return body.isascii() and body.isdigit() and len(body) <= 19


def env_number(
    variable: str,
    default: float,
    *,
    minimum: float,
    maximum: float,
    environ: Mapping[str, str] | None = None,
) -> float:
    """A positive finite number from the environment (seconds, milliseconds) within a range, or
    `default` when unset or empty; anything else is `invalid_input` naming the variable."""
    env = os.environ if environ is None else environ
    raw = env.get(variable)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not minimum <= value <= maximum:
        raise invalid_input(
            f"{variable} must be a number from {minimum:g} to {maximum:g}, not {raw!r}",
            variable=variable,
        )
    return value


# -- settings of this machine's processes, not of the board -------------------------------------
# Read from the environment of the process that works, never stored on the board: `kanban init`
# writes each one set where it runs into the MCP config it writes (a runtime gives its server only
# the config's env over a few variables of its own), so its server works as the shell does.

WORKTREES_VARIABLE = "KANBAN_WORKTREES"  # where per-task worktrees live (`boardlib.paths`)


@dataclass(frozen=True, slots=True)
class MachineSetting:
    """A number one machine's processes read from the environment (`env_number`'s range)."""

    variable: str
    tunes: str
    minimum: float
    maximum: float

    def read(self, default: float, environ: Mapping[str, str] | None = None) -> float:
        return env_number(
            self.variable, default, minimum=self.minimum, maximum=self.maximum, environ=environ
        )

    def carried(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The value to hand another process (stripped), None when unset or empty; a value with
        a control character, or one `read` refuses, is `invalid_input` naming the variable."""
        raw = (os.environ if environ is None else environ).get(self.variable)
        if raw is None or not raw.strip():
            return None
        if any(ord(char) < 32 or ord(char) == 127 for char in raw):
            raise invalid_input(
                f"{self.variable} holds a control character", variable=self.variable
            )
        self.read(0, {self.variable: raw})
        return raw.strip()


VERIFY_TIMEOUT = MachineSetting(
    "KANBAN_VERIFY_TIMEOUT_S", "a verification gate's time limit, in seconds", 0.001, 7 * 86_400
)
GATE_BEAT = MachineSetting(
    "KANBAN_GATE_BEAT_S", "how often a running gate says it lives, in seconds", 0.01, 3600
)
LAND_LEASE = MachineSetting(
    "KANBAN_LAND_LEASE_MS", "a lander's turn without a renewal, in milliseconds", 100, 3_600_000
)
LAND_QUEUE_TIMEOUT = MachineSetting(
    "KANBAN_LAND_QUEUE_TIMEOUT_S", "how long a lander waits in its queue, in seconds", 0.001,
    7 * 86_400,
)  # fmt: skip
WORKTREE_RETENTION = MachineSetting(
    "KANBAN_WORKTREE_RETENTION_MS", "how long a finished task keeps its checkout, in ms", 0, _FAR
)
WORKTREE_GC_INTERVAL = MachineSetting(
    "KANBAN_WORKTREE_GC_INTERVAL_MS", "how often a server collects worktrees, in ms", 0, _FAR
)
MACHINE_SETTINGS: tuple[MachineSetting, ...] = (
    VERIFY_TIMEOUT, GATE_BEAT, LAND_LEASE, LAND_QUEUE_TIMEOUT, WORKTREE_RETENTION,
    WORKTREE_GC_INTERVAL,
)  # fmt: skip
