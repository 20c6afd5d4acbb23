"""What a demanding operator found, each pinned by a test: the override from where the gate parks
a task, confirmations from one rule, prompts that are not cut, keys that say why they do not
apply, marked cards acted on together."""

from boardlib import Board
from boardlib import transitions as t
from boardlib.actors import GATE
from tests.tui.conftest import OPERATOR, fresh, loaded, make_app, until
from tui.app import KanbanApp
from tui.commands import board_commands
from tui.components.confirm import ConfirmDialog


def park_for_the_operator(path, task_id: str) -> None:  # type: ignore[no-untyped-def]
    """What the gate does with debt it cannot promote: blocked, "until an operator overrides"."""
    with Board(path) as board:
        board.move(task_id, t.BLOCKED, actor=GATE, reason="verification could not judge the work")


def palette_titles(app: KanbanApp) -> list[str]:
    return [command.title for command in board_commands(app, app.screen)]


async def test_a_debt_blocked_task_is_overridden_in_one_step_from_its_card(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    parked = ids["api"]  # a red completed_with_debt verdict
    park_for_the_operator(path, parked)
    verdict = fresh(path, parked).verification
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(parked)
        await pilot.pause()
        assert app.selected_task().status == t.BLOCKED  # type: ignore[union-attr]
        assert app.screen.check_action("force_done", ()) is True
        assert f"Mark {parked} done with a human override" in palette_titles(app)
        await pilot.press("d")
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog) and "human override" in dialog.title_text
        await pilot.press("y")
        await until(pilot, lambda: fresh(path, parked).status == t.DONE)
    done = fresh(path, parked)
    assert done.assignee_agent_id is None  # the operator did not become its holder
    with Board(path, read_only=True) as board:
        (entry,) = [a for a in board.audit(parked) if a.action == "human_override"]
    assert (entry.actor, entry.from_status, entry.to_status) == (OPERATOR, t.BLOCKED, t.DONE)
    assert entry.verdict_overridden == verdict


async def test_d_stays_greyed_on_a_task_blocked_by_an_agents_question(demo) -> None:  # type: ignore[no-untyped-def]
    path, clock, ids = demo
    app = make_app(path, clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        app.jump_to(ids["auth"])  # blocked by agent-ada with a question, no verdict
        await pilot.pause()
        assert app.screen.check_action("force_done", ()) is None
        assert not any("human override" in title for title in palette_titles(app))
