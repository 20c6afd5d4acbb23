"""Board upkeep: the recovery pass on demand, and the integrity check."""

import click

from .context import board_path, global_options, open_board, settings
from .exitcodes import UNEXPECTED
from .output import emit, error_line


@click.command("reconcile")
@global_options
def reconcile() -> None:
    """Release expired leases now; print what was released.

    One recovery pass: expired leases go back to todo, their runs time out, old events
    are purged. Prints what it released; a second pass right after finds nothing.
    """
    with open_board(recover=False) as board:
        report = board.reconcile()
    emit(report.to_json(), kind="reconcile")


@click.group("db")
def db() -> None:
    """The board file itself."""


@db.command("check")
@global_options
def check() -> None:
    """Integrity, schema version and readiness counters, read-only.

    Exits 0 when healthy, 1 when problems were found (listed in the report).
    """
    with open_board(read_only=True) as board:
        report = board.check()
    emit(report.to_json(), kind="check")
    if not report.ok:
        problems = report.problems
        error_line(
            {
                "error": f"board check found {len(problems)} problem(s)",
                "reason": "integrity",
                "problems": problems,
            }
        )
        raise click.exceptions.Exit(UNEXPECTED)


@db.command("path")
@global_options
def path() -> None:
    """Where the board is (after --db, KANBAN_DB and the default); does not create it."""
    where = board_path()
    emit({"path": str(where), "exists": where.exists()}, kind="record")


@db.command("init")
@click.argument("location", metavar="[PATH]", required=False)
@global_options
def init(location: str | None) -> None:
    """Create a board (PATH, else --db, KANBAN_DB or the default).

    Creating is explicit: other verbs refuse a missing file (no_board) rather than start an
    empty board on a mistyped path. An existing board is left as it is ("created": false); a
    file that is not a kanban board is refused (not_a_board) and left untouched.
    """
    if location is not None:
        settings().db = location
    with open_board(create=True, recover=False) as board:
        doc = {
            "path": str(board.path),
            "created": board.created,
            "schemaVersion": board.check().schema_version,
        }
    emit(doc, kind="record")
