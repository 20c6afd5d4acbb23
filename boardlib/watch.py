"""Durable event consumers and the delivery loop of `kanban watch`.

A consumer is a named cursor on the board (table `event_consumers`, both backends), shared by
`kanban watch --consumer NAME` and `kanban events --follow --consumer NAME`. The promise:
- at least once, in order per board: one event at a time in `seq` order; the cursor moves past an
  event only after its delivery succeeded (exit 0; the line written and flushed);
- a failing delivery is retried with a doubling backoff and, after `watch_hold_after` failures
  in a row, held: still retried, never skipped, shown in the inbox (`kanban consumers retry`);
- events a consumer has not read are never purged (`kanban consumers forget` lets them go);
- one process delivers for a consumer at a time, under a lease it renews; another is refused
  (`conflict`) while the owner lives.
Exactly, with the failure cases: docs/watch.md
"""

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from . import validation as validate
from .clock import moment
from .errors import BoardError, Reason, invalid_input, not_found, passes_by_itself
from .events import EventKind
from .processes import dying_with_parent, kill_group, process_gone, process_token, token_pid
from .records import Consumer, Event
from .store.base import StoreError

if TYPE_CHECKING:
    import subprocess

    from .board import Board
    from .store.base import Tx

T = TypeVar("T")

OWNER_LEASE_MS = 15_000  # an owner renews every third of it; another process may take over after
ERROR_MAX = 2000  # characters of a failed delivery's error kept on the consumer
PAGE = 500


def parse_kinds(kinds: Iterable[str]) -> frozenset[str]:
    """`--on KIND[,KIND]`: each a declared event kind (`invalid_input` naming the unknown ones,
    each with the declared kind it most likely meant, so a typo is one edit away)."""
    wanted = {part.strip() for text in kinds for part in text.split(",") if part.strip()}
    known = {str(kind) for kind in EventKind}
    unknown = sorted(wanted - known)
    if unknown:
        import difflib  # only on the error path

        guesses = {}
        for word in unknown:
            close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
            if close:
                guesses[word] = close[0]
        named = ", ".join(
            f"{word} (did you mean {guesses[word]}?)" if word in guesses else word
            for word in unknown
        )
        extra = {"suggestions": guesses} if guesses else {}
        raise invalid_input(
            f"unknown event kind(s): {named}", field="on", allowed=sorted(known), **extra
        )
    return frozenset(wanted)


def _owned(consumer: Consumer, now: int) -> bool:
    """Whether another process reads `consumer` now: its owner's lease runs and the owner is not
    known gone (a process of this machine that died, SIGKILL included, is known at once)."""
    return (
        consumer.owner is not None
        and (consumer.owner_until or 0) >= now
        and not process_gone(consumer.owner)
    )


def _busy(consumer: Consumer, now: int) -> BoardError:
    pid = token_pid(consumer.owner or "")
    who = f"process {pid}" if pid is not None else "another process"
    return BoardError(
        Reason.CONFLICT,
        f"consumer {consumer.name} is being read by {who} (its lease runs until "
        f"{moment(consumer.owner_until or now, now)}); stop it first, or use another --consumer",
        consumer=consumer.name,
    )


def past_the_log(field: str, seq: int, newest: int) -> BoardError:
    """The refusal of a cursor above the newest event (seqs only grow, so it came from another
    board, or from before this one was re-created or restored): reading on from it would skip
    the events up to it without a word. A consumer placed there and a follower started there
    (`events --follow --since`) are refused alike, and as HTTP refuses a stream resumed there
    (`Last-Event-ID`): `conflict`, since the seq is well formed but names no event of this
    board's log as it stands."""
    return BoardError(
        Reason.CONFLICT,
        f"{field} {seq} is past the newest event ({newest}): reading on from it would skip the "
        "events up to it; start from the newest, or from 0",
        field=field,
        newest=newest,
    )


def resumed_words(consumer: Consumer, since: int) -> str:
    """What a surface says when `--since` met a consumer that already exists (`Consumers.open`):
    it resumes, and how to go back on purpose."""
    return (
        f"consumer {consumer.name} exists and has read up to {consumer.last_seq}: resuming from "
        f"there (--since {since} only places a new consumer; `kanban consumers reset "
        f"{consumer.name} --to SEQ` replays)"
    )


