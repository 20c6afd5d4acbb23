"""Shared pieces of the TUI tests: a deterministic board, the app on it, and waiting helpers."""

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import textual.constants
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets._toast import Toast
from textual.worker import WorkerState

from boardlib import Board, ManualClock, Task
from tui.app import KanbanApp
from tui.cards import CARD_HEIGHT
from tui.components.confirm import ConfirmDialog
from tui.review_board import START_MS as REVIEW_START_MS
from tui.review_board import ReviewBoard, build_review_board
from tui.screenshots import START_MS, build_demo_board

OPERATOR = "operator:test"


def pytest_configure(config: "Any") -> None:
    # The suite-wide registration belongs in pyproject.toml; until it lands there, this one keeps
    # `-m "not slow"` and --strict-markers working for the TUI wing (as the HTTP wing's does).
    config.addinivalue_line("markers", "slow: a long test (real terminals, long app sessions)")


@pytest.hookimpl(trylast=True)  # after -m and -k have chosen
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A fast legibility pair (one theme in one colour system) measures frames its system's
    every-theme test measures too: when that test runs in the session, the pair is deselected.
    The fast loop (`-m "not slow"`) keeps the pairs. Every xdist worker collects alike."""
    from tests.tui.test_legibility import covered_by_every_theme

    dropped = covered_by_every_theme(items)
    if dropped:
        items[:] = [item for item in items if item not in dropped]
        config.hook.pytest_deselected(items=dropped)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed snapshot test's report says what differs (`snapshot_diff`): CI keeps a failed
    run's output, not the HTML report of the frames."""
    report = yield
    compared = "snap_compare" in getattr(item, "fixturenames", ())
    if report.when == "call" and report.failed and compared:
        from tests.tui.snapshot_diff import explain_failed_snapshot

        explained = explain_failed_snapshot(item)
        if explained:
            report.sections.append(("snapshot difference", explained))
    return report


@pytest.fixture(autouse=True)
def truecolor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every app in these tests renders for a truecolor terminal (a test may ask for another):
    the app lifts text to its contrast floor in the terminal's colour system, and the shell's
    TERM must not change what a snapshot shows."""
    monkeypatch.setattr(textual.constants, "COLOR_SYSTEM", "truecolor")


@pytest.fixture(autouse=True)
def no_bytecode_in_worktrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """The review board's verify command runs Python in the task worktrees, and the shop
    repository ignores no `__pycache__`: with bytecode written (CI unsets
    PYTHONDONTWRITEBYTECODE), a landing test left the next one in the same process without its
    Land entry. The verify commands these tests run write no bytecode (a follow-up: what a
    verify command leaves in a task worktree)."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")


def utc() -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()


_demo_kept: list[tuple[Path, int, dict[str, str]]] = []  # this process's build: file, clock, ids


def demo_board(folder: Path) -> tuple[Path, ManualClock, dict[str, str]]:
    """The demo board as `folder/board.db`, with the clock where its build left it: built once
    per test process (some sixty writes), then copied (a board file holds no path of its own)."""
    if not _demo_kept:
        import atexit
        import tempfile

        kept = Path(tempfile.mkdtemp(prefix="kanban-demo-board-"))
        atexit.register(shutil.rmtree, kept, ignore_errors=True)
        clock = ManualClock(START_MS)
        ids = build_demo_board(kept / "board.db", clock)
        assert not (kept / "board.db-wal").exists()  # the whole board is in the one file
        _demo_kept.append((kept / "board.db", clock.now_ms(), ids))
    source, now_ms, ids = _demo_kept[0]
    path = folder / "board.db"
    shutil.copyfile(source, path)
    return path, ManualClock(now_ms), dict(ids)


class ReviewTemplate:
    """The review board (real git worktrees) built once per test process in `place` and kept
    whole beside it: each test gets it restored in that same place, so every absolute path the
    build recorded (the worktrees' git links, the board's workspace rows) holds, and no test sees
    what another one did to it. A restore copies a few hundred small files; a build runs git
    and the gate's verify command some fifty times."""

    def __init__(
        self, place: Path, build: "Callable[[Path], ReviewBoard]", *, kept: Path | None = None
    ) -> None:
        self.place = place
        self.kept = kept or place.with_name(place.name + "-kept")
        self._build = build
        self.board: ReviewBoard | None = None

    def restore(self) -> ReviewBoard:
        from boardlib.worktrees import landgit

        # The objects a test wrote are gone with its copy: no answer remembered from them holds.
        landgit.forget_fixed()
        shutil.rmtree(self.place, ignore_errors=True)
        if self.board is None:
            self.board = self._build(self.place)
            shutil.rmtree(self.kept, ignore_errors=True)
            shutil.copytree(self.place, self.kept, symlinks=True)
        else:
            shutil.copytree(self.kept, self.place, symlinks=True)
        return self.board


@pytest.fixture(scope="session")
def review_template(tmp_path_factory: pytest.TempPathFactory) -> ReviewTemplate:
    place = tmp_path_factory.mktemp("review") / "board"
    return ReviewTemplate(place, lambda at: build_review_board(at, ManualClock(REVIEW_START_MS)))


