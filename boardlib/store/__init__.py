"""The store layer: the only code that speaks SQL. `base` is the interface every store implements,
`sqlite` (with `contention`, `schema` and `writer_queue`) the embedded default, `postgres` (with
`postgres_schema`) the store for a board on a PostgreSQL server. `open_store` picks one from the
board's location; nothing else in the project names a store class."""

from ..config import BoardConfig
from ..errors import BoardError, Reason
from ..location import BoardLocation, DatabaseUrl
from .base import Store


def open_store(
    location: BoardLocation,
    config: BoardConfig,
    *,
    read_only: bool = False,
    create: bool = True,
    pool_size: int | None = None,
    background_checkpoints: bool = False,
) -> Store:
    """The store for a board location: a `DatabaseUrl` is PostgreSQL (psycopg is imported here and
    only here, so a SQLite agent never loads it), a path is SQLite. `pool_size` gives a
    long-running process a connection pool (Postgres; SQLite keeps its two connections);
    `background_checkpoints` moves SQLite's checkpoints off the writing thread (checkpoints.py; the
    Postgres server checkpoints its own log)."""
    if isinstance(location, DatabaseUrl):
        try:
            from .postgres import PostgresStore
        except ImportError as missing:  # installed without the postgres extra
            raise BoardError(
                Reason.UNSUPPORTED_BACKEND,
                "a postgresql:// board needs the PostgreSQL driver, not installed here "
                f"({missing.name or missing}): pip install 'kanban[postgres]' (from a "
                "checkout: pip install -e '.[postgres]')",
                scheme="postgresql",
            ) from None

        return PostgresStore(
            location, config, read_only=read_only, create=create, pool_size=pool_size
        )
    from .sqlite import SqliteStore

    return SqliteStore(
        location,
        config,
        read_only=read_only,
        create=create,
        background_checkpoints=background_checkpoints,
    )
