"""The task drawer on a board built with real git worktrees (`tui.review_board`), driven by
Textual's pilot: every tab shows what the library and the database say, a live change refreshes
the open tab without losing its scroll, the worktree is read only while its tab is visible, and
the review keys go through the board's rules."""

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TextArea

from boardlib import Board, ManualClock
from boardlib import transitions as t
from boardlib.narration import ROUTINE, narrate
from boardlib.records import EXECUTION_SUCCEEDED
from boardlib.worktrees import SOR_FILES, Worktrees
from tests.tui.conftest import OPERATOR, Notes, answer, text_of, until
from tui.app import KanbanApp
from tui.components.diff_view import HEADER, LINE, DiffView
from tui.components.drawer import TaskDrawer
from tui.components.drawer_screen import DrawerScreen
from tui.components.files_pane import FilesPane
from tui.components.prompt import PromptDialog
from tui.components.text_pane import TextPane
from tui.review_board import START_MS, ReviewBoard


@pytest.fixture
def review(review_board: ReviewBoard) -> tuple[ReviewBoard, ManualClock]:
    return review_board, ManualClock(START_MS + 3_600_000)


def app_on(board: ReviewBoard, clock: ManualClock, task: str | None = None, **kw: Any) -> KanbanApp:
    return KanbanApp(
        board.db, poll_ms=30, clock=clock, operator=OPERATOR, user_keymap={},
        open_task=board.ids[task] if task else None, **kw,
    )  # fmt: skip


def screen_text(app: KanbanApp) -> str:
    """What the terminal shows, line by line (the compositor's strips as plain text)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


async def shows(pilot: Any, app: KanbanApp, *needles: str) -> str:
    """Wait until the screen shows every needle (a drawer renders in steps); its text."""
    await until(pilot, lambda: all(n in screen_text(app) for n in needles))
    return screen_text(app)


def overview_text(drawer: TaskDrawer) -> str:
    """The Overview's text below the description, whatever is scrolled into view."""
    from textual.widgets import Static

    return text_of(drawer.query_one("#overview-rest", Static).content)


def _board_state(app: KanbanApp, task_id: str) -> str:
    view = app.board_screen.board
    column = view.active
    task = app.state.tasks.get(task_id)
    return (
        f"active column {view.active_status} (collapsed {column.collapsed}, ids "
        f"{column.ids[:5]}, selected {column.selected_id}); {task_id} is "
        f"{task.status if task else 'gone'}"
    )


def drawer_of(app: KanbanApp) -> TaskDrawer:
    [drawer] = [d for d in app.drawers() if d.screen is app.screen]
    return drawer


async def opened(pilot: Any, app: KanbanApp, task_id: str) -> TaskDrawer:
    # The drawer's screen names its task before the drawer is mounted on it: wait for both (under
    # a loaded CI machine the query found no drawer yet).
    def shown() -> bool:
        drawers = [d for d in app.drawers() if d.screen is app.screen]
        return app.drawer_task_id() == task_id and len(drawers) == 1

    await until(pilot, shown)
    drawer = drawer_of(app)
    await until(pilot, lambda: drawer.data is not None and drawer.data.task_id == task_id)
    await pilot.pause(0.1)
    return drawer


async def on_tab(pilot: Any, drawer: TaskDrawer, key: str, name: str) -> None:
    await pilot.press(key)
    await until(pilot, lambda: drawer.active_tab == name)
    if name in ("files", "diff"):
        await until(
            pilot,
            lambda: drawer.workspace is not None and drawer.workspace.task_id == drawer.task_id,
        )
    await pilot.pause(0.1)


@pytest.mark.slow  # a long scripted session of the app
async def test_every_tab_shows_what_the_board_and_the_worktree_hold(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    task_id = board.ids["review"]
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, task_id)
        assert drawer.beside and isinstance(app.screen, type(app.board_screen))  # beside the board
        assert app.focused is drawer
        text = await shows(pilot, app, "1 Overview", "5 History", "link: https://example.com")
        assert "Add a percentage discount to the cart" in text
        assert "percentage discount" in text and "**" not in text  # Markdown, rendered
        assert "link: https://example.com/pricing" in text  # a link is words, not an action
        assert "waits on" in text and board.ids["base"] in text
        # a status as the board's columns say it, not its stored name (`in_review`)
        assert "status  in review" in text

        await on_tab(pilot, drawer, "2", "files")
        with Board(board.db, read_only=True) as reader:
            detail = Worktrees(reader).detail(task_id)
        files = drawer.query_one(FilesPane)
        assert list(files.shown) == [name for name in SOR_FILES if name in detail.sor_files]
        assert files.shown == detail.sor_files  # exactly the detail route's contents
        text = await shows(pilot, app, "CHECKED OUT", "review the rounding rule with the product")
        assert "rounding of negative totals is untested" in text  # blockers called out

        await on_tab(pilot, drawer, "3", "diff")
        view = drawer.query_one(DiffView)
        headers = [row.text for row in view.rows if row.kind == HEADER]
        assert [h.split()[0] for h in headers] == ["shop/cart.py", "shop/discounts.py",
                                                    "tests/test_discounts.py"]  # fmt: skip
        assert not any(name in row.text for row in view.rows for name in SOR_FILES)
        signs = {row.sign for row in view.rows if row.kind == LINE}
        assert {"+", "-", " "} <= signs
        shown = "\n".join(view.text_of_screen())
        assert "3 files changed, +23 -2" in shown
        assert "- def total(items):" in shown and "+ def total(items, percent=0):" in shown

        await on_tab(pilot, drawer, "4", "runs")
        with Board(board.db, read_only=True) as reader:
            runs = reader.executions(task_id)
        text = screen_text(app)
        for run in runs:
            assert run.executor_type in text and run.status in text
        assert "total cost $0.21" in text and "41,200/6,300" in text

        await on_tab(pilot, drawer, "5", "history")
        with Board(board.db, read_only=True) as reader:
            events = [e for e in reader.events(task_id=task_id) if e.kind not in ROUTINE]
        text = screen_text(app)
        for event in events:
            if event.kind != "verification_recorded":
                assert narrate(event).split(":")[0][:60] in text, event
        lines = [line for line in text.splitlines() if "finished" in line or "claimed" in line]
        assert lines and text.index("finished") < text.index("claimed")  # newest first


