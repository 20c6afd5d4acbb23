"""The land dialog's choices, driven by Textual's pilot on the review board (real git worktrees,
built once for the module, `tui.review_board`) plus four tasks of its own: the strategy and the
branch (the preview follows the branch chosen), a task with no verify command that lands only
unverified with the operator's reason (audited), and refusals that are notifications with the
agent's text inert, leaving the repository as it was (git status, every ref, every sha256).

No landing here touches `main`, so every test sees the same base whatever ran before it."""

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from boardlib import Board, BoardError, ManualClock, PlanItem, Reason
from boardlib.worktrees import Worktrees
from tests.tui.conftest import OPERATOR, Notes, drawn, fresh, settled, text_of, until, utc
from tests.tui.test_drawer import opened, overview_text
from tests.tui.test_landing import git, repository_state
from tui.app import KanbanApp
from tui.components.branch_menu import BranchMenu
from tui.components.land_dialog import LandDialog
from tui.components.landing_line import LandingLine
from tui.components.menu_list import MenuList
from tui.components.prompt import PromptDialog
from tui.landing_data import refusal_message
from tui.review_board import START_MS, build_review_board, fixed_git_dates

AGENT = "agent-ada"
HOSTILE = "\x1b]52;c;SGVsbG8=\x07[bold red]boom[/][@click=app.quit]"
HOSTILE_SHOWN = "␛]52;c;SGVsbG8=␇[bold red]boom[/][@click=app.quit]"
FAILING = 'printf "\\033]52;c;SGVsbG8=\\007[bold red]boom[/][@click=app.quit]\\n" >&2; exit 3'


@dataclass(frozen=True)
class Shop:
    db: Path
    repo: Path
    ids: dict[str, str]


def _write(worktree: Path, name: str, text: str) -> None:
    (worktree / name).parent.mkdir(parents=True, exist_ok=True)
    (worktree / name).write_text(text)


def _build(folder: Path) -> Shop:
    """The review board, the branches `release`, `side` and `conflicting` (README.md reworded),
    and four tasks in review: `bare` (no verify command, made from `side`), `clash` (rewords
    README.md too), `failing` (its verify command prints agent text and exits 3) and `shown`
    (no verify command; only looked at)."""
    board = build_review_board(folder, ManualClock(START_MS))
    repo = board.repo
    with fixed_git_dates():
        for branch in ("release", "side"):
            git(repo, "branch", branch, "main")
        git(repo, "checkout", "-q", "-b", "conflicting")
        (repo / "README.md").write_text("# shop\n\nThe maintainers' words.\n")
        git(repo, "-c", "user.name=M", "-c", "user.email=m@x.invalid", "commit", "-qam", "words")
        git(repo, "checkout", "-q", "main")
        clock = ManualClock(START_MS + 1_800_000)
        with Board(board.db, clock=clock) as b:
            plan = [
                PlanItem("bare", "Note the opening hours", role="backend"),
                PlanItem("clash", "Reword the README", role="backend"),
                PlanItem("failing", "Round the totals", role="backend"),
                PlanItem("shown", "List the opening days", role="backend"),
            ]
            ids = {key: task.id for key, task in b.create_plan(plan).items()}
            trees = Worktrees(b, verify_timeout_s=60)
            for key, base, name, text in (
                ("bare", "side", "shop/hours.py", 'HOURS = "9-17"\n'),
                ("clash", "main", "README.md", "# shop\n\nThe agent's words.\n"),
                ("failing", "main", "shop/rounding.py", "def rounded(cents):\n    return cents\n"),
                ("shown", "main", "shop/days.py", 'DAYS = "Mon-Sat"\n'),
            ):
                task = b.claim(ids[key], AGENT, runtime="script")
                made = trees.provision(ids[key], repo, actor=AGENT, base_ref=base)
                worktree = Path(made.worktree.worktree_path)
                _write(worktree, name, text)
                verify = {"clash": "true", "failing": FAILING}.get(key)
                if verify:
                    init = worktree / "init.sh"
                    init.write_text(
                        init.read_text().replace("VERIFY_CMD=''", f"VERIFY_CMD='{verify}'")
                    )
                clock.advance(seconds=30)
                b.complete(ids[key], AGENT, summary="ready", epoch=task.claim_epoch)
    return Shop(board.db, repo, {**board.ids, **ids})


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    utc()
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("land-choices")
        patch.chdir(folder)
        patch.setenv("KANBAN_WORKTREES", str(folder / "worktrees"))
        yield _build(folder)


