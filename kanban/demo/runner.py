"""`kanban demo`: a throwaway board, a plan, a team of simulated agents, and (usually) the TUI on
top, so a newcomer sees claims, heartbeats, reviews, blocks and a crash recovery within seconds,
and real work: code tasks are built in git worktrees of a throwaway repository (`project.py`) and
judged by the verification gate, so the drawer's Files, Diff, Runs and History have something true
to show. When the plan is finished the demo says so, on the board or in the feed.

Without the TUI the demo prints a live feed of what happens, read from the board's events table
(the same cursor any watcher would follow), and stops when the plan is finished, when `duration`
runs out, or on Ctrl-C. Either way the agents are stopped cleanly (a working agent closes its run
and releases its task) and the throwaway folder is removed unless `keep`.
"""

import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from boardlib import transitions as t
from boardlib import validation as validate
from boardlib.board import Board
from boardlib.budgets import amount
from boardlib.config import WORKTREES_VARIABLE, BoardConfig
from boardlib.errors import BoardError
from boardlib.events import EventKind, read
from boardlib.inert import inert
from boardlib.paths import board_files
from boardlib.records import (
    BUDGET_USD,
    EXECUTION_CANCELLED,
    EXECUTION_FAILED,
    EXECUTION_SUCCEEDED,
    EXECUTION_TIMED_OUT,
    Event,
)
from boardlib.worktrees.gate import GATE_ACTOR

from . import project
from .agents import LEAD, LEAD_OPERATOR, Pace
from .fleet import Fleet, agent_roles
from .plan import build_plan

if TYPE_CHECKING:  # types only: see boardlib/payloads.py
    from boardlib.payloads import ExecutionCompleted, LeaseExpired, StatusChanged


DEFAULT_AGENTS = 4
DEFAULT_TASKS = 36
DEFAULT_SPEED: float = 1  # written whole: `demo --help` says 1, not 1.0
DEFAULT_POLL_MS = 500
MAX_AGENTS = 32
MAX_TASKS = 2000
MAX_SPEED = 100.0
BOARD_FILE = "board.db"
LOG_FILE = "demo.log"

EXIT_OK = 0
EXIT_AGENT_FAILED = 1  # an agent failed in a way that was not a simulated crash
EXIT_USAGE = 2


class _TeamFailed(Exception):
    """An agent process died for real while the team was starting."""


class _OutputClosed(Exception):
    """Whoever read the feed went away."""


class DemoUsageError(ValueError):
    """An argument the demo cannot run with; nothing was created."""


@dataclass
class Tally:
    """What happened, counted from the events table."""

    claims: int = 0
    recoveries: int = 0
    completed: int = 0
    approved: int = 0
    rejected: int = 0
    blocked: int = 0
    unblocked: int = 0
    cancelled: int = 0
    cost_usd: float = 0.0
    last_seq: int = 0
    recovered_by: list[tuple[str, str, str]] = field(default_factory=list)  # task, lost, taker
    _pending: dict[str, str] = field(default_factory=dict)  # task -> holder whose lease expired

    def add(self, event: Event) -> None:
        self.last_seq = event.seq
        task = event.task_id or ""
        if event.kind == EventKind.TASK_CLAIMED:
            self.claims += 1
            lost = self._pending.pop(task, None)
            if lost is not None:
                self.recovered_by.append((task, lost, event.actor or ""))
        elif event.kind == EventKind.LEASE_EXPIRED:
            expired: LeaseExpired = read(event.data)
            self.recoveries += 1
            self._pending[task] = str(expired.get("assignee"))
        elif event.kind == EventKind.EXECUTION_COMPLETED:
            completed: ExecutionCompleted = read(event.data)
            self.cost_usd += float(completed.get("cost_usd") or 0)
        elif event.kind == EventKind.STATUS_CHANGED:
            changed: StatusChanged = read(event.data)
            verb, target = changed.get("verb"), changed.get("to")
            if verb == "complete":
                self.completed += 1
            elif verb == "approve":
                self.approved += 1
            elif verb == "reject":
                self.rejected += 1
            elif verb == "block":
                self.blocked += 1
            elif verb == "unblock":
                self.unblocked += 1
            if target == t.CANCELLED:
                self.cancelled += 1


_RUN_OUTCOMES = {
    EXECUTION_SUCCEEDED: "run ok",
    EXECUTION_FAILED: "run failed",
    EXECUTION_CANCELLED: "run stop",
    EXECUTION_TIMED_OUT: "run lost",
}