# Told the words of `resumed_words` when `open` resumed an existing consumer given a `--since`.
OnResume = Callable[[str], None]


def _within_log(tx: "Tx", seq: int, field: str) -> int:
    """A cursor placed by hand is at most the newest event: one past it would skip events that
    have not happened yet."""
    newest = tx.last_event_seq()
    if seq > newest:
        raise past_the_log(field, seq, newest)
    return seq


class Consumers:
    """The consumers of one board. Each method is one write transaction (or one read)."""

    def __init__(self, board: "Board", *, owner: str | None = None) -> None:
        self.board = board
        self.owner = owner or process_token()

    def _write(self, work: "Callable[[Tx], T]") -> T:
        return self.board.store.write(work)

    @staticmethod
    def _load(tx: "Tx", name: str) -> Consumer:
        row = tx.consumer(name)
        if row is None:
            raise not_found("consumer", name)
        return Consumer.from_row(row)

    def get(self, name: str) -> Consumer | None:
        name = validate.name(name, "consumer")
        row = self.board.store.read(lambda tx: tx.consumer(name))
        return Consumer.from_row(row) if row is not None else None

    def all(self) -> list[Consumer]:
        """Every consumer, owned as `open` judges it: one whose owner died or whose lease ran out
        is listed with no owner (a SIGKILLed watcher was listed as its owner for 15 s, while a new
        watch took the consumer at once)."""
        now = self.board.now()
        found = Consumer.from_rows(self.board.store.read(lambda tx: tx.consumers()))
        return [
            consumer if consumer.owner is None or _owned(consumer, now)
            else replace(consumer, owner=None, owner_until=None)
            for consumer in found
        ]  # fmt: skip

    def open(
        self, name: str, *, since: int | None = None, on_resume: "OnResume | None" = None
    ) -> Consumer:
        """Take the consumer for this process, making it when new (its cursor at `since`, else at
        the newest event: a new consumer reads what happens from now on). An existing consumer
        resumes from its cursor: a `since` at or below it is where the consumer once started,
        so the same command line works on every restart (`on_resume` is told, once); a `since`
        above it would skip events it has not read and is refused (`consumers reset` skips, or
        replays, on purpose)."""
        name = validate.name(name, "consumer")
        if since is not None:
            since = validate.integer(since, "since", minimum=0)

        def work(tx: "Tx") -> tuple[Consumer, bool]:
            now = self.board.now()
            row = tx.consumer(name)
            resumed = False
            if row is None:
                start = tx.last_event_seq() if since is None else _within_log(tx, since, "since")
                consumer = Consumer.from_row(tx.insert_consumer(name, start, now))
            else:
                consumer = Consumer.from_row(row)
                if since is not None and since > consumer.last_seq:
                    raise invalid_input(
                        f"consumer {name} has read up to {consumer.last_seq}; --since {since} "
                        f"would skip events {consumer.last_seq + 1}..{since}, which it has not "
                        f"read (`kanban consumers reset {name} --to {since}` skips them on "
                        "purpose)",
                        field="since",
                        last_seq=consumer.last_seq,
                    )
                resumed = since is not None
            if consumer.owner != self.owner and _owned(consumer, now):
                raise _busy(consumer, now)
            return self._own(tx, name, now), resumed

        opened, resumed = self._write(work)
        if resumed and on_resume is not None and since is not None:
            on_resume(resumed_words(opened, since))  # after the commit: told once, not per retry
        return opened

    def _own(self, tx: "Tx", name: str, now: int, **changes: object) -> Consumer:
        row = tx.update_consumer(
            name,
            {
                **changes,
                "owner": self.owner,
                "owner_until": now + OWNER_LEASE_MS,
                "updated_at": now,
            },
        )
        assert row is not None
        return Consumer.from_row(row)

    def _owned(self, tx: "Tx", name: str, now: int) -> Consumer:
        consumer = self._load(tx, name)
        if consumer.owner != self.owner:
            raise BoardError(
                Reason.CONFLICT,
                f"consumer {name} was taken over by another process: this one stops",
                consumer=name,
            )
        return consumer

    def renew(self, name: str) -> Consumer:
        def work(tx: "Tx") -> Consumer:
            now = self.board.now()
            self._owned(tx, name, now)
            return self._own(tx, name, now)

        return self._write(work)

    def delivered(self, name: str, seq: int) -> Consumer:
        """Every event up to `seq` is delivered: the cursor moves there (never back), and a
        failure or hold on the way is over."""

        def work(tx: "Tx") -> Consumer:
            now = self.board.now()
            consumer = self._owned(tx, name, now)
            return self._own(
                tx, name, now, last_seq=max(consumer.last_seq, seq), failing_seq=None,
                failures=0, last_error=None, held_since=None,
            )  # fmt: skip

        return self._write(work)

    def failed(self, name: str, seq: int, error: str) -> Consumer:
        """One more failed delivery of `seq`; held once the failures in a row reach the board's
        `watch_hold_after`."""
        text = error[:ERROR_MAX]
        hold_after = self.board.config.watch_hold_after

        def work(tx: "Tx") -> Consumer:
            now = self.board.now()
            consumer = self._owned(tx, name, now)
            same = consumer.failing_seq == seq
            failures = consumer.failures + 1 if same else 1
            held_since = consumer.held_since if same else None
            if held_since is None and failures >= hold_after:
                held_since = now
            return self._own(
                tx, name, now, failing_seq=seq, failures=failures, last_error=text,
                held_since=held_since,
            )  # fmt: skip

        return self._write(work)

    def release(self, name: str) -> None:
        """This process stops delivering (a clean exit): another may take the consumer at once."""

        def work(tx: "Tx") -> None:
            row = tx.consumer(name)
            if row is not None and row["owner"] == self.owner:
                tx.update_consumer(
                    name, {"owner": None, "owner_until": None, "updated_at": self.board.now()}
                )

        self._write(work)

    # -- a person's verbs -----------------------------------------------------------------------

    def retry(self, name: str) -> Consumer:
        """Ask the owner to try the held (or failing) delivery again now; the hold ends, the
        failure count starts over. The event is still delivered, never skipped."""
        name = validate.name(name, "consumer")

        def work(tx: "Tx") -> Consumer:
            consumer = self._load(tx, name)
            if consumer.failing_seq is None:
                raise BoardError(
                    Reason.INVALID_STATE,
                    f"consumer {name} has no failing delivery to retry",
                    consumer=name,
                )
            row = tx.update_consumer(
                name, {"failures": 0, "held_since": None, "updated_at": self.board.now()}
            )
            assert row is not None
            return Consumer.from_row(row)

        return self._write(work)

    def reset(self, name: str, seq: int) -> Consumer:
        """Move a consumer's cursor on purpose (to skip a held event: its seq; to replay: lower).
        Refused while a process owns it, so the cursor never moves under a delivery."""
        name = validate.name(name, "consumer")
        seq = validate.integer(seq, "seq", minimum=0)

        def work(tx: "Tx") -> Consumer:
            now = self.board.now()
            consumer = self._load(tx, name)
            _within_log(tx, seq, "seq")
            if _owned(consumer, now):
                raise _busy(consumer, now)
            row = tx.update_consumer(
                name,
                {
                    "last_seq": seq, "failing_seq": None, "failures": 0, "last_error": None,
                    "held_since": None, "owner": None, "owner_until": None, "updated_at": now,
                },
            )  # fmt: skip
            assert row is not None
            return Consumer.from_row(row)

        return self._write(work)

    def forget(self, name: str) -> bool:
        """Delete a consumer: the events only it had not read may be purged again."""
        name = validate.name(name, "consumer")

        def work(tx: "Tx") -> bool:
            if not tx.delete_consumer(name):
                raise not_found("consumer", name)
            return True

        return self._write(work)


