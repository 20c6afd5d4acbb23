"""The land dialog at 80x24 with a ~250-character title (the title pushed the buttons off the
screen, so the question could only be answered by key)."""

from textual.app import App
from textual.widgets import Button, Static

from boardlib import transitions as t
from boardlib.records import Task
from boardlib.worktrees.landing import CLEAN, CONFLICTS, UNAVAILABLE, LandingPreview
from boardlib.worktrees.results import ALREADY_ON, LandingChoices
from tests.tui.conftest import Notes, until
from tests.tui.test_drawer import screen_text
from tui.components.land_dialog import LandDialog
from tui.components.prompt import PromptDialog
from tui.landing_data import Choices, Preview

LONG_TITLE = ("Reconcile the cart's discount rounding with the ledger's totals " * 5)[:250]
SMALL = (80, 24)


def land_dialog_on_a_long_title(verify_command: str | None) -> LandDialog:
    """A land dialog as tall as 80x24 allows: a long title, a clean preview, two branches."""
    task = Task(id="TASK-7", title=LONG_TITLE, status=t.IN_REVIEW, created_at=0, updated_at=0)
    preview = LandingPreview(task.id, CLEAN, "lands cleanly", into="main", base_tip="2d55f48aa")
    choices = Choices(task.id, LandingChoices(task.id, "main", ["main", "release"], verify_command))
    return LandDialog(task, Preview(task.id, preview, "s"), choices, operator="operator:o")


def _lines(widget: Static) -> str:
    return "\n".join(line.text for line in widget.render_lines(widget.content_region.reset_offset))


async def test_the_buttons_stay_on_an_80x24_screen_with_a_long_title() -> None:
    for verify_command in ("make test", None):  # none: a warning line more, and `u`'s button
        async with App[None]().run_test(size=SMALL) as pilot:
            dialog = land_dialog_on_a_long_title(verify_command)
            await pilot.app.push_screen(dialog)
            await pilot.pause()
            inside = dialog.query_one("#dialog").content_region
            for button in dialog.query(Button):
                shown = button.region.intersection(inside)
                assert shown == button.region, (verify_command, button.id, button.region)


async def test_a_long_title_is_clipped_and_the_preview_stays_in_view() -> None:
    """On screen, not only in the body: the body's own lines hold the preview even where its
    box shows none of it (scrolled off, or pushed below the screen's 24 rows)."""
    async with App[None]().run_test(size=SMALL) as pilot:
        dialog = land_dialog_on_a_long_title("make test")
        await pilot.app.push_screen(dialog)
        await until(pilot, lambda: dialog.shown_at is not None)
        await pilot.pause()
        rows = screen_text(pilot.app).split("\n")  # type: ignore[arg-type]
        assert len(rows) == SMALL[1], len(rows)
        preview = [y for y, row in enumerate(rows) if "✓ lands cleanly" in row]
        clipped = [y for y, row in enumerate(rows) if row.rstrip(" █").endswith("…")]
        assert len(preview) == 1 and len(clipped) == 1, "\n".join(rows)
        box = dialog.query_one("#dialog-scroll").region  # the body's visible viewport
        assert box.y <= clipped[0] < preview[0] < box.bottom <= SMALL[1], (box, preview)
        assert LONG_TITLE not in " ".join(" ".join(row.strip(" █") for row in rows).split())


def _body_of_done(preview: LandingPreview, verification: str | None, title: str) -> LandDialog:
    task = Task(
        id="TASK-7",
        title=title,
        status=t.DONE,
        created_at=0,
        updated_at=0,
        verification=verification,
    )
    choices = Choices(task.id, LandingChoices(task.id, "main", ["main", "release"], "make test"))
    return LandDialog(task, Preview(task.id, preview, "s"), choices, operator="operator:o")


async def test_a_landing_over_a_failed_gate_says_so_before_the_buttons() -> None:
    """Found in tmux: `W` on done work overridden over a failing gate said "its work is verified
    and lands on main" and nothing of the verdict, then waited for the same command to fail on
    the merged tree; on work already on main it said the same above "cannot land TASK-9: its
    change is already on main", and `y` was refused. Both are said up front, and at 80x24 with a
    long title the buttons stay on screen (the first here, the second below)."""
    failing = '{"status": "fail", "attempts": []}'
    clean = LandingPreview("TASK-7", CLEAN, "lands cleanly", into="main", base_tip="2d55f48aa")
    async with App[None]().run_test(size=SMALL) as pilot:
        dialog = _body_of_done(clean, failing, LONG_TITLE)
        await pilot.app.push_screen(dialog)
        await pilot.pause()
        shown = " ".join(_lines(dialog.query_one("#dialog-body", Static)).split())
        assert "⚠ Its verify command failed at the gate (done by an override)" in shown, shown
        assert "refused if it fails again" in shown
        inside = dialog.query_one("#dialog").content_region
        for button in dialog.query(Button):
            assert button.region.intersection(inside) == button.region, button.id