def _feed_line(event: Event, titles: dict[str, str], started_ms: int) -> str | None:
    """The feed's line for `event`, timed from the start. Titles and reasons are agent text, so
    the line is made inert: nothing in it reaches the terminal as a control."""
    line = _describe(event, titles)
    if line is None:
        return None
    return f"{max(0, event.created_at - started_ms) / 1000:7.1f}s  {inert(line)}"


def _describe(event: Event, titles: dict[str, str]) -> str | None:
    """One feed line for the events worth watching (heartbeats and bookkeeping are skipped)."""
    task = event.task_id or ""
    title = titles.get(task, "")
    actor = event.actor or "?"
    if event.kind == EventKind.TASK_CLAIMED:
        return f"{actor:<12} claimed    {task:<8} {title}"
    if event.kind == EventKind.LEASE_EXPIRED:
        expired: LeaseExpired = read(event.data)
        holder = expired.get("assignee")
        return f"{'board':<12} recovered  {task:<8} lease of {holder} expired -> todo"
    if event.kind == EventKind.EXECUTION_COMPLETED:
        completed: ExecutionCompleted = read(event.data)
        status = str(completed.get("status"))
        cost = amount(float(completed.get("cost_usd") or 0), BUDGET_USD)
        return f"{actor:<12} {_RUN_OUTCOMES.get(status, status):<10} {task:<8} {cost}"
    if event.kind != EventKind.STATUS_CHANGED:
        return None
    data: StatusChanged = read(event.data)
    verb = str(data.get("verb", "move"))
    reason = f": {data['reason']}" if data.get("reason") else ""
    words = {
        "complete": "completed  {task:<8} -> in_review",
        "approve": "approved   {task:<8} -> done",
        "reject": "rejected   {task:<8} -> todo{reason}",
        "block": "blocked    {task:<8} {reason}",
        "unblock": "unblocked  {task:<8} -> todo{reason}",
        "release": "released   {task:<8} -> todo",
        "cancel_dependents": "cancelled  {task:<8} (its blocker {blocker} failed)",
    }
    if actor == GATE_ACTOR and verb == "move":
        judged = "verified" if data.get("to") == t.DONE else "gate fail"
        return f"{'gate':<12} {judged:<10} {task:<8} -> {data.get('to')}{reason}"
    if verb == "move" and data.get("to") == t.CANCELLED:
        verb = "cancel"
        words["cancel"] = "cancelled  {task:<8} {src} -> cancelled{reason}"
    line = words.get(verb, "moved      {task:<8} {src} -> {dst}{reason}")
    text = line.format(
        task=task, reason=reason.lstrip(":").strip() if verb == "block" else reason,
        blocker=data.get("blocker"), src=data.get("from"), dst=data.get("to"),
    )  # fmt: skip
    return f"{actor:<12} {text}"


def _events(board: Board, since: int) -> Iterator[Event]:
    while True:
        batch = board.events(since=since, limit=1000)
        yield from batch
        if len(batch) < 1000:
            return
        since = batch[-1].seq


def _validate(agents: int, tasks: int, speed: float, duration: float | None, poll_ms: int) -> None:
    def bad(message: str) -> DemoUsageError:
        return DemoUsageError(message)

    if isinstance(agents, bool) or not isinstance(agents, int) or not 1 <= agents <= MAX_AGENTS:
        raise bad(f"--agents must be an integer from 1 to {MAX_AGENTS}")
    if isinstance(tasks, bool) or not isinstance(tasks, int) or not 1 <= tasks <= MAX_TASKS:
        raise bad(f"--tasks must be an integer from 1 to {MAX_TASKS}")
    if not isinstance(speed, (int, float)) or not 0 < speed <= MAX_SPEED:
        raise bad(f"--speed must be a number above 0 and at most {MAX_SPEED:g}")
    if duration is not None:
        try:
            validate.positive_number(duration, "--duration", unit="seconds")
        except BoardError as refused:
            raise bad(refused.message) from None
    if isinstance(poll_ms, bool) or not isinstance(poll_ms, int) or poll_ms < 10:
        raise bad("--poll-ms must be an integer of at least 10")


