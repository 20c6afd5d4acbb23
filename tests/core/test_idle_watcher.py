"""An idle watcher of a Postgres board (what a TUI's reader thread does between changes: ask the
change token every tick) holds one connection, its LISTEN, and sends the server no query: seen
from the server itself, in pg_stat_activity. A write elsewhere still wakes it at once.

The board is in a database of its own, and only that database's backends are counted: the
cluster is the test process's, so connections other tests left open (a module's shared board, a
`Board` refused while opening and not yet collected) or that are still closing are its too, and
counted cluster-wide they made the test fail or pass by the order the tests ran in."""

import time
from typing import TYPE_CHECKING

import psycopg
import pytest

from boardlib import Board
from boardlib.store import postgres

if TYPE_CHECKING:
    from tests.pg_cluster import Cluster

pytestmark = [pytest.mark.usefixtures("postgres_cluster"), pytest.mark.slow]  # ~16 s of idling

TICK_S = 0.05


Backend = tuple[object, str, object]


def backends(observer: "psycopg.Connection[tuple[object, ...]]", database: str) -> list[Backend]:
    """The client backends connected to `database` (the observer is not: it watches from
    another): (pid, last query, when its state changed)."""
    rows = observer.execute(
        "SELECT pid, query, state_change FROM pg_stat_activity "
        "WHERE backend_type = 'client backend' AND datname = %s ORDER BY pid",
        (database,),
    ).fetchall()
    return [(pid, str(query), changed) for pid, query, changed in rows]


def watch_for(board: Board, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    token = board.change_token()
    while time.monotonic() < deadline:
        token = board.change_token()
        time.sleep(TICK_S)
    return token


def test_an_idle_watcher_holds_one_connection_and_sends_no_query(
    postgres_cluster: "Cluster", own_database: str
) -> None:
    url = postgres_cluster.url_of(own_database)
    Board(url).close()  # the board's tables, made and left
    with (
        psycopg.connect(postgres_cluster.url, autocommit=True) as observer,
        Board(url, reconcile_orphans=False) as watcher,
    ):
        before = watch_for(watcher, postgres.IDLE_CLOSE_S + 1)
        settled = backends(observer, own_database)
        assert len(settled) == 1, settled  # the listener only
        assert settled[0][1].startswith("LISTEN")
        quiet = watch_for(watcher, postgres.FALLBACK_POLL_S * 2 + 1)
        assert quiet == before
        assert backends(observer, own_database) == settled  # no query reached the server

        with Board(url, reconcile_orphans=False) as other:
            other.create_task("written elsewhere")
        deadline = time.monotonic() + 5
        while watcher.change_token() == before:
            assert time.monotonic() < deadline, "the NOTIFY did not wake the watcher"
            time.sleep(TICK_S)