def app_on(shop: Shop, task: str | None = None) -> KanbanApp:
    return KanbanApp(
        shop.db, poll_ms=30, clock=ManualClock(START_MS + 3_600_000), operator=OPERATOR,
        user_keymap={}, open_task=shop.ids[task] if task else None,
    )  # fmt: skip


async def land_dialog(pilot: Pilot[Any]) -> LandDialog:
    """The land dialog once it takes answers (keys typed before it was painted are dropped)."""
    import time

    def ready() -> bool:
        screen = pilot.app.screen
        return (
            isinstance(screen, LandDialog)
            and screen.answerable_at is not None
            and time.monotonic() >= screen.answerable_at
        )

    await until(pilot, ready, timeout=30)
    assert isinstance(pilot.app.screen, LandDialog)
    return pilot.app.screen


async def asked_to_land(pilot: Pilot[Any], app: KanbanApp, task_id: str) -> LandDialog:
    """`W` in the task's open drawer; its land dialog once it takes answers."""
    await opened(pilot, app, task_id)
    await pilot.press("W")
    return await land_dialog(pilot)


async def branch_menu(pilot: Pilot[Any]) -> BranchMenu:
    """`b`'s menu once it lists the branches (it reads them again as it opens)."""
    await pilot.press("b")
    await until(
        pilot,
        lambda: isinstance(pilot.app.screen, BranchMenu) and pilot.app.screen.branches is not None,
    )
    assert isinstance(pilot.app.screen, BranchMenu)
    return pilot.app.screen


def said(dialog: LandDialog) -> str:
    return text_of(dialog.body) + text_of(dialog._choices_text())


def head(repo: Path, branch: str) -> str:
    return git(repo, "rev-parse", branch).strip()


@pytest.mark.slow  # real worktrees; verifies on the merged tree
async def test_strategy_and_branch_are_chosen_and_the_preview_follows(shop: Shop) -> None:
    task_id = shop.ids["review"]
    main, release = head(shop.repo, "main"), head(shop.repo, "release")
    notes = Notes()
    app = app_on(shop, "review")
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        dialog = await asked_to_land(pilot, app, task_id)
        assert f"lands cleanly onto main@{main[:7]}" in said(dialog)
        assert "● squash" in said(dialog)
        assert "main (the worktree's base); 3 other branches" in said(dialog)
        await pilot.press("u")  # it has a verify command: u is not a way around it
        await until(pilot, lambda: any("lands verified" in n for n in notes.infos()))
        assert app.screen is dialog
        await pilot.press("s", "s")
        assert dialog.strategy == "merge" and "● merge" in said(dialog)
        menu = await branch_menu(pilot)
        assert menu.branches == ["main", "conflicting", "release", "side"]  # no task branches
        await pilot.press("down", "down", "enter")
        await until(pilot, lambda: app.screen is dialog)
        assert dialog.target == "release"
        await until(pilot, lambda: f"lands cleanly onto release@{release[:7]}" in said(dialog))
        assert "lands on release" in said(dialog)
        assert fresh(shop.db, task_id).landed_commit is None  # nothing before the yes
        await pilot.press("y")
        await until(pilot, lambda: fresh(shop.db, task_id).landed_commit is not None, 60)
        await until(
            pilot, lambda: any("approved and landed on release" in n for n in notes.infos())
        )
    landed = fresh(shop.db, task_id)
    assert (landed.status, landed.landed_into, landed.landed_strategy) == (
        "done", "release", "merge",
    )  # fmt: skip
    assert head(shop.repo, "release") == landed.landed_commit
    parents = git(shop.repo, "rev-list", "--parents", "-n", "1", "release").split()
    assert parents[1] == release and len(parents) == 3  # a merge commit on the old tip
    assert head(shop.repo, "main") == main  # the base was not the branch chosen
    assert not notes.errors()