@pytest.mark.slow  # a long scripted session of the app
async def test_files_of_a_paused_worktree_and_of_a_task_without_one(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    app = app_on(board, clock, "paused")
    async with app.run_test(size=(80, 24)) as pilot:
        drawer = await opened(pilot, app, board.ids["paused"])
        assert isinstance(app.screen, DrawerScreen) and not drawer.beside  # 80x24: full screen
        await until(pilot, lambda: "paused: all work committed" in overview_text(drawer))
        assert "paused  paused" not in overview_text(drawer)  # the state named once
        await on_tab(pilot, drawer, "2", "files")
        text = await shows(pilot, app, "PAUSED", "What a cold resume rebuilds")
        assert "all work committed on kanban/task-" in text
        await pilot.press("end")
        await pilot.pause(0.1)
        app.go_to_linked(board.ids["research"])
        await until(pilot, lambda: drawer.task_id == board.ids["research"])
        await until(pilot, lambda: drawer.workspace is not None
                    and drawer.workspace.task_id == board.ids["research"])  # fmt: skip
        text = await shows(pilot, app, "No workspace")
        assert "research task" in text
        # Done with an empty diff: the Overview says cleaned, not the row's "active".
        app.go_to_linked(board.ids["empty"])
        await on_tab(pilot, drawer, "1", "overview")
        await until(
            pilot, lambda: "cleaned  worktree and branch kanban/task-" in overview_text(drawer)
        )


@pytest.mark.slow  # a long scripted session of the app
async def test_a_live_change_refreshes_the_open_tab_and_keeps_its_scroll(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    task_id = board.ids["review"]
    app = app_on(board, clock, "review")
    async with app.run_test(size=(80, 24)) as pilot:
        drawer = await opened(pilot, app, task_id)
        await on_tab(pilot, drawer, "3", "diff")
        view = drawer.query_one(DiffView)
        await pilot.press("ctrl+d", "j", "j")  # a page down, then the cursor two lines on
        top, cursor = view.scroll_offset.y, view.cursor
        assert top > 0 and cursor > top
        before = len(view.rows)
        # An agent edits the worktree; the database does not change. The open Diff tab notices.
        worktree = board.worktrees.glob(f"*/{task_id}").__next__()
        with (worktree / "shop" / "discounts.py").open("a") as handle:
            handle.write("\n\nFREE_SHIPPING_FROM = 5000\n")
        await until(pilot, lambda: len(view.rows) == before + 3)
        assert any("FREE_SHIPPING_FROM" in row.text for row in view.rows)
        assert (view.scroll_offset.y, view.cursor) == (top, cursor)  # the reader stays there

        # A board change (a comment from another process) refreshes History in place.
        await on_tab(pilot, drawer, "5", "history")
        with Board(board.db) as agent:
            agent.add_comment(task_id, "one more look please", author_agent_id="agent-linus")
        await until(pilot, lambda: "one more look please" in screen_text(app))

        # Hidden tabs are not polled: on Overview an edit is not read...
        await on_tab(pilot, drawer, "1", "overview")
        seen = drawer.workspace.fingerprint if drawer.workspace else None
        with (worktree / "shop" / "discounts.py").open("a") as handle:
            handle.write("MORE = 1\n")
        await pilot.pause(3.0)  # longer than the poll interval
        assert drawer.workspace is not None and drawer.workspace.fingerprint == seen
        # ...until Files or Diff is on screen again.
        await on_tab(pilot, drawer, "3", "diff")
        await until(pilot, lambda: any("MORE = 1" in row.text for row in view.rows))


@pytest.mark.slow  # a long scripted session of the app (over 10 s under load)
async def test_review_from_the_drawer_goes_through_the_board_rules(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    async with review_drawer(review) as (app, pilot, drawer, notes):
        task_id = drawer.task_id
        await on_tab(pilot, drawer, "3", "diff")  # the operator reads the diff, then judges
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        app.screen.query_one(TextArea).insert("rounding negative totals must be tested")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: _row(board, task_id)["status"] == "todo")
        with Board(board.db, read_only=True) as reader:
            comments = reader.comments(task_id)
            events = reader.events(task_id=task_id)
        assert comments[-1].body == "rejected: rounding negative totals must be tested"
        assert comments[-1].author_agent_id == OPERATOR
        assert events[-1].data["verb"] == "reject" and events[-1].actor == OPERATOR
        assert not notes.errors()

    # Self-review is refused: the operator built this one (held it), so may not approve it.
    with Board(board.db, clock=clock) as operator_board:
        operator_board.claim(task_id, OPERATOR)
        operator_board.complete(task_id, OPERATOR, summary="fixed it myself")
    before = _row(board, task_id)
    notes = Notes()
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        drawer = await opened(pilot, app, task_id)
        await pilot.press("a")
        await until(pilot, lambda: notes.errors())
        assert "self_review" in notes.errors()[0]
        assert _row(board, task_id) == before  # refused, nothing changed

        # Another agent's work in review: approve from the drawer.
        with Board(board.db, clock=clock) as agents:
            other = agents.create_task("Another change")
            agents.claim(other.id, "agent-linus")
            agents.complete(other.id, "agent-linus")
        await until(pilot, lambda: other.id in app.state.tasks)
        app.go_to_linked(other.id)
        await until(pilot, lambda: drawer.task_id == other.id and drawer.data is not None
                    and drawer.data.task_id == other.id)  # fmt: skip
        drawer.focus()
        await pilot.press("a")
        await until(pilot, lambda: _row(board, other.id)["status"] == "done")
        assert json.loads(_row(board, other.id)["verification"])["reviews"][-1]["reviewer"] == (
            OPERATOR
        )

        # `d` is done-with-override, as on the board: confirmed, then audited.
        with Board(board.db, clock=clock) as agents:
            held = agents.create_task("Held by an agent")
            agents.claim(held.id, "agent-linus")
        await until(pilot, lambda: held.id in app.state.tasks)
        app.go_to_linked(held.id)
        await until(pilot, lambda: drawer.data is not None and drawer.data.task_id == held.id)
        drawer.focus()
        await pilot.press("d")
        await answer(pilot, "y")
        await until(pilot, lambda: _row(board, held.id)["status"] == "done")
        with Board(board.db, read_only=True) as reader:
            assert reader.audit(held.id)[-1].action == "human_override"


async def test_a_key_refused_in_the_drawer_names_the_drawers_task(review) -> None:  # type: ignore[no-untyped-def]
    """At 160x48, approve the only card in review from the drawer beside the board; the column is
    empty, the drawer still shows the task (done now), and `a` and `m` said "no task selected" (the
    board's selection) while the drawer's `c` commented on it. A refused key says why for the task
    of whatever bound it."""
    board, _clock = review
    async with review_drawer(review) as (app, pilot, drawer, notes):
        task_id = drawer.task_id
        drawer.focus()
        await pilot.press("a")
        await until(pilot, lambda: _row(board, task_id)["status"] == "done")
        await until(pilot, lambda: app.board_screen.board.selected_task is None)
        await until(pilot, lambda: app.state.tasks[task_id].status == "done")
        assert app.drawer_task_id() == task_id and app.focused is drawer
        await pilot.press("a")
        await until(pilot, lambda: notes.warnings())
        said = notes.warnings()[-1]
        assert "no task selected" not in said and f"{task_id} is done" in said, said
        await pilot.press("c")  # and the drawer's own keys go on acting on it
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        assert app.screen.title_text == f"Comment on {task_id}"


@asynccontextmanager
async def review_drawer(review: tuple[ReviewBoard, ManualClock]) -> AsyncIterator[Any]:
    """The app at 160x48 with the task in review open in the drawer beside the board: the app,
    its pilot, the drawer and the notifications seen."""
    board, clock = review
    notes = Notes()
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        yield app, pilot, await opened(pilot, app, board.ids["review"]), notes


def _row(board: ReviewBoard, task_id: str) -> dict[str, Any]:
    with sqlite3.connect(board.db) as conn:
        conn.row_factory = sqlite3.Row
        return dict(conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone())


@pytest.mark.slow  # a long scripted session of the app
async def test_beside_the_board_the_board_stays_navigable_and_the_drawer_follows(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    app = app_on(board, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.loaded)
        # The app's clock is an hour on: the orphan pass of its writable open releases the two
        # lapsed leases, moving cards out of in_progress. Navigate once that has happened (under
        # load it used to land between the jump and `j`, emptying the column under the cursor).
        await until(pilot, lambda: app.state.tasks[board.ids["paused"]].status == "todo")
        app.jump_to(board.ids["paused"])
        await pilot.press("enter")
        drawer = await opened(pilot, app, board.ids["paused"])
        assert drawer.beside and app.focused is drawer
        await pilot.press("tab")  # the keys go back to the board; the drawer stays open
        assert app.focused is None and app.drawer_task_id() == board.ids["paused"]
        await pilot.press("j")

        def moved() -> bool:
            task = app.selected_task()
            return task is not None and task.id != board.ids["paused"]

        try:
            await until(pilot, moved)
        except AssertionError:  # seen twice in CI under load, never locally: say what was there
            task = app.selected_task()
            raise AssertionError(
                f"j did not move off {board.ids['paused']}: selected "
                f"{task.id if task else None}, focused {app.focused!r}, screen {app.screen!r}, "
                f"drawer {app.drawer_task_id()}; {_board_state(app, board.ids['paused'])}"
            ) from None
        selected = app.selected_task()
        assert selected is not None and selected.id != board.ids["paused"]
        await until(pilot, lambda: drawer.data is not None and drawer.data.task_id == selected.id)
        await pilot.press("tab")
        assert app.focused is drawer
        await pilot.press("escape")
        await until(pilot, lambda: app.drawer_task_id() is None)
        # Narrowing the terminal moves an open drawer to full screen, same task and tab.
        await pilot.press("enter")
        drawer = await opened(pilot, app, selected.id)
        await pilot.press("4")
        await pilot.resize_terminal(100, 30)
        await until(pilot, lambda: isinstance(app.screen, DrawerScreen))
        await until(pilot, lambda: drawer_of(app).active_tab == "runs")
        assert app.drawer_task_id() == selected.id


HOSTILE = "pwn[@click=app.quit]x[/] \x1b]52;c;ZXZpbA==\x07 \x1b[2J \r end"


@pytest.mark.slow  # a long scripted session of the app
async def test_hostile_agent_text_renders_literally_and_runs_nothing(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    task_id = board.ids["review"]
    with Board(board.db, clock=clock) as agent:
        agent.update_task(task_id, title=HOSTILE.replace("\r", " "))
        agent.add_comment(task_id, HOSTILE, author_agent_id="agent-linus")
        runner = agent.create_task("victim")
        agent.claim(runner.id, "agent-linus")
        # An executor is a name (no control character); its markup is still only characters.
        run = agent.open_execution(runner.id, "pwn[@click=app.quit]x[/]", agent="agent-linus")
        agent.close_execution(run.id, "failed", agent="agent-linus", error=HOSTILE)
    worktree = next(board.worktrees.glob(f"*/{task_id}"))
    (worktree / "task-progress.md").write_text(f"# {HOSTILE}\n\n[{HOSTILE}](app.quit)\n")
    (worktree / "hostile.txt").write_text(f"{HOSTILE}\n")
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 60)) as pilot:
        drawer = await opened(pilot, app, task_id)
        for key, name in (("1", "overview"), ("2", "files"), ("3", "diff")):
            await on_tab(pilot, drawer, key, name)
            if name == "diff":
                view = drawer.query_one(DiffView)
                await until(pilot, lambda v=view: any("pwn" in row.text for row in v.rows))
                row = next(i for i, r in enumerate(view.rows) if "pwn" in r.text)
                view.scroll_to(y=row, animate=False, immediate=True)
            text = await shows(pilot, app, "[@click=app.quit]")  # drawn as the characters it is
            assert "\x1b" not in text and "\r" not in text and "\x07" not in text
            assert "␛]52;c;ZXZpbA==␇" in text  # the attempt, visible
            # Clicking the planted "action" does nothing: the app is still here.
            for y, line in enumerate(text.splitlines()):
                if "[@click=app.quit]" in line:
                    await pilot.click(offset=(line.index("[@click") + 3, y))
                    break
            await pilot.pause(0.1)
            assert app.is_running
        app.go_to_linked(runner.id)
        await until(pilot, lambda: drawer.data is not None and drawer.data.task_id == runner.id)
        await on_tab(pilot, drawer, "4", "runs")
        text = await shows(pilot, app, "[@click=app.quit]")
        assert "\x1b" not in text
        await on_tab(pilot, drawer, "5", "history")
        assert app.is_running


@pytest.mark.slow
async def test_the_demo_says_it_finished_on_the_board(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    notes = Notes()
    calls: list[dict[str, int]] = []

    def announce(counts: dict[str, int]) -> str | None:
        calls.append(counts)
        return "demo finished: 5 done, 1 cancelled; q quits, the folder is removed"

    app = app_on(board, clock, announce=announce)
    async with app.run_test(size=(120, 30), message_hook=notes) as pilot:
        await until(pilot, lambda: notes.seen)
        assert notes.seen[0].notification.message.startswith("demo finished: 5 done")
        with Board(board.db) as agent:
            agent.add_comment(board.ids["base"], "later change")
        await pilot.pause(0.5)
        assert len(calls) == 1 and len(notes.seen) == 1  # said once
        assert notes.seen[0].notification.timeout <= 15  # a toast that goes: it covered the diff
        header = app.board_screen.header  # ... and the header keeps it
        assert header.facts.note.startswith("demo finished: 5 done, 1 cancelled; q quits")
    app = app_on(board, clock, announce=announce)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.board_screen.header.facts.note != "")
        shown = str(app.board_screen.header.render())
        assert "demo finished: 5 done, 1 cancelled" in shown and "q quits" not in shown


def test_agent_markdown_loses_its_links_html_and_controls() -> None:
    from tui.drawer_render import safe_markdown

    text = safe_markdown(
        "see [docs](app.quit) and ![x](file:///etc/passwd) <https://evil.example> "
        "<script>alert(1)</script> \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"
    )
    assert "](" not in text and "<script>" not in text.replace("`<script>`", "")
    assert "docs (`link: app.quit`)" in text and "x (`image: file:///etc/passwd`)" in text
    assert "`https://evil.example`" in text and "\x1b" not in text and "␛]8;;" in text


def test_a_cut_diff_names_the_files_it_could_not_show() -> None:
    from boardlib.worktrees.diffs import index_diff
    from tui.diff_rows import NOTE, DiffRows, ListedFile

    text = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n-x\n+y\n"
    rows = DiffRows(
        index_diff(text, truncated=True),
        [ListedFile("a.py", 3, 3), ListedFile("b.py", 10, 0)],
        truncated=True,
        limit_bytes=2 * 1024 * 1024,
    )
    texts = [row.text for row in rows]
    assert texts[0] == "2 files changed, +13 -3"
    assert "the diff was cut at 2.0 MB; 1 file(s) not shown (marked below)" in texts
    assert any(t.startswith("? b.py  +10 -0  (cut: not shown)") for t in texts)
    assert any(row.kind == NOTE and "cut here" in row.text for row in rows)


@pytest.mark.slow  # a long scripted session of the app
async def test_drawer_keys_tabs_files_ends_links_and_comments(review) -> None:  # type: ignore[no-untyped-def]
    from tui.components.link_menu import LinkMenu

    board, clock = review
    task_id = board.ids["review"]
    app = app_on(board, clock, "review")
    async with app.run_test(size=(80, 24)) as pilot:
        drawer = await opened(pilot, app, task_id)
        await pilot.press("right_square_bracket")
        assert drawer.active_tab == "files"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert drawer.active_tab == "history"  # cycles round
        await on_tab(pilot, drawer, "3", "diff")
        view = drawer.query_one(DiffView)
        await until(pilot, lambda: len(view.file_rows) == 3)
        await pilot.press("n")
        assert view.scroll_offset.y == view.file_rows[0] == view.cursor
        await pilot.press("n")
        assert view.scroll_offset.y == view.file_rows[1] == view.cursor
        await pilot.press("p")
        assert view.scroll_offset.y == view.file_rows[0] == view.cursor
        await pilot.press("G")
        assert view.scroll_offset.y == view.max_scroll_y > 0
        assert view.cursor == len(view.rows) - 1
        await pilot.press("g")
        assert view.scroll_offset.y == 0 == view.cursor
        # `o` on the Overview: to a task it waits on, or one waiting on it (on the Diff tab it
        # opens the editor).
        await pilot.press("1")
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, LinkMenu))
        await pilot.press("enter")  # the first: what it waits on
        await until(pilot, lambda: drawer.task_id == board.ids["base"])
        assert app.selected_task().id == board.ids["base"]  # type: ignore[union-attr]
        # `c`: a comment as the operator.
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        app.screen.query_one(TextArea).insert("looks right to me")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: _comments(board, board.ids["base"])[-1:] == [
            (OPERATOR, "looks right to me")
        ])  # fmt: skip


