"""`kanban watch` and `kanban events --follow --consumer`, through the real console script on both
backends: the event JSON on stdin, the durable cursor moved only after exit 0, a failing delivery
retried and held (in the inbox), never skipped, one owner per consumer, unread events kept."""

import json
import os
import re
import select
import subprocess
import time
from pathlib import Path

import pytest

from boardlib import Board, BoardConfig
from boardlib.watch import Consumers
from tests.cli.conftest import KANBAN, Kanban, clean_env


@pytest.fixture
def cli(board_path: Path) -> Kanban:
    return Kanban(board_path, test_clock=False)


def seed(cli: Kanban, count: int = 3) -> list[str]:
    with Board(cli.db) as board:
        ids = []
        for n in range(count):
            task = board.create_task(f"task {n}")
            board.claim(task.id, "alice")
            board.complete(task.id, "alice")
            ids.append(task.id)
        return ids


def status_seqs(cli: Kanban) -> list[int]:
    with Board(cli.db, reconcile_orphans=False) as board:
        return [e.seq for e in board.events(limit=100_000) if e.kind == "status_changed"]


@pytest.mark.slow
def test_watch_hands_each_matching_event_on_once_in_order(cli: Kanban, tmp_path: Path) -> None:
    seed(cli)
    log = tmp_path / "log"
    script = f'cat >> {log}; echo " $KANBAN_EVENT_SEQ $KANBAN_EVENT_KIND $KANBAN_TASK_ID" >> {log}'
    done = cli.ok(
        "watch", "--consumer", "hook", "--on", "status_changed", "--since", "0",
        "--timeout", "3", "--", "sh", "-c", script,
    )  # fmt: skip
    expected = status_seqs(cli)
    assert done["delivered"] == len(expected) == 3  # one move to review each
    lines = log.read_text().splitlines()
    events = [json.loads(line) for line in lines[0::2]]
    assert [e["seq"] for e in events] == expected
    assert all(e["kind"] == "status_changed" for e in events)
    assert lines[1].split() == [str(events[0]["seq"]), "status_changed", events[0]["taskId"]]
    # Resumed from the cursor: nothing again, then only what is new.
    again = cli.ok("watch", "--consumer", "hook", "--on", "status_changed", "--timeout", "1",
                   "--", "sh", "-c", script)  # fmt: skip
    assert again["delivered"] == 0
    seed(cli, 1)
    more = cli.ok("watch", "--consumer", "hook", "--on", "status_changed", "--timeout", "2",
                  "--", "sh", "-c", script)  # fmt: skip
    assert more["delivered"] == 1
    assert more["lastSeq"] >= status_seqs(cli)[-1]