def _prepare_folder(directory: Path | None) -> tuple[Path, bool]:
    """The demo's folder and whether the demo created it (only then may it delete the folder)."""
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="kanban-demo-")), True
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise DemoUsageError(f"--dir {directory} exists and is not a folder")
    if (directory / BOARD_FILE).exists():
        raise DemoUsageError(
            f"{directory / BOARD_FILE} already exists; the demo only writes a fresh board "
            "(pick another --dir, or point `kanban tui --db` at the existing one)"
        )
    for name in (project.REPO_DIR, project.WORKTREES_DIR):
        if (directory / name).exists():
            raise DemoUsageError(
                f"{directory / name} already exists; the demo makes its own repository and "
                "worktrees there (pick another --dir)"
            )
    created = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    return directory, created


def _clean_up(folder: Path, created: bool) -> None:
    """Remove what the demo made: the whole folder if it made it, else only its own files."""
    if created:
        for _ in range(10):  # a git process finishing meanwhile can add a file behind rmtree
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                return
            time.sleep(0.2)
        return
    for path in (*board_files(folder / BOARD_FILE), folder / LOG_FILE):
        path.unlink(missing_ok=True)
    for name in (project.REPO_DIR, project.WORKTREES_DIR):
        shutil.rmtree(folder / name, ignore_errors=True)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """While the demo shuts down, a second Ctrl-C must not leave agents or files behind."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def seed_board(board: Board, *, tasks: int, agents: int, rng: random.Random) -> dict[str, str]:
    """File the demo plan in one transaction, then make each epic wait on its children.
    Returns task id -> title."""
    plan = build_plan(tasks, agent_roles(agents), rng)
    created = board.create_plan(plan.items, actor=LEAD_OPERATOR)  # the operator's plan: uncapped
    for epic, child in plan.epic_links:
        board.link_dependency(created[epic].id, created[child].id, actor=LEAD)
    return {task.id: task.title for task in created.values()}


def finished_note(
    counts: dict[str, int],
    *,
    keep: bool,
    folder: Path,
    created: bool,
    on_board: bool = False,
    at_ms: int | None = None,
) -> str | None:
    """What the demo says once every task is done or cancelled (None while work remains), e.g.
    "demo ended 03:10: 35 done, 1 cancelled; q quits, the folder is removed" on the
    board. `at_ms`, when the figures were true: the board's header keeps the note while the
    operator goes on finishing tasks, so it says when, not only what (as "changed 03:10" is
    said: at 80 columns beside "30 need you", the first clause has 41 cells)."""
    if not any(counts.values()) or any(
        counts.get(status, 0) for status in t.STATUSES if status not in t.TERMINAL
    ):
        return None
    if keep:
        what = f"the folder is kept: {folder}"
    else:
        what = "the folder is removed" if created else "the demo files are removed"
    when = "" if at_ms is None else f" {time.strftime('%H:%M', time.localtime(at_ms / 1000))}"
    done, cancelled = counts.get(t.DONE, 0), counts.get(t.CANCELLED, 0)
    finished = f"demo ended{when}: {done} done, {cancelled} cancelled"
    return f"{finished}; q quits, {what}" if on_board else f"{finished}; {what}"


def board_announcer(
    now_ms: Callable[[], int], *, keep: bool, folder: Path, created: bool
) -> Callable[[dict[str, int]], str | None]:
    """What the TUI asks after each board update (`announce`): the finished note, once, stamped
    with the time its figures were true. They stay in the header while an operator creates and
    finishes more tasks (the columns say what is true now; "35 done" with 36 in done read as a
    wrong count), so the note dates them rather than following the board: work added after the
    demo is the operator's, not the demo's result."""

    def announce(counts: dict[str, int]) -> str | None:
        return finished_note(
            counts, keep=keep, folder=folder, created=created, on_board=True, at_ms=now_ms()
        )

    return announce


def _open_tui(
    db_path: Path,
    poll_ms: int,
    on_terminal_gone: Callable[[], None],
    announce: Callable[[dict[str, int]], str | None],
    user_keymap: dict[str, str] | None = None,
) -> Callable[[], None] | None:
    """The TUI's entry point, imported only now (the demo itself never needs textual)."""
    try:
        from tui.launch import run_tui
    except ImportError as error:
        print(
            f"kanban demo: the terminal UI is not available ({error}); running without it",
            file=sys.stderr,
        )
        return None

    def run() -> None:
        run_tui(
            db_path,
            poll_ms=poll_ms,
            on_terminal_gone=on_terminal_gone,
            announce=announce,
            demo=True,
            user_keymap=user_keymap,
        )

    return run


