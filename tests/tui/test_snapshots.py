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


async def message_log_open(pilot: Pilot[Any]) -> None:
    """Three things said (a refusal among them), their toasts gone, then `M`."""
    await settle(pilot)
    app = pilot.app
    app.notify("TASK-14 → in progress (you) · f follows it", timeout=0.01)
    app.notify(
        "Approve: only for tasks in review (TASK-14 is todo).", severity="warning", timeout=0.01
    )
    app.notify(
        "task is held by agent-ada",
        title="cancel TASK-7: refused (conflict)",
        severity="error",
        timeout=0.01,
    )
    await pilot.pause(0.3)
    await pilot.press("M")
    await until(pilot, lambda: type(app.screen).__name__ == "MessageLogScreen")
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_message_log(app, snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(app, terminal_size=size, run_before=message_log_open)