@pytest.fixture
def review_board(
    review_template: ReviewTemplate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> ReviewBoard:
    """A fresh review board for this test (`ReviewTemplate`), the test run in its own temp
    folder, in UTC, with `KANBAN_WORKTREES` pointing at the board's worktrees."""
    utc()
    monkeypatch.chdir(tmp_path)
    board = review_template.restore()
    monkeypatch.setenv("KANBAN_WORKTREES", str(board.worktrees))
    return board


def fresh(path: Path, task_id: str) -> Task:
    """The task as the file holds it now (not as the app shows it)."""
    with Board(path, read_only=True) as board:
        return board.get_task(task_id)


def make_app(path: Path, clock: ManualClock, **options: Any) -> KanbanApp:
    return KanbanApp(
        path, poll_ms=options.pop("poll_ms", 30), clock=clock, operator=OPERATOR,
        user_keymap={}, **options,
    )  # fmt: skip


def demo_app(folder: Path, **options: Any) -> KanbanApp:
    """The app (`make_app`) on a copy of the demo board in `folder`, its clock where the build
    left it."""
    path, clock, _ids = demo_board(folder)
    return make_app(path, clock, **options)


def text_of(renderable: Any, width: int = 200) -> str:
    """A renderable as the plain text a terminal `width` columns wide shows."""
    import io

    from rich.console import Console

    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


class Notes:
    """Collects the notifications the app raises (a `run_test` message hook)."""

    def __init__(self) -> None:
        self.seen: list[Notify] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.seen.append(message)

    def errors(self) -> list[str]:
        return self.of("error")

    def warnings(self) -> list[str]:
        return self.of("warning")

    def infos(self) -> list[str]:
        return self.of("information")

    def seen_text(self) -> list[str]:
        return [f"{n.notification.title}: {n.notification.message}" for n in self.seen]

    def of(self, severity: str) -> list[str]:
        return [
            f"{n.notification.title}: {n.notification.message}"
            for n in self.seen
            if n.notification.severity == severity
        ]


UNTIL_S = 30.0  # a bound on what must happen, not a wait: on a loaded 2-core CI, 5 s was missed


async def until(pilot: Pilot[Any], check: Callable[[], object], timeout: float = UNTIL_S) -> None:
    """Wait for `check` to hold, failing after `timeout` seconds (it costs nothing when it
    holds sooner; a test that proves something does not happen must not use it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"condition not met within {timeout} s")


def cards_loaded(app: KanbanApp) -> bool:
    """Every card row the board shows is loaded: no page of a column is still on its way (a row
    not loaded yet is drawn as a blank card)."""
    for column in app.board_screen.board.columns.values():
        if column.collapsed or column.strip or not column.rows:
            continue
        top = column.scroll_offset.y // CARD_HEIGHT
        bottom = min(column.rows, (column.scroll_offset.y + column.size.height) // CARD_HEIGHT + 1)
        if any(column.id_at(row) is None for row in range(top, bottom)):
            return False
    return True


def quiet(app: KanbanApp) -> bool:
    """Nothing the frame may still change with: no toast on screen and no worker pending or
    running (a drawer read's worker runs until its result is drawn: `call_from_thread` waits)."""
    busy = (WorkerState.PENDING, WorkerState.RUNNING)
    return not app.query(Toast) and not any(worker.state in busy for worker in app.workers)


def drawn(screen: Any) -> bool:
    """`screen` shows what it holds: no layout, repaint or after-refresh call still to come (a
    dialog fits its body after a refresh, and changes its height). Only the screen on top is laid
    out: a dialog covered before its last layout stays drawn as it was until it is on top again.
    Textual's own flags: nothing public says it."""
    if screen._recompose_required or screen._dirty_widgets or screen._callbacks:
        return False
    return not any(
        widget._layout_required or widget._scroll_required or widget._repaint_required
        for widget in [screen, *screen.walk_children()]
    )


async def settled(pilot: Pilot[Any], check: Callable[[], object] = lambda: True) -> None:
    """The frame a screenshot takes is final: the board loaded with every shown card, `check`
    holds, nothing is under way; twice, an idle pause apart (a timer may start a read)."""
    app = pilot.app
    assert isinstance(app, KanbanApp)

    def steady() -> bool:
        return app.loaded and cards_loaded(app) and bool(check()) and quiet(app)

    for _ in range(2):
        try:
            await until(pilot, steady, timeout=30)
        except AssertionError:
            busy = [(w.name, w.state.name) for w in app.workers]
            raise AssertionError(
                f"not settled within 30 s: loaded={app.loaded} cards={cards_loaded(app)} "
                f"check={bool(check())} toasts={len(app.query(Toast))} workers={busy}"
            ) from None
        await pilot.pause()


async def loaded(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, KanbanApp)
    await until(pilot, lambda: app.loaded)
    await pilot.pause(0.05)


async def onto_folded_column(pilot: Pilot[Any], status: str) -> None:
    """The board's cursor moved right (`l`) onto `status`'s column, which is folded."""
    app = pilot.app
    assert isinstance(app, KanbanApp)
    view = app.board_screen.board
    while view.active_status != status:
        await pilot.press("l")
    assert view.columns[status].collapsed


async def shown_question(pilot: Pilot[Any]) -> ConfirmDialog:
    """The confirmation on screen, once it was painted: keys typed before a question is on
    screen are not answers (the app drops them), so a test answers as a person does."""
    app = pilot.app

    def shown() -> bool:
        screen = app.screen
        if not isinstance(screen, ConfirmDialog) or screen.answerable_at is None:
            return False
        return time.monotonic() >= screen.answerable_at

    await until(pilot, shown, timeout=30)  # a bound: a preview (git) may come first
    assert isinstance(app.screen, ConfirmDialog)
    return app.screen


async def answer(pilot: Pilot[Any], key: str) -> None:
    """Press `key` on the confirmation once it is shown."""
    await shown_question(pilot)
    await pilot.press(key)