def test_a_failing_delivery_is_held_in_the_inbox_never_skipped(cli: Kanban, tmp_path: Path) -> None:
    seed(cli, 1)
    gate, log = tmp_path / "open", tmp_path / "log"
    script = f"test -e {gate} || {{ echo webhook down >&2; exit 7; }}; cat >> {log}"
    watcher = cli.popen(
        "watch", "--consumer", "hook", "--on", "status_changed", "--since", "0",
        "--backoff-max", "0.2", "--", "sh", "-c", script,
        KANBAN_WATCH_HOLD_AFTER="3",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        held: list[dict[str, object]] = []
        while time.monotonic() < deadline and not held:
            time.sleep(0.2)
            items = cli.ok("inbox")["items"]
            held = [item for item in items if item["kind"] == "watch_held"]
        assert held, "the failing delivery never showed in the inbox"
        [item] = held
        first = status_seqs(cli)[0]
        assert (item["consumer"], item["eventSeq"], item["action"]) == ("hook", first, "retry")
        assert "exit status 7: webhook down" in str(item["why"])
        assert not log.exists()  # nothing was skipped past it
        gate.touch()  # the webhook is back: the same event is delivered, then the rest
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _seqs(log):
            time.sleep(0.1)
        assert _seqs(log) == status_seqs(cli)
        assert [i for i in cli.ok("inbox")["items"] if i["kind"] == "watch_held"] == []
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
    assert watcher.returncode == 0


def test_a_failing_delivery_says_so_on_stderr(cli: Kanban, tmp_path: Path) -> None:
    """`kanban watch -- crul ...` (a typo) ran for ever without a word: the command's stderr is kept
    on the consumer and the watcher's stdout is its last line, so a person saw nothing fail. Each
    failed try is one line on stderr (the event, how many in a row, the error drawn inert, the
    wait), and so is the success that ends them."""
    seed(cli, 1)
    first = status_seqs(cli)[0]
    tries = tmp_path / "tries"
    script = (
        f"echo x >> {tries}; test $(wc -l < {tries}) -ge 3 && exit 0; "
        "printf 'webhook down\\033[2J\\n' >&2; exit 7"
    )
    watcher = cli.popen(
        "watch", "--consumer", "hook", "--on", "status_changed", "--since", "0", "--limit", "1",
        "--backoff-max", "0.1", "--", "sh", "-c", script, KANBAN_WATCH_HOLD_AFTER="2",
    )  # fmt: skip
    out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, err
    assert json.loads(out)["delivered"] == 1
    what = f"kanban: watch hook: event {first} (status_changed)"
    assert err.splitlines() == [
        f"{what} failed (1 in a row): exit status 7: webhook down␛[2J; retrying in 0.1 s",
        f"{what} failed (2 in a row; held, in kanban inbox): exit status 7: webhook down␛[2J; "
        "retrying in 0.1 s",
        f"{what} delivered after failing",
    ]
    missing = cli.popen(
        "watch", "--consumer", "typo", "--since", "0", "--timeout", "1.5", "--", "crul", "-d", "@-"
    )
    _out, said = missing.communicate(timeout=30)
    assert missing.returncode == 0, said
    assert "failed (1 in a row): cannot run crul" in said, said


def _watch_until_done(cli: Kanban, *args: str) -> tuple[dict[str, object], float]:
    """A fresh `kanban watch` run to its end: its one JSON line and its wall time. One still
    running long after its --timeout is killed and fails the test (it ignored the deadline)."""
    started = time.monotonic()
    watcher = cli.popen("watch", *args)
    try:
        out, err = watcher.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        watcher.kill()
        watcher.communicate()
        pytest.fail(f"kanban watch {' '.join(args)} was still running 20 s after its --timeout")
    assert watcher.returncode == 0, err
    return json.loads(out), time.monotonic() - started


def test_timeout_stops_a_watch_whose_delivery_keeps_failing(cli: Kanban, tmp_path: Path) -> None:
    seed(cli, 1)
    first = status_seqs(cli)[0]
    with Board(cli.db, reconcile_orphans=False) as board:  # failing a while: backoff at 60 s
        consumers = Consumers(board)
        consumers.open("hook", since=0)
        for _ in range(7):
            consumers.failed("hook", first, "webhook down")
        consumers.release("hook")
    done, took = _watch_until_done(
        cli, "--consumer", "hook", "--on", "status_changed", "--timeout", "1",
        "--", "sh", "-c", "exit 3",
    )  # fmt: skip
    assert took < 15, f"stopped {took:.1f} s after starting: the 60 s backoff outlived --timeout"
    assert done == {"consumer": "hook", "delivered": 0, "lastSeq": 0}
    with Board(cli.db, reconcile_orphans=False) as board:
        held = Consumers(board).get("hook")
    assert held is not None and held.owner is None  # released at once
    assert (held.last_seq, held.failing_seq, held.failures) == (0, first, 8)  # still owed
    log = tmp_path / "log"
    again = cli.ok("watch", "--consumer", "hook", "--on", "status_changed", "--limit", "1",
                   "--", "sh", "-c", f"cat >> {log}")  # fmt: skip
    assert again["delivered"] == 1 and _seqs(log) == [first]  # the held event, not skipped


def test_timeout_kills_a_command_still_running_at_the_deadline(cli: Kanban, tmp_path: Path) -> None:
    seed(cli, 1)
    first = status_seqs(cli)[0]
    pid_file = tmp_path / "pid"
    done, took = _watch_until_done(
        cli, "--consumer", "hook", "--on", "status_changed", "--since", "0", "--timeout", "1",
        "--", "sh", "-c", f"echo $$ > {pid_file}; exec sleep 60",
    )  # fmt: skip
    assert took < 15, f"stopped {took:.1f} s after starting: it waited for the command"
    assert done == {"consumer": "hook", "delivered": 0, "lastSeq": 0}
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # killed and reaped, not left running
    with Board(cli.db, reconcile_orphans=False) as board:
        cut = Consumers(board).get("hook")
    assert cut is not None  # neither delivered nor failed: the deadline was the watch's
    assert (cut.last_seq, cut.failing_seq, cut.failures, cut.owner) == (0, None, 0, None)
    log = tmp_path / "log"
    again = cli.ok("watch", "--consumer", "hook", "--on", "status_changed", "--limit", "1",
                   "--", "sh", "-c", f"cat >> {log}")  # fmt: skip
    assert again["delivered"] == 1 and _seqs(log) == [first]


def _seqs(log: Path) -> list[int]:
    if not log.exists():
        return []
    return [json.loads(line)["seq"] for line in log.read_text().splitlines()]


def test_one_process_per_consumer(cli: Kanban) -> None:
    seed(cli, 1)
    first = cli.popen("watch", "--consumer", "one", "--", "sh", "-c", "cat > /dev/null")
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with Board(cli.db, reconcile_orphans=False) as board:
                found = Consumers(board).get("one")
            if found is not None and found.owner:
                break
            time.sleep(0.1)
        refused = cli.refused("watch", "--consumer", "one", "--", "true", reason="conflict")
        assert "being read by process" in refused["error"]
        cli.refused("consumers", "reset", "one", "--to", "0", reason="conflict")
    finally:
        first.terminate()
        first.wait(timeout=30)
    # A clean exit releases it at once.
    assert cli.ok("watch", "--consumer", "one", "--timeout", "0.5", "--", "true")["delivered"] == 0


def test_a_killed_owner_is_not_listed_as_the_owner(cli: Kanban) -> None:
    """After `kill -9` of a watcher, `kanban consumers list` named the dead process as the
    consumer's owner until its lease ran out (15 s), while a new watch took the consumer at once.
    The list judges an owner as taking it over does."""
    seed(cli, 1)
    watcher = cli.popen("watch", "--consumer", "one", "--", "sh", "-c", "cat > /dev/null")
    try:
        deadline = time.monotonic() + 20
        owners: list[object] = []
        while time.monotonic() < deadline and not any(owners):
            owners = [c["owner"] for c in cli.ok("consumers", "list")]
            time.sleep(0.1)
        assert any(owners), "the watcher never took its consumer"
    finally:
        watcher.kill()
        watcher.wait(timeout=30)
    [listed] = cli.ok("consumers", "list")
    assert (listed["name"], listed["owner"], listed["ownerUntil"]) == ("one", None, None)
    with Board(cli.db, reconcile_orphans=False) as board:
        stored = Consumers(board).get("one")  # the row itself is left as the kill left it
    assert stored is not None and stored.owner is not None


def test_a_running_owner_is_one_short_cell_at_80_columns(cli: Kanban) -> None:
    """`consumers list --format table` at 80 columns folded a watcher's owner token over three lines
    and dropped its lease; it reads `pid N here`, the lease beside it."""
    seed(cli, 1)
    watcher = cli.popen("watch", "--consumer", "webhook", "--", "sh", "-c", "cat > /dev/null")
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not cli.ok("consumers", "list")[0:1]:
            time.sleep(0.1)
        table = cli.run("consumers", "list", "--format", "table", env={"COLUMNS": "80"}).out
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
    lines = table.splitlines()
    assert all(len(line) <= 80 for line in lines), table
    header = next(line for line in lines if line.split()[:1] == ["name"])
    assert "owner" in header and "owner until" in header, table
    [row] = [line for line in lines if line.split()[:1] == ["webhook"]]
    assert f"pid {watcher.pid} here" in row and re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d *$", row), (
        table
    )