def _comments(board: ReviewBoard, task_id: str) -> list[tuple[str | None, str]]:
    with Board(board.db, read_only=True) as reader:
        return [(c.author_agent_id, c.body) for c in reader.comments(task_id)]


async def test_a_resize_under_another_screen_moves_the_drawer_when_the_board_returns(
    review,  # type: ignore[no-untyped-def]
) -> None:
    """Drawer beside the board at 160x48, `i`, the terminal shrunk to 80x24, esc: the drawer stayed
    beside a board squeezed to 15 columns."""
    board, clock = review
    task_id = board.ids["review"]
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, task_id)
        assert drawer.beside
        await pilot.press("i")
        await until(pilot, lambda: app.screen is not app.board_screen)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.1)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, DrawerScreen))
        assert app.screen.drawer.task_id == task_id and not app.screen.drawer.beside


def test_claimed_by_names_the_current_attempt_not_the_first_claimer(tmp_path: Path) -> None:
    """After agent-ada's claim was released and agent-bob claimed the task, the drawer still said
    "claimed by agent-ada" (the first claimer, which the board keeps for the review rule)."""
    import re

    from tests.tui.test_inert_rendering import rendered
    from tui.drawer_data import read_task
    from tui.drawer_render import overview_head

    with Board(tmp_path / "board.db", clock=ManualClock(START_MS)) as board:
        task = board.create_task("Pick a payment provider")
        claimed = board.claim(task.id, "agent-ada")
        board.release(task.id, "agent-ada", epoch=claimed.claim_epoch)
        board.claim(task.id, "agent-bob")
        drawn = rendered(overview_head(read_task(board, task.id).view, START_MS))
    facts = dict(re.findall(r"^\s*(\S.*?)  +(\S+)\s*$", drawn, re.MULTILINE))
    assert facts["claimed by"] == "agent-bob", drawn
    assert facts["first claimed by"] == "agent-ada", drawn


