"""The inbox in the TUI: the header counts it at every width, `i` lists it oldest first, Enter
opens the task's drawer, `a` does the row's one action, a new item is said once (and rung or
posted outside the terminal when asked) without moving the view, and no agent byte ever reaches
the escape sequence."""

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, BoardError, ManualClock, Task
from boardlib import attention as a
from boardlib import transitions as t
from boardlib.worktrees.layout import branch_name
from tests.tui.conftest import (
    OPERATOR,
    Notes,
    fresh,
    make_app,
    onto_folded_column,
    settled,
    shown_question,
    until,
)
from tests.tui.test_drawer import screen_text
from tests.tui.test_view import todo_review_and_blocked
from tui import live, notify
from tui.components.drawer_screen import DrawerScreen
from tui.components.header_bar import HeaderBar
from tui.components.inbox_screen import InboxScreen
from tui.screenshots import START_MS

START = 1_800_000_000_000
HOSTILE = "pwn \x1b]52;c;aGk=\x07\x1b]8;;http://x\x1b\\ \x1b[2J\r\x07 [@click=app.quit]"


def sixty_and_one(path: Path, clock: ManualClock) -> str:
    with Board(path, clock=clock) as board:
        for n in range(60):
            board.create_task(f"todo {n}")
        task = board.create_task("the one in review")
        board.claim(task.id, "alice")
        board.complete(task.id, "alice")
        return task.id


def header_text(app: Any) -> str:
    return str(app.board_screen.header.render())


async def inbox_on(pilot: Any, task_id: str) -> None:
    """Once the board has read its inbox: `i`, then `task_id`'s row highlighted (`on_row`)."""
    await until(pilot, lambda: pilot.app.inbox_items)
    await pilot.press("i")
    await on_row(pilot, task_id)


async def on_row(pilot: Any, task_id: str) -> None:
    """The inbox on screen with `task_id`'s row highlighted: a key pressed before the list has
    that row acts on nothing (or on the row it replaces), as it would for a person."""

    def there() -> bool:
        screen = pilot.app.screen
        if not isinstance(screen, InboxScreen):
            return False
        item = screen.selected_item()
        return item is not None and item.task_id == task_id

    await until(pilot, there)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_header_counts_and_i_enter_opens_the_drawer(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    review = sixty_and_one(path, clock)
    app = make_app(path, clock)
    async with app.run_test(size=size) as pilot:
        # Laid out, not just read: the column's region is where the last layout put it.
        await settled(pilot, lambda: app.inbox_items)
        assert "1 need you" in header_text(app)
        # The review column is on screen: at 80x24 because empty columns are strips.
        columns = app.board_screen.board.columns
        assert not columns[t.IN_REVIEW].strip
        assert columns[t.IN_PROGRESS].strip is (size[0] < 100)
        view, review_column = app.board_screen.board, columns[t.IN_REVIEW]
        assert review_column.region.width > 0
        assert view.region.x <= review_column.region.x
        assert review_column.region.right <= view.region.right
        await pilot.press("i")
        # Enter opens the highlighted row: pressed before the list has one, it does nothing.
        await settled(
            pilot,
            lambda: isinstance(app.screen, InboxScreen) and app.screen.selected_item() is not None,
        )
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        assert [item.task_id for item in screen.items] == [review]
        await pilot.press("enter")
        await until(pilot, lambda: app.drawer_task_id() == review, timeout=30)
        if size[0] < 140:
            await until(pilot, lambda: isinstance(app.screen, DrawerScreen), timeout=30)
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, InboxScreen), timeout=30)


