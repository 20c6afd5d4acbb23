"""What a failed snapshot comparison differs in, written into the failing test's report.

pytest-textual-snapshot says only that the frame differs and keeps the two frames in an HTML
report on the machine that ran the tests. A CI run keeps its output and nothing else, so a
snapshot that fails now and then in CI could not be diagnosed afterwards. Here the two SVGs are
read back as rows of cells: the rows whose text differs come as a unified diff, and for rows
whose text is the same, the first column whose colours or weight differ and what they are.
"""

import difflib
import html
import pickle
import re
from dataclasses import dataclass
from typing import Any

CELL_WIDTH = 12.2  # Rich's SVG export: a cell's width and a line's height, in its pixels
LINE_HEIGHT = 24.4
TEXT_BASELINE = 20.0  # the first line's text y; its background rectangles start at 1.5
RECT_TOP = 1.5
SHOWN_ROWS = 12  # rows of colour differences written out at most
BLANK = (" ", "", "")  # a cell the export drew nothing in: (char, foreground, background)

# A fresh export names its classes `terminal-<number>-r1`; the kept snapshot, `terminal-r1`.
_RULE = re.compile(r"\.terminal-(?:\d+-)?(r\d+) \{ ([^}]*) \}")
_TEXT = re.compile(
    r'<text class="terminal-(?:\d+-)?(r\d+)" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>'
)
_RECT = re.compile(
    r'<rect fill="(#[0-9a-fA-F]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" '
    r'height="[\d.]+" shape-rendering="crispEdges"/>'
)


@dataclass(frozen=True)
class Row:
    text: str
    looks: tuple[str, ...]  # each cell's foreground style and background colour


def frame_rows(svg: str) -> list[Row]:
    """The frame's rows as text and per-cell looks. The style classes are numbered per export,
    so a cell's look is the rule a class stands for, not its name."""
    rules = {name: " ".join(rule.split()) for name, rule in _RULE.findall(svg)}
    cells: dict[int, dict[int, tuple[str, str, str]]] = {}  # row -> column -> (char, fg, bg)

    def cell(row: int, column: int) -> tuple[str, str, str]:
        return cells.setdefault(row, {}).get(column, BLANK)

    for fill, x, y, width in _RECT.findall(svg):
        row = round((float(y) - RECT_TOP) / LINE_HEIGHT)
        first = round(float(x) / CELL_WIDTH)
        for column in range(first, first + round(float(width) / CELL_WIDTH)):
            char, fg, _ = cell(row, column)
            cells[row][column] = (char, fg, fill)
    for name, x, y, content in _TEXT.findall(svg):
        row = round((float(y) - TEXT_BASELINE) / LINE_HEIGHT)
        first = round(float(x) / CELL_WIDTH)
        text = html.unescape(content).replace("\xa0", " ")
        for offset, char in enumerate(text):
            _, _, bg = cell(row, first + offset)
            cells[row][first + offset] = (char, rules.get(name, name), bg)
    rows = []
    for row in range(max(cells, default=-1) + 1):
        line = cells.get(row, {})
        width = max(line, default=-1) + 1
        chosen = [line.get(column, BLANK) for column in range(width)]
        rows.append(
            Row(
                "".join(char for char, _, _ in chosen).rstrip(),
                tuple(f"{fg} on {bg}" for _, fg, bg in chosen),
            )
        )
    return rows


def describe(expected_svg: str, actual_svg: str) -> str:
    """The difference between the kept frame and the one the test drew, in words; "" when
    neither the text nor the looks differ."""
    expected, actual = frame_rows(expected_svg), frame_rows(actual_svg)
    said: list[str] = []
    text_diff = list(
        difflib.unified_diff(
            [row.text for row in expected],
            [row.text for row in actual],
            "kept snapshot",
            "this run",
            n=1,
            lineterm="",
        )
    )
    if text_diff:
        said += ["Text (rows numbered from 1 in the hunk headers):", *text_diff]
    looks: list[tuple[str, str]] = []  # (where and what, the row's text)
    for number, (old, new) in enumerate(zip(expected, actual, strict=False), start=1):
        if old.text != new.text or old.looks == new.looks:
            continue
        column = next(
            (
                i
                for i, pair in enumerate(zip(old.looks, new.looks, strict=False))
                if pair[0] != pair[1]
            ),
            min(len(old.looks), len(new.looks)),
        )
        kept = old.looks[column] if column < len(old.looks) else "nothing"
        drawn = new.looks[column] if column < len(new.looks) else "nothing"
        looks.append((f"row {number}, from column {column + 1}: kept {kept}, drawn {drawn}",
                      f"  {new.text!r}"))  # fmt: skip
    if looks:
        said.append("Looks, on rows whose text is the same:")
        said += [line for pair in looks[:SHOWN_ROWS] for line in pair]
        if len(looks) > SHOWN_ROWS:
            said.append(f"... and {len(looks) - SHOWN_ROWS} more rows")
    return "\n".join(said)


def explain_failed_snapshot(item: Any) -> str | None:
    """For a test whose snap_compare found a difference: what differs (the plugin pickled both
    frames for its report); None when the test compared no frame or its frame matched."""
    from pytest_textual_snapshot import node_to_report_path

    try:
        data = pickle.loads(node_to_report_path(item).read_bytes())
    except (OSError, KeyError, pickle.UnpicklingError, EOFError):
        return None
    matched, expected, actual = data[0], data[1], data[2]
    if matched or not isinstance(actual, str):
        return None
    if not isinstance(expected, str) or "<svg" not in expected:
        return "No snapshot is kept for this test yet (--snapshot-update writes it)."
    return describe(expected, actual) or "The frames differ, but not in text or cell colours."