def test_a_done_card_names_whoever_did_the_work_as_the_drawer_does(tmp_path: Path) -> None:
    """Once the drawer named the current attempt's claimer, a done card still showed `claimed_by`,
    the task's first claimer, whose attempt was released before agent-bob did the work the card
    shows. Both now follow `Task.attempt_claimer`."""
    from tests.tui.test_inert_rendering import PALETTE, rendered
    from tui.cards import card_lines
    from tui.drawer_data import read_task
    from tui.drawer_render import overview_head

    with Board(tmp_path / "board.db", clock=ManualClock(START_MS)) as board:
        task = board.create_task("Pick a payment provider")
        claimed = board.claim(task.id, "agent-ada")
        board.release(task.id, "agent-ada", epoch=claimed.claim_epoch)
        board.claim(task.id, "agent-bob")
        board.complete(task.id, "agent-bob")
        done = board.approve(task.id, "agent-cy")
        drawn = rendered(overview_head(read_task(board, task.id).view, START_MS))
    meta = card_lines(done, 60, PALETTE, now_ms=START_MS)[2].text
    assert "agent-bob" in meta and "agent-ada" not in meta, meta
    assert "claimed by" in drawn and "agent-bob" in drawn.split("claimed by")[1], drawn


def _footer_shows(app: KanbanApp) -> list[str]:
    """The hints the footer shows whole, in order, greyed ones marked with a leading `~`."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    keys = app.screen.query_one(Footer).query(FooterKey)
    return [
        ("~" if key.disabled else "") + key.key_display
        for key in keys
        if key.visible and not key.has_class("-command-palette")
    ]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_footer_leads_with_the_decision_the_task_waits_on(review, size) -> None:  # type: ignore[no-untyped-def]
    """In tmux the drawer's footer of a task in review showed `esc Back / Search c Comment tab
    To the board m Move` and ran out of room before `a`, `R` and `W`; on a done task not yet
    landed, greyed `m Move` and `a Approve` took the room `W` Land needed. The footer leads
    with the keys that decide the task where they apply, and greyed ones go last, so a short
    footer leaves them out first."""
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=size) as pilot:
        await opened(pilot, app, board.ids["review"])
        await until(pilot, lambda: _footer_shows(app)[:3] == ["a", "R", "W"])
    with Board(board.db, clock=clock) as writer:
        writer.approve(board.ids["review"], "agent-linus")
    app = app_on(board, clock, "review")
    async with app.run_test(size=size) as pilot:
        await opened(pilot, app, board.ids["review"])
        await until(pilot, lambda: _footer_shows(app)[:1] == ["W"])
        shown = _footer_shows(app)
        greyed = [i for i, key in enumerate(shown) if key.startswith("~")]
        assert all(i > j for i in greyed for j, key in enumerate(shown) if j not in greyed), shown

        def last_line() -> str:
            return screen_text(app).splitlines()[-1].lstrip()

        # the footer's keys are set before they are drawn: read at once, the screen's last line
        # was blank under load (a bound, not a pause: the line never drawn still fails)
        await until(pilot, lambda: last_line().startswith("W Land"))


MARKUP = "[b]shipped[/b] [@click=app.quit]the parser[/]"
NOTE_STARTS = "(timed out by reconciliation) lease expired at"


async def test_a_runs_note_has_its_own_line_not_the_executor_column(tmp_path: Path) -> None:
    """Found by an operator: the Runs tab put a run's note ("(timed out by reconciliation) lease
    expired at ...") in the narrow executor column, wrapped to six lines and cut with "…". It
    has its own lines under the run's row, the pane's whole width, and the row keeps its figures;
    an agent's words in the note stay inert."""
    clock = ManualClock(START_MS)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        task = board.create_task("Lapse a lease")
        board.claim(task.id, "agent-ada", lease_ms=60_000)
        first = board.open_execution(task.id, "codex", agent="agent-ada")
        board.close_execution(first.id, EXECUTION_SUCCEEDED, agent="agent-ada", summary=MARKUP)
        board.open_execution(task.id, "codex", agent="agent-ada")
        clock.advance(ms=5 * 60_000)
        board.reconcile_stale_tasks()
        run = next(run for run in board.executions(task.id) if run.recovery_tombstone)
    assert run.error
    app = KanbanApp(
        path, poll_ms=30, clock=clock, operator=OPERATOR, user_keymap={}, open_task=task.id
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, DrawerScreen))
        await pilot.press("4")
        text = await shows(pilot, app, "2 run(s)")
        lines = [line.strip() for line in text.splitlines()]
        row = next(line for line in lines if line.startswith("codex"))
        assert row.split()[:3] == ["codex", "·", "agent-ada"], text
        assert f"{t.label(run.status)} " in row and "10:00:00" in row, text
        starts = [n for n, line in enumerate(lines) if line.startswith(NOTE_STARTS)]
        assert len(starts) == 1, text  # the note's words on one line, not a column's width
        note = " ".join(lines[starts[0] : starts[0] + 3])
        assert run.error.split()[0] in note and "…" not in note, text
        assert MARKUP in " ".join(lines), text  # drawn as written, never as markup


async def test_beside_the_board_the_footer_spans_the_screen_under_the_drawer(review) -> None:  # type: ignore[no-untyped-def]
    """Found in a 160x48 screenshot: with the drawer beside the board the footer ran under the
    board alone (80 cells: "W Approve and land" and the rest crowded as at 80x24) and the drawer
    down to the last row. The footer spans the screen; the drawer stands on it, nothing over its
    last line, and the board, header and activity pane keep the rest."""
    from tui.components.activity_pane import ActivityPane
    from tui.components.board_screen import BoardScreen
    from tui.components.footer import HintFooter
    from tui.components.header_bar import HeaderBar

    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, board.ids["review"])
        screen = app.screen
        assert isinstance(screen, BoardScreen) and drawer.beside
        await pilot.press("A")  # the activity pane: docked under the board, beside the drawer
        await pilot.pause(0.2)
        footer = screen.query_one(HintFooter).region
        assert (footer.x, footer.width, footer.bottom) == (0, 160, 48), footer
        side = drawer.region
        assert side.right == 160 and side.bottom == footer.y, (side, footer)
        assert screen.board.region.right <= side.x, (screen.board.region, side)  # whole columns
        for widget in (screen.query_one(HeaderBar), screen.query_one(ActivityPane)):
            assert widget.display and widget.region.right == side.x, (widget.region, side)
        await until(pilot, lambda: _footer_shows(app)[:3] == ["a", "R", "W"])
        assert "/" in _footer_shows(app), _footer_shows(app)  # the room: more keys are said


async def test_the_workspace_says_checked_out_once(review) -> None:  # type: ignore[no-untyped-def]
    """The Overview read `checked out checked out at /tmp/.../TASK-32 on kanban/task-TASK-32` and
    the Files tab `CHECKED OUT checked out at ...`, the state's name and then the summary that
    starts with it."""
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        drawer = await opened(pilot, app, board.ids["review"])
        await until(pilot, lambda: "checked out at" in overview_text(drawer).lower())
        [line] = [s for s in overview_text(drawer).splitlines() if "checked out" in s.lower()]
        assert line.lower().count("checked out") == 1, line
        assert line.split()[:3] == ["checked", "out", "at"], line
        await pilot.press("2")
        text = await shows(pilot, app, "CHECKED OUT")
        [line] = [s for s in text.splitlines() if "CHECKED OUT" in s]
        assert line.lower().count("checked out") == 1, line


def _hangs_under(lines: list[str], first: str, words: str) -> list[str]:
    """The lines of the block that starts at the first line holding `first`, up to the next line
    that starts left of where its `words` start: they must start there, not at the edge."""
    start = next(n for n, line in enumerate(lines) if first in line)
    column = lines[start].index(words)
    block = [lines[start]]
    for line in lines[start + 1 :]:
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent < column - 2:
            break  # the next entry (its own lead), or the end of the section
        block.append(line)
    assert len(block) > 1, f"{first!r} does not wrap here:\n" + "\n".join(lines)
    for line in block[1:]:
        assert len(line) - len(line.lstrip(" ")) == column, "\n".join(block)
    return block


@pytest.mark.slow  # a board with real worktrees, and a landing preview on the merged tree
async def test_wrapped_landing_and_history_lines_hang_under_their_words(review) -> None:  # type: ignore[no-untyped-def]
    """Found in tmux at 80x24: a Landing line too long for the pane (`cannot land: the
    workspace of TASK-6 is recorded at /tmp/...`) and a History entry (a comment's first line)
    wrapped to the pane's edge, under the time, not under their words."""
    board, clock = review
    task_id = board.ids["review"]
    words = "the receipts round down to the cent, which is what the finance team asked for"
    with Board(board.db, clock=clock) as writer:
        writer.add_comment(task_id, words, author_agent_id="agent-linus")
    app = app_on(board, clock, "review")
    async with app.run_test(size=(48, 30)) as pilot:
        drawer = await opened(pilot, app, task_id)
        await until(pilot, lambda: "lands cleanly" in screen_text(app), timeout=30)
        landing = _hangs_under(screen_text(app).splitlines(), "W: approve", "W:")
        assert "merged tree first" in " ".join(landing)  # the whole line, wrapped
        await pilot.press("5")
        pane = drawer.query_one("#history-pane", TextPane)
        await until(pilot, lambda: "round down" in pane.text())
        block = _hangs_under(pane.text().splitlines(), "commented on", "agent-linus")
        assert "finance team" in " ".join(block)


def test_wrapped_verdict_and_workspace_lines_hang_under_their_words() -> None:
    """Found in tmux at 80x24 on `kanban demo`: the Verdict's `judged by ...` and gate lines and
    the Workspace's `checked out at /tmp/.../TASK-3 on kanban/task-TASK-3` wrapped to the pane's
    edge, under the section's heading, not under their words."""
    import io

    from rich.console import Console

    from boardlib.records import Task, TaskView
    from boardlib.worktrees import CheckoutState
    from tui.drawer_render import describe_verdict, workspace_line

    now = START_MS
    gate = {"command": "python3 -m unittest discover -q -s tests -t . --failfast", "exitCode": 0,
            "passed": True, "stdoutTail": "", "stderrTail": "Ran 6 tests in 0.002s\n\nOK\n",
            "durationMs": 269, "timedOut": False}  # fmt: skip
    verdict = {
        "status": "pass", "updatedAt": now, "debtNotes": [],
        "attempts": [{"attempt": 1, "at": now, "deterministic": gate, "status": "pass",
                      "source": "handoff", "author": "agent-barbara"}],
        "reviews": [{"decision": "approve", "reviewer": "operator:olivia", "at": now,
                     "reason": "the receipts round down to the cent, as finance asked"}],
        "commandSource": "handoff", "commandAuthor": "agent-barbara", "verifyFrom": "builder",
    }  # fmt: skip
    task = Task(id="TASK-3", title="t", status=t.DONE, created_at=now, updated_at=now)
    view = TaskView(task, [], [], [], [], [], [])
    path = "/tmp/demo/worktrees/6d71b1be866c/TASK-3"
    state = CheckoutState("checked_out", f"checked out at {path} on kanban/task-TASK-3 "
                          "(everything committed)")  # fmt: skip
    console = Console(width=60, record=True, file=io.StringIO())
    console.print(describe_verdict(json.dumps(verdict), now))
    lines = console.export_text().splitlines()
    starts = ("PASS", "  judged by", "  attempt 1", "  approve by")
    assert [line for line in lines if line.startswith(starts)] == [
        next(line for line in lines if line.startswith(start)) for start in starts
    ], lines  # each entry once, at its own indent
    wrapped = [line for line in lines if line.strip() and not line.startswith(starts)]
    assert len(wrapped) >= 3, lines  # each entry wraps at 60 columns
    # under its words and further in, so a wrapped line does not read as the next entry
    assert all(line.startswith("    ") for line in wrapped), "\n".join(lines)
    gate_lines = [line for line in lines if "Ran 6 tests" in line or line.strip() == "OK"]
    assert all(line.startswith("      ") for line in gate_lines), lines  # the gate's own words
    console = Console(width=60, record=True, file=io.StringIO())
    console.print(workspace_line(view, state))
    first, *rest = console.export_text().splitlines()
    assert first.startswith("  checked out at") and rest, [first, *rest]
    assert all(line.startswith("  ") and line.strip() for line in rest), [first, *rest]
    assert "(2 Files, 3 Diff)" in " ".join(" ".join([first, *rest]).split())


async def test_a_task_waiting_on_a_cancelled_one_is_told_it_waits_for_ever(
    tmp_path: Path,
) -> None:
    """Found in tmux on `kanban demo`: a task whose dependency was cancelled read `waits on 1
    unfinished` (a cancelled task is finished) and nothing said the wait never ends. The drawer
    counts what is not done and says what ends the wait, as `kanban task why` does."""
    clock, path = ManualClock(START_MS), tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        blocker = board.create_task("Write the quick start")
        waiting = board.create_task("Launch the docs site", depends_on=[blocker.id])
        board.cancel(blocker.id)
    app = KanbanApp(path, poll_ms=30, clock=clock, operator=OPERATOR, user_keymap={},
                    open_task=waiting.id)  # fmt: skip
    async with app.run_test(size=(100, 40)) as pilot:
        drawer = await opened(pilot, app, waiting.id)
        await until(pilot, lambda: "never be done" in overview_text(drawer))
        text = overview_text(drawer)
        assert f"{blocker.id} is cancelled and will never be done" in text, text
        assert f"kanban task deps remove {waiting.id} --on {blocker.id}" in text, text
        await until(pilot, lambda: "1 not done" in screen_text(app))  # drawn, not just set
        assert "unfinished" not in screen_text(app)
    from tui.components.help_screen import FILTER_HELP

    assert "deps:N = waits on N tasks not done" in FILTER_HELP  # `?` says the card's count so


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_diff_tab_s_lines_start_where_the_checkout_line_and_other_tabs_do(
    review, size
) -> None:  # type: ignore[no-untyped-def]
    """In tmux the Diff tab's `checked out at …` line stood one cell in, its file list and diff
    lines at the drawer's edge. Every line of the tab starts one cell in, as the checkout line
    and the text of the Files, Runs and History tabs do."""
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=size) as pilot:
        drawer = await opened(pilot, app, board.ids["review"])
        await on_tab(pilot, drawer, "3", "diff")
        await until(pilot, lambda: len(drawer.diff.rows) > 1)
        edge = drawer.content_region.x  # inside its border, beside the board
        lines = [line[edge:] for line in (await shows(pilot, app, "@@ -1,8")).splitlines()]
        wanted = ("checked out at", "3 files changed", "M shop/cart.py", "shop/cart.py  +5", "@@")
        starts = {}
        for line in lines:
            for needle in wanted:
                if line.lstrip().startswith(needle) and needle not in starts:
                    starts[needle] = len(line) - len(line.lstrip())
        assert starts == dict.fromkeys(wanted, 1), (starts, lines)
        await on_tab(pilot, drawer, "5", "history")
        history = [line[edge:] for line in screen_text(app).splitlines()]
        assert any(line.startswith(" ") and line[1].isdigit() for line in history), history
