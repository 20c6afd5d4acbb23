"""No test reads or writes the operator's own settings or keymap (tests/conftest.py): a drawer
test saved `diff_wrap = true` in ~/.config/kanban, and the next runs' diff tests failed."""

import os
import subprocess
import sys
from pathlib import Path

from tui.keymap import keymap_path
from tui.settings import save_setting, settings_path


def test_the_settings_and_keymap_a_test_sees_are_not_the_operators() -> None:
    home_config = Path.home() / ".config" / "kanban"
    for path in (settings_path(), keymap_path()):
        assert home_config not in path.parents, path
        assert Path(os.environ["XDG_CONFIG_HOME"]) in path.parents, path
    save_setting("diff_wrap", True)  # what pressing `w` in a drawer does
    assert settings_path().read_text() == "diff_wrap = true\n"
    settings_path().unlink()


def test_a_process_a_test_starts_sees_them_too() -> None:
    seen = subprocess.run(
        [sys.executable, "-c", "from tui.settings import settings_path; print(settings_path())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert Path(seen) == settings_path()