@pytest.mark.slow
async def test_the_land_footer_says_b_with_other_branches_and_u_with_no_verify(shop: Shop) -> None:
    """The footer under the land question says the keys that act on that landing: with no
    verify command `u` and no `y` (`y` does not land it), and `b` where the repository has
    other branches. Each acts: `b` opens the branch menu, whose footer says its own `⏎ Choose
    esc Back`; `u` asks why. (`shown` is only looked at: other tests land other tasks.)"""
    from tests.tui.test_dialog_footer import footer_line

    app = app_on(shop, "shown")
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await asked_to_land(pilot, app, shop.ids["shown"])
        assert dialog.unverified_only
        shown = "n Back s Strategy b Branch u Land unverified"
        await until(pilot, lambda: footer_line(app) == shown)
        await branch_menu(pilot)
        await until(pilot, lambda: footer_line(app) == "⏎ Choose esc Back")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is dialog and footer_line(app) == shown)
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))


@pytest.mark.slow
async def test_the_branch_menu_lists_the_branches_the_repository_has_now(shop: Shop) -> None:
    """Found in tmux: a branch made after the dialog opened was not offered (`b` said "the
    repository has no other branch"), and a deleted one still was: `b` listed what the dialog
    read as it opened."""
    git(shop.repo, "branch", "stale", "main")
    try:
        app = app_on(shop, "shown")
        async with app.run_test(size=(120, 40)) as pilot:
            dialog = await asked_to_land(pilot, app, shop.ids["shown"])
            assert "4 other branches" in said(dialog)
            git(shop.repo, "branch", "-D", "stale")
            git(shop.repo, "branch", "hotfix", "main")
            menu = await branch_menu(pilot)
            assert menu.branches is not None
            assert "hotfix" in menu.branches and "stale" not in menu.branches
            assert "4 other branches" in said(dialog)  # main, conflicting, hotfix, release, side
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is dialog)
    finally:
        for branch in ("stale", "hotfix"):
            if git(shop.repo, "branch", "--list", branch).strip():
                git(shop.repo, "branch", "-D", "-q", branch)


@pytest.mark.slow
async def test_no_verify_command_lands_only_unverified_with_a_reason(shop: Shop) -> None:
    task_id = shop.ids["bare"]
    side = head(shop.repo, "side")
    notes = Notes()
    app = app_on(shop, "bare")
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        dialog = await asked_to_land(pilot, app, task_id)
        text = said(dialog)
        assert "No verify command" in text and "lands unverified on side" in text
        assert "(the worktree's base" in text
        assert not dialog.query("#yes") and dialog.query("#unverified")
        await pilot.press("y")  # the usual yes does not land it
        await until(pilot, lambda: any("has no verify command" in n for n in notes.warnings()))
        assert app.screen is dialog
        drawer_screen = app.screen_stack[-2]
        await pilot.press("enter")  # the focus is on Back: enter alone backs out
        await until(pilot, lambda: not isinstance(app.screen, LandDialog))
        await pilot.pause(0.1)
        assert app.screen is drawer_screen  # back to the drawer, and only that far
        await pilot.press("W")
        dialog = await land_dialog(pilot)
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        prompt = app.screen
        await pilot.press("enter")  # no reason, no landing
        await until(pilot, lambda: "cannot be empty" in text_of(prompt.query_one("#error").content))  # type: ignore[attr-defined]
        assert fresh(shop.db, task_id).landed_commit is None
        await pilot.press(*"hotfix: tests follow", "enter")
        await until(pilot, lambda: fresh(shop.db, task_id).landed_commit is not None, 60)
        await until(pilot, lambda: any("(unverified, audited)" in n for n in notes.infos()))
    landed = fresh(shop.db, task_id)
    assert (landed.status, landed.landed_into, landed.landed_by) == ("done", "side", OPERATOR)
    assert head(shop.repo, "side") == landed.landed_commit != side
    with Board(shop.db, read_only=True) as board:
        [row] = [e for e in board.audit(task_id) if e.action == "land_unverified"]
    assert row.actor == OPERATOR
    assert row.detail is not None and row.detail.endswith("why: hotfix: tests follow")
    assert not notes.errors()


