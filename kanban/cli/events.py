"""`kanban events`: the append-only mutation log, read from a cursor.

Without `--follow` it prints one JSON array. With `--follow` it prints one event per line as they
are committed by any process (NDJSON). Each poll asks the board's change token (SQLite: `PRAGMA
data_version`, microseconds; Postgres: a LISTEN/NOTIFY check with a fallback read of the event
cursor) and reads the log only when it moved. It starts from now unless `--since` says otherwise,
and stops after `--limit` events or `--timeout` seconds if given, else on Ctrl-C or SIGTERM
(exit 0).
With `--consumer NAME` it reads from that durable cursor (shared with `kanban watch`) and moves it
past what it printed once the output is flushed: at least once, in order (docs/watch.md).
"""

import sys
import threading
import time

import click

from boardlib.board import Board
from boardlib.records import Event

from .context import global_options, open_board, stop_on_signals
from .options import Number, WholeNumber, task_events_option
from .output import emit, emit_line, outage_notice, resume_notice

PAGE = 500


@click.command("events")
@task_events_option
@click.option(
    "--since",
    type=WholeNumber(min=0),
    metavar="SEQ",
    help="Events after this cursor (default: 0; with --follow: now). Above the newest event: "
    "none yet, and --follow or --consumer refuses it (invalid_input), as it would skip events.",
)
@click.option(
    "--limit",
    type=WholeNumber(min=1),
    metavar="N",
    help="At most N events (default 1000; with --follow: no limit).",
)
@click.option(
    "--last",
    type=WholeNumber(min=1),
    metavar="N",
    help="The newest N events (of --task, if given), oldest of them first: what just happened.",
)
@click.option("--follow", "-f", is_flag=True, help="Keep printing new events, one per line.")
@click.option(
    "--poll-ms",
    type=WholeNumber(min=10),
    default=200,
    show_default=True,
    metavar="MS",
    help="How often --follow looks for changes.",
)
@click.option(
    "--timeout",
    type=Number(min=0),
    metavar="SECONDS",
    help="Stop following after this long.",
)
@click.option(
    "--consumer",
    metavar="NAME",
    help="Read from this durable cursor and move it past what is printed (a new one starts at "
    "--since, else now); no purge or prune takes an event it has not read.",
)
@global_options
def events(
    task_id: str | None,
    since: int | None,
    limit: int | None,
    last: int | None,
    follow: bool,
    poll_ms: int,
    timeout: float | None,
    consumer: str | None,
) -> None:
    """The event log, or --follow it live.

    Every mutation, oldest first, each with its seq cursor; --last N for the newest N.
    """
    if last is not None:  # the tail of the log now: no cursor to start from or to move
        clash = [name for name, given in (("--since", since is not None), ("--limit", limit),
                 ("--follow", follow), ("--consumer", consumer)) if given]  # fmt: skip
        if clash:
            raise click.UsageError(
                f"--last reads the newest events now; leave out {', '.join(clash)} "
                "(--since SEQ --limit N reads from a cursor)"
            )
    with open_board(reconcile_orphans=False, create=False) as board:
        if task_id is not None:  # a mistyped id would read (or wait for) nothing, silently
            board.events(task_id=task_id, limit=1)  # the filter's own refusal first (taskId)
            board.get_task(task_id)
        if consumer is not None and follow:
            _follow_consumer(board, consumer, task_id, since, limit, poll_ms / 1000, timeout)
            return
        if consumer is not None:
            from boardlib.watch import read_once

            read_once(board, consumer, _print_batch, task_id=task_id, since=since,
                      limit=limit or 1000, on_resume=resume_notice)  # fmt: skip
            return
        if last is not None:
            batch = board.recent_events(task_id=task_id, limit=last)[::-1]
            emit([event.to_json() for event in batch], kind="events")
            return
        if not follow:
            batch = board.events(since=since or 0, task_id=task_id, limit=limit or 1000)
            emit([event.to_json() for event in batch], kind="events")
            return
        newest = None if since is None else board.newest_event_if_ahead(since)
        if since is not None and newest is not None:  # following on would skip events unsaid
            from boardlib.watch import past_the_log

            raise past_the_log("since", since, newest)
        try:
            _follow(board, task_id, since, limit, poll_ms / 1000, timeout)
        except KeyboardInterrupt:
            return


def _print_batch(batch: list[Event]) -> None:
    emit([event.to_json() for event in batch], kind="events")
    sys.stdout.flush()  # printed, then the cursor moves


def _follow_consumer(
    board: Board,
    name: str,
    task_id: str | None,
    since: int | None,
    limit: int | None,
    poll_s: float,
    timeout: float | None,
) -> None:
    from boardlib.watch import Delivery, Outcome

    def write(event: Event) -> Outcome:
        emit_line(event.to_json(), kind="event")  # flushed: then the cursor moves
        return Outcome(True)

    delivery = Delivery(
        board, name, write, task_id=task_id, poll_s=poll_s, since=since, on_outage=outage_notice,
        on_resume=resume_notice,
    )  # fmt: skip
    stop_on_signals(delivery.stop)  # SIGTERM too: a clean stop, exit 0, the consumer released
    try:
        delivery.run(limit=limit, timeout_s=timeout)
    except (KeyboardInterrupt, BrokenPipeError):
        delivery.stop()


def _follow(
    board: Board,
    task_id: str | None,
    since: int | None,
    limit: int | None,
    poll_s: float,
    timeout: float | None,
) -> None:
    from boardlib.watch import outage_tolerant

    cursor = board.last_event_seq() if since is None else since
    deadline = None if timeout is None else time.monotonic() + timeout
    printed = 0
    seen_version: int | None = None
    done = threading.Event()

    def step() -> None:
        nonlocal cursor, printed, seen_version
        version = board.change_token()  # read before the log, so no commit slips between
        if version != seen_version:
            batch = board.events(since=cursor, task_id=task_id, limit=PAGE)
            for event in batch:
                if done.is_set():  # stopped (a signal) mid-batch: no more lines
                    return
                emit_line(event.to_json(), kind="event")
                cursor = event.seq
                printed += 1
                if limit is not None and printed >= limit:
                    done.set()
                    return
            if len(batch) == PAGE:
                return  # more waiting: read on before sleeping
            seen_version = version
        left = poll_s if deadline is None else min(poll_s, deadline - time.monotonic())
        if left > 0:
            done.wait(left)  # a stop (a signal) ends the wait at once

    tolerant = outage_tolerant(step, done, outage_notice)
    stop_on_signals(done.set)  # SIGTERM as Ctrl-C: a clean stop, exit 0
    while not done.is_set() and (deadline is None or time.monotonic() < deadline):
        tolerant()
