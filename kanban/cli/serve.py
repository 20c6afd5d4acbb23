"""`kanban serve`: the REST API (seed 003's routes and the lease protocol) over this board.

Imported only when `serve` runs: FastAPI and uvicorn never load on an agent's claim path.
"""

import errno
import os
import socket
from pathlib import Path

import click

from boardlib.errors import BoardError, Reason
from boardlib.paths import is_default_board

from .context import announce_created, board_path, db_option, refuse_table_format
from .options import Number, WholeNumber

DEFAULT_PORT = 18790


@click.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    metavar="ADDRESS",
    help="Address to listen on.",
)
@click.option(
    "--port",
    type=WholeNumber(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    metavar="N",
    help="Port (0: any free one; the ready line on stdout says which).",
)
@click.option(
    "--token",
    metavar="T",
    help="One shared Bearer token for every route but /healthz (prefer $KANBAN_TOKEN: "
    "arguments show in `ps`).",
)
@click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Per-caller tokens: lines of `TOKEN agent:NAME [ROLE,...]` or `TOKEN operator:NAME` "
    "(mode 600).",
)
@click.option(
    "--repo-root",
    "repo_roots",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Only provision worktrees of repositories under DIR (repeatable).",
)
@click.option(
    "--workers",
    type=WholeNumber(1, 64),
    default=1,
    show_default=True,
    metavar="N",
    help="Server processes sharing the port (more than one uses more cores).",
)
@click.option("--access-log", is_flag=True, help="Log every request on stderr.")
@click.option(
    "--graceful",
    type=Number(min=0),
    default=30,
    show_default=True,
    metavar="SECONDS",
    help="On SIGTERM, how long shutdown may take, in-flight requests included.",
)
@click.option(
    "--sse-send-timeout",
    type=Number(min=0.1),
    default=10,
    show_default=True,
    metavar="SECONDS",
    help="Drop a connection whose client has taken nothing for this long with its buffers "
    "full, or for three times as long with less waiting (an event stream resumes with "
    "Last-Event-ID); the server never queues events for a stalled client.",
)
@db_option
def serve(
    host: str,
    port: int,
    token: str | None,
    tokens_file: Path | None,
    repo_roots: tuple[Path, ...],
    workers: int,
    access_log: bool,
    graceful: float,
    sse_send_timeout: float,
) -> None:
    """Serve the board over HTTP (REST + live events) until SIGTERM.

    Binds 127.0.0.1 by default; any other address needs --token or --tokens. Prints one JSON
    line on stdout when it is listening: {"listening": URL, "db": ..., "auth": ...}.
    """
    refuse_table_format(
        "it serves HTTP until stopped, its ready line JSON for the program that started it"
    )
    from boardlib import Board, BoardConfig
    from boardlib.clock import clock_from_env
    from kanban.http.auth import TokenBook, TokenFileError
    from kanban.http.server import UnsafeBinding, bind, check_binding
    from kanban.http.server import serve_workers as run
    from kanban.http.service import ServerSettings, open_server_board

    token = token if token is not None else os.environ.get("KANBAN_TOKEN") or None
    if token is not None and tokens_file is not None:
        raise click.UsageError("give --token (or KANBAN_TOKEN) or --tokens FILE, not both")
    try:
        book = (
            TokenBook.load(tokens_file)
            if tokens_file is not None
            else (TokenBook.shared(token) if token is not None else None)
        )
    except TokenFileError as error:
        raise click.UsageError(str(error)) from None
    location = board_path()
    settings = ServerSettings(
        db=location, tokens=book, repo_roots=repo_roots, sse_send_timeout_s=sse_send_timeout
    )
    try:
        check_binding(host, settings)
    except UnsafeBinding as error:
        raise click.UsageError(str(error)) from None
    try:
        sock = bind(host, port)
    except OSError as error:
        raise unusable_address(host, port, error) from None

    def open_board() -> "Board":
        return open_server_board(settings.db, clock=clock_from_env(), config=BoardConfig.from_env())

    try:  # like every verb, a typo in --db is no_board; only the default board is made here
        board = open_server_board(
            settings.db,
            clock=clock_from_env(),
            config=BoardConfig.from_env(),
            create=is_default_board(location),
        )
    except BaseException:
        sock.close()
        raise
    if board.created:
        announce_created(location)
    if workers > 1:
        board.close()  # each worker opens its own, after the fork
    code = run(
        settings,
        open_board if workers > 1 else lambda: board,
        sock,
        workers=workers,
        access_log=access_log,
        graceful_s=graceful,
    )
    raise click.exceptions.Exit(code)


def unusable_address(host: str, port: int, error: OSError) -> BoardError:
    """A taken port or an address not of this machine is the caller's input to change, said
    with what to change (a typed refusal, exit 2), not an unexpected failure."""
    if isinstance(error, socket.gaierror) or error.errno == errno.EADDRNOTAVAIL:
        field, advice = "host", "give --host an address of this machine (default 127.0.0.1)"
    else:
        field, advice = "port", "give another --port (0: any free one, named on the ready line)"
        if error.errno == errno.EADDRINUSE:
            advice = f"another process listens there: stop it, or {advice}"
    return BoardError(
        Reason.INVALID_INPUT,
        f"cannot listen on {host}:{port}: {error.strerror or error}; {advice}",
        field=field,
    )