def run_demo(
    *,
    directory: Path | None = None,
    agents: int = DEFAULT_AGENTS,
    tasks: int = DEFAULT_TASKS,
    speed: float = DEFAULT_SPEED,
    keep: bool = False,
    open_tui: bool = True,
    duration: float | None = None,
    poll_ms: int = DEFAULT_POLL_MS,
    seed: int | None = None,
    out: TextIO | None = None,
    user_keymap: dict[str, str] | None = None,
) -> int:
    """Run the demo; returns the process exit code (0 ok, 1 an agent failed for real, 2 usage).
    `user_keymap`: the operator's keys for the TUI, as the CLI read them (None: the TUI reads).

    `seed` makes the plan and every agent's choices repeatable (timing still varies: the agents
    are real processes); the first crash, reject and block are scripted so every run shows them.
    """
    out = out or sys.stdout
    output_open = True

    def say(message: str) -> None:
        """Print a feed line. A closed pipe (`kanban demo --no-tui | head`) ends the demo, and
        from then on the feed is silent, so the clean-up still runs."""
        nonlocal output_open
        if not output_open:
            return
        try:
            print(message, file=out, flush=True)
        except (BrokenPipeError, ValueError):  # ValueError: the stream was closed
            output_open = False
            if out is sys.stdout:
                _silence_stdout()
            raise _OutputClosed from None

    def tell(message: str) -> None:
        with suppress(_OutputClosed):
            say(message)

    try:
        _validate(agents, tasks, speed, duration, poll_ms)
        folder, created = _prepare_folder(directory)
    except DemoUsageError as error:
        print(f"kanban demo: {error}", file=sys.stderr)
        return EXIT_USAGE

    seed = random.randrange(1_000_000) if seed is None else seed
    pace = Pace(float(speed))
    config = replace(
        BoardConfig.from_env(),
        lease_ms=pace.lease_ms,
        reconcile_interval_ms=max(100, pace.lease_ms // 2),
        event_ttl_seconds=None,
    )
    db_path = folder / BOARD_FILE
    log_path = folder / LOG_FILE
    worktrees_before = os.environ.get(WORKTREES_VARIABLE)
    notices: queue.SimpleQueue[str] = queue.SimpleQueue()
    board: Board | None = None
    fleet: Fleet | None = None
    started = time.monotonic()
    why = "interrupted"
    tally = Tally()
    try:
        repo = project.make_repository(folder)
        worktrees = folder / project.WORKTREES_DIR
        # The TUI's drawer (this process) and the agents find the demo's worktrees here.
        os.environ[WORKTREES_VARIABLE] = str(worktrees)
        board = Board(db_path, config=config)
        titles = seed_board(board, tasks=tasks, agents=agents, rng=random.Random(seed))
        board.start_stale_task_reconciler(config.reconcile_interval_ms)

        def notify(message: str) -> None:
            with log_path.open("a", encoding="utf-8") as log:
                log.write(f"{time.strftime('%H:%M:%S')} demo: {message}\n")
            notices.put(message)

        fleet = Fleet(
            db_path=db_path, log_path=log_path, config=config, pace=pace, seed=seed,
            agents=agents, notify=notify, repo_path=repo, worktrees_root=worktrees,
        )  # fmt: skip
        team = ", ".join(f"{m.name} ({m.role or 'any'})" for m in fleet.members if m.name != LEAD)
        crew = fleet

        def terminal_gone() -> None:
            """The operator's terminal vanished and the process is about to end without
            unwinding: stop the agents and remove what the demo made, now."""
            crew.stop(timeout_s=1.0)
            if not keep:
                _clean_up(folder, created)

        announce = board_announcer(board.now, keep=keep, folder=folder, created=created)
        tui = (
            _open_tui(db_path, poll_ms, terminal_gone, announce, user_keymap) if open_tui else None
        )
        say(f"kanban demo: board at {db_path}, repository {repo}")
        if tui is None:  # under the TUI these lines would show only once it closed, the demo over
            # from another terminal while it runs: the folder goes when it ends, unless --keep
            while_on = "" if keep else "   (while the demo runs; --keep keeps it after)"
            say(f"  watch it:   kanban tui --db {db_path}{while_on}")
            say(f"  or query:   kanban task list --db {db_path}")
        say(
            f"  {tasks} tasks, agents: {team}, lead; lease {pace.lease_ms / 1000:g} s; "
            f"speed {speed:g}; seed {seed}; log {log_path}"
        )
        booting = time.monotonic()
        if not fleet.start():
            if fleet.failures:
                raise _TeamFailed
            say("kanban demo: some agents were slow to start; going on without waiting")
        started, started_ms = time.monotonic(), board.now()
        say(f"  team up in {started - booting:.1f} s")
        deadline = None if duration is None else started + duration
        if tui is not None:
            timer = None
            if duration is not None:
                timer = threading.Timer(duration, fleet.stop)
                timer.daemon = True
                timer.start()
            try:
                tui()
            finally:
                if timer is not None:
                    timer.cancel()
            why = "closed"
        else:
            why = _follow(
                board, titles, tally, notices, say, started, started_ms, deadline, poll_ms
            )
            note = finished_note(board.status_counts(), keep=keep, folder=folder, created=created)
            if why == "finished" and note:
                say(note)
    except KeyboardInterrupt:
        why = "interrupted"
    except _TeamFailed:
        why = "failed"
    except _OutputClosed:
        why = "output closed"
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"kanban demo: could not make the demo repository: {error}", file=sys.stderr)
        why = "failed"
    except BoardError as error:
        print(f"kanban demo: {error.message}", file=sys.stderr)
        why = "failed"
    finally:
        with _sigint_ignored():
            elapsed = time.monotonic() - started
            try:
                if fleet is not None:
                    fleet.stop()
                stop_s = time.monotonic() - started - elapsed
                if board is not None:
                    for event in _events(board, tally.last_seq):
                        tally.add(event)
                    counts = board.status_counts()
                    board.close()
                    _report(tell, why, elapsed, stop_s, counts, tally, fleet)
                if fleet is not None and fleet.failures:
                    _show_failures(log_path)
            finally:
                if board is not None:
                    board.close()
                if worktrees_before is None:
                    os.environ.pop(WORKTREES_VARIABLE, None)
                else:
                    os.environ[WORKTREES_VARIABLE] = worktrees_before
                if keep:
                    tell(f"  kept: {folder}")
                else:
                    _clean_up(folder, created)
                    tell(
                        f"  removed {folder}"
                        if created
                        else f"  removed the demo files in {folder}"
                    )
    if why == "failed" or (fleet is not None and fleet.failures):
        return EXIT_AGENT_FAILED
    return EXIT_OK


