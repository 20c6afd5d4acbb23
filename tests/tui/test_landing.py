"""Landing from the app, on a board with real git worktrees (`tui.review_board`), driven by
Textual's pilot: the Overview previews the landing before the operator approves (and follows the
base when it moves), "Approve and land" from the drawer and "Land" from the palette confirm
first and land through the library, the card and the history show the landed commit, and a
refusal is a notification with its typed reason that leaves the repository as it was (git
status, every file's sha256, every ref)."""

import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, ManualClock
from tests.tui.conftest import (
    OPERATOR,
    Notes,
    fresh,
    make_app,
    settled,
    shown_question,
    text_of,
    until,
)
from tests.tui.test_drawer import app_on, drawer_of, opened, screen_text
from tests.tui.test_trust import card_text
from tui.app import KanbanApp
from tui.components.confirm import ConfirmDialog
from tui.components.land_dialog import LandDialog
from tui.components.landing_line import LandingLine
from tui.review_board import START_MS, ReviewBoard


@pytest.fixture
def review(review_board: ReviewBoard) -> tuple[ReviewBoard, ManualClock]:
    return review_board, ManualClock(START_MS + 3_600_000)


def git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def repository_state(repo: Path) -> dict[str, str]:
    """Everything a refusal must leave alone: git status, every ref, every file's sha256."""
    state = {
        "status": git(repo, "status", "--porcelain=v1", "--untracked-files=all"),
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
    }
    for path in sorted(repo.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(repo).parts:
            state[str(path.relative_to(repo))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def landing_text(app: KanbanApp) -> str:
    return text_of(drawer_of(app).query_one(LandingLine).content)


async def confirm(pilot: Any, app: KanbanApp) -> ConfirmDialog:
    """The question once it takes answers: a key pressed before it was painted (or within
    `READ_S` of the paint) is dropped by the app, so an answer sent sooner waits forever."""
    dialog = await shown_question(pilot)
    assert app.screen is dialog
    return dialog


def dialog_text(dialog: ConfirmDialog) -> str:
    return text_of(dialog.body)


def worktree_of(board: ReviewBoard, task_id: str) -> Path:
    """The task's worktree (its newest workspace)."""
    with Board(board.db, read_only=True) as b:
        return Path(b.view(task_id).workspaces[-1].worktree_path)


def verify_with(board: ReviewBoard, task_id: str, command: str) -> None:
    """The task's handoff names `command` as its verify command (the landing runs it)."""
    import json

    handoff = worktree_of(board, task_id) / "AGENT_HANDOFF.json"
    data = json.loads(handoff.read_text())
    data["commands"]["verify"] = command
    handoff.write_text(json.dumps(data))


async def approve_and_land(
    pilot: Any, app: KanbanApp, before_yes: Callable[[], object] = lambda: None
) -> None:
    """In the open drawer: `W`, the question once it takes answers, `before_yes()`, `y`."""
    await pilot.press("W")
    await confirm(pilot, app)
    before_yes()
    await pilot.press("y")


async def the_refusal(pilot: Any, notes: Notes) -> str:
    """The one error notification a refused landing raises."""
    await until(pilot, lambda: notes.errors(), timeout=60)
    [error] = notes.errors()
    return error


@pytest.mark.slow  # builds a repository with worktrees, verifies on the merged tree
async def test_approve_and_land_from_the_drawer(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    task_id = board.ids["review"]
    main_before = git(board.repo, "rev-parse", "main").strip()
    notes = Notes()
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await opened(pilot, app, task_id)
        await until(pilot, lambda: "lands cleanly" in landing_text(app), timeout=30)
        assert f"lands cleanly onto main@{main_before[:7]}" in landing_text(app)
        assert "W: approve and land" in landing_text(app)
        await pilot.press("W")
        dialog = await confirm(pilot, app)
        assert dialog.title_text == f"Approve and land {task_id}?"
        said = dialog_text(dialog)
        assert f"lands cleanly onto main@{main_before[:7]}" in said
        assert "only then is it done" in said
        assert fresh(board.db, task_id).landed_commit is None  # nothing before the yes
        await pilot.press("y")
        await until(pilot, lambda: fresh(board.db, task_id).landed_commit is not None, 60)
        landed = fresh(board.db, task_id)
        assert landed.status == "done" and landed.landed_into == "main"
        assert landed.landed_by == OPERATOR
        assert git(board.repo, "rev-parse", "main").strip() == landed.landed_commit
        subject = git(board.repo, "log", "-1", "--format=%s", "main").strip()
        assert subject == f"Add a percentage discount to the cart ({task_id})"
        tree = git(board.repo, "ls-tree", "-r", "--name-only", "main").split()
        assert "shop/discounts.py" in tree and "TASK.md" not in tree and "init.sh" not in tree
        short = landed.landed_commit[:7]  # type: ignore[index]
        await until(pilot, lambda: f"landed as {short} on main" in landing_text(app), 30)
        await until(pilot, lambda: any(f"as {short}" in n for n in notes.infos()))
        # The card carries the commit; the history says who landed it, where and as what.
        await until(pilot, lambda: app.state.tasks[task_id].landed_commit is not None)
        assert f"⤓{short}" in card_text(app, task_id)
        # The Diff tab says where the work is now, not the checkout's sentence again (cut).
        await pilot.press("3")
        await until(pilot, lambda: f"git show {short}" in screen_text(app), 30)
        assert f"no diff to show: the work landed as {short}" in screen_text(app)
        await pilot.press("5")
        drawer = drawer_of(app)
        await until(pilot, lambda: drawer.active_tab == "history")
        await until(
            pilot,
            lambda: (
                f"{OPERATOR} approved and landed {task_id} on main as {short}" in screen_text(app)
            ),
        )
        assert not notes.errors()


@pytest.mark.slow
async def test_a_refused_landing_is_a_notification_and_changes_nothing(review) -> None:  # type: ignore[no-untyped-def]
    """The operator's own checkout of main has an uncommitted change: the landing refuses
    (`base_checked_out_dirty`) and every file, git status and every ref are as they were."""
    board, clock = review
    task_id = board.ids["review"]
    readme = board.repo / "README.md"
    readme.write_text(readme.read_text() + "\nA local note, not committed.\n")
    before = repository_state(board.repo)
    task_before = fresh(board.db, task_id)
    notes = Notes()
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await opened(pilot, app, task_id)
        await until(pilot, lambda: "lands cleanly" in landing_text(app), timeout=30)
        await approve_and_land(pilot, app)
        error = await the_refusal(pilot, notes)
        assert f"approve and land {task_id}: refused (base_checked_out_dirty)" in error
        assert "README.md" in error
        await pilot.pause(0.3)
    assert repository_state(board.repo) == before
    after = fresh(board.db, task_id)
    assert after.status == "in_review" and after.landed_commit is None
    assert after.updated_at == task_before.updated_at  # not a write on the board either


@pytest.mark.slow
async def test_land_a_done_task_from_the_palette(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    task_id = board.ids["gated"]  # approved by the gate earlier: land it later, stays done
    notes = Notes()
    app = app_on(board, clock)
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await until(pilot, lambda: app.loaded, timeout=30)
        app.jump_to(task_id)
        await until(pilot, lambda: getattr(app.selected_task(), "id", None) == task_id)
        await pilot.press("ctrl+p")
        from textual.command import CommandInput, CommandList, CommandPalette

        await until(pilot, lambda: isinstance(app.screen, CommandPalette), timeout=30)
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await until(pilot, lambda: palette.focused is palette.query_one(CommandInput), timeout=30)
        await pilot.press(*"land")
        hits = palette.query_one(CommandList)
        wanted = f"Land {task_id}"

        def prompt(index: int | None) -> str:
            return "" if index is None else str(hits.get_option_at_index(index).prompt)

        # The list is final only once every provider has answered: a late batch re-sorts it and
        # puts the highlight back on top, so a choice made on the first batch could be undone.
        await settled(pilot, lambda: palette.query_one(CommandInput).value == "land")
        assert any(prompt(i).startswith(wanted) for i in range(hits.option_count))
        for _ in range(hits.option_count):
            if prompt(hits.highlighted).startswith(wanted):
                break
            await pilot.press("down")
        assert prompt(hits.highlighted).startswith(wanted)
        await pilot.press("enter")
        dialog = await confirm(pilot, app)
        assert dialog.title_text == f"Land {task_id}?"
        assert "lands cleanly onto main@" in dialog_text(dialog)
        await pilot.press("y")
        await until(pilot, lambda: fresh(board.db, task_id).landed_commit is not None, 60)
        landed = fresh(board.db, task_id)
        assert landed.status == "done"
        assert git(board.repo, "rev-parse", "main").strip() == landed.landed_commit
        assert not notes.errors()
        # a landing of a done task is a landing (found in tmux: "approved and landed")
        told = f"{task_id} landed on main as {landed.landed_commit[:7]}"
        await until(pilot, lambda: any(told in note for note in notes.infos()))
        assert not any("approved and landed" in note for note in notes.infos())


@pytest.mark.slow
async def test_the_preview_follows_the_base_and_shows_file_names_inert(review) -> None:  # type: ignore[no-untyped-def]
    """A commit lands on main while the drawer is open, with no board change: the preview says
    it conflicts, naming the file, whose name (agent text) is drawn as its characters."""
    board, clock = review
    task_id = board.ids["review"]
    name = "shop/[b]x[@click=app.quit]\x1b]52;c;ZXZpbA==\x07.py"
    worktree = worktree_of(board, task_id)
    (worktree / name).write_text("the agent's version\n")
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        await opened(pilot, app, task_id)
        await until(pilot, lambda: "lands cleanly" in landing_text(app), timeout=30)
        (board.repo / name).write_text("the maintainer's version\n")
        git(board.repo, "add", "-A")
        git(
            board.repo, "-c", "user.name=M", "-c", "user.email=m@x.invalid",
            "commit", "-q", "-m", "a file of the same name",
        )  # fmt: skip
        await until(pilot, lambda: "conflicts with main in" in landing_text(app), timeout=30)
        text = landing_text(app)
        assert "shop/[b]x[@click=app.quit]␛]52;c;ZXZpbA==␇.py" in text
        assert "has moved 1 commit since the worktree was made" in text
        assert "\x1b" not in text and "\x07" not in text
        assert f"kanban task workspace sync {task_id}" in text


@pytest.mark.slow
async def test_work_changed_after_the_preview_is_refused(review) -> None:  # type: ignore[no-untyped-def]
    """The operator decides on the preview in the dialog; the agent edits the worktree before
    the yes: the landing lands nothing (`not_landable`, changed since review)."""
    board, clock = review
    task_id = board.ids["review"]
    discounts = worktree_of(board, task_id) / "shop" / "discounts.py"
    main_before = git(board.repo, "rev-parse", "main")
    notes = Notes()
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await opened(pilot, app, task_id)
        await approve_and_land(
            pilot, app, lambda: discounts.write_text("# rewritten after the review\n")
        )
        error = await the_refusal(pilot, notes)
        assert f"approve and land {task_id}: refused (not_landable)" in error
    assert git(board.repo, "rev-parse", "main") == main_before
    assert fresh(board.db, task_id).status == "in_review"


@pytest.mark.slow
async def test_a_landing_under_way_names_its_step_and_blocks_no_other_write(review) -> None:  # type: ignore[no-untyped-def]
    """The verify command waits for a flag: meanwhile the drawer says the landing is verifying,
    and a priority change of another task is written at once (a landing runs outside the app's
    write lock). Then the flag: it lands."""
    board, clock = review
    task_id = board.ids["review"]
    other = board.ids["later"]
    flag = board.repo.parent / "go"
    verify_with(board, task_id, f"while [ ! -e {flag} ]; do sleep 0.05; done; true")
    priority = fresh(board.db, other).priority
    notes = Notes()
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await opened(pilot, app, task_id)
        await approve_and_land(pilot, app)
        await until(pilot, lambda: "landing: verifying the merged tree" in landing_text(app), 30)
        app.write("bump", lambda b: b.update_task(other, priority=priority + 1, actor=OPERATOR))
        # the landing waits for the flag forever: any timeout shows the write did not wait on it
        await until(pilot, lambda: fresh(board.db, other).priority == priority + 1)
        assert fresh(board.db, task_id).landed_commit is None  # still verifying
        flag.write_text("")
        await until(pilot, lambda: fresh(board.db, task_id).landed_commit is not None, 60)
        await until(pilot, lambda: "landing:" not in landing_text(app))
        # the landed task reaches the drawer through the live feed, a moment after the line
        # stops saying "landing:" (CI caught the assertion reading the preview in between)
        await until(pilot, lambda: "landed as" in landing_text(app))
        assert not notes.errors()


@pytest.mark.slow
async def test_a_failed_verification_says_why_and_keeps_the_task_in_review(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    task_id = board.ids["review"]
    verify_with(board, task_id, "echo the merged tree is broken >&2; exit 3")
    main_before = git(board.repo, "rev-parse", "main")
    notes = Notes()
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48), message_hook=notes) as pilot:
        await opened(pilot, app, task_id)
        await approve_and_land(pilot, app)
        error = await the_refusal(pilot, notes)
        assert f"approve and land {task_id}: refused (verification_failed)" in error
        assert "exited 3 on the merged tree" in error
        assert error.endswith("the merged tree is broken")  # the tail of its output
    assert git(board.repo, "rev-parse", "main") == main_before
    with Board(board.db, read_only=True) as b:
        view = b.view(task_id)
    assert view.task.status == "in_review"
    assert any("Approve and land did not land" in c.body for c in view.comments)


@pytest.mark.slow
async def test_w_on_a_done_task_is_land_and_no_backs_out(review) -> None:  # type: ignore[no-untyped-def]
    """The preview first finds the task's lock held (a landing elsewhere): it says so, and
    once the lock is free it is read again by itself (its stamp did not change). Then `W`."""
    from boardlib.worktrees import Worktrees
    from boardlib.worktrees.lock import WorktreeLock

    board, clock = review
    task_id = board.ids["gated"]
    main_before = git(board.repo, "rev-parse", "main")
    with Board(board.db, read_only=True) as b:
        ws = b.view(task_id).workspaces[-1]
        trees = Worktrees(b)
        held = WorktreeLock(
            trees.layout.lock_path(Path(ws.repo_path), task_id, trees.board_key),
            purpose=f"land {task_id}", subject=task_id, timeout_s=5,
        ).acquire()  # fmt: skip
    app = app_on(board, clock, "gated")
    async with app.run_test(size=(160, 48)) as pilot:
        await opened(pilot, app, task_id)
        try:
            await until(pilot, lambda: "cannot land" in landing_text(app), timeout=30)
            assert "W: land" not in landing_text(app)
        finally:
            held.release()
        await until(pilot, lambda: "W: land" in landing_text(app), timeout=30)
        [binding] = [b for key, b in app.screen.active_bindings.items() if key == "W"]
        assert binding.binding.id == "task.land" and binding.enabled  # the footer says Land
        await pilot.press("W")
        dialog = await confirm(pilot, app)
        assert dialog.title_text == f"Land {task_id}?"
        await pilot.press("enter")  # the safe button has the focus: back out
        await until(pilot, lambda: not isinstance(app.screen, ConfirmDialog))
        await pilot.pause(0.3)
    assert git(board.repo, "rev-parse", "main") == main_before
    assert fresh(board.db, task_id).landed_commit is None


@pytest.mark.slow
async def test_a_defect_in_a_preview_read_is_reported_once_an_outage_is_not(  # type: ignore[no-untyped-def]
    review, monkeypatch
) -> None:
    """The landing line polls. An unreadable board (a `StoreError`) is the line's problem text
    and no defect; a bug in the read is a defect, said once however often the line polls, and
    the line keeps polling. The approve-and-land question is still asked when its choices read
    fails the same way, and that defect is said too."""
    import tui.actions
    import tui.components.landing_line as landing_line
    from boardlib.store.base import StoreError

    board, clock = review
    task_id = board.ids["review"]
    reads = {"count": 0, "fault": StoreError("database unavailable at the test's server")}

    def failing(*args: Any, **kwargs: Any) -> None:
        reads["count"] += 1
        raise reads["fault"]

    monkeypatch.setattr(landing_line, "POLL_S", 0.05)
    monkeypatch.setattr(landing_line, "read_preview", failing)
    app = app_on(board, clock, "review")
    async with app.run_test(size=(160, 48)) as pilot:
        await opened(pilot, app, task_id)
        await until(pilot, lambda: "database unavailable at the test's server" in landing_text(app))
        polled = reads["count"]
        await until(pilot, lambda: reads["count"] >= polled + 3)  # an outage is read again
        assert not [note for note in app.said.newest_first() if note.defect]
        reads["fault"] = TypeError("a planted bug")
        await until(pilot, lambda: "TypeError: a planted bug" in landing_text(app))
        polled = reads["count"]
        await until(pilot, lambda: reads["count"] >= polled + 5)  # and so is a defect
        defects = [note for note in app.said.newest_first() if note.defect]
        assert [(n.title, n.message) for n in defects] == [
            ("landing preview", "TypeError: a planted bug")
        ]
        monkeypatch.setattr(tui.actions, "read_choices", failing)
        await pilot.press("W")
        dialog = await shown_question(pilot)
        assert isinstance(dialog, LandDialog)
        assert dialog.choices.problem == "TypeError: a planted bug"
        assert "lands cleanly onto main" in dialog_text(dialog)  # its preview read is whole
        defects = [note for note in app.said.newest_first() if note.defect]
        assert [n.title for n in defects] == ["landing choices", "landing preview"]
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmDialog))
        assert app.is_running
    assert fresh(board.db, task_id).landed_commit is None


def test_a_preview_that_cannot_land_says_so_once() -> None:
    """The preview said "cannot land: cannot land: the worktree of TASK-8 has unresolved
    conflicts": the board's sentence already says it."""
    from boardlib.worktrees.landing import LandingPreview
    from tui.landing_data import Preview, landing_words

    def said(summary: str) -> str:
        preview = LandingPreview(task_id="TASK-8", state="unavailable", summary=summary)
        return landing_words(Preview("TASK-8", preview, "stamp")).plain

    board_says = "cannot land TASK-8: it is not reviewed"
    assert said(board_says) == f"  {board_says}"
    assert said("main shares no history") == "  cannot land: main shares no history"


@pytest.mark.slow  # three landings of one branch, two in threads of their own
async def test_a_guess_that_stops_holding_is_not_still_shown_as_verified_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A landing waiting in its branch's queue verified on the commit the landing ahead would land
    (docs/landing.md, verifying ahead); that guess then failed (the landing ahead's own verify
    command failed there, so it would never land that commit), and the drawer went on saying
    "verified on the landing ahead" until the task's turn. The lander now tells that the guess no
    longer holds, and the drawer says so."""
    import threading
    import time

    from boardlib import BoardError
    from boardlib.worktrees import Worktrees
    from tests.tui.test_inbox import work_to_land

    first_go, second_go = tmp_path / "first-go", tmp_path / "second-go"
    held = 'if [ -n "$KANBAN_LANDING" ]; then while [ ! -e {go} ]; do sleep 0.02; done; {then}; fi'
    path = tmp_path / "board.db"
    land, mine, clock, _ = work_to_land(tmp_path, monkeypatch, path)
    app = make_app(path, clock, open_task=mine)
    try:
        first, _ = land.task_with(
            {"first.txt": "1\n"}, verify=held.format(go=first_go, then="true")
        )
        second, _ = land.task_with(
            {"second.txt": "2\n"}, verify=held.format(go=second_go, then="exit 3")
        )
        answers: dict[str, str] = {}

        def lands(task_id: str) -> None:
            with Board(path) as board:
                try:
                    answers[task_id] = Worktrees(board).land(task_id, actor="bob").commit or ""
                except BoardError as error:
                    answers[task_id] = error.reason.value

        def built(task_id: str) -> bool:
            entry = land.trees.lander().queue.entry_of_task(task_id)
            return entry is not None and entry.built_commit is not None

        threads = [threading.Thread(target=lands, args=(task,)) for task in (first, second)]
        try:
            for thread, task in zip(threads, (first, second), strict=True):
                thread.start()  # the first verifies its turn; the second verifies on it
                deadline = time.monotonic() + 60
                while not built(task):
                    assert time.monotonic() < deadline, f"{task} never built"
                    time.sleep(0.02)
            async with app.run_test(size=(160, 48)) as pilot:
                await opened(pilot, app, mine)
                await until(pilot, lambda: "W: land" in landing_text(app), timeout=30)
                await pilot.press("W")
                await confirm(pilot, app)
                await pilot.press("y")
                await until(pilot, lambda: "verified on the landing ahead" in landing_text(app))
                second_go.touch()  # the second's guess fails: it will never land what it built
                await until(pilot, lambda: not built(second))
                await until(pilot, lambda: "no longer lands" in landing_text(app))
                assert "verified on the landing ahead" not in landing_text(app)
                first_go.touch()
                await until(pilot, lambda: fresh(path, mine).landed_commit, 60)
        finally:
            first_go.touch()
            second_go.touch()
            for thread in threads:
                thread.join(timeout=120)
        assert answers == {first: answers[first], second: "verification_failed"}
        assert len(answers[first]) == 40
    finally:
        land.board.close()
