"""Board upkeep: a stale-task reconciliation pass on demand, the integrity check, and old events
archived out of the board (and back)."""

from datetime import UTC, datetime
from pathlib import Path

import click

from boardlib.config import BoardConfig
from boardlib.errors import invalid_input
from boardlib.location import DatabaseUrl, board_location, display_location, known_to_exist

from .context import board_path, format_option, global_options, open_board, settings
from .exitcodes import UNEXPECTED
from .output import emit, error_line


@click.command("reconcile")
@global_options
def reconcile() -> None:
    """Release expired leases now; print what was released.

    One stale-task reconciliation pass: expired leases go back to todo, their runs time out,
    old events are purged. Prints what it released; a second pass right after finds nothing.
    """
    with open_board(reconcile_orphans=False) as board:
        report = board.reconcile_stale_tasks()
    emit(report.to_json(), kind="reconcile")


@click.command("prune")
@click.option(
    "--events-before",
    "before",
    required=True,
    metavar="AGE|DATE",
    help="Archive events older than this: an age (90d, 12h, 2w) or a UTC date (2025-01-31).",
)
@click.option(
    "--archive",
    "archive",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The archive file to write (new: a file there is refused). Default: beside the board "
    "file, named by the day of the cut (NAME.2.jsonl, ... when taken); a PostgreSQL board needs "
    "one.",
)
@global_options
def prune(before: str, archive: Path | None) -> None:
    """Move old events out of the board, into an archive file it can re-import.

    Writes every event older than the cut to the archive (a new JSON-lines file, fsynced before
    anything is deleted), then deletes them from the board in short transactions. Never removes
    a task, an event a consumer (`kanban consumers list`) has not read, the history of a task
    still in flight, or the newest event. With nothing to take it writes no file and exits 0
    (a retried daily job succeeds). `kanban db import-events FILE` puts them back as they were.
    """
    from boardlib.archive import cut_off

    with open_board(reconcile_orphans=False, create=False) as board:
        before_ms = cut_off(before, board.now())
        chosen = archive is not None
        archive = archive if archive is not None else _default_archive(before_ms)
        report = board.prune_events(before_ms, archive, next_free_name=not chosen)
    emit(report.to_json(), kind="record")


def _default_archive(before_ms: int) -> Path:
    where = board_path()
    if isinstance(where, DatabaseUrl):
        raise invalid_input("a PostgreSQL board's events need --archive FILE to go to")
    day = datetime.fromtimestamp(before_ms / 1000, tz=UTC).strftime("%Y-%m-%d")
    return where.with_name(f"{where.stem}.events-before-{day}.jsonl")


@click.group("db")
def db() -> None:
    """The board's own storage: its SQLite file, or its PostgreSQL schema."""


@db.command("check")
@click.option(
    "--full",
    is_flag=True,
    help="Also check every index against its table (SQLite's integrity_check): 3-4x slower.",
)
@global_options
def check(full: bool) -> None:
    """Integrity, schema version, readiness counters and this machine's checkouts, read-only.

    Every page of the file is read and its structure checked (SQLite's quick_check); `--full`
    also looks every row up in each of its indexes. Exits 0 when healthy, 1 when problems were
    found (listed in the report).
    """
    from boardlib.worktrees import Worktrees

    with open_board(read_only=True) as board:
        report = Worktrees(board).check(full=full)
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


@db.command("import-events")
@click.argument("archive", type=click.Path(dir_okay=False, path_type=Path))
@global_options
def import_events(archive: Path) -> None:
    """Put the events of a prune's archive back into the board, as they were.

    The whole file is checked first (its event count and sha256, every line an event, and that
    it is an archive of this board: its tasks were created here when it says); events the board
    holds already are left alone, and one that differs is refused with nothing imported.
    Importing the same archive twice imports it once.
    """
    with open_board(reconcile_orphans=False, create=False) as board:
        report = board.import_events(archive)
    emit(report.to_json(), kind="record")


@db.command("path")
@global_options
def path() -> None:
    """Where the board is (after --db, KANBAN_DB and the default); does not create it.

    `exists` says whether something is there; `notABoard`, when it is something no board can
    be (a folder, a FIFO, a device, a dangling symbolic link), says what, from its stat alone.
    For a postgresql:// URL `exists` is null: nothing is opened, and only connecting could tell.
    """
    where = board_path()
    doc: dict[str, object] = {
        "path": display_location(where),
        "backend": "postgres" if isinstance(where, DatabaseUrl) else "sqlite",
        "exists": known_to_exist(where),
    }
    if not isinstance(where, DatabaseUrl):
        from boardlib.store.board_file import not_a_file_at

        try:
            what = not_a_file_at(where)
        except OSError:  # a folder on the way this user may not enter: the open says so
            what = None
        if what is not None:
            doc["notABoard"] = f"it is {what}"
    emit(doc, kind="record")


@db.command("migrate")
@global_options
def migrate() -> None:
    """Bring an existing board's schema up to this kanban's version, and its text index.

    Works on a SQLite file and on a PostgreSQL URL alike. Prints the schema version, how many
    migrations ran (0 when it was already current) and the text index: "present", "built" now
    (a board made where it could not be: a SQLite without FTS5, a server without pg_trgm; on
    PostgreSQL built without stopping writers) or "unavailable" here. A missing board is
    refused, not created.
    """
    with open_board(reconcile_orphans=False, create=False) as board:
        doc = {
            "path": board.store.display,
            "backend": board.store.backend,
            "schemaVersion": board.schema_version(),
            "applied": board.store.migrations_applied,
            "textIndex": board.build_text_index(),
        }
    emit(doc, kind="record")


@db.command("copy")
@click.option("--from", "source", required=True, metavar="PATH|URL", help="The board to copy.")
@click.option(
    "--to", "target", required=True, metavar="PATH|URL", help="An empty or new board to fill."
)
@format_option  # no --db: --from and --to name both boards
def copy(source: str, target: str) -> None:
    """Copy a whole board between SQLite and PostgreSQL, losing nothing.

    Every row of every table moves with its ids, seqs and event cursors, in one transaction on
    the target, which must be empty (a new file, an empty schema). Row counts and a content hash
    of every table are compared before it commits; any difference rolls the copy back, and a
    failed copy leaves the target as it was (a file or tables it made are removed). Text
    PostgreSQL cannot store (a NUL) is refused naming its row. Prints the counts and hashes.
    """
    from boardlib.store.copy import copy_board

    report = copy_board(
        board_location(source), board_location(target), config=BoardConfig.from_env()
    )
    emit(report.to_json(), kind="record")


@db.command("init")
@click.argument("location", metavar="[PATH]", required=False)
@global_options
def init(location: str | None) -> None:
    """Create a board (PATH, else --db, KANBAN_DB or the default): a SQLite file, or the schema
    of a postgresql:// URL.

    Creating is explicit: other verbs refuse a missing file (no_board) rather than start an
    empty board on a mistyped path. An existing board is left as it is ("created": false); a
    file that is not a kanban board is refused (not_a_board) and left untouched.
    """
    if location is not None:
        settings().db = location
    with open_board(create=True, reconcile_orphans=False) as board:
        doc = {
            "path": board.store.display,
            "backend": board.store.backend,
            "created": board.created,
            "schemaVersion": board.schema_version(),
        }
    emit(doc, kind="record")