def first_line(fd: int, *, timeout_s: float) -> str:
    """The first line a pipe carries, read a byte at a time from its file descriptor: a buffered
    `readline` would keep what follows it, which `communicate` (reading the descriptor) then
    never sees."""
    line = b""
    deadline = time.monotonic() + timeout_s
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], f"no line in {timeout_s} s"
        byte = os.read(fd, 1)
        assert byte, f"the pipe closed after {line!r}"
        line += byte
    return line.decode()


@pytest.mark.parametrize(
    "args",
    [
        ("events", "--follow"),
        ("events", "--follow", "--consumer", "tail"),
        ("watch", "--consumer", "tail", "--", "sh", "-c", "cat > /dev/null"),
    ],
    ids=["events", "events-consumer", "watch"],
)
def test_sigterm_stops_a_follower_cleanly_with_exit_0(cli: Kanban, args: tuple[str, ...]) -> None:
    """`events --follow` died of SIGTERM (exit 143, a failure to systemd without SuccessExitStatus)
    while `watch` stopped cleanly (exit 0). Both stop as on Ctrl-C: exit 0, what was read printed
    whole, a consumer released at once (not left to its lease)."""
    seed(cli, 1)
    follower = cli.popen(*args, "--since", "0") if args[0] == "events" else cli.popen(*args)
    first = ""
    try:
        deadline = time.monotonic() + 20
        while "--consumer" in args and time.monotonic() < deadline:
            with Board(cli.db, reconcile_orphans=False) as board:
                found = Consumers(board).get("tail")
            if found is not None and found.owner:
                break
            time.sleep(0.1)
        if args[0] == "events":  # its first event printed: it follows, its signals handled
            assert follower.stdout is not None
            first = first_line(follower.stdout.fileno(), timeout_s=20)
        time.sleep(1)  # following: the first events read and printed
    finally:
        follower.terminate()
        out, err = follower.communicate(timeout=30)
    out = first + out
    assert follower.returncode == 0, err
    if args[0] == "events":
        lines = [json.loads(line) for line in out.splitlines()]
        assert [e["seq"] for e in lines] == list(range(1, len(lines) + 1)) and lines, out
    if "--consumer" in args:
        with Board(cli.db, reconcile_orphans=False) as board:
            stored = Consumers(board).get("tail")
        assert stored is not None and stored.owner is None  # released, not just known gone


