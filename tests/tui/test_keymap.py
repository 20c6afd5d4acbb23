"""Keys are remappable by binding id, and a typo in the keymap file is refused, not ignored."""

from pathlib import Path

import pytest

from boardlib import Board
from boardlib import transitions as t
from tests.tui.conftest import demo_app, demo_board, loaded, make_app, utc
from tui.keymap import KeymapError, conflicts, known_ids, load_user_keymap


def test_keymap_file_is_read_and_checked(tmp_path: Path) -> None:
    good = tmp_path / "keymap.toml"
    good.write_text('"board.down" = "n"\n"task.create" = "ctrl+n"\n')
    assert load_user_keymap(good) == {"board.down": "n", "task.create": "ctrl+n"}
    bad = tmp_path / "bad.toml"
    bad.write_text('"board.dwon" = "n"\n')
    with pytest.raises(ValueError, match=r"board\.dwon"):
        load_user_keymap(bad)
    assert load_user_keymap(tmp_path / "missing.toml") == {}
    taken = tmp_path / "taken.toml"
    taken.write_text('"task.approve" = "x"\n')  # x cancels
    with pytest.raises(KeymapError, match=r"x would run both task\.cancel and task\.approve"):
        load_user_keymap(taken)
    swapped = tmp_path / "swapped.toml"  # both moved: no clash
    swapped.write_text('"task.approve" = "x"\n"task.cancel" = "ctrl+x"\n')
    assert load_user_keymap(swapped) == {"task.approve": "x", "task.cancel": "ctrl+x"}
    assert conflicts({}) == []  # the registry's own shared keys (W, n, o, c) yield, no clash
    assert {"task.move", "task.done", "board.pause", "app.quit"} <= known_ids()


async def test_a_remapped_key_drives_its_action(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    utc()
    app = demo_app(tmp_path)
    app.set_keymap({"board.down": "ctrl+n"})
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        todo = app.state.columns[t.TODO]
        await pilot.press("ctrl+n")
        assert app.selected_task().id == todo[1]  # type: ignore[union-attr]
        await pilot.press("j")  # the old key no longer moves
        assert app.selected_task().id == todo[1]  # type: ignore[union-attr]


@pytest.mark.slow
async def test_dialog_hints_name_the_keys_as_remapped(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The hint line under a dialog is generated from the registry and the operator's keymap: a
    remapped save key is hinted as it now is, and that key saves."""
    from textual.widgets import Static, TextArea

    from tui.components.prompt import PromptDialog

    monkeypatch.chdir(tmp_path)
    utc()
    path, clock, _ids = demo_board(tmp_path)
    app = make_app(path, clock)
    app.user_keymap = {"prompt.submit": "ctrl+t"}
    app.set_keymap(app.user_keymap)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        task = app.selected_task()
        assert task is not None
        await pilot.press("c")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, PromptDialog)
        hint = str(dialog.query_one(".hint", Static).render())
        assert hint == "ctrl+t save · esc back"
        dialog.query_one(TextArea).insert("looks fine")
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not isinstance(app.screen, PromptDialog)
    with Board(path) as board:
        assert [c.body for c in board.comments(task.id)][-1] == "looks fine"
