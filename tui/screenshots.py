"""`python -m tui.screenshots [--out screenshots/]`: a deterministic board, photographed.

Builds a small board with a fixed `ManualClock` and fixed data (every card feature on show: leases
fine, about to run out and expired, verdicts with debt notes, costs, dependencies, a blocked reason,
a review), then saves SVG screenshots of the board and of its inbox (`i`) at 80x24 and 160x48,
the move menu, the human-override dialog and the activity pane; the 80x24 board of 60 todo cards
beside empty columns, with review and blocked on screen; the task drawer on a board with real
worktrees (`review_board`): each tab beside the board at 160x48, Overview and Diff full screen at
80x24, and reviewing in depth (long lines panned and wrapped, search, side by side, a line
comment); and the stats screen and budgeted cards on a board with a day of flow (`stats_board`).
Regenerate whenever the look changes; the README and docs/tui.md show them.
"""

import argparse
import asyncio
import fcntl
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from textual.app import App
from textual.worker import WorkerState

from boardlib import Board, ManualClock, PlanItem
from boardlib.records import EXECUTION_FAILED, EXECUTION_SUCCEEDED

START_MS = 1_767_261_600_000  # a fixed moment, so every timestamp on screen is the same each run
OPERATOR = "operator:ana"
SCENE_FOLDER = Path("/tmp/kanban-screenshots")
"""Where the drawer scenes build their boards with real worktrees. The drawer shows the worktree's
path, and the worktrees' folder is named by a hash of the repository's path: built in a temp
folder, every regeneration wrote another random name (and hash) into the drawer's SVGs."""

FAILED_VERDICT = {
    "status": "completed_with_debt",
    "attempts": [
        {
            "attempt": 1,
            "at": START_MS - 300_000,
            "status": "fail",
            "deterministic": {
                "command": "pytest -q",
                "exitCode": 1,
                "passed": False,
                "stderrTail": "FAILED tests/test_parser.py::test_unicode - AssertionError",
                "durationMs": 5400,
            },
        }
    ],
    "debtNotes": [
        {
            "criterion": "handles unicode titles",
            "severity": "high",
            "justification": "emoji in titles crash the tokenizer; needs a grapheme-aware split",
        },
        {
            "criterion": "docs updated",
            "severity": "low",
            "justification": "README example still shows the old flag",
        },
    ],
    "updatedAt": START_MS - 240_000,
}


