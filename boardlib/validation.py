"""Checks of what callers hand the board, each a typed `invalid_input` refusal naming the field.
Every surface gets the same limits because the board applies them, not the surface."""

import math
from typing import Any

from .errors import invalid_input

TITLE_MAX = 500
TEXT_MAX = 20_000
NAME_MAX = 200


def text(value: Any, field: str, *, limit: int = TEXT_MAX, required: bool = True) -> str | None:
    """A stripped string within `limit`, or a typed refusal naming the field."""
    if value is None:
        if required:
            raise invalid_input(f"{field} is required", field=field)
        return None
    if not isinstance(value, str):
        raise invalid_input(f"{field} must be a string", field=field)
    value = value.strip()
    if required and not value:
        raise invalid_input(f"{field} must not be empty", field=field)
    if len(value) > limit:
        raise invalid_input(f"{field} is longer than {limit} characters", field=field)
    return value or None


def name(value: Any, field: str) -> str:
    checked = text(value, field, limit=NAME_MAX)
    assert checked is not None
    return checked


def optional_name(value: Any, field: str) -> str | None:
    return None if value is None else name(value, field)


def integer(value: Any, field: str, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_input(f"{field} must be an integer", field=field)
    if minimum is not None and value < minimum:
        raise invalid_input(f"{field} must be at least {minimum}", field=field)
    return value


def positive_number(
    value: Any, field: str, *, maximum: float | None = None, unit: str = ""
) -> float:
    """A finite number above zero, at most `maximum` (booleans, NaN and infinities refused)."""
    unit_text = f" {unit}" if unit else ""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise invalid_input(f"{field} must be a positive number{unit_text}", field=field)
    if maximum is not None and value > maximum:
        raise invalid_input(f"{field} must be at most {maximum:g}{unit_text}", field=field)
    return value