async def test_the_header_says_what_needs_you_in_the_columns_off_screen(tmp_path: Path) -> None:
    """At 80x24 three columns of seven show: the columns off screen are named with their counts
    (`◀ 1 column · 1 column ▶` told an operator nothing), blocked and review work there marked
    `!`, and the mark goes when its column comes into view."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    ids = todo_review_and_blocked(path, clock)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        facts = lambda: app.board_screen.header.facts  # noqa: E731
        await settled(pilot, lambda: len(app.inbox_items) == 3)
        assert t.BLOCKED in facts().hidden_right and t.IN_REVIEW not in facts().hidden_right
        text = header_text(app)
        # the first view: backlog's empty strip and todo to review (test_view says it is the
        # same every time); the right side in whichever form fits, each form's words below
        assert not facts().hidden_left, facts()
        assert "3 need you" in text and "blocked 1!" in text and text.endswith(" ▶"), text
        await pilot.press("l", "l", "l", "l")  # to blocked
        await settled(pilot, lambda: t.BLOCKED not in facts().hidden_right)
        assert "blocked 1" not in header_text(app), header_text(app)
        await pilot.press("l", "l")  # to cancelled: review off to the left
        await settled(pilot, lambda: t.IN_REVIEW in facts().hidden_left)
        assert "review 2!" in header_text(app), header_text(app)
        with Board(path, clock=clock) as board:
            board.approve(ids[1], OPERATOR)
        await settled(pilot, lambda: len(app.inbox_items) == 2)
        assert "review 1!" in header_text(app), header_text(app)


def test_each_side_names_its_columns_and_what_there_needs_you() -> None:
    bar = HeaderBar(Path("board.db"), read_only=False, now_ms=lambda: START)
    bar.update_facts(
        loaded=True,
        inbox=4,
        hidden_right=(t.IN_REVIEW, t.BLOCKED, t.DONE),
        column_counts=((t.TODO, 5), (t.IN_REVIEW, 3), (t.BLOCKED, 1), (t.DONE, 30)),
        inbox_by_status=((t.BLOCKED, 1), (t.DONE, 1), (t.IN_REVIEW, 2), (t.TODO, 5)),
    )
    text = str(bar.render())
    right = "in review 3 (2 need you), blocked 1 (1 needs you), done 30 (1 needs you) ▶"
    assert right in text, text
    bar.update_facts(hidden_left=(t.TODO,), hidden_right=(t.CANCELLED,))
    assert "◀ todo 5 (5 need you) · cancelled 0 ▶" in str(bar.render()), str(bar.render())
    bar.update_facts(inbox_by_status=((t.TODO, 1),))
    assert "◀ todo 5 (1 needs you)" in str(bar.render())


@pytest.mark.parametrize(
    ("width", "said"),
    [
        # wide: every column off screen named, with what needs you in words
        (160, "◀ backlog 4, todo 5 · in review 2 (2 need you), blocked 1 (1 needs you), done 30"),
        # narrower: shorter names, `!` for what needs you, then the empty ones left out
        (120, "◀ backlog 4, todo 5 · review 2!, blocked 1!, done 30, cancelled 0 ▶"),
        (100, "◀ backlog 4, todo 5 · review 2!, blocked 1!, done 30 ▶"),
        # 80: what needs you named, the other tasks each way counted
        (80, "◀ +9 · review 2! blocked 1! +30 ▶"),
        # narrower still: each side's tasks counted, `!` where something needs you
        (50, "◀9 · 33!▶"),
    ],
)
def test_the_columns_off_screen_are_said_shorter_as_the_header_narrows(
    width: int, said: str
) -> None:
    """`◀ 2 columns · 4 columns ▶` said neither which columns nor how much work was there."""
    from textual.geometry import Size

    class Bar(HeaderBar):
        @property
        def size(self) -> Size:
            return Size(width, 1)

    bar = Bar(Path("board.db"), read_only=False, now_ms=lambda: START)
    bar.update_facts(
        loaded=True,
        inbox=3,
        total=42,
        shown=42,
        hidden_left=(t.BACKLOG, t.TODO),
        hidden_right=(t.IN_REVIEW, t.BLOCKED, t.DONE, t.CANCELLED),
        column_counts=(
            (t.BACKLOG, 4),
            (t.TODO, 5),
            (t.IN_PROGRESS, 2),
            (t.IN_REVIEW, 2),
            (t.BLOCKED, 1),
            (t.DONE, 30),
            (t.CANCELLED, 0),
        ),
        inbox_by_status=((t.BLOCKED, 1), (t.IN_REVIEW, 2)),
    )
    text = str(bar.render())
    assert said in text and "3 need you" in text, text
    assert len(text) <= width, text
    if width == 80:  # a new item at 80 columns: said by its id before the columns go
        bar.update_facts(demo=True, inbox_new="TASK-26 is ready to land", inbox_new_short="TASK-26")
        text = str(bar.render())
        assert "new: TASK-26 (i) │ ◀9 · 33!▶" in text, text


def test_no_task_either_way_is_said_once() -> None:
    """The demo at 80x24 (a new item in the header, backlog and cancelled empty off screen) said
    `◀ empty · empty ▶`, which read as two things missing; one side empty still says so."""
    from textual.geometry import Size

    class Bar(HeaderBar):
        @property
        def size(self) -> Size:
            return Size(80, 1)

    bar = Bar(Path("board.db"), read_only=False, now_ms=lambda: START)
    bar.update_facts(
        loaded=True,
        demo=True,
        inbox=7,
        inbox_new="TASK-11 is ready to land",
        inbox_new_short="TASK-11",
        hidden_left=(t.BACKLOG,),
        hidden_right=(t.CANCELLED,),
        column_counts=((t.TODO, 25), (t.IN_PROGRESS, 3), (t.DONE, 8)),
        inbox_by_status=((t.DONE, 7),),
    )
    text = str(bar.render())
    assert text.endswith("new: TASK-11 (i) │ ◀ empty ▶"), text
    bar.update_facts(hidden_right=(t.DONE, t.CANCELLED))
    text = str(bar.render())
    assert text.endswith(" │ ◀ empty · done 8! ▶"), text


async def test_a_approves_and_the_item_leaves(tmp_path: Path) -> None:
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    review = sixty_and_one(path, clock)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await inbox_on(pilot, review)
        await pilot.press("a")
        await until(pilot, lambda: fresh(path, review).status == t.DONE)
        await until(pilot, lambda: not app.inbox_items)
        assert "0 need you" in header_text(app)
        assert fresh(path, review).verification is not None
        assert OPERATOR in (fresh(path, review).verification or "")


async def test_each_kind_has_its_one_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The app's stale-task reconciler (every 30 s of real time) would release the lapsed lease
    # this test needs in the inbox: on a loaded CI the session outlived one interval.
    monkeypatch.setenv("KANBAN_RECONCILE_INTERVAL_MS", str(3_600_000))
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        blocked = board.create_task("blocked")
        board.claim(blocked.id, "bob")
        board.block(blocked.id, "bob", "need a key")
        clock.advance(seconds=1)
        lapsed = board.create_task("lapsed")
        board.claim(lapsed.id, "carol")
    app = make_app(path, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: len(app.inbox_items) == 1)
        # The app opens its writing board (whose orphan pass releases expired leases) on a worker
        # thread; on a loaded CI that came after the clock moved, and released the lease this
        # test needs lapsed. Once recovery is up, the open is behind us.
        await until(pilot, lambda: app.gateway._janitor is not None)
        clock.advance(ms=board.config.lease_ms + 5000)  # the app's reconciler has not run yet
        with Board(path, clock=clock, reconcile_orphans=False) as other:
            other.add_comment(blocked.id, "any commit: the feed reads the inbox again")
        await until(pilot, lambda: len(app.inbox_items) == 2)
        assert [(i.kind, i.task_id) for i in app.inbox_items] == [
            (a.BLOCKED, blocked.id),
            (a.LEASE_EXPIRED, lapsed.id),
        ]
        await pilot.press("i")
        await on_row(pilot, blocked.id)
        await pilot.press("a")  # unblock the first
        await until(pilot, lambda: fresh(path, blocked.id).status == t.TODO)
        await until(pilot, lambda: len(app.inbox_items) == 1)
        await on_row(pilot, lapsed.id)
        await pilot.press("a")  # reclaim the lapsed lease: a row the cursor moved to asks first
        await shown_question(pilot)
        await pilot.press("y")
        await until(pilot, lambda: fresh(path, lapsed.id).status == t.TODO)
        await until(pilot, lambda: not app.inbox_items)


@pytest.mark.slow
async def test_a_new_item_is_said_once_without_moving_the_view(tmp_path: Path) -> None:
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    sent: list[str] = []
    notes = Notes()
    app = make_app(path, clock, notify_mode=notify.OSC)
    app.tell_terminal = sent.append  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await until(pilot, lambda: app.inbox_items)
        assert sent == []  # what was there at start is counted, not announced
        board_view = app.board_screen.board
        before = (board_view.active_status, board_view.selected_task)
        with Board(path, clock=clock) as board:
            task = board.create_task(HOSTILE)
            board.claim(task.id, "mallory")
            board.block(task.id, "mallory", HOSTILE)
        await until(pilot, lambda: len(app.inbox_items) == 2)
        await pilot.pause(0.3)
        assert (board_view.active_status, board_view.selected_task) == before
        assert sent == [f"\x1b]9;kanban: {task.id} is blocked\x1b\\"]
        said = [text for text in notes.infos() if "Needs you" in text]
        assert said == [f"Needs you: {task.id} is blocked. i opens the inbox."]
        assert app.board_screen.header.facts.inbox_new == f"{task.id} is blocked"
        # At 80 columns with columns off screen the note stays, as the inbox promises: the task
        # count and the arrows go first (it went first); "need you" never goes.
        text = header_text(app)
        assert "2 need you" in text and f"new: {task.id} is blocked (i)" in text, text
        assert app.board_screen.header.facts.hidden_right  # columns are off screen
        # Another poll of the same inbox says nothing more.
        with Board(path, clock=clock) as board:
            board.add_comment(task.id, "more", author_type="user")
        await pilot.pause(0.5)
        assert len(sent) == 1
        # Once it has left the inbox, "new:" goes with it (found in tmux: it stayed, after
        # the task was approved and landed, until i was pressed).
        with Board(path, clock=clock) as board:
            board.unblock(task.id)
        await until(pilot, lambda: len(app.inbox_items) == 1)
        await until(pilot, lambda: app.board_screen.header.facts.inbox_new == "")


@pytest.mark.slow
async def test_a_filter_stays_in_the_header_beside_a_new_item_at_80_columns(
    tmp_path: Path,
) -> None:
    """Found in tmux at 80x24: with a "new:" note pending, the header dropped the filter (and
    the arrows), so a filter matching nothing left seven empty columns and no word of why."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.inbox_items)
        app.set_filter("status:nosuch")
        with Board(path, clock=clock) as board:
            task = board.create_task("waiting on a key")
            board.claim(task.id, "mallory")
            board.block(task.id, "mallory", "needs the key")
        await until(pilot, lambda: app.board_screen.header.facts.inbox_new != "")
        await pilot.pause(0.2)
        text = header_text(app)
        assert "filter: status:nosuch" in text, text
        assert f"new: {task.id}" in text and "2 need you" in text, text


def test_no_agent_byte_reaches_the_sequence() -> None:
    for mode in (notify.OSC, notify.OSC777):
        for in_tmux in (False, True):
            for task_id in ("TASK-7", HOSTILE, "TASK-7\x07\x1b]52;c;x"):
                for kind in a.KINDS:
                    seq = notify.sequence(mode, kind, task_id, in_tmux=in_tmux)
                    body = seq.replace("\x1bPtmux;", "").replace("\x1b\x1b", "\x1b")
                    inside = body.split(";", 1)[1].rsplit("\x1b\\", 1)[0]
                    inside = inside.replace("\x1b\\", "")
                    assert inside.isascii() and inside.isprintable(), repr(seq)
                    assert "52" not in inside and "pwn" not in inside and "click" not in inside
    assert notify.sequence(notify.BELL, a.REVIEW, HOSTILE, in_tmux=False) == "\a"
    assert notify.sequence(notify.OFF, a.REVIEW, "TASK-1", in_tmux=False) == ""
    tmux = notify.sequence(notify.OSC, a.REVIEW, "TASK-1", in_tmux=True)
    assert tmux == "\x1bPtmux;\x1b\x1b]9;kanban: TASK-1 needs review\x1b\x1b\\\x1b\\"
    assert notify.sequence(notify.BELL, a.REVIEW, "TASK-1", in_tmux=False, more=3) == "\a"
    more = notify.sequence(notify.OSC777, a.REVIEW, "TASK-1", in_tmux=False, more=2)
    assert more == "\x1b]777;notify;kanban;TASK-1 needs review (+2 more)\x1b\\"


