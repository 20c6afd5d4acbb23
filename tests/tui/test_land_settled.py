"""`W` on work that can never land, in the real app over a real repository (SQLite): a change
main holds already is recorded there (the question says so, nothing moves), and done work whose
verify command fails on the merged tree is decided not to land with `x` (asks why, audited),
after which the inbox no longer lists it. Both stayed in the inbox for ever before."""

from pathlib import Path

import pytest

from boardlib import Board
from boardlib.worktrees import Worktrees
from tests.tui.conftest import OPERATOR, Notes, fresh, text_of, until
from tests.tui.test_drawer import opened
from tests.tui.test_inert_rendering import PALETTE, rendered
from tests.tui.test_land_choices import land_dialog
from tests.worktrees.conftest import file_hashes, git, make_repo, set_verify
from tui.app import KanbanApp
from tui.cards import card_lines
from tui.components.land_dialog import LandDialog
from tui.components.prompt import PromptDialog
from tui.drawer_data import read_task
from tui.drawer_render import overview_head


def done_task(db: Path, repo: Path, name: str, verify: str) -> str:
    with Board(db) as board:
        task = board.create_task(f"Add {name}")
        board.claim(task.id, "agent-ada")
        trees = Worktrees(board, verify_timeout_s=60)
        path = Path(trees.provision(task.id, repo, actor="agent-ada").worktree.worktree_path)
        set_verify(path, verify)
        (path / name).write_text("same\n")
        assert trees.complete(task.id, "agent-ada").task_status == "done"
        return task.id


def commit_on_main(repo: Path, name: str) -> str:
    (repo / name).write_text("same\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{name} by hand")
    return git(repo, "rev-parse", "main")


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("KANBAN_WORKTREES", str(tmp_path / "worktrees"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    db = tmp_path / "board.db"
    Board(db, create=True).close()
    return db, make_repo(tmp_path / "repo")


def inbox_ids(db: Path) -> list[str | None]:
    with Board(db, read_only=True) as board:
        return [item.task_id for item in board.inbox().items]


def app_on(db: Path, task_id: str) -> KanbanApp:
    return KanbanApp(db, poll_ms=30, operator=OPERATOR, user_keymap={}, open_task=task_id)


async def test_w_records_a_change_already_on_main(shop: tuple[Path, Path]) -> None:
    db, repo = shop
    task_id = done_task(db, repo, "same.txt", "true")
    tip = commit_on_main(repo, "same.txt")
    assert inbox_ids(db) == [task_id]
    notes = Notes()
    app = app_on(db, task_id)
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        await opened(pilot, app, task_id)
        await pilot.press("W")
        dialog = await land_dialog(pilot)
        await until(pilot, lambda: dialog.shown is not None and dialog.shown.preview is not None)
        said = " ".join(text_of(dialog.body).split())
        assert "change is already on main: landing records it as landed there" in said, said
        await pilot.press("y")
        await until(pilot, lambda: fresh(db, task_id).landed_commit is not None, 60)
        await until(pilot, lambda: any("nothing moved" in n for n in notes.infos()))
    assert fresh(db, task_id).landed_commit == tip == git(repo, "rev-parse", "main")
    assert inbox_ids(db) == [] and not notes.errors()


@pytest.mark.slow  # ~1.1 CPU-s: a landing refused by its gate, then decided
async def test_x_decides_done_work_wont_land_and_it_leaves_the_inbox(
    shop: tuple[Path, Path],
) -> None:
    db, repo = shop
    task_id = done_task(db, repo, "feature.txt", "test ! -e BROKEN")
    commit_on_main(repo, "BROKEN")
    files, status, main = file_hashes(repo), git(repo, "status"), git(repo, "rev-parse", "main")
    notes = Notes()
    app = app_on(db, task_id)
    async with app.run_test(size=(120, 40), message_hook=notes) as pilot:
        await opened(pilot, app, task_id)
        await pilot.press("W")
        await land_dialog(pilot)
        await pilot.press("x")
        await until(pilot, lambda: isinstance(app.screen, PromptDialog))
        await pilot.press("enter")  # no reason: nothing decided
        assert inbox_ids(db) == [task_id]
        await pilot.press(*"main broke it for good", "enter")
        await until(pilot, lambda: inbox_ids(db) == [], 30)
        await until(pilot, lambda: any("won't land" in n for n in notes.infos()))
        assert not isinstance(app.screen, LandDialog)
        # its done card says so, as it no longer waits to land
        await until(pilot, lambda: app.marks.notes_of(task_id).wont_land)
        card = card_lines(fresh(db, task_id), 60, PALETTE, now_ms=app.now_ms(),
                          notes=app.marks.notes_of(task_id))  # fmt: skip
        assert "✗ won't land" in " ".join(line.text for line in card)
    with Board(db, read_only=True) as board:
        [row] = [e for e in board.audit(task_id) if e.action == "land_abandoned"]
        assert row.actor == OPERATOR and "main broke it for good" in str(row.detail)
        assert board.workspaces(task_id)[-1].status == "archived"
        # the drawer says so, by whom and why: the task row alone read as work waiting to land
        drawn = " ".join(
            rendered(overview_head(read_task(board, task_id).view, row.created_at)).split()
        )
        assert f"won't land: decided by {OPERATOR} at" in drawn, drawn
        assert "main broke it for good" in drawn, drawn
    assert (file_hashes(repo), git(repo, "status"), git(repo, "rev-parse", "main")) == (
        files, status, main,
    )  # fmt: skip
    assert fresh(db, task_id).status == "done" and not notes.errors()


async def test_a_card_decided_wont_land_before_the_tui_opened_says_so(
    shop: tuple[Path, Path],
) -> None:
    """The first read marks it (no event of it is read then): the row alone is done, unlanded."""
    db, repo = shop
    task_id = done_task(db, repo, "feature.txt", "true")
    with Board(db) as board:
        Worktrees(board).abandon_landing(task_id, actor=OPERATOR, reason="not wanted")
    app = app_on(db, task_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.marks.notes_of(task_id).wont_land)
        await opened(pilot, app, task_id)  # its drawer up: the app is not left mid-mount
        await pilot.pause()
