"""Reviewing in depth from the drawer, driven by Textual's pilot on boards with real worktrees
(`tui.review_board`): every tab's last line is reachable at every size with a worktree path long
enough to wrap; long lines pan (with markers) or wrap (kept per operator); `/` searches each tab
with `n`/`N` and a match count in the header; side by side from 160 columns; a comment written on
a diff line is stored with its anchor and shown under that line; files too large to show are one
line; read-only mode offers only the pager."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static, TextArea

from boardlib import Board, ManualClock
from boardlib.worktrees.sor import REVIEW_MD
from tests.tui.conftest import OPERATOR, Notes, until, utc
from tests.tui.test_drawer import opened, overview_text, screen_text
from tui.app import KanbanApp
from tui.components.diff_view import MORE_LEFT, MORE_RIGHT, DiffView
from tui.components.drawer import TaskDrawer
from tui.components.overview_pane import OverviewPane
from tui.components.prompt import PromptDialog
from tui.components.text_pane import TextPane
from tui.diff_rows import HEADER, LINE, LISTED, NOTE, DiffRows, ListedFile, display, text_cells
from tui.review_board import LONG_LINE, START_MS, ReviewBoard, build_review_board

LONG = "a-folder-name-long-enough-to-wrap-the-drawer-header/" * 3


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewBoard]:
    """The review board with its 20,000-line `big` task, built once, under a long path."""
    utc()
    folder = tmp_path_factory.mktemp("review") / LONG
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KANBAN_WORKTREES", str(folder / "worktrees"))
        board = build_review_board(folder, ManualClock(START_MS), big_diff=True)
        patch.setenv("KANBAN_WORKTREES", str(board.worktrees))
        yield board


@pytest.fixture
def review(review_board: ReviewBoard) -> ReviewBoard:
    return review_board


def app_on(board: ReviewBoard, task: str, **kw: Any) -> KanbanApp:
    kw.setdefault("view_settings", {})
    return KanbanApp(
        board.db, poll_ms=30, clock=ManualClock(START_MS + 3_600_000), operator=OPERATOR,
        user_keymap={}, open_task=board.ids[task], **kw,
    )  # fmt: skip


async def diff_tab(pilot: Any, drawer: TaskDrawer) -> DiffView:
    await pilot.press("3")
    await until(pilot, lambda: drawer.workspace is not None and len(drawer.diff.rows) > 1)
    await pilot.pause(0.1)
    return drawer.diff


def file_comments(board: ReviewBoard, task_id: str) -> list[Any]:
    """The task's comments anchored to a file, as stored."""
    with Board(board.db, read_only=True) as reader:
        return [comment for comment in reader.comments(task_id) if comment.path]


def view_text(view: DiffView) -> str:
    return "\n".join(view.text_of_screen())


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48), (240, 60)])
async def test_every_tab_reaches_its_last_line_at_every_size(
    big: ReviewBoard, size: tuple[int, int]
) -> None:
    app = app_on(big, "big")
    async with app.run_test(size=size) as pilot:
        drawer = await opened(pilot, app, big.ids["big"])
        view = await diff_tab(pilot, drawer)
        assert LONG.split("/")[0] not in screen_text(app) or "…" in screen_text(app)
        await pilot.press("G")
        await pilot.pause(0.1)
        last = view.rows.row(len(view.rows) - 1)
        assert last.kind == LINE and last.text == LONG_LINE
        assert "long_line = [" in screen_text(app)  # the diff's true last line, on screen
        assert view.cursor == len(view.rows) - 1
        for key, name in (("2", "files"), ("4", "runs"), ("5", "history")):
            await pilot.press(key)
            await until(pilot, lambda name=name: drawer.active_tab == name)
            pane = drawer.query_one(f"#{name}-pane", TextPane)
            await until(pilot, lambda pane=pane: len(pane.lines) > 0)
            await pilot.press("G")
            await pilot.pause(0.1)
            tail = [line.strip() for line in pane.plain if line.strip()][-1]
            assert tail in screen_text(app), (name, tail)
        await pilot.press("1")
        await pilot.press("G")
        await pilot.pause(0.2)
        overview = drawer.query_one(OverviewPane)
        assert overview.scroll_y == overview.max_scroll_y