async def test_items_that_come_in_one_read_are_one_bell_or_notification(tmp_path: Path) -> None:
    """Found in tmux with `--notify osc`: agents finishing in the same second posted three
    desktop notifications in one write (TASK-1 and TASK-2 need review, TASK-6 is ready to land),
    stacked at once, while the header said them as one ("(+2)"). What one read finds new is one
    notification, naming the newest and counting the others."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    sent: list[str] = []
    app = make_app(path, clock, notify_mode=notify.OSC)
    app.tell_terminal = sent.append  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.inbox_items)
        await pilot.press("p")  # the changes wait: the resume reads them in one go
        await until(pilot, lambda: app.paused)
        blocked = [block_one(path, clock, title) for title in ("one", "two", "three")]
        await pilot.press("p")
        await until(pilot, lambda: len(app.inbox_items) == 4)
        await pilot.pause(0.3)
        assert sent == [f"\x1b]9;kanban: {blocked[-1]} is blocked (+2 more)\x1b\\"], sent
        assert app.board_screen.header.facts.inbox_new == f"{blocked[-1]} is blocked (+2)"


async def test_a_gate_passing_task_is_told_once_ready_to_land_never_needing_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in tmux with `--notify osc`: each task that passed its gate posted two "needs you":
    "TASK-n needs review" while its gate ran (in review for the gate, not for a person), then
    "TASK-n is ready to land". The gate's run is no inbox item: one notification, the second."""
    import threading

    from tests.worktrees.conftest import make_land_env

    path = tmp_path / "board.db"
    land = make_land_env(tmp_path, monkeypatch, path)
    signals = tmp_path / "signals"
    signals.mkdir()
    verify = f"touch {signals}/started; while [ ! -e {signals}/go ]; do sleep 0.05; done"
    task_id, _ = land.task_with({"app.py": "def answer():\n    return 43\n"}, verify=verify,
                                finish="none")  # fmt: skip
    sent: list[str] = []
    notes = Notes()
    app = make_app(path, ManualClock(land.board.now()), notify_mode=notify.OSC)
    app.tell_terminal = sent.append  # type: ignore[method-assign]
    worker = threading.Thread(target=lambda: land.trees.complete(task_id, "alice"))
    try:
        async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
            await until(pilot, lambda: app.state.tasks.get(task_id) is not None)
            worker.start()
            await until(pilot, lambda: (signals / "started").exists())
            await until(pilot, lambda: app.state.tasks[task_id].status == t.IN_REVIEW)
            await pilot.pause(0.5)  # the polls that read the task in review read the inbox too
            assert app.inbox_items == [] and sent == [], sent
            (signals / "go").touch()
            await until(pilot, lambda: [i.kind for i in app.inbox_items] == [a.UNLANDED])
            await pilot.pause(0.3)
            assert sent == [f"\x1b]9;kanban: {task_id} is ready to land\x1b\\"], sent
            said = [text for text in notes.infos() if "Needs you" in text]
            assert said == [f"Needs you: {task_id} is ready to land. i opens the inbox."], said
    finally:
        (signals / "go").touch()
        if worker.ident is not None:  # started
            worker.join(30)
        land.board.close()


def test_every_kind_is_told_in_its_own_words() -> None:
    """Stop 47's list: a gate-passing complete was told "TASK-3 needs review", then, passed and
    waiting to land, "TASK-3 needs you": the unlanded kind had no words of its own."""
    assert set(notify.NEEDS) == set(a.KINDS)
    assert notify.sentence(a.UNLANDED, "TASK-3") == "TASK-3 is ready to land"


def test_the_cli_offers_the_notify_modes_of_the_tui() -> None:
    from kanban.cli.apps import NOTIFY_MODES

    assert NOTIFY_MODES == notify.MODES


@pytest.mark.slow
async def test_a_lands_unlanded_work_after_a_confirm_and_a_refusal_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board_path: Path
) -> None:
    """On both backends, a real repository: done work waits as "to land"; `a`, `y` lands it
    onto main. A second task whose landing is refused (main checked out dirty) is told in a
    notification and stays in the inbox as the refusal, with main untouched."""
    from tests.worktrees.conftest import checkout_state, git

    land, first, clock, app = work_to_land(tmp_path, monkeypatch, board_path)
    notes = Notes()
    try:
        async with app.run_test(size=(120, 30), message_hook=notes) as pilot:
            await until(pilot, lambda: [i.kind for i in app.inbox_items] == [a.UNLANDED])
            await pilot.press("i")
            await on_row(pilot, first)
            await pilot.press("a")
            await shown_question(pilot)  # a key sent before it takes answers is dropped
            await pilot.press("y")
            await until(pilot, lambda: fresh(board_path, first).landed_commit is not None)
            await until(pilot, lambda: not app.inbox_items)
            landed = fresh(board_path, first).landed_commit
            assert landed == git(land.repo, "rev-parse", "main")
            # it was done already: the note says where its work went, not "→ done"; or, when
            # the inbox was read while its landing ran, that it is being landed (by whom)
            said = (
                f"{first} left the inbox (landed as {landed[:7]} on main (you))",
                f"{first} left the inbox (landing by {OPERATOR} since ",
            )
            await until(pilot, lambda: any(s in note for note in notes.seen_text() for s in said))
            # the landing records its commit, then archives the worktree and deletes the branch:
            # the refs are compared below only once that is over
            gone = f"refs/heads/{branch_name(first)}"
            await until(pilot, lambda: gone not in git(land.repo, "show-ref"))
            second, _ = land.task_with({"new.txt": "from the task\n"})
            (land.repo / "README.md").write_text("# my uncommitted edit\n")
            before = checkout_state(land.repo)
            clock.set(land.board.now())
            await until(pilot, lambda: [i.kind for i in app.inbox_items] == [a.UNLANDED])
            await on_row(pilot, second)
            await pilot.press("a")
            await shown_question(pilot)  # a key sent before it takes answers is dropped
            await pilot.press("y")
            await until(pilot, lambda: [i.kind for i in app.inbox_items] == [a.LANDING_REFUSED])
            assert app.inbox_items[0].task_id == second
            assert "base_checked_out_dirty" in app.inbox_items[0].why
            await until(pilot, lambda: any("(base_checked_out_dirty)" in n for n in notes.errors()))
            assert checkout_state(land.repo) == before
            assert fresh(board_path, second).landed_commit is None
    finally:
        land.board.close()


@pytest.mark.slow
async def test_a_landing_refused_here_is_not_news_and_one_refused_elsewhere_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board_path: Path
) -> None:
    """Found in tmux: `W` on work in review was refused (its base checked out dirty here; a
    conflict there), said as the refusal's error, then again as "Needs you: TASK-2 was refused
    landing" with a desktop notification (OSC 9) for another window: the operator's own landing
    of a second before, as news. A refusal by another process as the same operator still is."""
    from tests.worktrees.conftest import make_land_env

    land = make_land_env(tmp_path, monkeypatch, board_path)
    here, _ = land.task_with({"here.txt": "from here\n"}, finish="review")
    elsewhere, _ = land.task_with({"elsewhere.txt": "from elsewhere\n"})
    (land.repo / "README.md").write_text("# my uncommitted edit\n")  # every landing is refused
    clock = ManualClock(land.board.now())
    sent: list[str] = []
    notes = Notes()
    app = make_app(board_path, clock, notify_mode=notify.OSC)
    app.tell_terminal = sent.append  # type: ignore[method-assign]

    def needs_you() -> list[str]:
        return [n for n in notes.seen_text() if n.startswith("Needs you")]

    def refused(task_id: str) -> bool:
        return any(i.kind == a.LANDING_REFUSED and i.task_id == task_id for i in app.inbox_items)

    try:
        async with app.run_test(size=(120, 30), message_hook=notes) as pilot:
            await inbox_on(pilot, here)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, DrawerScreen))
            await pilot.press("W")
            await shown_question(pilot)
            await pilot.press("y")
            await until(pilot, lambda: refused(here))
            await until(pilot, lambda: any("(base_checked_out_dirty)" in n for n in notes.errors()))
            await pilot.pause(0.5)  # a poll or two more: nothing more is said
            assert needs_you() == [] and sent == [], (needs_you(), sent)
            # nor does the inbox under the drawer call its row moving on news ("TASK-1 is now
            # “landing_refused” in the inbox"): the row says what `a` does now
            assert not [n for n in notes.seen_text() if "in the inbox" in n], notes.seen_text()
            assert app.board_screen.header.facts.inbox_new == ""
            with pytest.raises(BoardError):  # the CLI, as the same operator
                land.trees.lander().land(elsewhere, actor=OPERATOR)
            await until(pilot, lambda: refused(elsewhere))
            await until(pilot, needs_you)
            assert needs_you() == [
                f"Needs you: {elsewhere} was refused landing. i opens the inbox."
            ]
            assert sent == [f"\x1b]9;kanban: {elsewhere} was refused landing\x1b\\"]
    finally:
        land.board.close()


def work_to_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: Path
) -> tuple[Any, str, ManualClock, Any]:
    """A real repository and a task whose done work waits to land, and the app on that board
    (its clock at the board's own time: the app's worktree janitor would collect a checkout
    finished a retention period, a day, before the app's clock). The caller closes `land.board`."""
    from tests.worktrees.conftest import make_land_env

    land = make_land_env(tmp_path, monkeypatch, path)
    first, _ = land.task_with({"app.py": "def answer():\n    return 43\n"})
    clock = ManualClock(land.board.now())
    return land, first, clock, make_app(path, clock)


