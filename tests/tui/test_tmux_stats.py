"""The stats screen and a budgeted card in a real terminal (tmux), at 80x24 and 160x48: `kanban tui`
on a board with a day of flow behind it (`tui.stats_board`, ending now). The card of a parent
whose subtree spent $4.20 of its $5 shows "$4.20 / $5" in the warning style (not the muted style
of an unbudgeted cost); `S` opens the figures, every line within the pane; and once drawn, the app
writes 0 bytes to the terminal while the board is idle (the pane's output is recorded)."""

import re
import shutil
import time
from pathlib import Path

import pytest

from boardlib import ManualClock
from tests.tui.test_tmux import KANBAN, Tmux, tmux  # noqa: F401  (the fixture)
from tui.stats_board import build_stats_board

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.slow,
]
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def style_before(screen: str, needle: str) -> str:
    """The SGR parameters in force where `needle` starts on its line of `capture-pane -e`."""
    line = next(line for line in screen.splitlines() if needle in line)
    head = line[: line.index(needle)]
    codes = SGR.findall(head)
    active: list[str] = []
    for code in codes:
        if code in ("", "0"):
            active = []
        else:
            active.append(code)
    return ";".join(active)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_the_stats_screen_and_a_budgeted_card_in_tmux(
    tmux: Tmux,  # noqa: F811
    tmp_path: Path,
    size: tuple[int, int],
) -> None:
    db = tmp_path / "board.db"
    build_stats_board(db, ManualClock(time.time_ns() // 1_000_000))
    tmux.start([KANBAN, "tui", "--db", str(db)], size=size)
    tmux.wait_for("$4.20 / $5")
    screen = tmux.screen()
    warning, muted = style_before(screen, "$4.20 / $5"), style_before(screen, "$1.70")
    assert "1" in warning.split(";") and warning != muted  # bold, and not the cost's style
    if size == (160, 48):
        assert "7" in style_before(screen, "$1.35 / $1").split(";")  # spent: the error style
    tmux.keys("S")
    text = tmux.wait_for("Flow · the last 24h")
    for needle in (  # each line may land in its own frame: wait for each, bounded
        "agent-grace",
        "done/h",
        "cost/h",
        "cycle  p50",
        "review p50",
        "wait   <5m",
        "leases 3 expired",
    ):
        tmux.wait_for(needle)
    text = tmux.text()
    assert all(len(line) <= size[0] for line in text.splitlines())
    time.sleep(1.5)  # the last repaint lands
    before = len(tmux.recorded())
    time.sleep(3)
    assert len(tmux.recorded()) == before, "the idle stats screen wrote to the terminal"
    tmux.keys("Escape")
    tmux.wait_for("$4.20 / $5")
