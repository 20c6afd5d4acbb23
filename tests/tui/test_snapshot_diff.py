"""The words a failed snapshot test's report carries (tests/tui/snapshot_diff.py), on a kept
snapshot and copies of it changed in text and in colour."""

import pickle
from pathlib import Path

import pytest

from tests.tui.snapshot_diff import describe, explain_failed_snapshot, frame_rows

KEPT = Path(__file__).parent / "__snapshots__" / "test_snapshots"
PREVIEW = (KEPT / "test_landing_preview_in_the_overview_at_80x24.svg").read_text()
CLEAN_LINE = "   ✓ lands cleanly onto main@2d55f48"  # the drawer starts at column 2


def test_the_rows_are_the_frame_as_the_terminal_shows_it() -> None:
    rows = frame_rows(PREVIEW)
    assert len(rows) == 24
    texts = [row.text for row in rows]
    assert texts[0].startswith(" TASK-2  in review  Add a percentage discount to the cart")
    assert CLEAN_LINE in texts
    assert all(len(row.looks) <= 80 for row in rows)


def test_the_same_frame_differs_in_nothing() -> None:
    assert describe(PREVIEW, PREVIEW) == ""
    # as a test draws it: the export numbers its classes (`terminal-2358632695-r1`)
    fresh = PREVIEW.replace("terminal-r", "terminal-2358632695-r")
    assert fresh != PREVIEW and describe(PREVIEW, fresh) == ""


def test_a_text_change_is_a_diff_of_the_rows() -> None:
    said = describe(PREVIEW, PREVIEW.replace("main@2d55f48", "main@0000000"))
    assert f"-{CLEAN_LINE}" in said.splitlines()
    assert f"+{CLEAN_LINE.replace('2d55f48', '0000000')}" in said.splitlines()
    assert "Looks" not in said


def test_a_colour_change_names_the_row_the_column_and_both_looks() -> None:
    # The clean preview's "  ✓ " is bold green (its two spaces too: the line starts in column 2,
    # after the drawer's padding); drawn red, the text is the same.
    rule = ".terminal-r10 { fill: #98e024;font-weight: bold }"
    assert rule in PREVIEW
    said = describe(PREVIEW, PREVIEW.replace(rule, rule.replace("#98e024", "#ff0000")))
    assert "Text" not in said
    row = [row.text for row in frame_rows(PREVIEW)].index(CLEAN_LINE) + 1
    assert f"row {row}, from column 2: kept fill: #98e024;font-weight: bold on " in said
    assert "drawn fill: #ff0000;font-weight: bold on " in said


def test_the_report_reads_the_frames_the_plugin_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the hook in tests/tui/conftest.py reads: the pickle pytest-textual-snapshot writes
    for its own report, found the way it names it."""
    from pytest_textual_snapshot import node_to_report_path

    monkeypatch.setenv("TEXTUAL_SNAPSHOT_TEMPDIR", str(tmp_path))

    class Item:
        def reportinfo(self) -> tuple[Path, int, str]:
            return Path(__file__), 1, "test_a_frame"

    item = Item()
    changed = PREVIEW.replace("main@2d55f48", "main@0000000")
    record = (False, PREVIEW, changed, None, __file__, 1, "test_a_frame", "", None, True)
    node_to_report_path(item).write_bytes(pickle.dumps(record))
    said = explain_failed_snapshot(item)
    assert said is not None and "+   ✓ lands cleanly onto main@0000000" in said
    node_to_report_path(item).write_bytes(pickle.dumps((True, PREVIEW, PREVIEW, *record[3:])))
    assert explain_failed_snapshot(item) is None
