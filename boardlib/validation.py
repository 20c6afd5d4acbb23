"""Checks of what callers hand the board, each a typed `invalid_input` refusal naming the field.
Every surface gets the same limits because the board applies them, not the surface."""

import math
from typing import Any, TypeGuard

from .actors import OPERATOR_PREFIX, is_system
from .errors import invalid_input

TITLE_MAX = 500
TEXT_MAX = 20_000
NAME_MAX = 200
EXECUTOR_MAX = 100  # a run's executor type (`claude-code`, `codex`...), a name


def text(value: Any, field: str, *, limit: int = TEXT_MAX, required: bool = True) -> str | None:
    """A stripped string within `limit`, or a typed refusal naming the field."""
    if value is None:
        if required:
            raise invalid_input(f"{field} is required", field=field)
        return None
    if not isinstance(value, str):
        raise invalid_input(f"{field} must be a string", field=field)
    _storable(value, field)
    value = value.strip()
    if required and not value:
        raise invalid_input(f"{field} must not be empty", field=field)
    if len(value) > limit:
        raise invalid_input(f"{field} is longer than {limit} characters", field=field)
    return value or None


def utf16_units(value: str) -> int:
    """A string's length as JavaScript gives it, and so seed 003's zod `.max(n)`: in UTF-16 code
    units, a character beyond U+FFFF (most emoji) counting two."""
    if value.isascii():
        return len(value)
    return len(value) + sum(1 for char in value if ord(char) > 0xFFFF)


NUL = "\0"


def _storable(value: str, field: str) -> None:
    """Refuse text one of the stores cannot keep: bytes that are not UTF-8, or a NUL (PostgreSQL's
    text cannot hold one; refused on SQLite too, so a board copies between them and both
    backends answer alike)."""
    if not _encodable(value):
        raise invalid_input(
            f"{field} is not valid text: it holds bytes that are not UTF-8", field=field
        )
    if NUL in value:
        raise invalid_input(
            f"{field} is not valid text: it holds the NUL character U+0000", field=field
        )


def _encodable(value: str) -> bool:
    """False for strings carrying lone surrogates: how Python hands over argv or file names
    that were not valid UTF-8 (`surrogateescape`), which SQLite cannot store."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def name(value: Any, field: str, *, limit: int = NAME_MAX) -> str:
    """A name (an agent, an actor, a team, a role, a run's executor): one printable line. A name
    is drawn in every operator's view and written into audit rows, so a control or format
    character in it (an escape, a bell, a bidi override) is refused, never stored and cleaned up
    later."""
    checked = text(value, field, limit=limit)
    assert checked is not None
    if not checked.isprintable():
        bad = next(char for char in checked if not char.isprintable())
        raise invalid_input(
            f"{field} must be printable: it holds the control or format character U+{ord(bad):04X}",
            field=field,
        )
    return checked


def caller_name(value: Any, field: str = "agent") -> str:
    """A name a caller gives for itself or another caller (`--agent`, `KANBAN_AGENT`, a body's
    agent, a transfer's new holder): an agent's or an operator's. Never the name of one of the
    board's own passes (an approval recorded under the gate's name reads as its verdict), nor
    `operator:` naming nobody."""
    checked = name(value, field)
    if is_system(checked):
        raise invalid_input(
            f"{field} {checked!r} is the name of the board's own pass; act under your own name",
            field=field,
        )
    if checked.startswith(OPERATOR_PREFIX) and not checked[len(OPERATOR_PREFIX) :].strip():
        raise invalid_input(
            f"{field} {checked!r} names nobody: give operator:<your name>, or operator",
            field=field,
        )
    return checked


def optional_name(value: Any, field: str) -> str | None:
    return None if value is None else name(value, field)


def clearable_name(value: Any, field: str) -> str | None:
    """An edit's new name, or blank (`--role ''`) for none: the blank clears it, anything else
    is a name as at creation (no control or format character)."""
    checked = text(value, field, limit=NAME_MAX, required=False)
    return None if checked is None else name(checked, field)


def identifier(value: Any, field: str) -> str:
    """An id as given (not stripped: ids are exact): a non-empty string both stores can keep (no
    NUL), no longer than a name. Anything else is refused before it reaches a query."""
    if not isinstance(value, str) or not value:
        raise invalid_input(f"{field} must be a non-empty string", field=field)
    if len(value) > NAME_MAX or not _encodable(value) or NUL in value:
        raise invalid_input(f"{field} is not a valid id", field=field)
    return value


def optional_identifier(value: Any, field: str) -> str | None:
    return None if value is None else identifier(value, field)


def flag(value: Any, field: str) -> bool:
    """A yes/no option: only `True` or `False` (a string "false" is not false)."""
    if not isinstance(value, bool):
        raise invalid_input(f"{field} must be true or false", field=field)
    return value


# SQLite stores integers in 64 bits; a bigger Python int would fail as OverflowError at the write.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def integer(
    value: Any, field: str, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """A whole number (not a bool) within `minimum`..`maximum`, and always within SQLite's
    64-bit integers."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_input(f"{field} must be an integer", field=field)
    if minimum is not None and value < minimum:
        raise invalid_input(f"{field} must be at least {minimum}", field=field)
    if maximum is not None and value > maximum:
        raise invalid_input(f"{field} must be at most {maximum}", field=field)
    if not INT64_MIN <= value <= INT64_MAX:  # the field's own bound, where it has one
        low = INT64_MIN if minimum is None else minimum
        raise invalid_input(
            f"{field} must be between {low} and {INT64_MAX} (a 64-bit integer)", field=field
        )
    return value


def whole(value: Any) -> Any:
    """A JSON number with no fraction (`5.0`, `1e3`) as the integer it is, as seed 003's zod
    schemas take it, for every body and file the board reads (HTTP, plan files); anything else
    is left to the strict check (`5.5`, `"5"`, `true` refused)."""
    if type(value) is float and value.is_integer() and abs(value) <= INT64_MAX:
        return int(value)
    return value


def optional_integer(
    value: Any, field: str, *, minimum: int | None = None, maximum: int | None = None
) -> int | None:
    return None if value is None else integer(value, field, minimum=minimum, maximum=maximum)


def _finite(value: Any) -> TypeGuard[float]:
    """A real number, finite (not a bool, NaN or an infinity)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def number(value: Any, field: str, *, minimum: float, maximum: float) -> float:
    """A finite number from `minimum` to `maximum` (booleans, NaN and infinities refused)."""
    if not _finite(value) or not minimum <= value <= maximum:
        raise invalid_input(
            f"{field} must be a number from {minimum:g} to {maximum:g}", field=field
        )
    return float(value)


def positive_number(
    value: Any, field: str, *, maximum: float | None = None, unit: str = ""
) -> float:
    """A finite number above zero, at most `maximum` (booleans, NaN and infinities refused)."""
    unit_text = f" {unit}" if unit else ""
    if not _finite(value) or value <= 0:
        raise invalid_input(f"{field} must be a positive number{unit_text}", field=field)
    if maximum is not None and value > maximum:
        raise invalid_input(f"{field} must be at most {maximum:g}{unit_text}", field=field)
    return value