# -- delivery -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """One delivery attempt: succeeded, or failed with an error to keep on the consumer, or
    `interrupted` by the watch's deadline: neither, so the event is handed on again next run."""

    ok: bool
    error: str = ""
    interrupted: bool = False


Deliver = Callable[[Event], Outcome]


@dataclass(slots=True)
class Backoff:
    """The wait before retry `n` (1-based): `first_s` doubling up to `longest_s`."""

    first_s: float = 1.0
    longest_s: float = 60.0

    def delay(self, failures: int) -> float:
        return float(min(self.longest_s, self.first_s * 2 ** max(failures - 1, 0)))


# How a follower waits out a database that went away (a server restart, a failover): first
# half a second, then longer, never more than five between tries.
OUTAGE_BACKOFF = Backoff(first_s=0.5, longest_s=5.0)
# Told when an outage starts (the refusal) and when it ends (None): a follower says so once.
OnOutage = Callable[[BoardError | None], None]
# Told of each failed delivery (the event, the consumer as the failure left it, the wait before
# the next try) and of the success that ends a run of them (None, 0): a watch whose command
# fails is not silent (a mistyped command idled without a word).
OnFailure = Callable[[Event, Consumer | None, float], None]


def outage_tolerant(
    step: Callable[[], None],
    stopped: threading.Event,
    on_outage: OnOutage | None = None,
) -> Callable[[], None]:
    """`step` run again and again by a follower's loop, waiting out a database that is busy or
    unreachable (`errors.passes_by_itself`) instead of stopping on it: a watch forwarding to a
    webhook must not go quiet after a failover until someone restarts it. Anything else
    raises."""
    outages = 0

    def run() -> None:
        nonlocal outages
        try:
            step()
        except (BoardError, StoreError) as failure:
            error = failure.refusal() if isinstance(failure, StoreError) else failure
            if not passes_by_itself(error):
                raise
            outages += 1
            if outages == 1 and on_outage is not None:
                on_outage(error)
            stopped.wait(OUTAGE_BACKOFF.delay(outages))
            return
        if outages:
            outages = 0
            if on_outage is not None:
                on_outage(None)

    return run


