"""The help (`?`) and the message log (`M`): their foot says their keys and how to close them,
and a key they have no use for says so, as every other dialog does (docs/tui.md)."""

from pathlib import Path

import pytest

from tests.tui.conftest import Notes, demo_app, loaded, until
from tests.tui.test_drawer import screen_text


@pytest.mark.parametrize(
    ("opens", "screen", "name"),
    [("question_mark", "HelpScreen", "the help"), ("M", "MessageLogScreen", "the message log")],
)
async def test_a_scrolled_dialog_says_its_keys_and_a_key_without_use(
    tmp_path: Path, opens: str, screen: str, name: str
) -> None:
    """Found driving `kanban demo` in tmux at 80x24: neither said how to close it, and `x` in
    the log showed nothing."""
    app = demo_app(tmp_path)
    notes = Notes()
    hint = "j/k scroll · ctrl+d/ctrl+u page · g/G top/bottom · esc close"
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await loaded(pilot)
        await pilot.press(opens)
        await until(pilot, lambda: type(app.screen).__name__ == screen)
        await until(pilot, lambda: hint in screen_text(app), timeout=5)
        await pilot.press("x")
        await until(pilot, lambda: notes.warnings(), timeout=5)
        assert notes.warnings() == [f": x: does nothing in {name}. {hint}"], notes.warnings()
        assert type(app.screen).__name__ == screen  # still open
        await pilot.press("escape")
        await until(pilot, lambda: type(app.screen).__name__ == "BoardScreen")
