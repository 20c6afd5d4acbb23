"""Guarantee 6 (the terminal board): any sequence of the operator's keys, at any terminal size,
while agents keep changing the board, leaves the app running and the board sound.

Hypothesis presses keys on the review board (`tui.review_board`: real git worktrees, a task in
review that lands, one that conflicts, a blocked one...) through Textual's pilot. Each key is
drawn, mostly, from the keys the screen on top binds right now (`App.active_bindings`), so that
deep states (a dialog over the drawer over the board) are reached; otherwise from every default
key of the action registry (so a new action is pressed from the day it is added) and the keys a
dialog or a text line takes. Between keys an agent files tasks with hostile titles, claims and
finishes work, through the library on the same file. After every example:
- the app is still running, and no handler or worker raised (`run_test` re-raises what did);
- no notification is a defect's: the app shows an exception no handler expected, and one that
  ended a worker, marked as a defect in its message log (`Said.defect`);
- every notification is inert text (`boardlib.inert`), whatever the titles held;
- the board passes its own check, and every task is in one of the board's statuses.

A key that quits the app (`q` on the board, `ctrl+q`) is not pressed: the example is about what
follows. The operator's tools (`o`, `O`, `!`) are `true`, though a headless app cannot be
suspended for them anyway.
"""

import asyncio
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boardlib import Board, BoardError, ManualClock
from boardlib import transitions as t
from boardlib.inert import inert
from tests.chaos.test_fuzz_library import EXAMPLES, TEXT, fuzz_settings
from tests.tui.conftest import ReviewTemplate, make_app
from tests.tui.conftest import review_template as review_template  # the TUI tests' one build
from tui.app import KanbanApp
from tui.registry import ACTIONS
from tui.review_board import START_MS

REGISTRY_KEYS = sorted({key for action in ACTIONS for key in action.keys.split(",")})
# What a dialog, a menu or a text line takes beyond the registry's keys.
DIALOG_KEYS = ["enter", "escape", "tab", "shift+tab", "backspace", "up", "down", "a", "x", "7"]
ANY_KEY = st.sampled_from(REGISTRY_KEYS + DIALOG_KEYS)
SIZES = st.sampled_from([(80, 24), (160, 48), (48, 14)])
# Keys, mostly; now and then a pause for the workers, or an agent's move.
KINDS = st.sampled_from(["key"] * 12 + ["wait", "file", "claim", "finish"])
AGENT = "zed"


def quits(app: KanbanApp, key: str) -> bool:
    """`q` on the board, `ctrl+q` anywhere: the example is about what follows, so not those."""
    bound = app.active_bindings.get(key)
    return bound is not None and bound.binding.action.rsplit(".", 1)[-1] == "quit"


def bound_now(app: KanbanApp) -> list[str]:
    """The keys that do something on the screen on top, as it stands."""
    active = app.active_bindings.items()
    return sorted(key for key, bound in active if bound.enabled and not quits(app, key))


def draw_key(data: st.DataObject, app: KanbanApp) -> str:
    """Three keys in four from what the screen on top binds; the rest from any screen's."""
    bound = bound_now(app)
    if bound and data.draw(st.integers(0, 3), label="bound") > 0:
        return data.draw(st.sampled_from(bound), label="key")
    return data.draw(ANY_KEY, label="key")


def agent_step(path: Path, clock: ManualClock, kind: str, value: object) -> None:
    """One move of an agent working beside the operator; a refusal is an agent's business."""
    with Board(path, clock=clock) as board:
        try:
            if kind == "file":
                board.create_task(str(value).strip() or "untitled", actor=AGENT)
            elif kind == "claim":
                board.claim_next(AGENT)
            elif kind == "finish":
                held = board.list_tasks(status=t.IN_PROGRESS)
                mine = [task for task in held if task.assignee_agent_id == AGENT]
                if mine:
                    board.complete(mine[0].id, AGENT, epoch=mine[0].claim_epoch)
        except BoardError:
            pass


async def drive(
    app: KanbanApp, clock: ManualClock, size: tuple[int, int], data: st.DataObject
) -> None:
    """Up to 40 steps, each drawn against the app as it stands after the last."""
    path = Path(str(app.db_path))
    async with app.run_test(size=size) as pilot:
        for _ in range(data.draw(st.integers(1, 40), label="steps")):
            kind = data.draw(KINDS, label="kind")
            value: object = 0
            if kind == "key":
                value = draw_key(data, app)
                if quits(app, value):
                    continue
                await pilot.press(str(value))
            elif kind == "wait":
                await pilot.pause(0.3)
            else:
                value = data.draw(TEXT, label="title") if kind == "file" else 0
                await asyncio.to_thread(agent_step, path, clock, kind, value)
            await pilot.pause()
            assert app.is_running, f"the app stopped after {kind} {value!r}"
        await pilot.pause(0.2)
        said = app.said.newest_first()
    assert not [note for note in said if note.defect], said
    for note in said:
        assert inert(note.message, multiline=True) == note.message, note
        assert inert(note.title) == note.title, note


@pytest.mark.slow  # the terminal board's fuzz: an app session an example (about 3 s)
@fuzz_settings(EXAMPLES // 80)  # 5 in CI (55 s); a long run finds more (docs/development.md)
@given(size=SIZES, data=st.data())
def test_any_keys_leave_the_app_running_and_the_board_sound(
    review_template: ReviewTemplate,
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
    data: st.DataObject,
) -> None:
    board = review_template.restore()
    monkeypatch.setenv("KANBAN_WORKTREES", str(board.worktrees))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # the verify commands' (tests/tui)
    for tool in ("VISUAL", "EDITOR", "PAGER", "SHELL"):
        monkeypatch.setenv(tool, "true")
    monkeypatch.chdir(board.db.parent)
    clock = ManualClock(START_MS + 3_600_000)
    app = make_app(board.db, clock)
    asyncio.run(drive(app, clock, size, data))
    with Board(board.db, read_only=True) as after:
        assert after.check().ok, after.check().problems
        assert {task.status for task in after.list_tasks()} <= set(t.STATUSES)