class Delivery:
    """Hands one consumer's events to `deliver`, one at a time, in seq order, moving the cursor
    after each success. `stop()` (from another thread or a signal handler) ends it at the next
    step; an event being delivered then is delivered again by the next run. `interrupt` (e.g.
    `CommandDelivery.interrupt`) is called at `run`'s deadline to cut a delivery under way short,
    so a timed-out watch stops on time even while its command runs."""

    def __init__(
        self,
        board: "Board",
        name: str,
        deliver: Deliver,
        *,
        kinds: frozenset[str] = frozenset(),
        task_id: str | None = None,
        poll_s: float = 0.2,
        backoff: Backoff | None = None,
        since: int | None = None,
        consumers: Consumers | None = None,
        interrupt: Callable[[], None] | None = None,
        on_outage: OnOutage | None = None,
        on_failure: OnFailure | None = None,
        on_resume: OnResume | None = None,
    ) -> None:
        self.board = board
        self.on_resume = on_resume
        self.on_outage = on_outage
        self.on_failure = on_failure
        self.name = validate.name(name, "consumer")
        self.deliver = deliver
        self.kinds = kinds
        self.task_id = validate.optional_identifier(task_id, "taskId")  # a filter: checked once
        self.poll_s = poll_s
        self.backoff = backoff or Backoff()
        self.consumers = consumers or Consumers(board)
        self._since = since
        self._interrupt = interrupt
        self._stopped = threading.Event()
        self._renewer: threading.Thread | None = None
        self.delivered = 0

    def stop(self) -> None:
        self._stopped.set()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def _renew_loop(self) -> None:
        while not self._stopped.wait(OWNER_LEASE_MS / 3000):
            try:
                self.consumers.renew(self.name)
            except BoardError as error:
                if error.reason == Reason.CONFLICT:  # taken over: this process must stop
                    self._stopped.set()
            except Exception:  # a busy board: the next renewal tries again
                continue

    def _out_of_time(self) -> None:
        """The deadline ends every wait at once (a retry's backoff too, however long it has
        grown) and cuts a running delivery short: `--timeout` is kept, not overrun."""
        self._stopped.set()
        if self._interrupt is not None:
            self._interrupt()

    def _matches(self, event: Event) -> bool:
        if self.task_id is not None and event.task_id != self.task_id:
            return False
        return not self.kinds or event.kind in self.kinds

    def run(self, *, limit: int | None = None, timeout_s: float | None = None) -> int:
        """Deliver until stopped (or `limit` deliveries, or `timeout_s`); returns how many. A
        task filter naming no task is `not_found` before the consumer is made: a mistyped id
        would otherwise wait for ever, and leave a cursor behind holding events back."""
        if self.task_id is not None:
            self.board.get_task(self.task_id)
        consumer = self.consumers.open(self.name, since=self._since, on_resume=self.on_resume)
        self._renewer = threading.Thread(target=self._renew_loop, name="kanban-watch", daemon=True)
        self._renewer.start()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        alarm = None if timeout_s is None else threading.Timer(timeout_s, self._out_of_time)
        if alarm is not None:
            alarm.daemon = True
            alarm.start()
        cursor = consumer.last_seq
        seen_token: int | None = None

        def step() -> None:
            nonlocal cursor, seen_token
            token = self.board.change_token()  # before the read: no commit slips between
            if token == seen_token:
                self._stopped.wait(self.poll_s)
                return
            batch = self.board.events(since=cursor, limit=PAGE)
            skipped_to: int | None = None
            for event in batch:
                if self.stopped:
                    break
                if not self._matches(event):
                    skipped_to = event.seq
                    continue
                if not self._deliver_one(event):
                    break  # stopped while retrying: the event stays undelivered
                cursor, skipped_to = event.seq, None
                if limit is not None and self.delivered >= limit:
                    self.stop()
                    break
            if skipped_to is not None and not self.stopped:
                self.consumers.delivered(self.name, skipped_to)  # nothing to hand on there
                cursor = skipped_to
            if len(batch) < PAGE:
                seen_token = token

        # An outage mid-batch leaves the cursor at the last delivery recorded: at least once.
        tolerant = outage_tolerant(step, self._stopped, self.on_outage)
        try:
            while not self.stopped:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                tolerant()
        finally:
            if alarm is not None:
                alarm.cancel()
            self._stopped.set()
            try:
                self.consumers.release(self.name)
            except StoreError:  # the database is away: the owner's lease lapses
                pass
            except BoardError as error:
                if not passes_by_itself(error):
                    raise
        return self.delivered

    def _deliver_one(self, event: Event) -> bool:
        """Deliver `event` until it succeeds (True) or the loop is stopped (False)."""
        failed_here = False
        while not self.stopped:
            outcome = self.deliver(event)
            if outcome.ok:
                self.consumers.delivered(self.name, event.seq)
                self.delivered += 1
                if failed_here and self.on_failure is not None:
                    self.on_failure(event, None, 0.0)
                return True
            if outcome.interrupted:  # the watch's fault, not the command's: no failure counted
                return False
            failed = self.consumers.failed(self.name, event.seq, outcome.error)
            failed_here = True
            if self.on_failure is not None:
                self.on_failure(event, failed, self.backoff.delay(failed.failures))
            self._wait_to_retry(failed.failures)
        return False

    def _wait_to_retry(self, failures: int) -> None:
        """Back off; a person's `retry` (the failure count starts over) cuts the wait short."""
        end = time.monotonic() + self.backoff.delay(failures)
        while not self.stopped:
            left = end - time.monotonic()
            if left <= 0:
                return
            self._stopped.wait(min(left, 0.5))
            current = self.consumers.get(self.name)
            if current is not None and current.failures < failures:
                return