def build_demo_board(path: Path, clock: ManualClock) -> dict[str, str]:
    """A board with one of everything; returns notable task ids by role in the story."""
    with Board(path, clock=clock) as board:
        plan = [
            PlanItem("schema", "Design the task schema", role="builder", priority=3),
            PlanItem(
                "parser",
                "Parse plan files into tasks",
                role="builder",
                priority=2,
                depends_on=("schema",),
            ),
            PlanItem(
                "api",
                "REST endpoints for tasks",
                role="builder",
                priority=2,
                depends_on=("schema",),
            ),
            PlanItem("cli", "CLI: kanban task claim-next", role="builder", priority=1),
            PlanItem(
                "docs", "Write the quick-start guide", role="writer", depends_on=("api", "cli")
            ),
            PlanItem("bench", "Benchmark claim throughput", role="builder", priority=1),
            PlanItem("ui", "Terminal board: seven live columns", role="builder", priority=4),
            PlanItem("auth", "Token auth for the REST API", role="builder", team_id="platform"),
            PlanItem("retry", "Retry budget for busy databases", role="builder", priority=2),
            PlanItem("audit", "Audit table for human overrides", role="reviewer"),
            PlanItem("metrics", "Export Prometheus metrics", status="backlog"),
            PlanItem("pg", "Postgres store behind the same API", status="backlog", priority=-1),
            PlanItem("i18n", "Translate the board's labels", status="backlog"),
            PlanItem("flaky", "Fix the flaky lease test", role="builder", priority=3),
            PlanItem("gc", "Garbage-collect old worktrees", role="builder"),
            PlanItem("ssh", "Legible colours over SSH", role="builder", priority=1),
        ]
        ids = {key: task.id for key, task in board.create_plan(plan).items()}

        # Done, with a reviewed pass.
        board.claim(ids["schema"], "agent-ada", runtime="claude-code")
        run = board.open_execution(ids["schema"], "claude-code")
        board.close_execution(
            run.id,
            EXECUTION_SUCCEEDED,
            agent="agent-ada",
            summary="schema v1",
            input_tokens=48_000,
            output_tokens=9_100,
            cost_usd=0.84,
        )
        board.complete(ids["schema"], "agent-ada", summary="schema and migrations in")
        clock.advance(seconds=40)
        board.approve(ids["schema"], "agent-grace")

        # In progress: a healthy lease, one about to run out, one expired.
        board.claim(ids["parser"], "agent-ada", runtime="claude-code", lease_ms=15 * 60_000)
        board.claim(ids["ui"], "agent-linus", runtime="codex", lease_ms=4 * 60_000)
        board.claim(ids["retry"], "agent-barbara", runtime="script", lease_ms=60_000)
        run = board.open_execution(ids["ui"], "codex")
        board.close_execution(
            run.id,
            EXECUTION_FAILED,
            agent="agent-linus",
            error="context window exceeded",
            input_tokens=190_000,
            output_tokens=2_000,
            cost_usd=2.31,
        )
        board.open_execution(ids["ui"], "codex", run_reason="second attempt")
        board.log_progress(ids["parser"], "agent-ada", "tokenizer done, parser next")

        # In review with a failing verdict (the override dialog's subject).
        board.claim(ids["api"], "agent-grace", runtime="claude-code")
        board.complete(ids["api"], "agent-grace", summary="endpoints + tests")
        board.record_verification(ids["api"], json.dumps(FAILED_VERDICT))
        board.add_comment(
            ids["api"],
            "Unicode titles still crash; see the debt note.",
            author_agent_id="agent-linus",
            author_type="agent",
        )
        # In review, clean.
        board.claim(ids["cli"], "agent-barbara", runtime="script")
        board.complete(ids["cli"], "agent-barbara")

        # Blocked with a reason; cancelled; dropped.
        board.claim(ids["auth"], "agent-ada", runtime="claude-code")
        board.block(ids["auth"], "agent-ada", "needs a decision on token lifetime")
        board.cancel(ids["i18n"], reason="out of scope for v1")
        board.drop(ids["gc"])
        board.add_comment(
            ids["flaky"],
            "Seen twice on CI this week.",
            author_agent_id=OPERATOR,
            author_type="user",
        )

        # Time passes: the short lease is now about to run out, the 1-minute one has expired and
        # recovery puts its task back in todo (as any writable opener would at once: doing it
        # here keeps the app's first frame its only one, so screenshots are deterministic).
        clock.advance(minutes=3, seconds=20)
        board.heartbeat(ids["parser"], "agent-ada")
        board.reconcile_orphans()
    return ids


def sparse_board(path: Path, clock: ManualClock) -> dict[str, str]:
    """60 todo cards, one task in review and one blocked, every other column empty: what the
    80x24 board shows when empty columns become strips."""
    with Board(path, clock=clock) as board:
        for n in range(60):
            board.create_task(f"Port handler {n} to the new API", priority=n % 3)
        review = board.create_task("Review the lease sweep", role="builder")
        board.claim(review.id, "agent-ada", runtime="claude-code")
        board.complete(review.id, "agent-ada", summary="sweep rewritten, tests green")
        clock.advance(minutes=7)
        blocked = board.create_task("Rotate the deploy key", role="ops")
        board.claim(blocked.id, "agent-linus", runtime="codex")
        board.block(blocked.id, "agent-linus", "needs the new key from an operator")
        clock.advance(minutes=2)
    return {"review": review.id, "blocked": blocked.id}


async def _shoot(db: Path, clock: ManualClock, out: Path, ids: dict[str, str]) -> list[Path]:
    from .app import KanbanApp

    saved: list[Path] = []

    def app() -> KanbanApp:
        return KanbanApp(db, poll_ms=50, clock=clock, operator=OPERATOR, user_keymap={})

    async def settle(pilot: object) -> None:
        for _ in range(20):
            await pilot.pause(0.05)  # type: ignore[attr-defined]
            if kanban.loaded:
                break
        await pilot.pause(0.1)  # type: ignore[attr-defined]

    for size, name in (((80, 24), "board-80x24"), ((160, 48), "board-160x48")):
        kanban = app()
        async with kanban.run_test(size=size) as pilot:
            await settle(pilot)
            saved.append(Path(kanban.save_screenshot(f"{name}.svg", str(out))))
            for _ in range(40):  # the inbox, read by the live feed after the board
                if kanban.inbox_items:
                    break
                await pilot.pause(0.05)
            await pilot.press("i")
            await pilot.pause(0.2)
            saved.append(Path(kanban.save_screenshot(f"inbox-{size[0]}x{size[1]}.svg", str(out))))
    kanban = app()
    async with kanban.run_test(size=(120, 32)) as pilot:
        await settle(pilot)
        kanban.jump_to(ids["ui"])
        await pilot.press("m")
        await pilot.pause(0.2)
        saved.append(Path(kanban.save_screenshot("move-menu.svg", str(out))))
        await pilot.press("escape")
        kanban.jump_to(ids["api"])
        await pilot.press("d")
        await pilot.pause(0.2)
        saved.append(Path(kanban.save_screenshot("override-dialog.svg", str(out))))
        await pilot.press("n")
        await pilot.press("A")
        await pilot.pause(0.2)
        saved.append(Path(kanban.save_screenshot("activity.svg", str(out))))
    return saved