def _follow(
    board: Board,
    titles: dict[str, str],
    tally: Tally,
    notices: "queue.SimpleQueue[str]",
    say: Callable[[str], None],
    started: float,
    started_ms: int,
    deadline: float | None,
    poll_ms: int,
) -> str:
    """Print the feed until the plan is finished or the deadline passes; return why it ended."""
    while True:
        for event in _events(board, tally.last_seq):
            tally.add(event)
            line = _feed_line(event, titles, started_ms)
            if line is not None:
                say(line)
        while not notices.empty():
            say(f"{time.monotonic() - started:7.1f}s  *** {notices.get()}")
        counts = board.status_counts()
        if all(counts[status] == 0 for status in t.STATUSES if status not in t.TERMINAL):
            return "finished"
        if deadline is not None and time.monotonic() >= deadline:
            return "duration"
        time.sleep(poll_ms / 1000)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush does not
    complain (the recipe of the `signal` module's documentation)."""
    with suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _show_failures(log_path: Path, lines: int = 40) -> None:
    """The end of the demo log on stderr: the folder may be about to be removed with it."""
    try:
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return
    print("kanban demo: an agent failed; the end of its log:", file=sys.stderr)
    for line in tail:
        print(f"  {line}", file=sys.stderr)


def _report(
    say: Callable[[str], None],
    why: str,
    elapsed: float,
    stop_s: float,
    counts: dict[str, int],
    tally: Tally,
    fleet: Fleet | None,
) -> None:
    columns = ", ".join(f"{counts[s]} {s}" for s in t.STATUSES if counts.get(s))
    say(f"kanban demo: {why} after {elapsed:.1f} s (team stopped in {stop_s:.1f} s): {columns}")
    crashes = fleet.crashes if fleet is not None else 0
    say(
        f"  {tally.claims} claims, {crashes} crash(es), {tally.recoveries} lease recovery(ies), "
        f"{tally.completed} completions, {tally.approved} approved, {tally.rejected} rejected, "
        f"{tally.blocked} blocked, {tally.unblocked} unblocked, {tally.cancelled} cancelled; "
        f"cost {amount(tally.cost_usd, BUDGET_USD)}"
    )
    for task, lost, taker in tally.recovered_by:
        say(f"  {task}: {lost}'s lease expired, {taker} took it over")
    if fleet is not None and fleet.failures:
        say(f"  {fleet.failures} agent(s) failed unexpectedly: see the demo log")
