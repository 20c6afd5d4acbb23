"""The board's widgets and screens, one per module, each with its `.tcss` beside it."""

from pathlib import Path
from typing import Any

from textual.screen import Screen


def tcss(module_file: str) -> str:
    """The stylesheet that sits beside a component's module (`column.py` -> `column.tcss`)."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")


def toasts_gone(screen: "Screen[Any]") -> None:
    """A question opens over no toast from before it (the message log keeps them): found in
    tmux, a refused landing's error toast covered the reject question for seconds at 80x24.
    Toasts the question itself raises (a key it has no use for) show, at the top."""
    screen.app.clear_notifications()