WRAP_DIFF = (
    "diff --git a/a.py b/a.py\nindex 1111111..2222222 100644\n--- a/a.py\n+++ b/a.py\n"
    "@@ -1,3 +1,4 @@\n x = 1\n-\ty = 'tab'\t# old\n+\ty = 'tab'\t# new" + "z" * 130 + "\n"
    "+esc = '\x1b[31m' " + "日本語" * 40 + "\n \n\\ No newline at end of file\n"
    "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000..3333333\n"
    "Binary files /dev/null and b/b.bin differ\n"
)


@pytest.mark.parametrize("width", [1, 7, 40, 200])
def test_wrapped_heights_from_the_index_are_each_rows_own(width: int) -> None:
    """The quick layout (no `Row` made) agrees with the rows as drawn: tabs, control characters,
    wide characters, hunk headers, made-up rows."""
    from rich.cells import cell_len

    from boardlib.worktrees.diffs import index_diff

    rows = DiffRows(index_diff(WRAP_DIFF), [ListedFile("big.js", 9, 0, omitted=True, size=10**8)])
    each = [
        max(1, -(-cell_len(display(row.text)) // width)) if row.kind == LINE else 1 for row in rows
    ]
    assert list(rows.wrapped_heights(width)) == each
    if width <= 40:
        assert max(each) > 1  # the long lines do wrap: the case is not all ones
    assert all(text_cells(row.text) == cell_len(display(row.text)) for row in rows)


@pytest.mark.slow
async def test_long_lines_pan_with_markers_or_wrap_and_wrap_is_kept(
    big: ReviewBoard, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = tmp_path / "settings.toml"
    monkeypatch.setenv("KANBAN_SETTINGS", str(settings))
    app = app_on(big, "big", view_settings=None)  # the operator's own settings file
    async with app.run_test(size=(80, 24)) as pilot:
        drawer = await opened(pilot, app, big.ids["big"])
        view = await diff_tab(pilot, drawer)
        await pilot.press("G")
        await pilot.pause(0.1)
        bottom = view.text_of_screen()[-1]
        assert bottom.endswith(MORE_RIGHT) and "END_OF_LONG" not in bottom
        for _ in range(8):
            if "END_OF_LONG" in view.text_of_screen()[-1]:
                break
            await pilot.press("greater_than_sign")
        bottom = view.text_of_screen()[-1]
        assert "END_OF_LONG" in bottom and MORE_LEFT in bottom and not bottom.endswith(MORE_RIGHT)
        assert "→" in str(drawer.query_one("#drawer-state").render())
        await pilot.press("less_than_sign", "less_than_sign", "less_than_sign", "less_than_sign",
                          "less_than_sign", "less_than_sign", "less_than_sign")  # fmt: skip
        assert view.pan_x == 0
        await pilot.press("w")
        await pilot.pause(0.1)
        assert view.wrap and "END_OF_LONG" in view_text(view)  # wrapped, no panning needed
        assert MORE_RIGHT not in view_text(view)
        assert settings.read_text() == "diff_wrap = true\n"
    again = app_on(big, "big", view_settings=None)
    async with again.run_test(size=(80, 24)) as pilot:
        drawer = await opened(pilot, again, big.ids["big"])
        view = await diff_tab(pilot, drawer)
        assert view.wrap  # kept for this operator


@pytest.mark.slow
async def test_arrows_in_the_drawer_never_move_the_board(big: ReviewBoard) -> None:
    app = app_on(big, "big")
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, big.ids["big"])
        board = app.board_screen.board
        column = board.active_status
        for tab in ("1", "3", "4"):
            await pilot.press(tab)
            await pilot.press("right", "right", "left", "shift+right", "l", "h")
            assert board.active_status == column and app.focused is drawer


@pytest.mark.slow
async def test_search_each_tab_with_a_count_and_next_previous(big: ReviewBoard) -> None:
    app = app_on(big, "big")
    async with app.run_test(size=(120, 40)) as pilot:
        drawer = await opened(pilot, app, big.ids["big"])
        view = await diff_tab(pilot, drawer)
        state = drawer.query_one("#drawer-state")
        await pilot.press("slash")
        await pilot.press(*"BIGMARK 19999", "enter")
        await until(pilot, lambda: view.matches)
        assert "match 1/1" in str(state.render())
        row = view.cursor_row()
        assert row is not None and row.text.endswith("# BIGMARK 19999")
        assert "BIGMARK 19999" in view_text(view)
        await pilot.press("slash")
        await pilot.press("ctrl+a", "ctrl+k", *"bigmark 1999", "enter")  # any case: lower case
        await until(pilot, lambda: len(view.matches) == 11)
        first = view.cursor_row()
        await pilot.press("n")
        assert "match" in str(state.render()) and view.match_index is not None
        second = view.cursor_row()
        assert first is not None and second is not None and first.line != second.line
        await pilot.press("N")
        assert view.cursor_row() == first
        # The file list is searched too, and n goes across files.
        await pilot.press("slash")
        await pilot.press("ctrl+a", "ctrl+k", *"module_3", "enter")
        await until(pilot, lambda: view.search_text == "module_3")
        files = {view.rows.file_of(match[0]) for match in view.matches}
        assert len(files) >= 10
        # Runs and History have their own search.
        await pilot.press("5")
        pane = drawer.query_one("#history-pane", TextPane)
        await pilot.press("slash")
        await pilot.press(*"claimed", "enter")
        await until(pilot, lambda: pane.matches)
        assert "match 1/" in str(state.render())
        await pilot.press("3")  # each tab keeps its own search
        assert "match" in str(state.render()) and view.search_text == "module_3"
        await pilot.press("p")  # without a search n/p are files again
        await pilot.press("escape")  # leaves the drawer (search was closed)


@pytest.mark.slow
async def test_side_by_side_from_160_columns(review: ReviewBoard) -> None:
    app = app_on(review, "review")
    async with app.run_test(size=(120, 40)) as pilot:
        drawer = await opened(pilot, app, review.ids["review"])
        view = await diff_tab(pilot, drawer)
        assert drawer.check_action("toggle_side_by_side", ()) is None  # greyed: too narrow
        await pilot.press("s")
        assert not view.side_by_side
    app = app_on(review, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, review.ids["review"])
        view = await diff_tab(pilot, drawer)
        second = view.source.file_rows[1]  # on a file's header, where n leaves the cursor
        view.move_cursor(second)
        header = view.source.row(second)
        await pilot.press("s")
        await pilot.pause(0.2)
        assert view.side_by_side and drawer.has_class("-wide")
        moved = view.source.row(view.cursor)  # found in tmux: it went back to the top
        assert (moved.kind, moved.file) == (header.kind, header.file) == (HEADER, 1)
        assert drawer.region.width == 160
        lines = view.text_of_screen()
        [paired] = [line for line in lines if "def total(items):" in line]
        assert "def total(items, percent=0):" in paired  # old | new on one row
        assert paired.index("def total(items):") < paired.index("│") < paired.index("percent=0")
        await pilot.press("s")
        assert not view.side_by_side and not drawer.has_class("-wide")


@pytest.mark.slow
@pytest.mark.slow
async def test_the_footer_says_w_land_the_help_and_palette_approve_and_land(
    review: ReviewBoard,
) -> None:
    """Found in tmux at 80x24: the drawer's footer "W Approve and land" took 20 of its cells,
    and the hints after it did not fit. The footer says "W Land"; the help and the palette keep
    the whole decision."""
    import io

    from rich.console import Console
    from textual.widgets._footer import FooterKey

    from tui import registry
    from tui.commands import board_commands
    from tui.components.footer import HintFooter
    from tui.components.help_screen import help_table

    app = app_on(review, "review")
    async with app.run_test(size=(80, 24)) as pilot:
        await opened(pilot, app, review.ids["review"])

        def shown() -> dict[str, str]:
            keys = app.screen.query_one(HintFooter).query(FooterKey)
            return {key.key_display: key.description for key in keys if key.visible}

        await until(pilot, lambda: "W" in shown())
        await pilot.pause(0.2)
        assert shown()["W"] == "Land", shown()
        assert "/" in shown(), shown()  # the search hint fits now, after a, R, W and esc
        approve_land = registry.BY_ID["task.approve_land"]
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(help_table({}))
        assert "W  Approve and land" in console.export_text()
        assert approve_land.title == "Approve and land"
        titles = [command.title for command in board_commands(app, app.drawers()[0])]
        assert f"Approve and land {review.ids['review']}" in titles, titles


@pytest.mark.slow  # ~1.4 CPU-s: a review drawer, a comment written and read back
async def test_a_comment_on_a_diff_line_is_anchored_and_shown_under_it(review: ReviewBoard) -> None:
    task_id = review.ids["review"]
    app = app_on(review, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, task_id)
        view = await diff_tab(pilot, drawer)
        target = next(
            number for number, row in enumerate(view.rows)
            if row.kind == LINE and row.sign == "+" and "percent=0" in row.text
        )  # fmt: skip
        view.move_cursor(target)
        row = view.cursor_row()
        assert row is not None and row.new_no is not None
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        assert "def total(items, percent=0):" in screen_text(app)  # the line, quoted
        # on its own line, then the explanation (found in tmux: "...=0):␤␤As operator...")
        asked = str(app.screen.query_one("#dialog-label", Static).render())
        assert "␤" not in asked and asked.split("\n")[2].startswith(f"As {OPERATOR}.")
        app.screen.query_one(TextArea).insert("the default hides a missing argument")
        await pilot.press("ctrl+s")

        await until(pilot, lambda: len(file_comments(review, task_id)) == 1)
        [comment] = file_comments(review, task_id)
        assert (comment.path, comment.line, comment.side) == ("shop/cart.py", row.new_no, "new")
        assert comment.line_text == row.text and comment.author_agent_id == OPERATOR
        worktree = next(review.worktrees.glob(f"*/{task_id}"))
        assert "the default hides a missing argument" in (worktree / REVIEW_MD).read_text()
        where = f"{OPERATOR} on shop/cart.py:{row.new_no}"
        await until(pilot, lambda: where in view_text(view))
        lines = view.text_of_screen()
        at = next(i for i, line in enumerate(lines) if "percent=0):" in line)
        assert where in lines[at + 1] and "missing argument" in lines[at + 2]  # under its line
        await pilot.press("1")
        await until(pilot, lambda: "Review (1 on lines)" in overview_text(drawer))
        assert f"shop/cart.py:{row.new_no}" in overview_text(drawer)
        assert "missing argument" in overview_text(drawer)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        assert "The 1 line comment made since the last review goes back" in app.screen.label_text


@pytest.mark.parametrize(
    ("generated_mb", "file_limit"),
    [
        (1, 512 * 1024),  # the fast loop: the same path under a lowered limit
        pytest.param(50, None, marks=pytest.mark.slow),  # a real 50 MB bundle, default limits
    ],
)
@pytest.mark.slow
async def test_files_too_large_to_show_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated_mb: int, file_limit: int | None
) -> None:
    import tui.drawer_data

    utc()
    monkeypatch.setenv("KANBAN_WORKTREES", str(tmp_path / "worktrees"))
    if file_limit is not None:
        monkeypatch.setattr(tui.drawer_data, "FILE_LIMIT", file_limit)
    board = build_review_board(
        tmp_path, ManualClock(START_MS), big_diff=True, generated_mb=generated_mb
    )
    app = app_on(board, "big")
    async with app.run_test(size=(120, 40)) as pilot:
        drawer = await opened(pilot, app, board.ids["big"])
        view = await diff_tab(pilot, drawer)
        rows = list(view.rows)
        listed = [r.text for r in rows if r.kind == LISTED and "bundle.min.js" in r.text]
        assert listed and f"{generated_mb:.1f} MB: not shown" in listed[0]
        assert any(r.kind == NOTE and "too large to show" in r.text for r in rows)
        assert not any("var bundle" in r.text for r in rows)  # not one byte of it
        assert any(r.kind == LISTED and "logo.png  binary" in r.text for r in rows)
        # one line, as docs/tui.md says (found in tmux: a header "+0 -0" and a note line)
        [binary] = [r.text for r in rows if r.kind == HEADER and "logo.png" in r.text]
        assert "binary, not shown (" in binary and "+0 -0" not in binary
        assert not any(r.kind == NOTE and "binary" in r.text for r in rows)


@pytest.mark.slow
async def test_read_only_offers_only_the_pager(review: ReviewBoard) -> None:
    app = app_on(review, "review", read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        drawer = await opened(pilot, app, review.ids["review"])
        view = await diff_tab(pilot, drawer)
        view.move_cursor(next(n for n, r in enumerate(view.rows) if r.kind == LINE))
        assert drawer.check_action("open_editor", ()) is None
        assert drawer.check_action("open_shell", ()) is None
        assert drawer.check_action("comment_line", ()) is None
        assert drawer.check_action("open_pager", ()) is True
        screen = app.screen
        await pilot.press("o", "exclamation_mark", "c")  # nothing opens, nothing is written
        await pilot.pause(0.2)
        assert app.screen is screen


async def test_the_shell_and_editor_keys_say_why_there_is_no_checkout(review: ReviewBoard) -> None:
    """Found in tmux: `!` and `o` in the drawer of a task whose work had landed said "Shell in
    the worktree: does not apply here.", nothing of why. They say what its checkout is (here
    paused: committed on its branch, the checkout removed), and nothing opens."""
    app = app_on(review, "paused")
    notes = Notes()
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        drawer = await opened(pilot, app, review.ids["paused"])
        view = await diff_tab(pilot, drawer)
        view.move_cursor(next(n for n, r in enumerate(view.rows) if r.kind == LINE))
        screen = app.screen
        await pilot.press("exclamation_mark")
        await until(pilot, lambda: len(notes.warnings()) == 1)
        await pilot.press("o")
        await until(pilot, lambda: len(notes.warnings()) == 2)
        shell, editor = notes.warnings()
        paused = f"no checkout of {review.ids['paused']} to open: "
        assert shell.startswith(f": Shell in the worktree: {paused}"), shell
        assert editor.startswith(f": Open in $editor: {paused}"), editor
        assert "paused" in shell and "does not apply" not in shell + editor
        assert app.screen is screen


def test_the_pager_and_editor_arguments_keep_agent_text_inert(tmp_path: Path) -> None:
    from boardlib.worktrees.diffs import index_diff
    from tui import tools
    from tui.diff_rows import DiffRows

    hostile = "x = '\x1b]52;c;ZXZpbA==\x07 \x1b[2J \r over'"
    text = (
        "diff --git a/-rf b/-rf\nnew file mode 100644\n--- /dev/null\n+++ b/-rf\n"
        f"@@ -0,0 +1,2 @@\n+{hostile}\n+fine\n"
    )
    rows = DiffRows(index_diff(text))
    with tools.pager_file(rows, "TASK-1") as path:
        written = path.read_bytes()
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    import re

    assert re.sub(rb"\x1b\[[0-9;]*m", b"", written).count(b"\x1b") == 0  # only our colours
    assert "␛]52;c;ZXZpbA==␇".encode() in written and b"\r" not in written
    target = tmp_path / "-rf"
    for editor, expected in (
        ("vim", ["vim", "+2", str(target)]),
        ("code --wait", ["code", "--wait", "-g", f"{target}:2"]),
        ("hx", ["hx", f"{target}:2"]),
    ):
        assert tools.editor_command(target, 2, {"EDITOR": editor}) == expected
    assert tools.editor_command(target, 2, {"VISUAL": "nano", "EDITOR": "vim"})[0] == "nano"
    assert tools.pager_command(target, {}) == ["less", "-R", str(target)]
    assert tools.pager_command(target, {"PAGER": "less -S"}) == ["less", "-S", "-R", str(target)]
    assert tools.pager_command(target, {"PAGER": "most"}) == ["most", str(target)]
    assert tools.shell_command({}) == ["/bin/sh"]


@pytest.mark.slow
async def test_a_comment_made_before_the_drawer_opens_shows_under_its_line(
    review: ReviewBoard,
) -> None:
    """The comments arrive before the diff is read (no rows yet): they wait, then show under their
    line, in the unified view, side by side and wrapped."""
    task_id = review.ids["review"]
    with Board(review.db) as writer:
        writer.add_comment(task_id, "make percent required", author_agent_id=OPERATOR,
                           author_type="user", path="shop/cart.py", line=4,
                           line_text="def total(items, percent=0):")  # fmt: skip
    app = app_on(review, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, task_id)
        view = await diff_tab(pilot, drawer)
        for keys in ((), ("s",), ("s", "w")):
            await pilot.press(*keys)
            await until(pilot, lambda: "make percent required" in view_text(view))
            lines = view.text_of_screen()
            at = next(i for i, line in enumerate(lines) if f"{OPERATOR} on shop/cart.py:4" in line)
            assert "percent=0" in lines[at - 1] or "def total(items)" in lines[at - 1], keys


async def test_a_diff_that_cannot_be_read_says_why_not_zero_files(review: ReviewBoard) -> None:
    """Known from stop 46's helpers: with the checkout and its branch gone, the Diff tab read
    "0 files changed, +0 -0", as if the work had changed nothing."""
    import shutil
    import subprocess

    task_id = review.ids["review"]
    [worktree] = review.worktrees.glob(f"*/{task_id}")
    shutil.rmtree(worktree)
    subprocess.run(["git", "-C", str(review.repo), "worktree", "prune"], check=True)
    subprocess.run(
        ["git", "-C", str(review.repo), "branch", "-D", f"kanban/task-{task_id}"],
        check=True, capture_output=True,
    )  # fmt: skip
    app = app_on(review, "review")
    async with app.run_test(size=(120, 40)) as pilot:
        drawer = await opened(pilot, app, task_id)
        await pilot.press("3")
        await until(pilot, lambda: drawer.workspace is not None and len(drawer.diff.rows) >= 1)
        first = next(iter(drawer.diff.rows))
        assert first.kind == NOTE and first.text.startswith("no diff to show: "), first
        assert f"kanban/task-{task_id}" in first.text  # the checkout line's own words
        assert "0 files changed" not in view_text(drawer.diff)


async def test_every_diff_line_is_drawn_in_the_themes_colours(review: ReviewBoard) -> None:
    """A line with nothing to highlight (a .txt line, a .py line with no keyword) was drawn in the
    terminal's default colours (39/49), a dark patch in a light theme: Rich drops a Text's own style
    when it has no spans."""
    task_id = review.ids["review"]
    app = app_on(review, "review", theme="textual-light")
    async with app.run_test(size=(120, 40)) as pilot:
        drawer = await opened(pilot, app, task_id)
        view = await diff_tab(pilot, drawer)
        lines = [(n, row) for n, row in enumerate(view.rows) if row.kind == LINE]
        assert lines
        for n, row in lines:
            strip, _width = view._content_strip(row, n, 0)
            for segment in strip:
                assert segment.style is not None and segment.style.bgcolor is not None, (
                    row.text,
                    segment,
                )


async def test_a_line_that_cannot_anchor_a_comment_says_so_before_the_prompt(
    review: ReviewBoard,
) -> None:
    """On a file named with an escape sequence, `c` opened the prompt, took the comment, then the
    board refused its path and the text was lost. It is said before anything is typed."""
    task_id = review.ids["review"]
    [worktree] = review.worktrees.glob(f"*/{task_id}")
    (worktree / "evil\x1b[31mname.txt").write_text("hello\n")
    notes = Notes()
    app = app_on(review, "review")
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        drawer = await opened(pilot, app, task_id)
        view = await diff_tab(pilot, drawer)
        await until(pilot, lambda: any("name.txt" in row.text for row in view.rows))
        target = next(
            n for n, row in enumerate(view.rows)
            if row.kind == LINE and row.text == "hello" and row.sign == "+"
        )  # fmt: skip
        view.move_cursor(target)
        await pilot.press("c")
        await until(pilot, lambda: any("cannot be anchored" in w for w in notes.warnings()))
        assert not isinstance(app.screen, PromptDialog)
        [warning] = [w for w in notes.warnings() if "cannot be anchored" in w]
        assert "\x1b" not in warning and "c comments on the task as a whole" in warning


async def test_c_on_a_file_header_comments_on_the_file(review: ReviewBoard) -> None:
    """Found in tmux: `n` to a file's header, then `c`, was refused "cannot be anchored to
    checkout.py: side needs a line" (the check before the prompt passed the header's side
    without a line; the write never sends one) and nothing opened. It asks, and the comment is
    anchored to the file."""
    task_id = review.ids["review"]
    notes = Notes()
    app = app_on(review, "review")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        drawer = await opened(pilot, app, task_id)
        view = await diff_tab(pilot, drawer)
        header = next(n for n, row in enumerate(view.rows) if row.kind == HEADER)
        view.move_cursor(header)
        anchor = view.cursor_anchor()
        assert anchor is not None and anchor[1] is None
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        assert not [w for w in notes.warnings() if "cannot be anchored" in w]
        assert "The agent sees it on this file," in app.screen.label_text
        app.screen.query_one(TextArea).insert("split this file")
        await pilot.press("ctrl+s")

        await until(pilot, lambda: len(file_comments(review, task_id)) == 1)
        [comment] = file_comments(review, task_id)
        assert (comment.path, comment.line, comment.body) == (anchor[0], None, "split this file")


async def test_onto_a_wrapped_line_taller_than_the_view_its_start_is_shown() -> None:
    """With wrap on, j onto a 4,700-character line showed the line's end, its number and sign off
    screen above."""
    from textual.app import App, ComposeResult

    from boardlib.worktrees.diffs import index_diff

    added = (
        [f"+line {n}" for n in range(10)] + ["+" + "x" * 3000] + [f"+after {n}" for n in range(40)]
    )
    diff = "\n".join([
        "diff --git a/a.txt b/a.txt", "new file mode 100644", "--- /dev/null", "+++ b/a.txt",
        f"@@ -0,0 +1,{len(added)} @@", *added, "",
    ])  # fmt: skip

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield DiffView()

    app = One()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(DiffView)
        view.show(DiffRows(index_diff(diff)))
        view.set_wrap(True)
        await pilot.pause()
        tall = next(n for n in range(len(view.source)) if view._height_of(n) > view._view_height())
        view.move_cursor(tall - 1, to_top=True)
        await pilot.pause()
        view.move_cursor(tall)
        assert int(view.scroll_offset.y) == view.display_row(tall)
