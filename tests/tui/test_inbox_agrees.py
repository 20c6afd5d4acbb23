"""The inbox on both backends: `kanban inbox` (the real console script), `GET /api/board/inbox`
(the real app) and the TUI (its live feed) list the same items, in the same order, with the
same words, on the same board at the same moment."""

from pathlib import Path

import pytest

from boardlib import Board, ManualClock
from boardlib import attention as a
from boardlib.watch import Consumers
from tests.cli.conftest import Kanban
from tests.conftest import task_in
from tests.http.conftest import START_MS, serving
from tests.tui.conftest import make_app, until

FIELDS = ("kind", "taskId", "why", "since", "action", "title", "status", "consumer", "eventSeq")


def busy_board(path: Path, clock: ManualClock) -> None:
    with Board(path, clock=clock) as board:
        task_in(board, "in_review", title="judge me")
        clock.advance(minutes=1)
        blocked = board.create_task("stuck")
        board.claim(blocked.id, "bob")
        board.block(blocked.id, "bob", "waiting for the \x1b[2J key")
        clock.advance(minutes=1)
        lapsing = board.create_task("lapsing")
        board.claim(lapsing.id, "carol")
        consumers = Consumers(board)
        consumers.open("hook", since=0)
        for _ in range(board.config.watch_hold_after):
            consumers.failed("hook", 1, "exit status 22: curl: (22) 502")
        consumers.release("hook")
    clock.advance(ms=board.config.lease_ms + 60_000)


def shown(items: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [tuple(item[field] for field in FIELDS) for item in items]


@pytest.mark.slow
async def test_cli_http_and_tui_list_the_same_inbox(board_path: Path, tmp_path: Path) -> None:
    clock = ManualClock(START_MS)
    busy_board(board_path, clock)
    cli = Kanban(board_path, now_ms=clock.now_ms())
    from_cli = cli.ok("inbox")
    with serving(tmp_path, db=board_path) as api:
        api.clock.set(clock.now_ms())
        answer = api.client.get("/api/board/inbox")
        assert answer.status_code == 200, answer.text
        from_http = answer.json()
    app = make_app(board_path, clock, read_only=True)
    async with app.run_test(size=(120, 32)) as pilot:
        await until(pilot, lambda: len(app.inbox_items) == 4)
        from_tui = [item.to_json() for item in app.inbox_items]
    assert from_cli["count"] == from_http["count"] == 4
    assert [item["kind"] for item in from_cli["items"]] == [
        a.REVIEW, a.BLOCKED, a.WATCH_HELD, a.LEASE_EXPIRED
    ]  # fmt: skip
    assert shown(from_cli["items"]) == shown(from_http["items"]) == shown(from_tui)
    held = next(item for item in from_cli["items"] if item["kind"] == a.WATCH_HELD)
    assert held["title"] == "judge me"  # the held event's task's, as a task's own item shows it


@pytest.mark.slow
async def test_the_tui_names_each_kind_as_kanban_inbox_does(board_path: Path) -> None:
    """The TUI's rows called a `lapsed_lease` item "lease out" and a `watch_held` one "watch" while
    `kanban inbox` and docs/inbox.md said the kind: one name, the board's (`attention.KINDS`), on
    every surface."""
    from tui.components.inbox_screen import InboxScreen

    clock = ManualClock(START_MS)
    busy_board(board_path, clock)
    table = Kanban(board_path, now_ms=clock.now_ms()).run(
        "inbox", "--format", "table", env={"COLUMNS": "200"}
    )  # wide: one row per item (narrower, each item's why goes on the lines under it)
    assert table.code == 0, str(table)
    app = make_app(board_path, clock, read_only=True)
    async with app.run_test(size=(120, 32)) as pilot:
        await until(pilot, lambda: len(app.inbox_items) == 4)
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen) and app.screen.items)
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        rows = [str(screen.options.get_option_at_index(n).prompt) for n in range(4)]
    lines = table.out.splitlines()
    at = next(line.index(" Kind ") + 1 for line in lines if " Kind " in line)  # its column
    said_by_cli = [line[at:].split()[0] for line in lines if line[at : at + 1].isalpha()][1:]
    said_by_tui = [next((word for word in row.split() if word in a.KINDS), row) for row in rows]
    assert said_by_tui == said_by_cli == [item.kind for item in screen.items], rows
    # A held delivery's row shows its task's title, in the table and the TUI alike.
    held = [line for line in lines if a.WATCH_HELD in line] + [r for r in rows if a.WATCH_HELD in r]
    assert len(held) == 2 and all("judge me" in row for row in held), held