def read_once(
    board: "Board",
    name: str,
    write: Callable[[list[Event]], None],
    *,
    task_id: str | None = None,
    since: int | None = None,
    limit: int = 1000,
    on_resume: OnResume | None = None,
) -> Consumer:
    """One read as consumer `name`, not following (`kanban events --consumer NAME`): the events
    after its cursor (up to `limit`) handed to `write` at once, then the cursor moved past them.
    Taken and released like a delivery, so refused (`conflict`) while a watcher owns it."""
    limit = validate.integer(limit, "limit", minimum=1)
    task_id = validate.optional_identifier(task_id, "taskId")  # before the cursor is taken
    consumers = Consumers(board)
    consumer = consumers.open(name, since=since, on_resume=on_resume)
    try:
        batch = board.events(since=consumer.last_seq, task_id=task_id, limit=limit)
        write(batch)
        if batch:
            consumer = consumers.delivered(consumer.name, batch[-1].seq)
    finally:
        consumers.release(consumer.name)
    return consumer


# -- a command per event --------------------------------------------------------------------------


def unrunnable(argv: list[str], path: str | None) -> str | None:
    """Why `argv` cannot start (the words of the OSError a plain spawn raises), or None. Asked
    before the spawn because `dying_with_parent` starts it through setpriv, which reports a
    missing command as its own exit 127, not as an OSError."""
    import errno
    import os
    import shutil

    if shutil.which(argv[0], path=path) is not None:
        return None
    there = os.sep in argv[0] and os.path.exists(argv[0])  # a folder, or not executable
    return f"cannot run {argv[0]}: {os.strerror(errno.EACCES if there else errno.ENOENT)}"


