"""Rough edges an operator found in a day of review and landing in tmux (80x24 and 160x48):
each test here failed before its fix."""

from pathlib import Path
from typing import Any

from tests.tui.conftest import demo_app, loaded, until
from tests.tui.test_trust import palette_results


async def test_the_palette_finds_a_theme_by_its_name(tmp_path: Path) -> None:
    """"light" found nothing: the themes were only behind the palette's "Theme" entry."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        shown = await palette_results(pilot, "light")
        assert "Theme: textual-light" in shown, shown
        chosen: Any = shown.index("Theme: textual-light")
        for _ in range(chosen):
            await pilot.press("down")
        await pilot.press("enter")
        await until(pilot, lambda: app.theme == "textual-light")