def test_events_follow_consumer_resumes_where_it_stopped(cli: Kanban) -> None:
    seed(cli, 2)
    run = cli.run("events", "--follow", "--consumer", "tail", "--since", "0", "--limit", "3")
    assert run.code == 0, str(run)
    first = [json.loads(line)["seq"] for line in run.out.splitlines()]
    run = cli.run("events", "--follow", "--consumer", "tail", "--timeout", "1")
    rest = [json.loads(line)["seq"] for line in run.out.splitlines()]
    with Board(cli.db, reconcile_orphans=False) as board:
        every = [e.seq for e in board.events(limit=10_000)]
    assert first + rest == every and len(first) == 3
    assert cli.ok("events", "--consumer", "tail") == []  # not following: one read, nothing new


def test_unknown_kinds_and_names_are_refused(cli: Kanban) -> None:
    before = cli.snapshot()
    error = cli.refused("watch", "--consumer", "x", "--on", "status_changd,zzz", "--", "true",
                        reason="invalid_input")  # fmt: skip
    # A misspelt kind got no "did you mean"; nothing close, nothing guessed.
    assert "status_changd (did you mean status_changed?), zzz" in error["error"]
    assert error["suggestions"] == {"status_changd": "status_changed"}
    cli.refused("consumers", "retry", "nobody", reason="not_found")
    cli.refused("consumers", "forget", "nobody", reason="not_found")
    # a mistyped task filter made a consumer and then waited for ever
    cli.refused("watch", "--consumer", "y", "--task", "TASK-999", "--timeout", "5", "--", "true",
                reason="not_found")  # fmt: skip
    assert cli.snapshot() == before
    with cli.board() as board:
        assert Consumers(board).all() == []


def test_events_a_consumer_has_not_read_are_never_purged(board_path: Path) -> None:
    config = BoardConfig(event_ttl_seconds=0)
    with Board(board_path, config=config) as board:
        task = board.create_task("short-lived")
        consumers = Consumers(board)
        consumers.open("slow", since=0)
        consumers.release("slow")
        board.cancel(task.id)  # finished: its events are past their TTL at once
        board.create_task("the newest event stays anyway")
        time.sleep(0.01)
        assert board.purge_events() == 0  # "slow" read none of them
        mine = [e.seq for e in board.events()]
        consumers.open("slow")
        consumers.delivered("slow", mine[1])
        assert board.purge_events() == 2  # the two it has read
        assert [e.seq for e in board.events()] == mine[2:]
        consumers.forget("slow")
        assert board.purge_events() == len(mine) - 3  # all but the newest