def spent_budget(tmp_path: Path) -> tuple[ManualClock, Path, Any]:
    """A board whose one task spent $2.50 of its $2 budget (the board blocked it)."""
    from boardlib.records import EXECUTION_SUCCEEDED

    clock = ManualClock(START)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        task = board.create_task("pricey", budget_usd=2)
        board.claim(task.id, "ada")
        run = board.open_execution(task.id, "script", agent="ada").id
        board.close_execution(run, EXECUTION_SUCCEEDED, agent="ada", cost_usd=2.5)
    return clock, path, task


@pytest.mark.slow
async def test_a_on_a_spent_budget_asks_for_the_new_amount(tmp_path: Path) -> None:
    from tui.components.prompt import PromptDialog

    clock, path, task = spent_budget(tmp_path)
    app = make_app(path, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: [i.kind for i in app.inbox_items] == [a.BUDGET_EXCEEDED])
        await pilot.press("i")
        await on_row(pilot, task.id)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await answer(pilot, app, "3")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await answer(pilot, app, "one more pass")
        await until(pilot, lambda: fresh(path, task.id).budget_usd == 3.0)
        # Raised past the spend: the row now says none is spent, and `a` unblocks.
        await until(pilot, lambda: [i.action for i in app.inbox_items] == [a.UNBLOCK])
        await pilot.press("a")
        await until(pilot, lambda: fresh(path, task.id).status == t.TODO)


@pytest.mark.slow
async def test_raising_a_spent_budget_to_its_spend_is_told_and_changes_nothing(
    tmp_path: Path,
) -> None:
    """A spent $2 budget raised to $2.50 with $2.50 spent: the budget was "raised", the task stayed
    blocked, and nothing said why. The amount is judged by the budget rule before anything is
    written (or any why is asked), and told in its words."""
    from tui.components.prompt import PromptDialog

    clock, path, task = spent_budget(tmp_path)
    with Board(path, clock=clock, read_only=True) as board:
        events = len(board.events(task_id=task.id))
    notes = Notes()
    app = make_app(path, clock)
    async with app.run_test(size=(120, 30), message_hook=notes) as pilot:
        await until(pilot, lambda: [i.kind for i in app.inbox_items] == [a.BUDGET_EXCEEDED])
        await pilot.press("i")
        await on_row(pilot, task.id)
        for told, too_little in enumerate(("2.5", "1"), start=1):
            await pilot.press("a")
            await until(pilot, lambda: isinstance(app.screen, PromptDialog))
            await answer(pilot, app, too_little)
            await until(pilot, lambda told=told: len(notes.warnings()) == told)
            assert not isinstance(app.screen, PromptDialog)  # no "why?": nothing to write
        assert notes.warnings() == [
            f"budget of {task.id}: the budget of {task.id} would still be spent "
            f"($2.50 recorded against {limit}); raise it above $2.50. Nothing changed."
            for limit in ("$2.50", "$1.00")
        ]
    after = fresh(path, task.id)
    assert (after.budget_usd, after.status) == (2.0, t.BLOCKED)
    with Board(path, clock=clock, read_only=True) as board:
        assert len(board.events(task_id=task.id)) == events


async def answer(pilot: Any, app: Any, text: str) -> None:
    """Type `text` as the prompt's whole answer and submit it (enter on one line, else ctrl+s)."""
    from textual.widgets import Input, TextArea

    field = app.screen.query_one("#answer")
    if isinstance(field, Input):
        field.value = text
        await pilot.press("enter")
    else:
        assert isinstance(field, TextArea)
        field.text = text
        await pilot.press("ctrl+s")


async def test_g_and_big_g_go_to_the_ends_of_the_inbox_the_help_and_the_log(
    tmp_path: Path,
) -> None:
    """Found in tmux: help listed g, G and ctrl+d, and the inbox and the help took none of them."""
    from textual.containers import VerticalScroll

    clock = ManualClock(START)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        for n in range(3):
            task = board.create_task(f"review {n}")
            board.claim(task.id, "alice")
            board.complete(task.id, "alice")
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: len(app.inbox_items) == 3)
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        await until(pilot, lambda: inbox.options.highlighted == 0)
        await pilot.press("G")
        await until(pilot, lambda: inbox.options.highlighted == 2)
        await pilot.press("g")
        await until(pilot, lambda: inbox.options.highlighted == 0)
        await pilot.press("escape", "question_mark")
        await until(pilot, lambda: app.screen.query("#keys"))
        keys = app.screen.query_one("#keys", VerticalScroll)
        await until(pilot, lambda: keys.max_scroll_y > 0)
        await pilot.press("G")
        await until(pilot, lambda: keys.scroll_y == keys.max_scroll_y)
        await pilot.press("g")
        await until(pilot, lambda: keys.scroll_y == 0)
        await pilot.press("ctrl+d")
        await until(pilot, lambda: keys.scroll_y > 3)  # a page, not a line


def three_blocked(path: Path, clock: ManualClock) -> list[str]:
    """Three blocked tasks, a second apart (the inbox lists them in that order)."""
    ids = []
    with Board(path, clock=clock) as board:
        for n in range(3):
            task = board.create_task(f"blocked {n}")
            board.claim(task.id, "bob")
            board.block(task.id, "bob", f"needs key {n}")
            ids.append(task.id)
            clock.advance(seconds=1)
    return ids


async def test_a_asks_first_on_a_row_the_cursor_was_moved_to(tmp_path: Path) -> None:
    """The selected row left the inbox (another process unblocked it), the highlight moved silently
    to the next row, and `a` unblocked that task at once. The inbox now says where the task went and
    where the cursor is, and `a` asks before acting on a row the operator did not choose; a cursor
    move chooses it."""
    from tui.components.confirm import ConfirmDialog

    clock = ManualClock(START)
    path = tmp_path / "board.db"
    first, second, third = three_blocked(path, clock)
    app = make_app(path, clock)
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await until(pilot, lambda: len(app.inbox_items) == 3)
        await pilot.press("i")
        await on_row(pilot, first)
        await pilot.press("j")
        await on_row(pilot, second)
        with Board(path, clock=clock) as other:
            other.unblock(second, actor="operator:zed")
        await on_row(pilot, third)  # the reader brought the change: the neighbour, not chosen
        said = [text for text in notes.warnings() if f"{second} left the inbox" in text]
        assert said and "(→ todo by operator:zed)" in said[0] and f"on {third}" in said[0], said
        await pilot.press("a")
        dialog = await shown_question(pilot)
        assert third in dialog.title_text
        await pilot.pause(0.3)
        assert fresh(path, third).status == t.BLOCKED  # nothing acted on the unchosen row
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        assert fresh(path, third).status == t.BLOCKED
        # Confirmed, it acts.
        await pilot.press("a")
        await shown_question(pilot)
        await pilot.press("y")
        await until(pilot, lambda: fresh(path, third).status == t.TODO)
        # A cursor move chooses: `a` then acts at once (no question).
        await until(pilot, lambda: len(app.inbox_items) == 1)
        await on_row(pilot, first)
        await pilot.press("k")  # at the top already: no move, still not chosen
        await pilot.press("a")
        await shown_question(pilot)
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        with Board(path, clock=clock) as other:
            task = other.create_task("a new one, below")
            other.claim(task.id, "bob")
            other.block(task.id, "bob", "needs a key")
        await until(pilot, lambda: len(app.inbox_items) == 2)
        await pilot.press("j", "k")  # chosen by moving
        await on_row(pilot, first)
        await pilot.press("a")
        await until(pilot, lambda: fresh(path, first).status == t.TODO)
        assert not isinstance(app.screen, ConfirmDialog)


