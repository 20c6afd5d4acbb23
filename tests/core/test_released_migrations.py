"""A released migration is never edited: its text, built from `transitions` and `records` at import,
must stay byte for byte the text that existing boards were migrated with. The files beside this
test are that text, written from the code as released; regenerate them for a new migration only."""

from pathlib import Path

import pytest

from boardlib.store import postgres_schema, schema

RELEASED = Path(__file__).parent / "released_migrations"
SEPARATOR = "\n-- next statement --\n"


def released(store: str, version: int) -> tuple[str, ...]:
    return tuple((RELEASED / f"{store}-{version}.sql").read_bytes().decode().split(SEPARATOR))


@pytest.mark.parametrize(
    ("store", "migrations"),
    [("sqlite", schema.MIGRATIONS), ("postgres", postgres_schema.MIGRATIONS)],
)
def test_released_migrations_are_byte_identical(
    store: str, migrations: tuple[tuple[str, ...], ...]
) -> None:
    versions = sorted(int(path.stem.split("-")[1]) for path in RELEASED.glob(f"{store}-*.sql"))
    assert versions == list(range(1, len(versions) + 1))
    assert len(migrations) >= len(versions), "a released migration was removed"
    for version in versions:
        assert migrations[version - 1] == released(store, version), f"{store} migration {version}"


def test_every_migration_has_its_released_text() -> None:
    """A new migration gets its file the day it is released, so the next edit is caught too."""
    for store, migrations in (
        ("sqlite", schema.MIGRATIONS),
        ("postgres", postgres_schema.MIGRATIONS),
    ):
        assert (RELEASED / f"{store}-{len(migrations)}.sql").exists()
