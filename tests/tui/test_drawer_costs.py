"""What opening the task drawer and reading its diff cost, where a cut can come undone: what a
closed drawer leaves alive, what the diff's first screen waits for, what a cursor move redraws,
how many git processes the Diff tab starts. Speed itself is the benchmarks'
(`benchmarks/tui.py --drawer`), never asserted here."""

import gc
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.segment import Segment
from textual._styles_cache import StylesCache
from textual.widget import Widget
from textual.widgets._footer import FooterKey

from boardlib import ManualClock
from boardlib.worktrees import diffs, gitrepo
from tests.tui.conftest import quiet, until
from tests.tui.test_drawer import app_on, screen_text, shows
from tests.worktrees.conftest import git
from tui import registry
from tui.components import diff_view
from tui.components import drawer as drawer_module
from tui.components.diff_view import DiffView
from tui.components.drawer import TaskDrawer
from tui.components.footer import HintFooter
from tui.components.search_bar import SearchBar
from tui.drawer_data import checkout_of, fingerprint, read_workspace
from tui.review_board import START_MS, ReviewBoard


@pytest.fixture
def review(review_board: ReviewBoard) -> tuple[ReviewBoard, ManualClock]:
    return review_board, ManualClock(START_MS + 3_600_000)


def held_after_removal() -> dict[str, int]:
    """What is still alive of widgets no longer in the app: key hints, search lines and drawers,
    and style caches of widgets gone (each holds every line its widget rendered)."""
    gc.collect()
    objects = gc.get_objects()
    widgets = [o for o in objects if isinstance(o, Widget)]
    caches = {id(w._styles_cache) for w in widgets}
    gone = [w for w in widgets if not w.is_attached]
    return {
        "key hints": sum(isinstance(w, FooterKey) for w in gone),
        "search lines": sum(isinstance(w, SearchBar) for w in gone),
        "drawers": sum(isinstance(w, TaskDrawer) for w in gone),
        "style caches": sum(isinstance(o, StylesCache) and id(o) not in caches for o in objects),
    }


@pytest.mark.slow  # 3-3.7 CPU-s: three drawer opens, each followed by a walk of every object
async def test_a_closed_drawer_leaves_none_of_its_widgets_alive(review) -> None:  # type: ignore[no-untyped-def]
    """Textual kept the footer's removed key hints (bound to `compact`), every removed search
    line (the screen's selection signal) and the last 1,024 widgets' rendered lines (an
    `lru_cache` on a method): some 30,000 objects per drawer opened, walked by every later
    garbage collection. A drawer just closed may be held a moment (its search line with it)."""
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 50)) as pilot:
        await shows(pilot, app, "5 History")
        counts = []
        for _ in range(3):  # each leak grew by hundreds of objects an open: two opens show it
            await pilot.press("escape")
            await until(pilot, lambda: not app.query(TaskDrawer))
            await pilot.press("enter")
            await until(pilot, lambda: bool(app.query(TaskDrawer)))
            await shows(pilot, app, "5 History")
            await pilot.pause(0.2)
            counts.append(held_after_removal())
    first, held = counts[0], counts[-1]  # what a test before this one left is no concern here
    assert held["key hints"] <= first["key hints"], counts
    assert held["style caches"] <= first["style caches"], counts
    assert held["search lines"] <= held["drawers"], counts


def marked(view: DiffView, text: str) -> bool | None:
    """Whether the diff line showing `text` has a bold part (a keyword); None when no line on
    screen shows it."""
    for y in range(view.scrollable_content_region.height):
        segments: Sequence[Segment] = list(view.render_line(y))
        if text in "".join(segment.text for segment in segments):
            return any(s.style is not None and s.style.bold for s in segments if "def" in s.text)
    return None


