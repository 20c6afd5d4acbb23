"""`kanban tui --open TASK-ID`: the board starts with that task's drawer open; a task that is not
on the board is refused before the terminal is taken over."""

from pathlib import Path

import pytest

from tests.cli.conftest import Kanban
from tests.tui.conftest import demo_board, loaded, make_app, until, utc


def test_open_of_an_unknown_task_is_refused_before_any_screen(tmp_path: Path) -> None:
    kanban = Kanban(tmp_path / "board.db")
    with kanban.board() as board:
        board.create_task("only one")
    error = kanban.refused("tui", "--open", "TASK-99", reason="not_found")
    assert error["id"] == "TASK-99"
    missing = Kanban(tmp_path / "nowhere.db", init=False)
    missing.refused("tui", "--open", "TASK-1", reason="no_board")
    assert not (tmp_path / "nowhere.db").exists()


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_app_opens_the_named_task(tmp_path, monkeypatch, size) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    utc()
    path, clock, ids = demo_board(tmp_path)
    app = make_app(path, clock, open_task=ids["api"])
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        await until(pilot, lambda: app.drawer_task_id() == ids["api"])
        assert app.selected_task().id == ids["api"]  # type: ignore[union-attr]
        assert [d.task_id for d in app.drawers()] == [ids["api"]]
