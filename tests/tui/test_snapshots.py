"""Snapshot tests (pytest-textual-snapshot) of the board at 80x24 and at 160x48 on the fixed demo
board. Update them with `pytest tests/tui/test_snapshots.py --snapshot-update` after a deliberate
change of look, and look at the report before accepting."""

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import demo_board, make_app, until, utc


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    utc()
    path, clock, _ids = demo_board(tmp_path)
    return make_app(path, clock)


async def settle(pilot: Pilot[Any]) -> None:
    await until(pilot, lambda: pilot.app.loaded)  # type: ignore[attr-defined]
    await pilot.pause(0.1)


def test_board_at_80x24(app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_board_at_160x48(app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=(160, 48), run_before=settle)


async def settle_inbox(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await until(pilot, lambda: pilot.app.inbox_items)  # type: ignore[attr-defined]
    await pilot.press("i")
    await pilot.pause(0.2)


def test_inbox_at_80x24(app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle_inbox)


def test_inbox_at_160x48(app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=(160, 48), run_before=settle_inbox)


def test_work_beside_empty_columns_at_80x24(tmp_path: Path, monkeypatch, snap_compare) -> None:  # type: ignore[no-untyped-def]
    """60 todo cards, one review, one blocked, nothing else: empty columns are strips and the
    window starts at todo, so review and blocked are on screen at 80x24."""
    from boardlib import Board, ManualClock
    from tui.screenshots import START_MS, sparse_board

    monkeypatch.chdir(tmp_path)
    utc()
    clock = ManualClock(START_MS)
    sparse_board(tmp_path / "board.db", clock)
    app = make_app(tmp_path / "board.db", clock)
    assert Board  # the board is built through the library, as the screenshots do
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)