async def _shoot_sparse(out: Path) -> list[Path]:
    """The 80x24 board with work beside empty columns: review and blocked on screen."""
    from .app import KanbanApp

    clock = ManualClock(START_MS)
    db = Path("sparse.db")
    sparse_board(db, clock)
    kanban = KanbanApp(db, poll_ms=50, clock=clock, operator=OPERATOR, user_keymap={})
    async with kanban.run_test(size=(80, 24)) as pilot:
        for _ in range(40):
            if kanban.loaded and kanban.inbox_items:
                break
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        return [Path(kanban.save_screenshot("board-80x24-review.svg", str(out)))]


def _idle(app: App[object]) -> bool:
    """No worker of the app waits or runs: nothing the frame may still change with."""
    return not any(
        worker.state in (WorkerState.PENDING, WorkerState.RUNNING) for worker in app.workers
    )


@contextmanager
def scene_folder(name: str) -> Iterator[Path]:
    """`SCENE_FOLDER/name`, empty, under a lock so two runs on one machine do not share it;
    removed after."""
    SCENE_FOLDER.mkdir(exist_ok=True)
    with open(f"{SCENE_FOLDER}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        folder = SCENE_FOLDER / name
        shutil.rmtree(folder, ignore_errors=True)
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)


async def _shoot_drawer(out: Path) -> list[Path]:
    """The task drawer on a board with real worktrees: each tab beside the board at 160x48, and
    full screen at 80x24."""
    with scene_folder("review") as folder:
        return await _shoot_drawer_in(folder, out)