async def test_the_waited_column_moves_with_time_while_the_inbox_is_open(tmp_path: Path) -> None:
    """The "Waiting" column froze while the inbox was open (it was redrawn only when the list
    changed, or every 30 s). Time alone moves it now: no board read, no new item."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    review = sixty_and_one(path, clock)
    clock.advance(seconds=10)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await inbox_on(pilot, review)
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)

        def row() -> str:
            return str(inbox.options.get_option_at_index(0).prompt)

        assert row().startswith("10 s "), row()
        clock.advance(seconds=20)
        await until(pilot, lambda: row().startswith("30 s "), timeout=5)
        clock.advance(minutes=3)
        await until(pilot, lambda: row().startswith("3 min "), timeout=5)
        assert inbox.selected_item() is not None and inbox.unchosen is None


async def test_a_key_the_inbox_has_no_use_for_says_its_keys(tmp_path: Path) -> None:
    """`u`, `x`, `y` in the inbox vanished in silence (docs/tui.md: a key that does not apply says
    why, in one line)."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    review = sixty_and_one(path, clock)
    app = make_app(path, clock)
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await inbox_on(pilot, review)
        for count, key in enumerate(("u", "x", "y"), start=1):
            await pilot.press(key)
            await until(pilot, lambda: len(notes.warnings()) == count)  # noqa: B023
            assert notes.warnings()[-1].startswith(f": {key}: not an inbox key"), notes.warnings()
        said = notes.warnings()[-1]
        assert "j/k move" in said and "a does the row's action" in said, said
        assert fresh(path, review).status == t.IN_REVIEW  # nothing acted
        await pilot.press("j")  # a bound key says nothing
        await pilot.pause(0.2)
        assert len(notes.warnings()) == 3


