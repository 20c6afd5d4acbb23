"""The board's widgets and screens, one per module, each with its `.tcss` beside it."""

from pathlib import Path


def tcss(module_file: str) -> str:
    """The stylesheet that sits beside a component's module (`column.py` -> `column.tcss`)."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")