async def _shoot_drawer_in(folder: Path, out: Path) -> list[Path]:
    from .app import KanbanApp
    from .review_board import build_review_board

    clock = ManualClock(START_MS)
    board = build_review_board(folder, clock)
    clock.advance(minutes=5)
    saved: list[Path] = []

    async def wait_for(pilot: object, check: object, limit: float = 10.0) -> None:
        """Until `check` holds and no read is under way (the Landing section's preview came
        after the 80x24 Overview's photograph on a loaded machine)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not (check() and _idle(pilot.app)):  # type: ignore[operator, attr-defined]
            await pilot.pause(0.05)  # type: ignore[attr-defined]
        await pilot.pause(0.3)  # type: ignore[attr-defined]

    for size, prefix in (((160, 48), "drawer"), ((80, 24), "drawer-80x24")):
        kanban = KanbanApp(
            board.db, poll_ms=50, clock=clock, operator=OPERATOR, user_keymap={},
            open_task=board.ids["review"],
        )  # fmt: skip
        async with kanban.run_test(size=size) as pilot:
            await wait_for(pilot, lambda k=kanban: k.drawers() and k.drawers()[0].data)
            drawer = kanban.drawers()[0]
            tabs = ("overview", "files", "diff", "runs", "history")
            for number, tab in enumerate(tabs, start=1):
                await pilot.press(str(number))
                await wait_for(
                    pilot,
                    lambda tab=tab, d=drawer: (
                        d.active_tab == tab
                        and (tab not in ("files", "diff") or d.workspace is not None)
                    ),
                )
                name = prefix if tab == "overview" else f"{prefix}-{tab}"
                if size == (80, 24) and tab not in ("overview", "diff"):
                    continue  # full screen: two are enough to show the layout
                saved.append(Path(kanban.save_screenshot(f"{name}.svg", str(out))))
    return saved


async def _shoot_stats(out: Path) -> list[Path]:
    """A board with a day of flow (`stats_board`): its budgeted cards at 160x48 ("$4.20 / $5" in
    the warning colour, a spent budget in the error colour), and the stats screen (`S`) at 80x24
    and 160x48."""
    from .app import KanbanApp
    from .components.stats_screen import StatsScreen
    from .stats_board import build_stats_board

    clock = ManualClock(START_MS)
    db = Path("stats.db")
    build_stats_board(db, clock)
    saved: list[Path] = []
    for size, name in (((160, 48), "board-budgets-160x48"), ((80, 24), "stats-80x24"),
                       ((160, 48), "stats-160x48")):  # fmt: skip
        kanban = KanbanApp(db, poll_ms=50, clock=clock, operator=OPERATOR, user_keymap={})
        async with kanban.run_test(size=size) as pilot:
            for _ in range(40):
                await pilot.pause(0.05)
                if kanban.loaded:
                    break
            if name.startswith("stats"):
                await pilot.press("S")
                for _ in range(80):
                    await pilot.pause(0.05)
                    screen = kanban.screen
                    if isinstance(screen, StatsScreen) and screen.stats is not None:
                        break
            await pilot.pause(0.3)
            saved.append(Path(kanban.save_screenshot(f"{name}.svg", str(out))))
    return saved


async def _shoot_review(out: Path) -> list[Path]:
    """Reviewing in depth: long lines panned with their markers and wrapped, search matches, side
    by side, and a comment anchored to a line."""
    with scene_folder("review-big") as folder:
        return await _shoot_review_in(folder, out)


async def _shoot_review_in(folder: Path, out: Path) -> list[Path]:
    from .app import KanbanApp
    from .review_board import build_review_board

    clock = ManualClock(START_MS)
    board = build_review_board(folder, clock, big_diff=True)
    clock.advance(minutes=5)
    with Board(board.db, clock=clock) as writer:
        writer.add_comment(
            board.ids["review"],
            "The default hides a caller that forgot the percent: make it required?",
            author_agent_id=OPERATOR,
            author_type="user",
            path="shop/cart.py",
            line=4,
            line_text="def total(items, percent=0):",
        )
    saved: list[Path] = []

    async def wait_for(pilot: object, check: object, limit: float = 15.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not check():  # type: ignore[operator]
            await pilot.pause(0.05)  # type: ignore[attr-defined]
        await pilot.pause(0.3)  # type: ignore[attr-defined]

    def app_for(task: str) -> KanbanApp:
        return KanbanApp(
            board.db, poll_ms=50, clock=clock, operator=OPERATOR, user_keymap={},
            view_settings={}, open_task=board.ids[task],
        )  # fmt: skip

    async def diff_of(kanban: KanbanApp, pilot: object) -> object:
        await wait_for(pilot, lambda: kanban.drawers() and kanban.drawers()[0].data)
        drawer = kanban.drawers()[0]
        await pilot.press("3")  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: drawer.workspace is not None and len(drawer.diff.rows) > 1)
        return drawer

    kanban = app_for("big")
    async with kanban.run_test(size=(100, 30)) as pilot:
        await diff_of(kanban, pilot)
        await pilot.press("G", "greater_than_sign")  # panned: markers at both edges
        await pilot.pause(0.3)
        saved.append(Path(kanban.save_screenshot("drawer-long-lines.svg", str(out))))
        await pilot.press("less_than_sign", "w", "G")  # wrapped, and still its true last line
        await pilot.pause(0.3)
        saved.append(Path(kanban.save_screenshot("drawer-wrap.svg", str(out))))
        await pilot.press("w", "g", "slash", *"BIGMARK 1999", "enter")
        await pilot.pause(0.3)
        saved.append(Path(kanban.save_screenshot("drawer-search.svg", str(out))))
    kanban = app_for("review")
    async with kanban.run_test(size=(160, 48)) as pilot:
        drawer = await diff_of(kanban, pilot)
        await wait_for(pilot, lambda: drawer.diff.comments)  # type: ignore[attr-defined]
        saved.append(Path(kanban.save_screenshot("drawer-comment.svg", str(out))))
        await pilot.press("s")
        await pilot.pause(0.3)
        saved.append(Path(kanban.save_screenshot("drawer-side-by-side.svg", str(out))))
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tui.screenshots", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    args = parser.parse_args(argv)
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ.setdefault("TEXTUAL_COLOR_SYSTEM", "truecolor")
    os.environ["KANBAN_SETTINGS"] = os.devnull  # the photographer's own view settings stay out
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out.absolute()
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # the header shows the board's path: keep it the same every run
        try:
            db = Path("board.db")
            clock = ManualClock(START_MS)
            ids = build_demo_board(db, clock)
            saved = asyncio.run(_shoot(db, clock, out, ids))
            saved += asyncio.run(_shoot_sparse(out))
            saved += asyncio.run(_shoot_drawer(out))
            saved += asyncio.run(_shoot_stats(out))
            saved += asyncio.run(_shoot_review(out))
        finally:
            os.chdir(here)
    for path in saved:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