@pytest.mark.slow
async def test_a_key_typed_with_the_a_that_opens_a_landing_is_said_typed_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `y` typed in the same burst as the `a` that opens a landing question reached the inbox (the
    dialog waits for git's preview) and vanished; it is now told as typed before the question, and
    lands nothing."""
    from textual import events

    from tui.components.land_dialog import LandDialog

    path = tmp_path / "board.db"
    land, first, _clock, app = work_to_land(tmp_path, monkeypatch, path)
    notes = Notes()
    try:
        async with app.run_test(size=(120, 30), message_hook=notes) as pilot:
            await until(pilot, lambda: [i.kind for i in app.inbox_items] == [a.UNLANDED])
            await pilot.press("i")
            await on_row(pilot, first)
            for key in "ay":  # at once, as a terminal delivers a burst
                app.post_message(events.Key(key, key))
            await until(pilot, lambda: isinstance(app.screen, LandDialog))
            typed = [n for n in notes.warnings() if "typed before" in n]
            assert typed == [f": 1 key(s) typed before “Land {first}?” was on screen were ignored."]
            await pilot.pause(0.3)
            assert fresh(path, first).landed_commit is None
            assert isinstance(app.screen, LandDialog) and app.question_coming is None
    finally:
        land.board.close()


async def test_a_new_item_while_the_inbox_is_open_gives_no_hint_to_open_it(tmp_path: Path) -> None:
    """The hint "Needs you: ... i opens the inbox." appeared with the inbox open."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    review = sixty_and_one(path, clock)
    app = make_app(path, clock)
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await inbox_on(pilot, review)
        with Board(path, clock=clock) as board:
            task = board.create_task("blocked meanwhile")
            board.claim(task.id, "bob")
            board.block(task.id, "bob", "needs a key")
        await until(pilot, lambda: len(app.inbox_items) == 2)
        said = [text for text in notes.infos() if "Needs you" in text]
        assert said == [f"Needs you: {task.id} is blocked."], said
        assert app.board_screen.header.facts.inbox_new == ""  # seen in the list already


async def test_the_detail_line_says_the_action_once(tmp_path: Path) -> None:
    """The detail line read "a land: land it: onto..." (the word twice)."""
    from textual.widgets import Static

    clock = ManualClock(START)
    path = tmp_path / "board.db"
    review = sixty_and_one(path, clock)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await inbox_on(pilot, review)
        detail = str(app.screen.query_one("#inbox-detail", Static).render())
        assert f"· a: {a.ACTIONS[a.APPROVE]}" in detail, detail
        assert "a approve:" not in detail


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_footer_shows_whole_hints_or_none(demo: Any, size: tuple[int, int]) -> None:
    """At 80x24 the inbox's footer showed `?` without its word, the palette key drawn over
    `Help` (the screenshot read `^pPa lette`): on the board and in the inbox, each key hint the
    footer shows is whole on the terminal's last line, and one that does not fit is left out
    whole. At 160 columns every hint fits."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    from tests.tui.test_drawer import screen_text

    path, clock, _ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=size) as pilot:
        await settled(pilot, lambda: app.inbox_items)
        for screen in ("board", "inbox"):
            if screen == "inbox":
                await pilot.press("i")
                await until(pilot, lambda: isinstance(app.screen, InboxScreen))
            await settled(pilot)
            last = screen_text(app).splitlines()[-1]
            keys = list(app.screen.query_one(Footer).query(FooterKey))
            shown = [key for key in keys if key.visible]
            assert shown and shown[-1].has_class("-command-palette"), last
            for key in shown:
                assert f"{key.key_display} {key.description}" in last, (screen, last)
            help_key = next(key for key in keys if key.description == "Help")
            assert help_key.visible is (size[0] > 80), (screen, last)


async def test_the_footer_stays_whole_under_a_question(demo: Any) -> None:
    """At 80x24 in tmux every question asked from the inbox showed its footer ending in a lone
    `?`: the footer recomposed under the dialog and was fitted before its hints had sizes. With
    the override question on screen, each hint the inbox's footer shows ends left of the palette
    key, and Help (which does not fit at 80 columns) is left out."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    path, clock, _ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, lambda: app.inbox_items)
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        await settled(pilot)
        item = inbox.selected_item()
        assert item is not None and item.action == a.OVERRIDE  # a row whose action asks
        await pilot.press("a")
        await shown_question(pilot)
        await settled(pilot)
        keys = list(inbox.query_one(Footer).query(FooterKey))
        palette = next(key for key in keys if key.has_class("-command-palette"))
        shown = [key for key in keys if key.visible and key is not palette]
        assert shown
        for key in shown:
            assert key.region.right <= palette.region.x, (key.key_display, key.region)
        assert not next(key for key in keys if key.description == "Help").visible


async def test_the_why_column_lines_up_past_a_long_action(tmp_path: Path) -> None:
    """In tmux at 80x24 a `raise_budget` row's why started three cells right of the `unblock`
    row's above it: the action column was nine cells whatever the actions. Every row's why
    starts in the same column."""
    clock, path, _task = spent_budget(tmp_path)
    with Board(path, clock=clock) as board:
        stuck = board.create_task("stuck")
        board.claim(stuck.id, "bob")
        board.block(stuck.id, "bob", "needs a key")
    app = make_app(path, clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: len(app.inbox_items) == 2)
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        await until(pilot, lambda: inbox.options.option_count == 2)
        assert {item.action for item in inbox.items} == {a.RAISE_BUDGET, a.UNBLOCK}
        rows = [str(inbox.options.get_option_at_index(index).prompt) for index in range(2)]
        starts = {row.index(item.why) for row, item in zip(rows, inbox.items, strict=True)}
        assert len(starts) == 1, rows


async def test_the_operators_own_action_here_is_not_news_and_another_operators_is(
    tmp_path: Path,
) -> None:
    """`a` on a review row (approved here) was followed by "Needs you: TASK-2 is ready to land", as
    if someone else had done it. The same action by another TUI or the CLI under the same operator
    name is still said: only this app's own writes are quiet."""
    clock = ManualClock(START_MS)
    path = tmp_path / "board.db"
    with Board(path, clock=clock) as board:
        here, elsewhere = (board.create_task(title).id for title in ("Here", "Elsewhere"))
    notes = Notes()
    app = make_app(path, clock)

    def said(task_id: str) -> list[str]:
        return [n for n in notes.seen_text() if n.startswith("Needs you") and task_id in n]

    async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
        await until(pilot, lambda: app.loaded and app._inbox_keys is not None)
        app.write(
            f"block {here}",
            lambda b: b.move(here, t.BLOCKED, actor=app.operator, reason="waiting on legal"),
        )
        await until(pilot, lambda: any(i.task_id == here for i in app.inbox_items))
        await pilot.pause(0.3)
        assert not said(here), notes.seen_text()
        assert f"{here} → blocked (you)" in " ".join(notes.seen_text())  # the cursor's note
        assert app.board_screen.header.facts.inbox_new == ""
        with Board(path, clock=clock) as other:  # the CLI, as the same operator
            other.move(elsewhere, t.BLOCKED, actor=OPERATOR, reason="waiting on legal")
        await until(pilot, lambda: said(elsewhere))
        assert said(elsewhere) == [f"Needs you: {elsewhere} is blocked. i opens the inbox."]
        assert app.board_screen.header.facts.inbox_new == f"{elsewhere} is blocked"


async def test_the_operators_own_approve_moves_the_row_on_without_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After `a` approved TASK-2 here, a warning said "TASK-2 is now “unlanded” in the inbox. The
    cursor is on TASK-2 (land)", an alarm about the operator's own action. The cursor stays on the
    row, whose action and detail line say what `a` does now; the same change made elsewhere (even
    under the operator's name) is still a warning."""
    from tests.worktrees.conftest import make_land_env

    path = tmp_path / "board.db"
    land = make_land_env(tmp_path, monkeypatch, path)
    try:
        mine, _ = land.task_with({"a.txt": "mine\n"}, title="Mine", finish="review")
        theirs, _ = land.task_with({"b.txt": "theirs\n"}, title="Theirs", finish="review")
        app = make_app(path, ManualClock(land.board.now()))
        notes = Notes()

        def moved_on(task_id: str) -> list[str]:
            return [n for n in notes.seen_text() if f"{task_id} is now “{a.UNLANDED}”" in n]

        async with app.run_test(size=(80, 24), message_hook=notes) as pilot:
            await until(pilot, lambda: len(app.inbox_items) == 2)
            await inbox_on(pilot, mine)
            await pilot.press("a")
            inbox = app.screen
            assert isinstance(inbox, InboxScreen)

            def on_mine_to_land() -> bool:
                item = inbox.selected_item()
                return item is not None and (item.task_id, item.kind) == (mine, a.UNLANDED)

            await until(pilot, on_mine_to_land)
            await pilot.pause(0.3)
            assert not moved_on(mine), notes.seen_text()
            assert "land" in str(inbox.query_one("#inbox-detail").render())

            await pilot.press("k" if inbox.items[0].task_id == theirs else "j")
            await on_row(pilot, theirs)
            land.board.approve(theirs, OPERATOR)  # the CLI, as the same operator
            await until(pilot, lambda: moved_on(theirs))
            assert moved_on(theirs) == [w for w in notes.warnings() if theirs in w]
    finally:
        land.board.close()


def needs_you_toasts(app: Any) -> list[str]:
    from textual.widgets._toast import Toast

    return [
        toast._notification.message
        for toast in app.screen.query(Toast)
        if toast._notification.title == "Needs you"
    ]


def block_one(path: Path, clock: ManualClock, title: str) -> str:
    with Board(path, clock=clock) as board:
        task = board.create_task(title)
        board.claim(task.id, "bob")
        board.block(task.id, "bob", "needs a key")
        return task.id


async def test_needs_you_toasts_replace_each_other_counting_what_came(tmp_path: Path) -> None:
    """Found in a busy `kanban demo` at 80x24: a "Needs you" toast per new item filled both of
    the toast rows. One shows, the newest, counting the items the one it replaced stood for;
    each change of its words is posted (the message log keeps the newest: the test below)."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    app = make_app(path, clock)
    notes = Notes()
    async with app.run_test(size=(80, 24), message_hook=notes, notifications=True) as pilot:
        await until(pilot, lambda: app.inbox_items)
        first = block_one(path, clock, "first")
        await until(pilot, lambda: len(app.inbox_items) == 2)
        await until(pilot, lambda: needs_you_toasts(app))
        second = block_one(path, clock, "second")
        await until(pilot, lambda: len(app.inbox_items) == 3)
        await pilot.pause(0.2)
        assert needs_you_toasts(app) == [f"{second} is blocked (+1 more). i opens the inbox."]
        said = [text for text in notes.infos() if "Needs you" in text]
        assert said == [
            f"Needs you: {first} is blocked. i opens the inbox.",
            f"Needs you: {second} is blocked (+1 more). i opens the inbox.",
        ], said


async def test_a_reworded_needs_you_toast_is_one_line_in_the_message_log(tmp_path: Path) -> None:
    """Found reading the pacing: each newer item that changed the toast's words wrote one more
    line to the message log (`M`), a busy minute a page of "(+N more)" for one toast. The log
    keeps one line per toast shown, with its newest words; the other messages stay."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(pilot, lambda: app.inbox_items)
        first = block_one(path, clock, "first")
        await until(pilot, lambda: needs_you_toasts(app))
        app.notify("between the two", timeout=1)
        second = block_one(path, clock, "second")
        third = block_one(path, clock, "third")
        await until(pilot, lambda: len(app.inbox_items) == 4)
        await pilot.pause(0.2)
        newest = f"{third} is blocked (+2 more). i opens the inbox."
        assert needs_you_toasts(app) == [newest]
        logged = [(said.title, said.message) for said in app.said.newest_first()]
        assert [message for title, message in logged if title == "Needs you"] == [newest], logged
        assert ("", "between the two") in logged
        assert not any(first in m or second in m for _, m in logged if m != newest), logged


async def test_no_needs_you_toast_over_a_dialog_the_header_keeps_the_news(
    tmp_path: Path,
) -> None:
    """Found in tmux at 80x24: "Needs you" toasts covered the land dialog's question. Over a
    dialog none shows; the terminal is still told, and the header says it when the dialog
    closes."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    sent: list[str] = []
    app = make_app(path, clock, notify_mode=notify.OSC)
    app.tell_terminal = sent.append  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(pilot, lambda: app.inbox_items)
        await pilot.press("question_mark")  # the help: a dialog over the board
        await until(pilot, lambda: app.screen is not app.board_screen)
        task_id = block_one(path, clock, "meanwhile")
        await until(pilot, lambda: len(app.inbox_items) == 2)
        await pilot.pause(0.3)
        assert needs_you_toasts(app) == []
        assert sent == [f"\x1b]9;kanban: {task_id} is blocked\x1b\\"]
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.board_screen)
        assert f"new: {task_id} is blocked (i)" in header_text(app)


@contextlib.asynccontextmanager
async def blocked_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Any, Any, Path, ManualClock, str]]:
    """An app at 80x24 on the busy board whose "Needs you" toast says a task was blocked
    meanwhile (the toast's 30 s, the next one's 60, outlast the test): the app, its pilot, the
    board's path and clock, the task."""
    import tui.needs_you

    monkeypatch.setattr(tui.needs_you, "NEEDS_YOU_S", 30.0)
    monkeypatch.setattr(tui.needs_you, "NEEDS_YOU_EVERY_S", 60.0)
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(pilot, lambda: app.inbox_items)
        task_id = block_one(path, clock, "meanwhile")
        await until(
            pilot, lambda: needs_you_toasts(app) == [f"{task_id} is blocked. i opens the inbox."]
        )
        yield app, pilot, path, clock, task_id


async def test_a_question_covers_the_needs_you_toast_and_gives_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question opens with the toasts from before it gone (one covered the reject question
    at 80x24), and the "Needs you" toast went with them for good while the header counted it.
    It is covered, not gone: back once the question is answered, for the time it had left, one
    line in the message log; the other toasts stay gone, and a toast whose item left the inbox
    while the question was open does not come back."""
    from tui.components.confirm import ConfirmDialog

    async with blocked_meanwhile(tmp_path, monkeypatch) as (app, pilot, path, clock, task_id):
        words = f"{task_id} is blocked. i opens the inbox."
        app.notify("an older note", timeout=30)
        await until(pilot, lambda: "an older note" in toast_words(app))
        for answer in ("n", "y"):
            dialog = ConfirmDialog("Cancel TASK-1?", "It stops there.")
            await app.push_screen(dialog)
            await shown_question(pilot)
            await pilot.pause(0.2)
            assert toast_words(app) == [], toast_words(app)  # the question is uncovered
            assert "2 need you" in header_text(app)
            await pilot.press(answer)
            await until(pilot, lambda: app.screen is app.board_screen)
            await until(pilot, lambda: needs_you_toasts(app) == [words])
            assert toast_words(app) == [words]  # the older note stays gone
        logged = [said.message for said in app.said.newest_first() if said.title == "Needs you"]
        assert logged == [words], logged
        dialog = ConfirmDialog("Cancel TASK-1?", "It stops there.")
        await app.push_screen(dialog)
        await shown_question(pilot)
        await until(pilot, lambda: not toast_words(app))
        with Board(path, clock=clock) as board:
            board.unblock(task_id, actor=OPERATOR)
        await until(pilot, lambda: len(app.inbox_items) == 1)
        await pilot.press("n")
        await until(pilot, lambda: app.screen is app.board_screen)
        await pilot.pause(0.3)
        assert needs_you_toasts(app) == []  # what it named has left the inbox


async def test_a_given_back_needs_you_toast_goes_when_its_item_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A toast a question gave back said its item still waited after the answer took it away:
    `y` to the land question lands the task its "ready to land" toast named, and the toast came
    back for it. It goes once the inbox read says its item has left."""
    from tui.components.confirm import ConfirmDialog

    async with blocked_meanwhile(tmp_path, monkeypatch) as (app, pilot, path, clock, task_id):
        words = f"{task_id} is blocked. i opens the inbox."
        await app.push_screen(ConfirmDialog("Cancel TASK-1?", "It stops there."))
        await shown_question(pilot)
        await until(pilot, lambda: not toast_words(app))
        await pilot.pause(0.2)
        await pilot.press("y")
        await until(pilot, lambda: needs_you_toasts(app) == [words])
        with Board(path, clock=clock) as board:  # as the landing takes its item away
            board.unblock(task_id, actor=OPERATOR)
        await until(pilot, lambda: len(app.inbox_items) == 1)
        await until(pilot, lambda: needs_you_toasts(app) == [], timeout=5)  # its 30 s not over


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_task_being_landed_says_so_on_its_card_and_in_its_drawer(
    tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a landing verified the merged tree, its card said "to review" (or nothing, done)
    outside the lander's own drawer, so another operator started a second landing. Its card says
    "landing by carol" (a card's 20 cells: the time too where it fits), its drawer since when;
    once its lander is dead (its lease ran out, no event: the inbox's recheck), both say "to
    review" again. The landing's place is taken through the queue's own `join`, by a lander of
    another machine (its lease alone says whether it lives)."""
    import time

    from boardlib.landings import LandQueue

    path = tmp_path / "board.db"
    clock = ManualClock(START)
    with Board(path, clock=clock) as board:
        landing, plain = (board.create_task(title) for title in ("the landing one", "a plain one"))
        for task in (landing, plain):
            board.claim(task.id, "alice")
            board.complete(task.id, "alice")
        LandQueue(board, lease_ms=30_000).join(
            landing.id, repo_path="/repo", ref="refs/heads/main", lander="carol",
            holder="another-machine/4242/1/abc", strategy="squash", fence="0" * 40,
        )  # fmt: skip
    began = time.localtime(START / 1000)
    in_drawer = time.strftime("landing by carol since %H:%M:%S", began)
    app = make_app(path, clock)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: [i.task_id for i in app.inbox_items] == [plain.id])
        await until(pilot, lambda: "landing by carol" in screen_text(app))
        assert screen_text(app).count("to review from") == 1  # the plain card: waits on a person
        app.open_drawer(landing.id)
        await until(pilot, lambda: in_drawer in screen_text(app))
        monkeypatch.setattr(live, "INBOX_RECHECK_S", 0.5)  # the same recheck, sooner
        clock.advance(ms=30_001)  # no renewal: the lander is dead, unseen but for its lease
        await until(pilot, lambda: in_drawer not in screen_text(app), timeout=15)
        assert {i.task_id for i in app.inbox_items} == {landing.id, plain.id}
        await pilot.press("escape")
        await until(pilot, lambda: screen_text(app).count("to review from") == 2)
        assert "landing by" not in screen_text(app)


@pytest.mark.parametrize("size", [(80, 24), (300, 40)])
async def test_a_done_card_being_landed_keeps_who_did_it_and_when_where_it_has_room(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """A done card whose landing was under way said only "landing by carol": who did the work
    and when it was approved (`alice ✓14:35:07`) went even where the card had room for both. At
    80 columns, beside three columns of work, the landing alone (it is what happens now); the
    drawer says both at any width."""
    import time

    from boardlib.landings import LandQueue

    path = tmp_path / "board.db"
    clock = ManualClock(START)
    with Board(path, clock=clock) as board:
        task = board.create_task("the landing one")
        board.claim(task.id, "alice")
        board.complete(task.id, "alice")
        board.approve(task.id, OPERATOR)
        for status in (t.TODO, t.IN_PROGRESS, t.IN_REVIEW):  # work beside: no column a strip
            other = board.create_task(f"other {status}")
            if status != t.TODO:
                board.claim(other.id, "bob")
            if status == t.IN_REVIEW:
                board.complete(other.id, "bob")
        LandQueue(board, lease_ms=30_000).join(
            task.id, repo_path="/repo", ref="refs/heads/main", lander="carol",
            holder="another-machine/4242/1/abc", strategy="squash", fence="0" * 40,
        )  # fmt: skip
    done = time.strftime("✓%H:%M:%S", time.localtime(START / 1000))
    app = make_app(path, clock)
    async with app.run_test(size=size) as pilot:
        await settled(pilot, lambda: app.loaded)
        if size[0] < 180:  # done starts folded there
            await onto_folded_column(pilot, t.DONE)
            await pilot.press("z")
        await until(pilot, lambda: "landing by carol" in screen_text(app))
        if size[0] >= 180:
            assert f"landing by carol · alice {done}" in screen_text(app), screen_text(app)
        else:
            assert done not in screen_text(app), screen_text(app)  # 21 cells: the landing wins
        app.open_drawer(task.id)
        await until(pilot, lambda: "landing by carol since" in screen_text(app))
        assert f"approve by {OPERATOR} at" in screen_text(app), screen_text(app)


def toast_words(app: Any) -> list[str]:
    from textual.widgets._toast import Toast

    return [toast._notification.message for toast in app.screen.query(Toast)]


@pytest.mark.slow  # ~8 s of toast turns by the wall clock
async def test_a_busy_inbox_says_needs_you_briefly_and_counts_what_still_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in a busy `kanban demo` at 80x24: each new item replaced the "Needs you" toast with
    a fresh one, so it never left (over the foot of the drawer and the inbox's detail line), and
    its count grew with every item it had ever stood for ("+38 more" with 23 in the inbox). A
    newer item changes its words, not its end; the next toast waits its turn and counts the items
    that came meanwhile and still wait."""
    import time

    import tui.needs_you

    monkeypatch.setattr(tui.needs_you, "NEEDS_YOU_S", 3.0)
    monkeypatch.setattr(tui.needs_you, "NEEDS_YOU_EVERY_S", 8.0)
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    app = make_app(path, clock)
    notes = Notes()
    hint = "i opens the inbox."
    async with app.run_test(size=(80, 24), message_hook=notes, notifications=True) as pilot:
        await until(pilot, lambda: app.inbox_items)
        first = block_one(path, clock, "first")
        await until(pilot, lambda: needs_you_toasts(app))
        began = time.monotonic()
        await pilot.pause(1.0)
        second = block_one(path, clock, "second")
        replaced = f"{second} is blocked (+1 more). {hint}"
        await until(pilot, lambda: needs_you_toasts(app) == [replaced])
        await until(pilot, lambda: not needs_you_toasts(app))
        assert time.monotonic() - began < 3.5  # the first's end, not 3 s after the second
        third = block_one(path, clock, "third")
        fourth = block_one(path, clock, "fourth")
        with Board(path, clock=clock) as board:
            board.unblock(third)  # it leaves the inbox before its turn: not news any more
        await until(pilot, lambda: len(app.inbox_items) == 4)
        assert time.monotonic() - began < 7.0
        assert needs_you_toasts(app) == []  # not before its turn
        await until(pilot, lambda: needs_you_toasts(app))
        assert time.monotonic() - began >= 7.5
        assert needs_you_toasts(app) == [f"{fourth} is blocked. {hint}"]
        said = [text for text in notes.infos() if "Needs you" in text]
        assert said == [
            f"Needs you: {first} is blocked. {hint}",
            f"Needs you: {second} is blocked (+1 more). {hint}",
            f"Needs you: {fourth} is blocked. {hint}",
        ], said


async def test_opening_the_inbox_takes_the_needs_you_toast_away(tmp_path: Path) -> None:
    """Found in tmux at 80x24: the toast saying "i opens the inbox" went on showing in the inbox,
    over its detail line (the selected row's title and what `a` does)."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    sixty_and_one(path, clock)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(pilot, lambda: app.inbox_items)
        task_id = block_one(path, clock, "news")
        await until(pilot, lambda: needs_you_toasts(app))
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        await pilot.pause(0.3)
        assert needs_you_toasts(app) == []
        assert any(task_id in said.message for said in app.said.newest_first())


async def test_toasts_in_the_inbox_leave_its_detail_line_readable(tmp_path: Path) -> None:
    """Found in tmux at 80x24: a toast in the inbox (a new item's "Needs you", a refusal, a row
    that left) lay over its detail line, the selected row's title and what `a` does. Toasts
    there sit above the detail line, however many lines it takes."""
    from textual.widgets._toast import Toast

    clock = ManualClock(START)
    path = tmp_path / "board.db"
    review = sixty_and_one(path, clock)
    with Board(path, clock=clock) as board:
        board.update_task(review, title="a title " * 12)  # a detail line of several lines
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await inbox_on(pilot, review)
        detail = app.screen.query_one("#inbox-detail")
        block_one(path, clock, "meanwhile")
        app.notify("a refusal in the inbox", severity="warning")
        await until(pilot, lambda: len(app.screen.query(Toast)) == 2)
        await pilot.pause(0.2)
        assert detail.region.height > 1, detail.region
        for toast in app.screen.query(Toast):
            assert not toast.region.overlaps(detail.region), (toast.region, detail.region)


async def test_each_row_names_its_task_by_title_too(tmp_path: Path) -> None:
    """Found in a busy `kanban demo` at 80x24: 300 rows read "unlanded land passed its gate, not
    landed: its work wai…", the task named by its id alone; which one was which took the cursor
    on each row (the detail line). Each row carries the title, cut to fit, inert."""
    clock = ManualClock(START)
    path = tmp_path / "board.db"
    review = sixty_and_one(path, clock)
    long_title = "Checkout: a title much longer than the row has room for"
    hostile = block_one(path, clock, HOSTILE)
    with Board(path, clock=clock) as board:
        board.update_task(review, title=long_title)
    app = make_app(path, clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await inbox_on(pilot, review)
        await until(pilot, lambda: len(app.screen.items) == 2)
        screen = app.screen
        rows = [str(screen.options.get_option_at_index(n).prompt) for n in range(2)]
        row = {text.split()[1]: text for text in rows}
        # cut to half the room it shares with the why (80x24: 21 cells)
        assert "approve Checkout: a title mu… waiting for review" in row[review], rows
        assert "\x1b" not in row[hostile] and "unblock pwn ␛]52;c;aGk=␇" in row[hostile], rows


async def test_a_wide_inbox_shows_whole_titles_and_a_narrow_one_cuts_them(tmp_path: Path) -> None:
    """In tmux at 160x48 on `kanban demo`: every title was cut at 24 cells (`Set up the
    repository a…`) beside a blank band 25 columns wide. A title gets what the longest why
    leaves, at least half the room it shares with the why (at most 24 cells), and a resize
    draws the rows again."""
    clock, path = ManualClock(START), tmp_path / "board.db"
    title = "Set up the repository and CI for the whole shop"
    with Board(path, clock=clock) as board:
        task = board.create_task(title)
        board.claim(task.id, "alice")
        board.complete(task.id, "alice")
    app = make_app(path, clock)
    async with app.run_test(size=(160, 30)) as pilot:
        await inbox_on(pilot, task.id)
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        await until(pilot, lambda: title in screen_text(app))
        [line] = [line for line in screen_text(app).splitlines() if task.id in line]
        assert f"{title} {inbox.items[0].why}" in line, line  # the why follows, whole

        def row() -> str:  # the task's row (the detail line under the list says its title too)
            return next(line for line in screen_text(app).splitlines() if task.id in line)

        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: "Set up the repositor… " in row())
        await pilot.resize_terminal(160, 30)
        await until(pilot, lambda: title in row())


async def test_a_long_inbox_opens_without_measuring_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In tmux on a 100,000-task board, `i` with 2,142 items took 1.5 s: each row was parsed
    from markup, and the option list measured every row by cutting it to the width, two or
    three times. A row is assembled and is one line by the list's CSS; the rows cut to the
    width are the ones drawn. Counted, not timed: the real cutting runs, each call is tallied."""
    from textual.content import Content

    clock, path = ManualClock(START), tmp_path / "board.db"
    count = 400
    with Board(path, clock=clock) as board:
        for n in range(count):
            task = board.create_task(f"stuck {n}")
            board.claim(task.id, "bob")
            board.block(task.id, "bob", "needs a key")
    calls = {"parsed": 0, "cut": 0}
    parse, cut = Content.from_markup.__func__, Content._wrap_and_format  # type: ignore[attr-defined]

    def parsed(cls: Any, *args: Any, **kw: Any) -> Any:
        calls["parsed"] += 1
        return parse(cls, *args, **kw)

    def measured(self: Any, *args: Any, **kw: Any) -> Any:
        calls["cut"] += 1
        return cut(self, *args, **kw)

    app = make_app(path, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: len(app.inbox_items) == count, timeout=20)
        monkeypatch.setattr(Content, "from_markup", classmethod(parsed))
        monkeypatch.setattr(Content, "_wrap_and_format", measured)
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        await until(pilot, lambda: inbox.options.option_count == count)
        await pilot.pause(0.2)
        assert calls["parsed"] < count // 4, calls  # the title and detail lines, not each row
        assert calls["cut"] < count // 4, calls  # the rows on screen, not all 400


def gated_and_plain(path: Path, clock: ManualClock) -> tuple[Task, Task]:
    """Two tasks in review: one under its running gate (beating every second), one waiting on a
    person."""
    with Board(path, clock=clock) as board:
        gated, plain = (board.create_task(title) for title in ("the gated one", "a plain one"))
        for task in (gated, plain):
            board.claim(task.id, "alice")
        board.complete(gated.id, "alice", gate_ms=600_000, beat_ms=1_000)
        board.complete(plain.id, "alice")
    return gated, plain


@pytest.mark.parametrize(("size", "ending"), [((80, 24), "dead"), ((160, 48), "stopped")])
async def test_a_task_under_its_running_gate_says_verifying_on_its_card_and_in_its_drawer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], ending: str
) -> None:
    """Under its gate a task is no inbox item, and its card said "to review" as if it waited on a
    person: only its history said the gate ran. Its card says "verifying since HH:MM", its
    drawer when the gate began; once the gate ends, both say "to review" again: one stopped
    (an event the feed brings), or one seen dead, which stopped beating (no event: the inbox's
    own recheck, every `INBOX_RECHECK_S`, finds it)."""
    import time

    from boardlib.attention import GATE_BEATS_MISSED

    path = tmp_path / "board.db"
    clock = ManualClock(START)
    gated, plain = gated_and_plain(path, clock)
    began = time.localtime(START / 1000)
    on_card = time.strftime("verifying since %H:%M", began)  # a card's room: the minute
    in_drawer = time.strftime("verifying since %H:%M:%S", began)  # the drawer's times
    app = make_app(path, clock)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: [i.task_id for i in app.inbox_items] == [plain.id])
        await until(pilot, lambda: on_card in screen_text(app))
        assert screen_text(app).count("to review from") == 1  # the plain card: waits on a person
        app.open_drawer(gated.id)
        await until(pilot, lambda: in_drawer in screen_text(app))
        if ending == "dead":
            # The recheck's period is the wait here (5 s by the clock, ~1 CPU-s of the app
            # drawing): a shorter one runs the same recheck sooner.
            monkeypatch.setattr(live, "INBOX_RECHECK_S", 0.5)
            clock.advance(ms=GATE_BEATS_MISSED * 1_000 + 1)  # no beat: the gate is dead, unseen
        else:
            with Board(path, clock=clock) as board:
                board.gate_stopped(gated.id, "OSError: disk full")
        await until(pilot, lambda: in_drawer not in screen_text(app), timeout=15)
        assert {i.task_id for i in app.inbox_items} == {gated.id, plain.id}
        await pilot.press("escape")
        await until(pilot, lambda: screen_text(app).count("to review from") == 2)
        assert on_card not in screen_text(app)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_header_counts_the_tasks_under_their_running_gate(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """`kanban inbox` says "1 task verifying"; the header counted only what needs a person, so
    an empty inbox read as nothing in flight. Beside that count, "· 1 verifying" while a gate
    runs, nothing once none does; at 80 columns too, the count still on the one line."""
    from boardlib.attention import VERIFYING

    path = tmp_path / "board.db"
    clock = ManualClock(START)
    gated, _plain = gated_and_plain(path, clock)
    app = make_app(path, clock)

    def header() -> str:
        return screen_text(app).split("\n")[0]

    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: f"1 need you · 1 {VERIFYING}" in header())
        assert len(header().rstrip()) <= size[0]
        # a filter outlasts it; the count of what needs a person outlasts everything
        app.board_screen.header.update_facts(filter="status:review builder:alice")
        await until(pilot, lambda: "review builder" in header())
        wide = size[0] > 80
        assert (f"1 need you · 1 {VERIFYING} │" in header()) is wide, header()
        assert "1 need you │ 2 tasks" in header() or wide, header()
        assert len(header().rstrip()) <= size[0]
        app.board_screen.header.update_facts(filter="")
        await until(pilot, lambda: f"1 need you · 1 {VERIFYING}" in header())
        with Board(path, clock=clock) as board:
            board.gate_stopped(gated.id, "OSError: disk full")
        await until(pilot, lambda: "2 need you" in header())
        assert VERIFYING not in header(), header()