@pytest.mark.slow
async def test_a_conflict_on_the_chosen_branch_is_refused_and_changes_nothing(shop: Shop) -> None:
    task_id = shop.ids["clash"]
    before, task_before = repository_state(shop.repo), fresh(shop.db, task_id)
    notes = Notes()
    app = app_on(shop, "clash")
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        dialog = await asked_to_land(pilot, app, task_id)
        assert "lands cleanly onto main@" in said(dialog)
        await branch_menu(pilot)
        await pilot.press("down", "enter")  # conflicting
        await until(pilot, lambda: "conflicts with conflicting in README.md" in said(dialog))
        # the lead no longer promises the landing (found in tmux: "...and lands on ...")
        assert "does not land on conflicting as it is" in said(dialog)
        assert "would be refused (merge_conflict)" in said(dialog)
        await pilot.press("y")
        await until(pilot, lambda: notes.errors(), timeout=60)
        [error] = notes.errors()
        assert f"approve and land {task_id}: refused (merge_conflict)" in error
        assert "conflicts with conflicting@" in error and "README.md" in error
    assert repository_state(shop.repo) == before
    after = fresh(shop.db, task_id)
    assert after.status == "in_review" and after.landed_commit is None
    assert after.updated_at == task_before.updated_at


@pytest.mark.slow
async def test_a_failing_verification_says_its_exit_code_and_tail_inert(shop: Shop) -> None:
    task_id = shop.ids["failing"]
    before = repository_state(shop.repo)
    notes = Notes()
    app = app_on(shop, "failing")
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        await asked_to_land(pilot, app, task_id)
        drawer_screen = app.screen_stack[-2]
        await pilot.click("#yes")  # the button answers once, as y does
        await until(pilot, lambda: notes.errors(), timeout=60)
        assert app.screen is drawer_screen
        [error] = notes.errors()
        assert f"approve and land {task_id}: refused (verification_failed)" in error
        assert "exited 3 on the merged tree" in error
        assert HOSTILE_SHOWN in error  # the tail, as its characters
        assert "\x1b" not in error and "\x07" not in error
    assert repository_state(shop.repo) == before
    after = fresh(shop.db, task_id)
    assert after.status == "in_review" and after.landed_commit is None


REFUSALS = [
    (Reason.MERGE_CONFLICT, {"files": [f"f{n}{HOSTILE}.py" for n in range(7)]}, "f6"),
    (Reason.VERIFICATION_FAILED, {"exit_code": 3, "stderr_tail": f"a\nb\n{HOSTILE}\n"}, "b"),
    (Reason.BASE_MOVED, {"builds": 3}, "moved"),
    (Reason.BASE_CHECKED_OUT_DIRTY, {"path": f"/r/{HOSTILE}", "files": ["x"]}, "checked out"),
    (Reason.SELF_REVIEW, {"holders": [HOSTILE]}, "worked on it"),
    (Reason.NOT_LANDABLE, {"why": "changed_since_review"}, "changed"),
]


@pytest.mark.slow
async def test_every_refusal_is_a_notification_with_agent_text_inert(shop: Shop) -> None:
    """Each refusal a landing can give, worded by `refusal_message` as the app words it, goes
    through the app's one door for notifications: agent text (file names, output, names) is
    shown as its characters, no escape byte reaches the terminal, no markup is parsed."""
    notes = Notes()
    app = app_on(shop)
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        for reason, details, word in REFUSALS:
            message = f"cannot land TASK-1: {HOSTILE} {word}"
            error = BoardError(reason, message, **details)
            app.refused("land TASK-1", error, refusal_message)
        await until(pilot, lambda: len(notes.errors()) == len(REFUSALS))
    for (reason, _details, word), shown in zip(REFUSALS, notes.errors(), strict=True):
        assert f"land TASK-1: refused ({reason.value})" in shown
        assert HOSTILE_SHOWN in shown and word in shown
        assert "\x1b" not in shown and "\x07" not in shown
    merge, failed = notes.errors()[0], notes.errors()[1]
    assert f"f6{HOSTILE_SHOWN}.py" in merge  # more than the message's five names: all listed
    assert failed.endswith(f"a\nb\n{HOSTILE_SHOWN}")  # the tail's last lines