async def test_work_that_will_not_land_is_said_not_to_land() -> None:
    """The second half of the above: no "is verified and lands" over a refusal to come."""
    nothing = "cannot land TASK-7: its worktree holds no change (bookkeeping files aside)"
    empty = LandingPreview("TASK-7", UNAVAILABLE, nothing, into="main", why="empty")
    async with App[None]().run_test(size=SMALL) as pilot:
        dialog = _body_of_done(empty, '{"status": "pass"}', "Bump the price")
        await pilot.app.push_screen(dialog)
        await pilot.pause()
        shown = " ".join(_lines(dialog.query_one("#dialog-body", Static)).split())
        assert "TASK-7 does not land on main as it is: the landing would be refused." in shown
        assert "is verified and lands" not in shown and nothing in shown
        assert "verify command failed" not in shown  # a passing verdict says nothing of it


async def test_work_already_on_its_branch_is_said_to_be_recorded_there() -> None:
    """Work already on main was said to be refused, and every landing was: it is recorded now,
    and the question says what happens (nothing moves, nothing is verified)."""
    words = "its change is already on main@2d55f48: landing records it as landed there"
    already = LandingPreview("TASK-7", CLEAN, words, into="main", why=ALREADY_ON)
    async with App[None]().run_test(size=SMALL) as pilot:
        dialog = _body_of_done(already, '{"status": "pass"}', "Bump the price")
        await pilot.app.push_screen(dialog)
        await pilot.pause()
        shown = " ".join(_lines(dialog.query_one("#dialog-body", Static)).split())
        assert "TASK-7's change is already on main: landing records it as landed there" in shown
        assert "is verified and lands" not in shown and "would be refused" not in shown


async def test_a_question_longer_than_80x24_scrolls_by_keys_and_says_there_is_more() -> None:
    """A long conflict line, the override's warning and a long title at 80x24: the body was cut
    where the screen ended (a Static clips; no key, not even the wheel, reached the warning or
    "As operator..."), and `down` only said the question was waiting. Now a line says there is
    more, the arrows and pgdn/pgup scroll the body while Back keeps the focus, and `x`/`y`
    still answer."""
    files = [f"src/shop/cart/discount_rounding_{n}.py" for n in range(16)]
    summary = "conflicts with main in " + ", ".join(files)
    conflict = LandingPreview("TASK-7", CONFLICTS, summary, into="main", conflicts=files)
    answers: list[bool | None] = []
    async with App[None]().run_test(size=SMALL) as pilot:

        def on_screen() -> str:
            return screen_text(pilot.app)  # type: ignore[arg-type]

        dialog = _body_of_done(conflict, '{"status": "fail", "attempts": []}', LONG_TITLE)
        await pilot.app.push_screen(dialog, answers.append)
        await until(pilot, lambda: dialog.shown_at is not None)
        shown = on_screen()
        assert "▼ more below: ↓/↑ scroll, pgdn/pgup page" in shown, shown
        assert "discount_rounding_15.py" not in shown and "branch deleted." not in shown
        await pilot.press("down")
        await until(pilot, lambda: "▲▼ more above and below" in on_screen())
        for _ in range(4):
            await pilot.press("pagedown")
        await until(pilot, lambda: "▲ more above:" in on_screen())
        shown = on_screen()
        assert "discount_rounding_15.py" in shown and "branch deleted." in shown, shown
        assert "⚠ Its verify command failed at the gate" in " ".join(shown.split())
        for button in dialog.query(Button):  # the buttons stayed, Back with the focus
            inside = dialog.query_one("#dialog").content_region
            assert button.region.intersection(inside) == button.region, button.id
        assert pilot.app.focused is dialog.query_one("#no", Button)
        await pilot.press(*["pageup"] * 4)
        await until(pilot, lambda: "▼ more below:" in on_screen())
        await pilot.press("x")  # it won't land: asks why
        await until(pilot, lambda: isinstance(pilot.app.screen, PromptDialog))
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is dialog)
        await pilot.pause(0.15)
        await pilot.press("y")
        await until(pilot, lambda: answers == [True])
        assert dialog.decided is not None and dialog.decided.strategy == "squash"