async def test_the_diffs_first_screen_does_not_wait_for_its_lexers(
    review: tuple[ReviewBoard, ManualClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file type's first lexer look-up (Pygments' file patterns, 0.1 s of CPU) ran before the
    diff was handed to the screen: the first screen of a 23-line diff came after a 20,000-line
    one's. The lines show unmarked, then marked once the look-up is done."""
    board, clock = review
    monkeypatch.setattr(diff_view, "_LEXERS", {})  # as in a process that has looked none up
    release = threading.Event()
    real = diff_view.warm_lexers

    def slow_warm(paths: Sequence[str]) -> bool:
        release.wait(30)
        return real(paths)

    monkeypatch.setattr(drawer_module, "warm_lexers", slow_warm)
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 50)) as pilot:
        await shows(pilot, app, "5 History")
        await pilot.press("3")
        try:
            await shows(pilot, app, "def discount")
            view = app.query_one(DiffView)
            assert marked(view, "def discount") is False  # drawn before the look-up ended
        finally:
            release.set()
        await until(pilot, lambda: marked(view, "def discount") is True)


async def test_a_cursor_move_within_the_view_redraws_only_the_two_lines(review) -> None:  # type: ignore[no-untyped-def]
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 50)) as pilot:
        await shows(pilot, app, "5 History")
        await pilot.press("3")
        await shows(pilot, app, "def discount")
        await until(pilot, lambda: quiet(app))  # the worktree's read and its redraws are done
        view = app.query_one(DiffView)
        drawn: list[int] = []
        render_line = view.render_line

        def counted(y: int) -> Any:
            drawn.append(y)
            return render_line(y)

        view.render_line = counted  # type: ignore[method-assign]
        await pilot.press("j")
        await pilot.pause(0.3)
        assert view.cursor == 1
        assert sorted(set(drawn)) == [0, 1]  # not the whole screen
        assert "def discount" in screen_text(app)


async def test_opening_the_drawer_recomposes_the_footer_once(review) -> None:  # type: ignore[no-untyped-def]
    """Each `refresh_bindings` (the drawer's mount, its tab, its data, the focus) recomposed the
    footer, unmounting and mounting every key hint: five times an open, four of them for the
    hints already shown. The footer shows the drawer's keys, from one recompose."""
    board, clock = review
    app = app_on(board, clock, "review")
    async with app.run_test(size=(200, 50)) as pilot:
        await shows(pilot, app, "5 History")
        await pilot.press("escape")
        await until(pilot, lambda: not app.query(TaskDrawer))
        await until(pilot, lambda: quiet(app))
        footer = app.screen.query_one(HintFooter)
        recomposed: list[int] = []
        recompose = footer.recompose

        async def counted() -> None:
            recomposed.append(1)
            await recompose()

        footer.recompose = counted  # type: ignore[method-assign]
        await pilot.press("enter")
        await shows(pilot, app, "5 History")
        await until(pilot, lambda: quiet(app))
        await pilot.pause(0.3)
        close = registry.BY_ID["drawer.close"].name
        assert close in {key.action for key in footer.query(FooterKey)}  # the drawer's keys
        assert len(recomposed) == 1


