"""The board's event kinds, declared once, and the one conversion of their payloads.

Every write publishes one event (`events` table, seed 000's mutation log). Its `kind` is an
`EventKind`, a `StrEnum`, so the stored and served value is the same string as before and a kind
read back from the table (a plain `str`) compares and hashes equal to its member.

Each kind's payload is declared in `boardlib.payloads` (one `TypedDict` per kind, snake_case
fields). An emitter stores `wire(payload)`: the keys camelized by `naming.camel`, the rule records
and models follow too, in the payload's order. A reader turns a stored payload back with
`read(event.data)` and annotates it with the kind's type. Both are plain dict rewrites, the
conversion of each key cached after its first use, so the claim's emit inside its write lock
costs a dict comprehension over two keys.
"""

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from .naming import camel, snake

__all__ = ["EventKind", "read", "wire", "wire_key"]


class EventKind(StrEnum):
    TASK_CREATED = "task_created"
    TASK_CLAIMED = "task_claimed"
    STATUS_CHANGED = "status_changed"
    TASK_UPDATED = "task_updated"
    LEASE_RENEWED = "lease_renewed"
    PROGRESS_LOGGED = "progress_logged"
    LEASE_EXPIRED = "lease_expired"
    TASK_TRANSFERRED = "task_transferred"
    TASK_DROPPED = "task_dropped"
    TASK_RESTORED = "task_restored"
    DEP_LINKED = "dep_linked"
    DEP_UNLINKED = "dep_unlinked"
    COMMENT_ADDED = "comment_added"
    EXECUTION_STARTED = "execution_started"
    EXECUTION_COMPLETED = "execution_completed"
    VERIFICATION_STARTED = "verification_started"
    VERIFICATION_RECORDED = "verification_recorded"
    VERIFICATION_STOPPED = "verification_stopped"
    WORKSPACE_PROVISIONED = "workspace_provisioned"
    WORKSPACE_UPDATED = "workspace_updated"
    TASK_LANDED = "task_landed"
    BUDGET_CHANGED = "budget_changed"


class _Converted(dict[str, str]):
    """A key's conversion, made once: `convert` runs only for a key not seen before."""

    def __init__(self, convert: Callable[[str], str]) -> None:
        super().__init__()
        self._convert = convert

    def __missing__(self, key: str) -> str:
        converted = self[key] = self._convert(key)
        return converted


_WIRE = _Converted(camel)
_FIELD = _Converted(snake)


def wire_key(field: str) -> str:
    """The stored (camelCase) key of a payload field: `lease_until` -> `leaseUntil`."""
    return _WIRE[field]


def wire(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A payload as stored and served: the same values in the same order, keys in camelCase."""
    keys = _WIRE
    return {keys[name]: value for name, value in payload.items()}


def read(data: Mapping[str, Any]) -> Any:
    """A stored payload with its keys back in snake_case, to be annotated with its kind's type
    from `boardlib.payloads` (`data: LeaseExpired = read(event.data)`)."""
    names = _FIELD
    return {names[key]: value for key, value in data.items()}