def spawn_delivery(argv: list[str], env: dict[str, str]) -> "subprocess.Popen[bytes]":
    """Start a delivery's command in its own session, dying with this process
    (`dying_with_parent`: through setpriv where there is one, so the spawn is a vfork, not the
    fork a `preexec_fn` forces: about 14 ms against 1 from a process of 400 MB)."""
    import subprocess

    command, preexec = dying_with_parent(argv)
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=_stderr_or_null(),  # our stdout stays free for our own words
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
        preexec_fn=preexec,  # None through setpriv; else a killed watcher's delivery dies with it
    )


def _stderr_or_null() -> int:
    import subprocess
    import sys

    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL


class CommandDelivery:
    """Run `argv` once per event (a `Deliver`), the event's JSON (one line) on its stdin, and its
    seq, kind and task id in `KANBAN_EVENT_SEQ`, `KANBAN_EVENT_KIND`, `KANBAN_TASK_ID`. Exit 0 is
    a delivery; any other exit, a signal, a timeout (the command's process group is killed) or a
    command that cannot start is a failure, its words kept on the consumer.

    `interrupt()` (the watch's deadline, from another thread) kills the run under way the same
    way and starts no other: that run is `interrupted`, neither delivered nor failed."""

    def __init__(self, argv: list[str], *, timeout_s: float | None = 600.0) -> None:
        if not argv:
            raise invalid_input("watch needs a command after --", field="command")
        self.argv = argv
        self.timeout_s = timeout_s
        self._lock = threading.Lock()  # `interrupt` never misses a run being started
        self._running: subprocess.Popen[bytes] | None = None
        self._interrupted = False

    def interrupt(self) -> None:
        with self._lock:
            self._interrupted = True
            if self._running is not None:
                kill_group(self._running)

    def _cut_short(self) -> Outcome:
        return Outcome(False, "stopped at the watch's --timeout (killed)", interrupted=True)

    def __call__(self, event: Event) -> Outcome:
        import json
        import os
        import subprocess

        line = json.dumps(event.to_json(), ensure_ascii=True, separators=(",", ":")) + "\n"
        env = {
            **os.environ,
            "KANBAN_EVENT_SEQ": str(event.seq),
            "KANBAN_EVENT_KIND": event.kind,
            "KANBAN_TASK_ID": event.task_id or "",
        }
        with self._lock:
            if self._interrupted:
                return self._cut_short()
            missing = unrunnable(self.argv, env.get("PATH", os.defpath))
            if missing is not None:
                return Outcome(False, missing)
            try:
                process = spawn_delivery(self.argv, env)
            except OSError as error:
                return Outcome(False, f"cannot run {self.argv[0]}: {error.strerror or error}")
            self._running = process
        try:
            try:
                _out, err = process.communicate(line.encode(), timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                kill_group(process)
                process.communicate()
                if self._interrupted:
                    return self._cut_short()
                return Outcome(False, f"timed out after {self.timeout_s:g} s (killed)")
        finally:
            with self._lock:
                self._running = None
        if process.returncode == 0:
            return Outcome(True)  # it finished before the deadline's kill: delivered
        if self._interrupted:
            return self._cut_short()
        tail = err.decode(errors="replace").strip()[-ERROR_MAX // 2 :]
        code = process.returncode
        status = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        return Outcome(False, f"{status}: {tail}" if tail else status)


def command_delivery(argv: list[str], *, timeout_s: float | None = 600.0) -> CommandDelivery:
    """A `CommandDelivery` of `argv` (refused when empty: `invalid_input`)."""
    return CommandDelivery(argv, timeout_s=timeout_s)
