"""The board's widgets and screens, one per module, each with its `.tcss` beside it."""

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from textual.notifications import SeverityLevel
from textual.screen import Screen


@runtime_checkable
class KeepsNews(Protocol):
    """An app whose toasts a question covers and gives back (`KanbanApp`: the "Needs you")."""

    def cover_toasts(self) -> None: ...

    def uncover_toasts(self) -> None: ...

    def question_says(self, message: str, *, severity: SeverityLevel, timeout: float) -> None: ...


def tcss(module_file: str) -> str:
    """The stylesheet that sits beside a component's module (`column.py` -> `column.tcss`)."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")


def toasts_gone(screen: "Screen[Any]") -> None:
    """A question opens over no toast from before it (the message log keeps them): found in
    tmux, a refused landing's error toast covered the reject question for seconds at 80x24.
    Toasts the question itself raises (a key it has no use for) show, at the top. The app may
    keep some to show again once the question is answered (`toasts_back`)."""
    app = screen.app
    if isinstance(app, KeepsNews):
        app.cover_toasts()
    else:
        app.clear_notifications()


def question_says(
    screen: "Screen[Any]", message: str, *, severity: SeverityLevel = "information", timeout: float
) -> None:
    """A toast the question raises ("is all on screen", "is waiting"): it goes with the question
    (`toasts_back`); it stayed on beside the board's toasts, about a question no longer there."""
    app = screen.app
    if isinstance(app, KeepsNews):
        app.question_says(message, severity=severity, timeout=timeout)
    else:
        app.notify(message, severity=severity, timeout=timeout)


def toasts_back(screen: "Screen[Any]") -> None:
    """The question is gone: its own toasts go with it (`question_says`), and what it covered
    and the app kept comes back (`toasts_gone`)."""
    app = screen.app
    if isinstance(app, KeepsNews):
        app.uncover_toasts()
