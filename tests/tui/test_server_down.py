"""A Postgres board whose server stops answering, under the running app, on a real cluster: the
header says "unreadable since", the cards last read stay on screen (counts and cards alike) while
the operator moves, filters, opens the drawer and writes, each of which is answered (a refusal
notification, the drawer's title) and none of which ends the app; when connections are allowed
again the board reads afresh by itself and answers the filter asked meanwhile.

Found in tmux: opening the drawer while the server was down ended the app (the store's
`StoreUnavailable` escaped the drawer's read, which handles refusals), and a write was told as a
defect, named by its exception type, instead of refused. And the header's reason, "database
unavailable at URL: connection failed: connection to server at ..., port N failed: Connection
refused", was cut before its last words at 160 columns (after the URL at 80)."""

from typing import TYPE_CHECKING, Any

import pytest
from textual.pilot import Pilot

from boardlib import Board, ManualClock
from boardlib import transitions as t
from boardlib.errors import Reason
from boardlib.location import board_location
from tests.backends import allow_connections
from tests.tui.conftest import loaded, until
from tui.app import KanbanApp
from tui.components.header_bar import HeaderBar

if TYPE_CHECKING:
    from tests.pg_cluster import Cluster

OPERATOR = "operator:test"


def shown(app: KanbanApp) -> dict[str, list[str]]:
    """Each column's cards as the board holds them, and each column's count."""
    state = app.state
    return {status: [*state.columns[status], f"#{state.counts[status]}"] for status in t.STATUSES}


async def settle_reads(pilot: Pilot[Any]) -> None:
    """Long enough for a read of the gateway (its retry budget) to fail and be answered."""
    await pilot.pause(3.0)


@pytest.mark.slow
async def test_a_server_that_stops_answering_keeps_the_last_board_on_screen(
    postgres_cluster: "Cluster", own_database: str, clock: ManualClock
) -> None:
    url = board_location(postgres_cluster.url_of(own_database))
    with Board(url, clock=clock) as board:
        first = board.create_task("First todo").id
        board.create_task("Second todo")
        board.create_task("Triage me", status=t.BACKLOG)
    app = KanbanApp(url, poll_ms=50, clock=clock, operator=OPERATOR, user_keymap={})
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await loaded(pilot)
            header = app.screen.query_one(HeaderBar)
            app.jump_to(first)
            before = shown(app)
            assert before[t.TODO][:2] and before[t.BACKLOG][:1]

            allow_connections(postgres_cluster, own_database, False)
            await until(pilot, lambda: header.facts.unreadable_since is not None)
            assert "unreadable since" in str(header.render())
            await pilot.pause()
            seen = header.render_line(0).text  # on screen, 160 columns: why, to its last word
            assert " is not currently accepting connections)" in seen, seen
            assert shown(app) == before

            await pilot.press("j", "k", "l", "h")  # moving about
            await pilot.press("enter")  # the drawer reads the task: refused, said in its title
            await until(pilot, lambda: bool(app.drawers()))
            await settle_reads(pilot)
            assert app.is_running
            title = str(app.drawers()[0].query_one("#drawer-title").render())
            assert "Cannot read" in title and "database unavailable" in title
            await pilot.press("escape")
            await pilot.press("plus")  # a write: refused, not a defect
            await until(pilot, lambda: any(s.severity == "error" for s in app.said.newest_first()))
            said = app.said.newest_first()
            assert not [s for s in said if s.defect], said
            assert any(Reason.DATABASE_UNAVAILABLE.value in s.title for s in said), said
            app.set_filter("first")  # answered by the store once it can be read
            await settle_reads(pilot)
            assert app.is_running
            assert shown(app) == before  # the last board read, still on screen

            allow_connections(postgres_cluster, own_database, True)
            await until(pilot, lambda: header.facts.unreadable_since is None)
            await until(pilot, lambda: app.state.columns[t.TODO] == [first])
            assert app.state.counts[t.TODO] == 2
    finally:
        allow_connections(postgres_cluster, own_database, True)


@pytest.mark.slow
async def test_recovery_starts_once_a_board_down_at_start_comes_back(
    postgres_cluster: "Cluster",
    own_database: str,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Started while the server was down, the app's open was refused, and its recovery (the
    reconciler that releases expired leases, the worktree janitor) never started, even once the
    board read again: an abandoned task stayed in progress, its lease long expired, for as long as
    the app ran. It starts once the board reads."""
    monkeypatch.setenv("KANBAN_RECONCILE_INTERVAL_MS", "100")
    url = board_location(postgres_cluster.url_of(own_database))
    with Board(url, clock=clock) as board:
        abandoned = board.create_task("Abandoned by its agent").id
    allow_connections(postgres_cluster, own_database, False)
    app = KanbanApp(url, poll_ms=50, clock=clock, operator=OPERATOR, user_keymap={})
    said = app.said.newest_first
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            header = app.screen.query_one(HeaderBar)
            await until(pilot, lambda: header.facts.unreadable_since is not None)
            await until(  # the open was refused, as said
                pilot, lambda: any(Reason.DATABASE_UNAVAILABLE.value in s.title for s in said())
            )

            allow_connections(postgres_cluster, own_database, True)
            await until(pilot, lambda: header.facts.unreadable_since is None)
            with Board(url, clock=clock) as agent:  # its own open releases nothing yet
                agent.claim(abandoned, "agent-ada", lease_ms=1_000)
            await until(pilot, lambda: app.state.tasks[abandoned].status == t.IN_PROGRESS)
            clock.advance(seconds=5)  # the agent is gone; only the app is left to notice
            await until(pilot, lambda: app.state.tasks[abandoned].status == t.TODO)
    finally:
        allow_connections(postgres_cluster, own_database, True)