def counting_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that logs its arguments, one line a run, then runs the real one:
    what the Diff tab starts, counted from outside the library. Returns the log."""
    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "counting-bin"
    folder.mkdir()
    log = tmp_path / "git-runs.log"
    log.write_text("")
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def git_runs_logged(log: Path) -> list[str]:
    runs = log.read_text().splitlines()
    log.write_text("")
    return runs


DIFF_TAB_GIT_RUNS = 4  # status, add (a temporary index), one diff, cat-file for the sizes


def test_the_diff_tab_reads_a_worktree_in_four_git_runs(env, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Counted with a logging `git` on PATH: showing the Diff tab of a 20-file change ran 9 git
    processes (a second `git status` and a `rev-parse` for the checkout's state, a `write-tree`,
    and `--numstat`, `--raw` and the text as three diffs), each 5-15 ms on a loaded machine.
    Now one status serves the fingerprint and the checkout state, and one `git diff --cached`
    of the snapshot's index gives the files, their blobs and the text. A second view of a
    worktree whose files have not changed since runs the status only (not when they were written
    within `SETTLED_NS`: a second write in the same mtime tick would not show); an edit is read
    again."""
    (env.repo / "src").mkdir()
    for number in range(17):
        (env.repo / "src" / f"m{number}.py").write_text(f"value = {number}\n" * 20)
    (env.repo / "logo.bin").write_bytes(bytes(range(256)) * 4)
    (env.repo / "old name.txt").write_text("".join(f"line {n}\n" for n in range(40)))
    git(env.repo, "add", "-A")
    git(env.repo, "commit", "-qm", "the files the work changes")
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    for number in range(16):  # 16 modified, 1 deleted, 1 new, 1 renamed, 1 binary
        (path / "src" / f"m{number}.py").write_text(f"value = {number + 1}\n" * 20)
    (path / "src" / "m16.py").unlink()
    (path / "src" / "new file.py").write_text("print('new')\n")
    (path / "old name.txt").rename(path / "new name.txt")
    (path / "logo.bin").write_bytes(bytes(range(255, -1, -1)) * 4)
    (path / "task-progress.md").write_text("## Next\n- bookkeeping, never in the diff\n")
    log = counting_git(tmp_path, monkeypatch)

    data = read_workspace(env.board, task_id)
    runs = git_runs_logged(log)
    assert len(runs) <= DIFF_TAB_GIT_RUNS, runs
    assert data.detail is not None and data.index is not None and data.problem is None
    files = {file.path: file for file in data.index.files}
    assert len(files) == 20 and "task-progress.md" not in files
    assert files["src/m16.py"].change == diffs.DELETED
    assert files["src/new file.py"].change == diffs.NEW  # untracked, shown
    assert files["new name.txt"].change == diffs.RENAMED
    assert files["new name.txt"].old_path == "old name.txt"
    assert files["logo.bin"].binary
    assert data.detail.checkout is not None and data.detail.checkout.uncommitted
    assert data.detail.checkout.head == git(path, "rev-parse", "HEAD")
    assert data.fingerprint == fingerprint(env.board, task_id)  # the poll sees no change
    git_runs_logged(log)

    read_workspace(env.board, task_id)  # files written just now may change unseen: read again
    assert len(git_runs_logged(log)) == len(runs)
    monkeypatch.setattr(gitrepo, "SETTLED_NS", 0)  # as if they were written a while ago
    first = read_workspace(env.board, task_id)
    assert len(git_runs_logged(log)) <= DIFF_TAB_GIT_RUNS
    again = read_workspace(env.board, task_id)
    assert git_runs_logged(log) == [runs[0]]  # the status only
    assert again.detail is not None and first.detail is not None
    assert again.detail.diff == first.detail.diff == data.detail.diff
    assert again.detail.diff_files == data.detail.diff_files
    assert again.fingerprint == first.fingerprint == fingerprint(env.board, task_id)
    git_runs_logged(log)

    (path / "src" / "m0.py").write_text("value = 'edited again'\n")
    edited = read_workspace(env.board, task_id)
    assert len(git_runs_logged(log)) <= DIFF_TAB_GIT_RUNS
    assert edited.detail is not None and "+value = 'edited again'" in edited.detail.diff
    assert edited.fingerprint != again.fingerprint


def test_the_overviews_checkout_state_is_one_git_status(env, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Opening the drawer asks for the checkout's state (the Overview's workspace line): a
    `rev-parse HEAD` and a `git status` each time, where the one `git status` says both."""
    task_id = env.task()
    path = Path(env.trees.provision(task_id, env.repo).worktree.worktree_path)
    log = counting_git(tmp_path, monkeypatch)
    clean = checkout_of(env.board, task_id)
    assert len(git_runs_logged(log)) == 1
    assert clean is not None and not clean.uncommitted
    (path / "VERIFICATION.md").write_text("the board's own file\n")
    assert checkout_of(env.board, task_id).uncommitted is False  # type: ignore[union-attr]
    (path / "app.py").write_text("def answer():\n    return 41\n")
    dirty = checkout_of(env.board, task_id)
    assert dirty is not None and dirty.uncommitted and dirty.head == git(path, "rev-parse", "HEAD")
    assert len(git_runs_logged(log)) == 2  # one for each