async def test_a_scroll_key_on_a_question_all_on_screen_says_so() -> None:
    """Before the body scrolled, `down` on any question said it was waiting; a scroll key on
    a question with nothing out of view still says something, and changes nothing."""
    notes = Notes()
    clean = LandingPreview("TASK-7", CLEAN, "lands cleanly", into="main", base_tip="2d55f48aa")
    async with App[None]().run_test(size=SMALL, message_hook=notes) as pilot:
        dialog = _body_of_done(clean, '{"status": "pass"}', "Bump the price")
        await pilot.app.push_screen(dialog)
        await until(pilot, lambda: dialog.shown_at is not None)
        assert "more below" not in screen_text(pilot.app)  # type: ignore[arg-type]
        await pilot.press("pagedown")
        await until(pilot, lambda: notes.warnings())
        said = notes.warnings()
        assert said == [": “Land TASK-7?” is all on screen: y land, n/esc backs out."], said
        assert pilot.app.screen is dialog and dialog.decided is None


async def test_home_and_end_take_a_long_question_to_its_ends_and_remap() -> None:
    """`↓` and `pgdn` reached the end of a long question a line or a page at a time (four
    pages at 80x24); `end` (`G`) goes there at once and `home` (`g`) back, by their ids."""
    await _to_the_ends("end", "home", {})
    await _to_the_ends("G", "g", {})
    await _to_the_ends("ctrl+e", "ctrl+a", {"confirm.bottom": "ctrl+e", "confirm.top": "ctrl+a"})


async def _to_the_ends(bottom: str, top: str, keymap: dict[str, str]) -> None:
    files = [f"src/shop/cart/discount_rounding_{n}.py" for n in range(16)]
    summary = "conflicts with main in " + ", ".join(files)
    conflict = LandingPreview("TASK-7", CONFLICTS, summary, into="main", conflicts=files)
    app = App[None]()
    async with app.run_test(size=SMALL) as pilot:
        app.set_keymap(keymap)

        def on_screen() -> str:
            return screen_text(app)  # type: ignore[arg-type]

        dialog = _body_of_done(conflict, '{"status": "fail", "attempts": []}', LONG_TITLE)
        await app.push_screen(dialog)
        await until(pilot, lambda: "▼ more below:" in on_screen() and "Back (n)" in on_screen())
        assert "branch deleted." not in on_screen()
        await pilot.press(bottom)
        await until(pilot, lambda: "▲ more above:" in on_screen())
        shown = on_screen()
        assert "discount_rounding_15.py" in shown and "branch deleted." in shown, bottom
        await pilot.press(top)
        await until(pilot, lambda: "▼ more below:" in on_screen())
        assert "TASK-7 does not land on main" in on_screen() and "▲" not in on_screen()
        assert app.screen is dialog and dialog.decided is None
        assert app.focused is dialog.query_one("#no", Button)


async def test_done_work_is_offered_won_t_land_beside_the_strategy_at_both_sizes() -> None:
    """Found end to end: for ordinary done work the question listed Land, Back, `s: next` and
    Onto, and `x` (it won't land) was named only under an override's warning and in `?`. It is
    offered on the strategy's line, whole, with the buttons still on an 80x24 screen; work in
    review, which a reject sends back instead, is not offered it."""
    clean = LandingPreview("TASK-7", CLEAN, "lands cleanly", into="main", base_tip="2d55f48aa")
    for size in (SMALL, (160, 48)):
        async with App[None]().run_test(size=size) as pilot:
            dialog = _body_of_done(clean, '{"status": "pass"}', LONG_TITLE)
            await pilot.app.push_screen(dialog)
            await pilot.pause()
            rows = screen_text(pilot.app).split("\n")  # type: ignore[arg-type]
            [line] = [row for row in rows[:-1] if "Strategy" in row]  # (the last: its footer)
            assert "s: next" in line and "x: won't land" in line, (size, line)
            inside = dialog.query_one("#dialog").content_region
            for button in dialog.query(Button):
                assert button.region.intersection(inside) == button.region, (size, button.id)
        async with App[None]().run_test(size=size) as pilot:
            await pilot.app.push_screen(land_dialog_on_a_long_title("make test"))
            await pilot.pause()
            assert "won't land" not in screen_text(pilot.app)  # type: ignore[arg-type]
