"""What every command shares: the board location, the output format, and how a board is opened.

`--db` and `--format` are accepted on the root command and again on any subcommand (the innermost
wins), so both `kanban --db b.db task list` and `kanban task list --db b.db` work. The board is
`--db`, else `KANBAN_DB`, else the per-user default of `boardlib.paths`; the clock and limits come
from the environment (`KANBAN_TEST_CLOCK`/`KANBAN_NOW_MS`, `KANBAN_LEASE_MS`, ...).
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from boardlib.clock import clock_from_env
from boardlib.config import BoardConfig, minutes_to_ms
from boardlib.location import BoardLocation, board_location
from boardlib.paths import default_board_path, is_default_board

from .startup import load_paused
from .usage import Choice

if TYPE_CHECKING:
    from boardlib.board import Board

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("json", "table")

# The board this process opened, so an error escaping a command can name it (URLs print without
# their password).
opened_path: BoardLocation | None = None


@dataclass
class Settings:
    db: str | None = None
    format: str = "json"


def settings() -> Settings:
    """The invocation's settings, kept on the root context."""
    ctx = click.get_current_context()
    return ctx.find_root().ensure_object(Settings)


def _set_db(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.find_root().ensure_object(Settings).db = value


def _set_format(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.find_root().ensure_object(Settings).format = value


db_option = click.option(
    "--db",
    type=str,
    expose_value=False,
    callback=_set_db,
    metavar="PATH|URL",
    help="Board file, or postgresql://user@host/db (default: $KANBAN_DB, else "
    "$XDG_STATE_HOME/kanban/board.db).",
)

format_option = click.option(
    "--format",
    type=Choice(FORMATS),
    expose_value=False,
    callback=_set_format,
    help="json (default: one document on stdout) or table (for people).",
)


def refuse_table_format(output: str) -> None:
    """`--format table` draws a command's result for people. A command whose output is no
    result (a server, a protocol, a full-screen app) refuses it as a usage error rather than
    ignore it; `output` says what it prints instead."""
    if settings().format == "table":
        ctx = click.get_current_context()
        raise click.UsageError(
            f"--format table draws a command's result for people, and {ctx.command_path} has "
            f"none: {output}. Leave out --format.",
            ctx,
        )


def global_options(function: F) -> F:
    """`--db` and `--format`, for commands that open a board and print a result."""
    return db_option(format_option(function))


def board_path() -> BoardLocation:
    """The board this invocation means: `--db`, else `KANBAN_DB`, else the per-user file. A
    `postgresql://` URL is a Postgres board (see `boardlib.location`)."""
    chosen = settings().db
    return board_location(chosen) if chosen is not None else default_board_path()


@contextmanager
def open_board(
    *, reconcile_orphans: bool = True, read_only: bool = False, create: bool | None = None
) -> Iterator["Board"]:
    """The resolved board, closed on the way out. `reconcile_orphans=False` for verbs that
    release expired leases in their own transaction anyway (claims, reconcile) or must not write
    (followers).

    Creating a board is explicit, so a typo in `--db` is `no_board` rather than an empty board
    an agent loop idles on forever: `create=True` for the verbs that make one (`db init`, `task
    dispatch`, `plan apply`), `create=False` for reads, and the default (None) lets a write
    create only the per-user default board. A created board is announced on stderr."""
    load_paused("boardlib.board")  # here, not at import: `--help` opens no board
    from boardlib.board import Board

    global opened_path
    path = opened_path = board_path()
    may_create = create if create is not None else is_default_board(path)
    board = Board(
        path,
        clock=clock_from_env(),
        config=BoardConfig.from_env(),
        reconcile_orphans=reconcile_orphans and not read_only,
        read_only=read_only,
        create=may_create and not read_only,
    )
    succeeded = False
    try:
        yield board
        succeeded = True
    except click.exceptions.Exit:  # a deliberate exit code (claim-next's idle 3) is not a failure
        succeeded = True
        raise
    finally:
        board.close()
        if board.created and succeeded:  # a refusal stays one stderr line
            announce_created(path)


def ensure_board(path: BoardLocation, *, read_only: bool) -> None:
    """Check (and for the per-user default board, make) the board a full-screen app is about to
    open (`check_board_to_watch`: the rule `python -m tui` keeps too), so a foreign file or a
    missing one is refused here, as JSON, before the screen is taken over."""
    board = load_paused("boardlib.board")
    if board.check_board_to_watch(path, read_only=read_only):
        announce_created(path)


def announce_created(path: BoardLocation) -> None:
    """The one stderr line of a command that made a new board (stdout stays one JSON document)."""
    click.echo(f"{CREATED_NOTICE} {path}", err=True)


CREATED_NOTICE = "kanban: created a new board at"


def lease_ms(minutes: float | None) -> int | None:
    return None if minutes is None else minutes_to_ms(minutes)


def stop_on_signals(stop: Callable[[], None]) -> None:
    """A follower (`watch`, `events --follow`) stops cleanly on SIGTERM, SIGINT and SIGHUP: it
    finishes the step under way, releases its consumer and exits 0, as a service manager expects
    of a daemon it stops (`events --follow` died of SIGTERM, exit 143, which systemd counts as a
    failure without SuccessExitStatus)."""
    import signal

    def handler(_signum: int, _frame: Any) -> None:
        stop()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, handler)
