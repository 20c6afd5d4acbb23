"""What a test needs to do to a board behind the board's back, on either backend: hold its write
lock from another connection, run raw SQL (to simulate corruption), ask whether a board was
created at all. The board itself is only ever used through `boardlib`."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from boardlib.location import DatabaseUrl, board_location

if TYPE_CHECKING:
    from tests.pg_cluster import Cluster


def is_postgres(location: Any) -> bool:
    return isinstance(board_location(location), DatabaseUrl)


def conninfo(location: Any) -> str:
    """The URL to hand libpq (a `DatabaseUrl` prints without its password; this does not)."""
    found = board_location(location)
    assert isinstance(found, DatabaseUrl)
    return found.conninfo


def content_digest(location: Any) -> tuple[Any, ...]:
    """Everything a Postgres board holds, for "changed nothing" checks: every table's rows and
    content hash (as `db copy` compares them) and where its sequences stand."""
    import psycopg

    from boardlib.store.copy import board_digest
    from boardlib.store.postgres import PostgresStore

    with psycopg.connect(conninfo(location), autocommit=True) as conn:
        row = conn.execute(
            "SELECT (SELECT last_value FROM event_seq), (SELECT last_value FROM audit_seq_seq)"
        ).fetchone()
    store = PostgresStore(board_location(location), __import__("boardlib").BoardConfig(),
                          read_only=True)  # fmt: skip
    try:
        tables = store.read(board_digest)
    finally:
        store.close()
    return (tuple(sorted((k, v.rows, v.sha256) for k, v in tables.items())), row)


def _schema(url: str) -> str:
    options = dict(parse_qsl(urlsplit(url).query)).get("options", "")
    return options.split("search_path=", 1)[1] if "search_path=" in options else "public"


@contextmanager
def hold_write_lock(location: Any) -> Iterator[None]:
    """Another writer holds the board's write turn: SQLite's file lock (`BEGIN IMMEDIATE`), or the
    Postgres board's advisory lock (claims do not take it: they run beside it)."""
    if is_postgres(location):
        import psycopg

        from boardlib.store.postgres import board_lock_and_channel

        key, _channel = board_lock_and_channel(_schema(str(location)))
        with psycopg.connect(conninfo(location), autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            try:
                yield
            finally:
                # Given back before the block ends: a closed connection's lock goes only when its
                # server process has exited, a moment after the close, and a writer opening right
                # after found it still held (a CI flake: its open-time recovery was skipped).
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        return
    import sqlite3

    holder = sqlite3.connect(Path(location), isolation_level=None, timeout=0)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def raw_execute(location: Any, statement: str) -> None:
    """One SQL statement written straight to the board's tables, committed."""
    if is_postgres(location):
        import psycopg

        with psycopg.connect(conninfo(location), autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]
        return
    import sqlite3

    with sqlite3.connect(Path(location)) as conn:
        conn.execute(statement)


def board_created(location: Any) -> bool:
    """Whether anything made a board there: the file, or the schema's `board_meta` table."""
    if is_postgres(location):
        import psycopg

        with psycopg.connect(conninfo(location), autocommit=True) as conn:
            row = conn.execute("SELECT to_regclass('board_meta') IS NOT NULL").fetchone()
            return bool(row and row[0])
    return Path(location).exists()


def kanban_backends(location: Any) -> set[int]:
    """The pids of the Postgres backends kanban processes hold open (`application_name`)."""
    import psycopg

    with psycopg.connect(conninfo(location), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'kanban'"
        ).fetchall()
    return {int(row[0]) for row in rows}


def rows_written(location: Any, *, besides: set[int] | None = None) -> dict[str, int]:
    """Postgres's own count of the rows inserted, updated and deleted in the board's tables
    (`pg_stat_user_tables`), read once every kanban backend but `besides` has gone: a backend
    reports its counts as it exits, before it leaves `pg_stat_activity`, so what a finished
    process wrote is in the count."""
    import time

    import psycopg

    keep = besides or set()
    deadline = time.monotonic() + 30
    while kanban_backends(location) - keep:
        assert time.monotonic() < deadline, "kanban's backends did not go away"
        time.sleep(0.05)
    with psycopg.connect(conninfo(location), autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT coalesce(sum(n_tup_ins), 0), coalesce(sum(n_tup_upd), 0), "
            "coalesce(sum(n_tup_del), 0) FROM pg_stat_user_tables "
            "WHERE schemaname = current_schema()"
        ).fetchone()
    assert row is not None
    return {"inserted": int(row[0]), "updated": int(row[1]), "deleted": int(row[2])}


def read_only_session(location: Any) -> str:
    """The board's URL with every transaction of the session read-only (Postgres's
    `default_transaction_read_only`): any write that process tries fails."""
    url = str(location)
    assert "options=" in url, url
    return url.replace("options=", "options=-cdefault_transaction_read_only%3Don%20", 1)


def allow_connections(cluster: "Cluster", database: str, allowed: bool) -> None:
    """Refuse (or allow again) new connections to `database`, ending the ones it has: what a
    server going down looks like to a board, without stopping the session's shared cluster."""
    import psycopg

    with psycopg.connect(cluster.url, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS {str(allowed).lower()}")
        if not allowed:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (database,),
            )