def test_watch_refuses_a_missing_command(cli: Kanban) -> None:
    done = subprocess.run(
        [str(KANBAN), "watch", "--consumer", "x"],
        env=clean_env(KANBAN_DB=str(cli.db)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "COMMAND" in done.stderr
    assert os.environ.get("KANBAN_DB") is None or True


def test_a_delivery_is_spawned_through_setpriv_and_a_missing_command_still_says_so(
    cli: Kanban, tmp_path: Path
) -> None:
    """Deliveries still took a `preexec_fn` (Python forks, copying the watcher's page tables,
    instead of a vfork), as verify commands did before b67d340. They go through
    `processes.dying_with_parent` now; a command that cannot start still fails with the words a
    plain spawn's OSError gave, not setpriv's exit 127."""
    from boardlib.processes import _setpriv
    from boardlib.watch import spawn_delivery

    setpriv = _setpriv()
    process = spawn_delivery(["sh", "-c", "cat > /dev/null"], dict(os.environ))
    process.communicate(b"{}\n", timeout=30)
    assert process.returncode == 0
    if setpriv is not None:
        assert list(process.args)[:4] == [setpriv, "--pdeathsig", "KILL", "--"]
    seed(cli, 1)
    not_executable = tmp_path / "hook.sh"
    not_executable.write_text("#!/bin/sh\n")
    for command, words in (
        (str(tmp_path / "no-such-hook"), "No such file or directory"),
        ("no-such-hook-on-the-path", "No such file or directory"),
        (str(not_executable), "Permission denied"),
    ):
        ran = cli.run("watch", "--consumer", "c", "--since", "0", "--timeout", "1", "--", command)
        assert ran.code == 0 and f"cannot run {command}: {words}" in ran.err, str(ran)
        with Board(cli.db, reconcile_orphans=False) as board:
            failed = Consumers(board).get("c")
            Consumers(board).forget("c")
        assert failed is not None and failed.last_error == f"cannot run {command}: {words}"


@pytest.mark.slow
def test_the_docs_watch_example_runs(cli: Kanban, tmp_path: Path) -> None:
    from tests.cli.test_doc_examples import reader_env, run
    from tests.doc_examples import example

    seed(cli, 2)
    with Board(cli.db, reconcile_orphans=False) as board:
        board.add_comment("TASK-1", "looks good", author_type="user")
    env = reader_env(tmp_path, KANBAN_DB=str(cli.db))
    first = run(example("docs/watch.md#watch-log"), tmp_path, env)
    lines = [json.loads(line) for line in (tmp_path / "events.ndjson").read_text().splitlines()]
    assert [e["kind"] for e in lines] == ["status_changed", "status_changed", "comment_added"]
    assert "resuming" not in first.stderr  # a new consumer: placed at --since, nothing to say
    # The same line run again (a service restarted) was refused once the cursor had moved. It
    # resumes from the cursor, says so once, and hands on only what is new.
    with Board(cli.db, reconcile_orphans=False) as board:
        board.add_comment("TASK-2", "and this", author_type="user")
        cursor = Consumers(board).get("log")
    assert cursor is not None
    again = run(example("docs/watch.md#watch-log"), tmp_path, env)
    lines = [json.loads(line) for line in (tmp_path / "events.ndjson").read_text().splitlines()]
    assert [e["kind"] for e in lines[3:]] == ["comment_added"]
    assert lines[3]["taskId"] == "TASK-2"
    assert json.loads(again.stdout)["delivered"] == 1
    resumed = [line for line in again.stderr.splitlines() if "resuming" in line]
    assert resumed == [
        f"kanban: consumer log exists and has read up to {cursor.last_seq}: resuming from there "
        "(--since 0 only places a new consumer; `kanban consumers reset log --to SEQ` replays)"
    ]


def test_a_since_past_the_cursor_is_refused_and_changes_nothing(cli: Kanban) -> None:
    """A `--since` above an existing consumer's cursor would skip events it has not read: refused,
    the cursor where it was; one at or below it resumes (`events --consumer`, from cron, too)."""
    seed(cli, 2)
    first = cli.run("events", "--consumer", "cron", "--since", "0", "--limit", "2")
    assert first.code == 0 and "resuming" not in first.err, str(first)
    before = cli.snapshot()
    error = cli.refused("watch", "--consumer", "cron", "--since", "4", "--timeout", "1", "--",
                        "true", reason="invalid_input")  # fmt: skip
    assert (error["field"], error["lastSeq"]) == ("since", 2)
    assert "kanban consumers reset cron --to 4" in error["error"]
    cli.refused("events", "--consumer", "cron", "--since", "3", reason="invalid_input")
    assert cli.snapshot() == before
    with cli.board() as board:
        stored = Consumers(board).get("cron")
    assert stored is not None and (stored.last_seq, stored.owner) == (2, None)
    again = cli.run("events", "--consumer", "cron", "--since", "0", "--limit", "1")
    assert again.code == 0, str(again)
    assert [e["seq"] for e in json.loads(again.out)] == [3]  # on from the cursor, not from 0
    assert again.err.count("resuming from there") == 1
