"""Fixes for Textual bugs the app would otherwise meet, applied once, on import of `tui.app`.

A toast is built with its notification's time left, measured when the toast is made, and its
timer starts when it is mounted. A toast made as its notification runs out gets a negative
time, and Textual's timer with a negative interval never yields (its catch-up step in
`Timer._run` skips "forward" forever): the app spins at 100% of a core, frozen. Every screen
pushed rebuilds the toasts of the live notifications, so opening a screen the moment a toast
ends was enough (a CI run of the message-log snapshot hung so for six minutes). The toast's
timer is clamped to run out at once instead.
"""

from textual import events
from textual.widgets._toast import Toast

SOONEST_S = 0.001  # a timer of 0 s divides by zero in the same catch-up step


def _start_the_toasts_time(self: Toast, _event: events.Mount) -> None:
    self.set_timer(max(self._timeout, SOONEST_S), self._expire)


def apply() -> None:
    Toast._on_mount = _start_the_toasts_time  # type: ignore[method-assign,assignment]