# -- one snapshot per new dialog, 80x24 ------------------------------------------------------------

FIXED_FOLDER = Path("/tmp/kanban-tui-snapshot-land-choices")  # the drawer shows worktree paths


@pytest.fixture(scope="module")
def fixed_shop() -> Iterator[Shop]:
    """The same shop in a fixed folder (the drawer behind a dialog shows the worktree's path),
    held under a lock so two runs on one machine do not share it. Nothing lands there."""
    import fcntl
    import shutil

    utc()
    with open(f"{FIXED_FOLDER}.lock", "w") as lock, pytest.MonkeyPatch.context() as patch:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(FIXED_FOLDER, ignore_errors=True)
        FIXED_FOLDER.mkdir()
        patch.chdir(FIXED_FOLDER)
        patch.setenv("KANBAN_WORKTREES", str(FIXED_FOLDER / "worktrees"))
        try:
            yield _build(FIXED_FOLDER)
        finally:
            patch.chdir("/")
            shutil.rmtree(FIXED_FOLDER, ignore_errors=True)


async def _asked(pilot: Pilot[Any], task_id: str) -> LandDialog:
    app = pilot.app
    assert isinstance(app, KanbanApp)
    drawer = await opened(pilot, app, task_id)
    line = drawer.query_one(LandingLine)  # behind the dialog: its preview read, not "checking"
    await until(pilot, lambda: line.preview_for(task_id) is not None, timeout=30)
    # and its verdict drawn (a CI run's snapshot took "No verdict recorded." behind the menu)
    held = app.state.tasks.get(task_id)
    if held is not None and held.verification is not None:
        await until(pilot, lambda: "No verdict recorded" not in overview_text(drawer))
    await pilot.press("W")
    dialog = await land_dialog(pilot)
    # its preview read and the dialog laid out with it: a key that covers it sooner (`b`'s
    # menu) left it drawn at its height before, its body not yet fitted (one row lower once)
    await settled(
        pilot,
        lambda: dialog.shown is not None and dialog.shown.preview is not None and drawn(dialog),
    )
    return dialog


@pytest.mark.slow
def test_land_unverified_dialog_at_80x24(fixed_shop: Shop, snap_compare: Any) -> None:
    async def asked(pilot: Pilot[Any]) -> None:
        dialog = await _asked(pilot, fixed_shop.ids["shown"])
        await pilot.press("s")  # rebase: the choice shows, its line and the body refitted
        await settled(pilot, lambda: "● rebase" in said(dialog) and drawn(dialog))

    assert snap_compare(app_on(fixed_shop, "shown"), terminal_size=(80, 24), run_before=asked)


@pytest.mark.slow
def test_branch_menu_at_80x24(fixed_shop: Shop, snap_compare: Any) -> None:
    async def menu(pilot: Pilot[Any]) -> None:
        await _asked(pilot, fixed_shop.ids["clash"])
        await branch_menu(pilot)
        menu = pilot.app.screen
        await settled(pilot, lambda: menu.query_one(MenuList).highlighted == 0 and drawn(menu))

    assert snap_compare(app_on(fixed_shop, "clash"), terminal_size=(80, 24), run_before=menu)


async def test_a_conflict_offers_another_branch_only_when_there_is_one() -> None:
    """The conflict's words offered "or land on another branch (b)" and `b` then answered "the
    repository has no other branch"."""
    from textual.app import App

    from boardlib import transitions as t
    from boardlib.records import Task
    from boardlib.worktrees.landing import CONFLICTS, LandingPreview
    from boardlib.worktrees.results import LandingChoices
    from tui.landing_data import Choices, Preview

    task = Task(id="TASK-4", title="t", status=t.DONE, created_at=0, updated_at=0)
    preview = Preview(task.id, LandingPreview(task.id, CONFLICTS, "conflicts", into="main"), "s")

    def words(branches: list[str]) -> str:
        choices = Choices(task.id, LandingChoices(task.id, "main", branches, "make test"))
        return text_of(LandDialog(task, preview, choices, operator="operator:o").body)

    async with App().run_test():
        assert "merge_conflict" in words(["main"]) and "another branch" not in words(["main"])
        assert "or land on another branch (b)" in words(["main", "release"])
