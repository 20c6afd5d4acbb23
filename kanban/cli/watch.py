"""`kanban watch`: run a command once per matching event, resuming from a durable cursor, and
`kanban consumers`: list, retry, reset or forget those cursors.

The delivery promise (at least once, in order, the cursor advanced only after the command exits
0; retries back off; a delivery that keeps failing is held, never skipped) is
`boardlib.watch`'s; this module parses the command line and prints. docs/watch.md
"""

import sys

import click

from boardlib.inert import inert
from boardlib.records import Consumer, Event
from boardlib.watch import (
    Backoff,
    Consumers,
    Delivery,
    OnFailure,
    command_delivery,
    parse_kinds,
)

from .context import global_options, open_board, stop_on_signals
from .options import Number, WholeNumber, task_events_option
from .output import emit, outage_notice, resume_notice


def failure_notice(name: str) -> OnFailure:
    """One line on stderr per failed delivery, and one when the event is delivered after all:
    the watcher's stdout is its own last line, and the command's stderr is kept on the
    consumer, so without it a failing command (a typo, a host down) was not seen at all."""

    def notice(event: Event, failed: Consumer | None, retry_s: float) -> None:
        what = f"kanban: watch {inert(name)}: event {event.seq} ({event.kind})"
        if failed is None:
            line = f"{what} delivered after failing"
        else:
            held = "; held, in kanban inbox" if failed.held_since is not None else ""
            line = (
                f"{what} failed ({failed.failures} in a row{held}): "
                f"{inert(failed.last_error or '')}; retrying in {retry_s:g} s"
            )
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    return notice


@click.command("watch", context_settings={"ignore_unknown_options": False})
@click.option(
    "--on",
    "kinds",
    multiple=True,
    metavar="KIND[,KIND]",
    help="Only these event kinds (default: every event).",
)
@click.option(
    "--consumer",
    metavar="NAME",
    required=True,
    help="The durable cursor to resume from (made at the newest event if new).",
)
@task_events_option
@click.option(
    "--since",
    type=WholeNumber(min=0),
    metavar="SEQ",
    help="Where a NEW consumer starts (default: now); an existing one at or past it resumes "
    "from its cursor, so a restart may repeat the same line.",
)
@click.option(
    "--command-timeout",
    type=Number(min=0, min_open=True),
    default=600,
    show_default=True,
    metavar="SECONDS",
    help="A run taking longer is killed and counts as a failure.",
)
@click.option(
    "--backoff-max",
    type=Number(min=0, min_open=True),
    default=60,
    show_default=True,
    metavar="SECONDS",
    help="The longest wait between retries of a failing delivery (the first is 1 s).",
)
@click.option(
    "--poll-ms",
    type=WholeNumber(min=10),
    default=200,
    show_default=True,
    metavar="MS",
    help="How often the board is checked for new events.",
)
@click.option("--limit", type=WholeNumber(min=1), metavar="N", help="Stop after N deliveries.")
@click.option(
    "--timeout",
    type=Number(min=0),
    metavar="SECONDS",
    help="Stop after this long, even mid-retry or mid-run (that run is killed; its event is "
    "handed on again next time).",
)
@click.argument("command", nargs=-1, required=True, metavar="-- COMMAND [ARG...]")
@global_options
def watch(
    kinds: tuple[str, ...],
    consumer: str,
    task_id: str | None,
    since: int | None,
    command_timeout: float,
    backoff_max: float,
    poll_ms: int,
    limit: int | None,
    timeout: float | None,
    command: tuple[str, ...],
) -> None:
    """Run COMMAND once per matching event, the event's JSON on its stdin.

    At least once and in order: the consumer's cursor moves past an event only after COMMAND
    exits 0, so a restart resumes where it stopped. A failing delivery is retried with backoff
    and, after repeated failures, held (shown in `kanban inbox`), never skipped. When it stops it
    prints how many events it delivered and its cursor, as JSON on stdout (a table with --format
    table).
    """
    wanted = parse_kinds(kinds)
    deliver = command_delivery(list(command), timeout_s=command_timeout)
    with open_board(reconcile_orphans=False, create=False) as board:
        delivery = Delivery(
            board,
            consumer,
            deliver,
            kinds=wanted,
            task_id=task_id,
            poll_s=poll_ms / 1000,
            backoff=Backoff(longest_s=backoff_max),
            since=since,
            interrupt=deliver.interrupt,  # --timeout kills a run still going at the deadline
            on_outage=outage_notice,  # a database away (restart, failover) is waited out
            on_failure=failure_notice(consumer),
            on_resume=resume_notice,  # --since met an existing consumer: it resumes
        )
        stop_on_signals(delivery.stop)
        delivered = delivery.run(limit=limit, timeout_s=timeout)
        after = Consumers(board).get(consumer)
    emit(
        {
            "consumer": consumer,
            "delivered": delivered,
            "lastSeq": after.last_seq if after else None,
        },
        kind="record",
    )


@click.group("consumers")
def consumers() -> None:
    """The durable cursors of `kanban watch` and `kanban events --follow --consumer`."""


@consumers.command("list")
@global_options
def list_consumers() -> None:
    """Every consumer: its cursor, a failing or held delivery, who owns it."""
    with open_board(reconcile_orphans=False, read_only=True, create=False) as board:
        found = Consumers(board).all()
    emit([consumer.to_json() for consumer in found], kind="consumers")


@consumers.command("retry")
@click.argument("name")
@global_options
def retry(name: str) -> None:
    """Try a held delivery again now (it is still delivered, never skipped)."""
    with open_board(reconcile_orphans=False, create=False) as board:
        emit(Consumers(board).retry(name).to_json(), kind="record")


@consumers.command("reset")
@click.argument("name")
@click.option(
    "--to",
    "seq",
    type=WholeNumber(min=0),
    required=True,
    metavar="SEQ",
    help="The new cursor: events after SEQ are delivered next (to skip a held event: its seq).",
)
@global_options
def reset(name: str, seq: int) -> None:
    """Move a consumer's cursor on purpose (skip a held event, or replay). Not while it runs."""
    with open_board(reconcile_orphans=False, create=False) as board:
        emit(Consumers(board).reset(name, seq).to_json(), kind="record")


@consumers.command("forget")
@click.argument("name")
@global_options
def forget(name: str) -> None:
    """Delete a consumer: the events only it had not read may be purged again."""
    with open_board(reconcile_orphans=False, create=False) as board:
        Consumers(board).forget(name)
    emit({"consumer": name, "forgotten": True}, kind="record")
