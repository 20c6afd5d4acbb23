"""`kanban events` (listing and a bounded `--follow`) and `kanban db check|path`."""

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import pytest

from boardlib.watch import Consumers
from tests.backends import is_postgres, raw_execute
from tests.cli.conftest import Kanban, unchanged
from tests.conftest import new_postgres_board

if TYPE_CHECKING:
    from tests.pg_cluster import Cluster


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def test_events_list_from_a_cursor_and_per_task(kanban: Kanban) -> None:
    with kanban.board() as board:
        first = board.create_task("one")
        second = board.create_task("two")
        board.claim(first.id, "alice")
    events = kanban.ok("events")
    assert [(e["kind"], e["taskId"]) for e in events] == [
        ("task_created", first.id), ("task_created", second.id), ("task_claimed", first.id),
    ]  # fmt: skip
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    assert kanban.ok("events", "--since", str(events[0]["seq"]), "--limit", "1") == events[1:2]
    assert [e["kind"] for e in kanban.ok("events", "--task", first.id)] == [
        "task_created", "task_claimed",
    ]  # fmt: skip
    # A mistyped id is not_found, in every mode, rather than an empty list (found by hand).
    for mode in ((), ("--follow", "--timeout", "5"), ("--consumer", "c")):
        kanban.refused("events", "--task", "TASK-999", *mode, reason="not_found")


def test_a_since_past_the_newest_event_is_refused_where_it_would_skip_events(
    kanban: Kanban,
) -> None:
    """`events --follow --since N` above the newest seq (a cursor from another board, or from before
    this one was restored) waited without a word, then skipped every event up to N, while
    `--consumer` refused the same N. Both refuse it alike, before any output and without waiting; a
    one-off read answers none yet (as the HTTP page does), and a follower exactly at the newest seq
    follows. The refusal is `conflict`, as HTTP refuses a stream resumed there with `Last-Event-ID`
    (it was `invalid_input`: the two surfaces told one condition apart)."""
    with kanban.board() as board:
        board.create_task("the only event")
        newest = board.last_event_seq()
    ahead = str(newest + 40)
    started = time.monotonic()
    for mode in (("--follow", "--timeout", "30"), ("--consumer", "c"), ("--consumer", "c", "-f")):
        error = kanban.refused("events", "--since", ahead, *mode, reason="conflict")
        assert (error["field"], error["newest"]) == ("since", newest), error
        assert f"since {ahead} is past the newest event ({newest})" in error["error"]
    assert time.monotonic() - started < 20  # refused at once, not after the timeout
    assert kanban.ok("events", "--since", ahead) == []
    at_newest = kanban.run("events", "--follow", "--since", str(newest), "--timeout", "0.3")
    assert (at_newest.code, at_newest.out, at_newest.err) == (0, "", ""), str(at_newest)


def test_follow_prints_new_events_as_lines_and_stops_at_its_limit(kanban: Kanban) -> None:
    with kanban.board() as board:
        board.create_task("old news")
        cursor = board.last_event_seq()
    follower = kanban.popen("events", "--follow", "--since", str(cursor), "--limit", "3",
                            "--poll-ms", "50", "--timeout", "60")  # fmt: skip
    try:
        kanban.ok("task", "dispatch", "--title", "fresh")
        kanban.ok("task", "claim", "TASK-2", "--agent", "alice")
        kanban.ok("task", "log-progress", "TASK-2", "--agent", "alice", "--note", "going")
        kanban.ok("task", "dispatch", "--title", "beyond the limit")
        out, err = follower.communicate(timeout=60)
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) == 3
    events = [json.loads(line) for line in lines]
    assert [e["kind"] for e in events] == ["task_created", "task_claimed", "progress_logged"]
    assert all(e["taskId"] == "TASK-2" for e in events)
    assert events[0]["seq"] == cursor + 1


def test_follow_starts_from_now_and_honours_its_timeout(kanban: Kanban) -> None:
    with kanban.board() as board:
        board.create_task("history, not news")
    started = time.monotonic()
    result = kanban.run("events", "--follow", "--timeout", "1", "--poll-ms", "50")
    assert result.code == 0, str(result)
    assert result.out == ""  # the old event is not replayed
    assert time.monotonic() - started >= 1


def test_follow_in_table_format_prints_one_readable_line_per_event(kanban: Kanban) -> None:
    with kanban.board() as board:
        task = board.create_task("shown")
    result = kanban.run(
        "events", "--follow", "--since", "0", "--limit", "1", "--format", "table", "--timeout", "30"
    )
    assert result.code == 0, str(result)
    assert result.out.split()[0] == "1"
    assert "task_created" in result.out and task.id in result.out


@pytest.mark.slow
def test_a_consumer_reads_on_from_its_cursor_and_holds_a_prune_back(
    kanban: Kanban, tmp_path: Path
) -> None:
    """`kanban events --consumer NAME` (no --follow) prints what NAME has not read and moves its
    cursor past it: the cursors `kanban watch` keeps. `kanban prune` keeps every event a consumer
    has not read; `kanban consumers list` shows the cursors and `consumers forget` drops one. A
    bad name or a `--since` that would skip events a consumer has not read is refused before any
    output."""
    with kanban.board() as board:
        for title in ("one", "two"):
            task = board.create_task(title)
            board.claim(task.id, "alice")
            board.move(task.id, "done")
    first = kanban.ok("events", "--consumer", "indexer", "--since", "0", "--limit", "2")
    assert [e["seq"] for e in first] == [1, 2]
    rest = kanban.ok("events", "--consumer", "indexer")
    assert rest[0]["seq"] == 3 and kanban.ok("events", "--consumer", "indexer") == []
    newest = rest[-1]["seq"]
    (indexer,) = kanban.ok("consumers", "list")
    assert (indexer["name"], indexer["lastSeq"], indexer["owner"]) == ("indexer", newest, None)
    # A new consumer starts at now, following or not.
    assert kanban.ok("events", "--consumer", "fresh") == []
    follow = kanban.run("events", "--consumer", "tail", "-f", "--timeout", "0.5", "--poll-ms", "50")
    assert (follow.code, follow.out) == (0, ""), str(follow)
    assert len(kanban.ok("events", "--consumer", "late", "--since", "1")) == newest - 1
    cursors = {c["name"]: c["lastSeq"] for c in kanban.ok("consumers", "list")}
    assert cursors == {"indexer": newest, "fresh": newest, "tail": newest, "late": newest}
    # The same line again (a restart) resumes from the cursor; a --since past it is refused.
    resumed = kanban.noticed(
        "events", "--consumer", "late", "--since", "1",
        notice=f"consumer late exists and has read up to {newest}: resuming from there (--since "
        "1 only places a new consumer; `kanban consumers reset late --to SEQ` replays)",
    )  # fmt: skip
    assert resumed == []
    with kanban.board() as board:
        board.create_task("three")
    kanban.refused("events", "--consumer", "late", "--since", str(newest + 1),
                   reason="invalid_input")  # fmt: skip
    kanban.refused("events", "--consumer", "", reason="invalid_input")
    kanban.refused("consumers", "forget", "nobody", reason="not_found")
    for name in ("indexer", "fresh", "tail", "late"):
        kanban.ok("consumers", "forget", name)
    # The consumer "slow" has read only the first event: a prune 90 days on takes just that one.
    with kanban.board() as board:
        consumers = Consumers(board)
        consumers.open("slow", since=1)
        consumers.release("slow")
    kanban.advance(minutes=120 * 24 * 60)
    with kanban.board() as board:
        board.create_task("today")
    report = kanban.ok("prune", "--events-before", "90d", "--archive", str(tmp_path / "a.jsonl"))
    assert (report["throughSeq"], report["pruned"]) == (1, 1)
    assert kanban.ok("consumers", "forget", "slow") == {"consumer": "slow", "forgotten": True}
    report = kanban.ok("prune", "--events-before", "90d", "--archive", str(tmp_path / "b.jsonl"))
    assert report["pruned"] > 1
    assert kanban.ok("consumers", "list") == []


def test_a_prune_names_the_consumers_that_held_events_back(kanban: Kanban, tmp_path: Path) -> None:
    """With a consumer stopped at seq 100, a prune archived 100 events and said only `throughSeq:
    100`. Now it names the consumers whose cursors kept old events on the board, and how many stayed
    because of them."""
    with kanban.board() as board:
        for title in ("one", "two", "three", "four"):
            task = board.create_task(title)
            board.claim(task.id, "alice")
            board.move(task.id, "done")
        consumers = Consumers(board)
        for name, cursor in (("slow", 3), ("slower", 2), ("done-reading", board.last_event_seq())):
            consumers.open(name, since=cursor)
            consumers.release(name)
        old = board.last_event_seq()
    kanban.advance(minutes=120 * 24 * 60)
    with kanban.board() as board:
        board.create_task("today")
    report = kanban.ok("prune", "--events-before", "90d", "--archive", str(tmp_path / "a.jsonl"))
    assert (report["throughSeq"], report["pruned"], report["heldBack"]) == (2, 2, old - 2)
    assert report["heldBackBy"] == [
        {"consumer": "slower", "lastSeq": 2}, {"consumer": "slow", "lastSeq": 3},
    ]  # fmt: skip
    assert f"{old - 2} older event(s) stay until consumer(s) slower" in report["message"]
    # Held back and nothing to take: said too, with no archive.
    with kanban.board() as board:
        Consumers(board).forget("done-reading")
    report = kanban.ok("prune", "--events-before", "90d", "--archive", str(tmp_path / "b.jsonl"))
    assert (report["archive"], report["heldBack"]) == (None, old - 2)
    for name in ("slow", "slower"):
        kanban.ok("consumers", "forget", name)
    report = kanban.ok("prune", "--events-before", "90d", "--archive", str(tmp_path / "c.jsonl"))
    assert (report["pruned"], report["heldBack"], report["heldBackBy"]) == (old - 2, 0, [])
    assert "stay until" not in report["message"]


def test_a_prune_table_shows_its_cut_as_a_time(kanban: Kanban, tmp_path: Path) -> None:
    """`kanban prune --format table` drew the cut as `beforeMs 1796536448482`, epoch milliseconds,
    where every other time in a table is a date."""
    with kanban.board() as board:
        board.create_task("old")
    kanban.advance(minutes=120 * 24 * 60)
    archive = str(tmp_path / "a.jsonl")
    cut = kanban.ok("prune", "--events-before", "90d", "--archive", archive)["beforeMs"]
    table = kanban.run("prune", "--events-before", "90d", "--archive", archive, "--format", "table")
    assert table.code == 0, str(table)
    [line] = [line for line in table.out.splitlines() if "beforeMs" in line]
    assert str(cut) not in line
    shown = time.strftime("%Y-%m-%d %H:%M", time.localtime(cut / 1000))
    assert shown in line, table.out


@pytest.mark.parametrize("follow", [(), ("--follow", "--timeout", "5")])
def test_a_consumer_read_with_a_bad_task_filter_takes_no_cursor(
    kanban: Kanban, follow: tuple[str, ...]
) -> None:
    """Found by tests/chaos/test_fuzz_cli.py: `--consumer ada --task ''` took (created) ada's
    cursor, then refused the filter. The filter is now checked first."""
    with kanban.board() as board:
        board.create_task("one")
    with unchanged(kanban.db):
        error = kanban.refused("events", "--consumer", "ada", "--task", "", *follow,
                               reason="invalid_input")  # fmt: skip
    assert error["field"] == "taskId"
    assert kanban.ok("consumers", "list") == []


def test_db_check_reports_a_healthy_board(kanban: Kanban) -> None:
    kanban.ok("task", "dispatch", "--title", "x")
    report = kanban.ok("db", "check")
    assert report["ok"] is True
    assert report["problems"] == []
    assert report["schemaVersion"] == report["expectedSchemaVersion"] >= 1
    assert report["counts"] == {"todo": 1}
    assert report["path"] == str(kanban.db)


def test_db_check_exits_1_on_drifted_counters_and_never_repairs(kanban: Kanban) -> None:
    with kanban.board() as board:
        blocker = board.create_task("blocker")
        board.create_task("waiter", depends_on=[blocker.id])
    # simulate corruption behind the board's back
    raw_execute(kanban.db, "UPDATE tasks SET unmet_deps = 5 WHERE id = 'TASK-2'")
    before = kanban.snapshot()
    result = kanban.run("db", "check")
    assert result.code == 1, str(result)
    assert result.doc["ok"] is False
    assert any("TASK-2" in problem for problem in result.doc["problems"])
    assert result.error["reason"] == "integrity"
    assert kanban.snapshot() == before


def test_db_check_recounts_tasks_with_and_without_dependencies(kanban: Kanban) -> None:
    with kanban.board() as board:
        blocker = board.create_task("blocker")
        waiter = board.create_task("waiter", depends_on=[blocker.id])
        loner = board.create_task("loner")
        assert board.check().problems == []
    # a waiter whose count forgot its dependency, and a task with none that waits anyway
    raw_execute(kanban.db, f"UPDATE tasks SET unmet_deps = 0 WHERE id = '{waiter.id}'")
    raw_execute(kanban.db, f"UPDATE tasks SET unmet_deps = 2 WHERE id = '{loner.id}'")
    with kanban.board() as board:
        assert board.check().problems == [
            f"unmet_deps of {waiter.id} is 0, recount says 1",
            f"unmet_deps of {loner.id} is 2, recount says 0",
        ]


@pytest.mark.sqlite_only
def test_db_check_full_also_checks_every_index_against_its_table(kanban: Kanban) -> None:
    import hashlib
    import sqlite3

    with kanban.board() as board:
        board.create_task("ready")
    # An index that no longer holds what its definition says: the pages are well formed (the
    # quick check passes), the rows and the index disagree (only the full check looks).
    conn = sqlite3.connect(kanban.db)
    conn.execute("PRAGMA writable_schema=ON")
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'tasks_ready'").fetchone()
    conn.execute(
        "UPDATE sqlite_master SET sql = ? WHERE name = 'tasks_ready'",
        (sql.replace("unmet_deps = 0", "unmet_deps = 1"),),
    )
    conn.commit()
    conn.close()
    digest = hashlib.sha256(kanban.db.read_bytes()).hexdigest()
    quick = kanban.ok("db", "check")
    assert quick["ok"] is True and quick["full"] is False
    result = kanban.run("db", "check", "--full")
    assert result.code == 1, str(result)
    assert result.doc["full"] is True
    assert any("tasks_ready" in problem for problem in result.doc["problems"])
    assert result.error["reason"] == "integrity"
    assert hashlib.sha256(kanban.db.read_bytes()).hexdigest() == digest


def test_db_check_on_a_missing_board_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    kanban = Kanban(tmp_path / "nowhere" / "board.db", init=False)
    kanban.refused("db", "check", reason="no_board")
    assert not kanban.db.parent.exists()


def test_board_location_flag_env_and_default(tmp_path: Path) -> None:
    kanban = Kanban(tmp_path / "env.db")
    flag_db = tmp_path / "flag.db"
    leaf_db = tmp_path / "leaf.db"
    kanban.created("--db", str(flag_db), "task", "dispatch", "-t", "root flag", board=flag_db)
    kanban.created("task", "dispatch", "-t", "leaf flag", "--db", str(leaf_db), board=leaf_db)
    kanban.ok("task", "dispatch", "-t", "from KANBAN_DB")
    assert kanban.ok("--db", str(flag_db), "task", "get", "TASK-1")["title"] == "root flag"
    assert kanban.ok("task", "get", "TASK-1", "--db", str(leaf_db))["title"] == "leaf flag"
    assert kanban.ok("task", "get", "TASK-1")["title"] == "from KANBAN_DB"

    state = tmp_path / "state"
    env = {"KANBAN_DB": "", "XDG_STATE_HOME": str(state)}
    where = kanban.ok("db", "path", env=env)
    assert where == {
        "path": str(state / "kanban" / "board.db"),
        "backend": "sqlite",
        "exists": False,
    }
    kanban.created(
        "task", "dispatch", "-t", "default place", env=env, board=state / "kanban" / "board.db"
    )
    assert (state / "kanban" / "board.db").exists()


def test_prune_archives_old_events_and_import_puts_them_back(
    kanban: Kanban, tmp_path: Path
) -> None:
    """`kanban prune --events-before 90d` then `kanban db import-events FILE`: the same events."""
    with kanban.board() as board:
        done = board.create_task("last year")
        board.claim(done.id, "alice")
        board.move(done.id, "done")
        live = board.create_task("still to do")
    kanban.advance(minutes=120 * 24 * 60)
    with kanban.board() as board:
        board.create_task("today")
        before = kanban.ok("events", "--limit", "1000")
    archive = tmp_path / "old-events.jsonl"
    report = kanban.ok("prune", "--events-before", "90d", "--archive", str(archive))
    assert report["archived"] == report["pruned"] == 3  # the done task's three; not the live one's
    left = kanban.ok("events", "--limit", "1000")
    assert {e["taskId"] for e in left} == {live.id, left[-1]["taskId"]}
    assert kanban.ok("task", "view", done.id)["task"]["status"] == "done"  # tasks stay
    kanban.refused("prune", "--events-before", "ninety days", reason="invalid_input")
    imported = kanban.ok("db", "import-events", str(archive))
    assert (imported["imported"], imported["alreadyThere"]) == (3, 0)
    assert kanban.ok("events", "--limit", "1000") == before
    # An archive is never written over: a name given that is taken is refused.
    error = kanban.refused(
        "prune", "--events-before", "90d", "--archive", str(archive), reason="invalid_input"
    )
    assert error["path"] == str(archive) and "--archive FILE" in error["error"]
    (tmp_path / "torn.jsonl").write_text(archive.read_text()[:-20])
    kanban.refused("db", "import-events", str(tmp_path / "torn.jsonl"), reason="invalid_input")
    assert kanban.ok("events", "--limit", "1000") == before
    # Without --archive: beside the board file, named by the day of the cut (a database board
    # has no file to put it beside: it needs --archive).
    if is_postgres(kanban.db):
        kanban.refused("prune", "--events-before", "90d", reason="invalid_input")
    else:
        written = Path(kanban.ok("prune", "--events-before", "90d")["archive"])
        assert written.parent == Path(kanban.db).parent and written.exists()
        assert written.name.startswith("board.events-before-")


def test_import_events_refuses_another_boards_archive_byte_for_byte(
    kanban: Kanban, tmp_path: Path
) -> None:
    """`kanban db import-events` put board A's archive into board B (`imported: 2247`, A's history
    under B's tasks). Now it is refused as a conflict, and B's file is the same bytes after."""
    other = Kanban(tmp_path / "other" / "board.db", now_ms=kanban.now + 1)
    for each in (kanban, other):
        with each.board() as board:
            for title in ("one", "two", "three"):
                task = board.create_task(title)
                board.claim(task.id, "alice")
                board.move(task.id, "done")
        each.advance(minutes=120 * 24 * 60)
        with each.board() as board:
            board.create_task("today")
    archive = tmp_path / "a.jsonl"
    assert kanban.ok("prune", "--events-before", "90d", "--archive", str(archive))["archived"]
    with unchanged(other.db):
        error = other.refused("db", "import-events", str(archive), reason="conflict")
    assert "not an archive of this board" in error["error"]
    assert kanban.ok("db", "import-events", str(archive))["imported"] > 0


def test_a_daily_prune_retried_succeeds_and_a_taken_default_name_is_numbered(
    kanban: Kanban, tmp_path: Path
) -> None:
    """A second `kanban prune --events-before 90d` the same day failed (exit 2, "exists: an archive
    is never overwritten") though there was nothing left to prune, so a retried daily cron job
    failed. Now nothing to take is exit 0; with events to take, the day's taken name gives way to
    the next free one (`NAME.2.jsonl`), never over it."""
    if is_postgres(kanban.db):
        pytest.skip("the default archive name is beside a board file")
    with kanban.board() as board:
        done = board.create_task("last year")
        board.claim(done.id, "alice")
        board.move(done.id, "done")
    kanban.advance(minutes=120 * 24 * 60)
    with kanban.board() as board:
        board.create_task("today")
    written = Path(kanban.ok("prune", "--events-before", "90d")["archive"])
    first = written.read_bytes()
    folder = sorted(written.parent.iterdir())
    retried = kanban.ok("prune", "--events-before", "90d")
    assert (retried["archive"], retried["archived"], retried["pruned"]) == (None, 0, 0)
    assert sorted(written.parent.iterdir()) == folder
    kanban.ok("db", "import-events", str(written))  # old events to take again, the same day
    second = kanban.ok("prune", "--events-before", "90d")
    assert second["archive"] == str(written.with_name(f"{written.stem}.2.jsonl"))
    assert second["archived"] == second["pruned"] == 3
    assert written.read_bytes() == first
    kanban.ok("db", "import-events", second["archive"])
    assert kanban.ok("prune", "--events-before", "90d")["archive"].endswith(".3.jsonl")


def test_a_prune_with_nothing_to_archive_writes_no_file_and_frees_the_name(
    kanban: Kanban, tmp_path: Path
) -> None:
    """A prune that archived nothing still wrote an empty archive under the day's default name, so a
    later prune the same day that had events to take was refused over that name. Now it writes
    nothing and says so."""
    if is_postgres(kanban.db):
        pytest.skip("the default archive name is beside a board file")
    with kanban.board() as board:
        task = board.create_task("in flight for months")
        board.claim(task.id, "alice")
    kanban.advance(minutes=120 * 24 * 60)
    folder = sorted(Path(kanban.db).parent.iterdir())
    report = kanban.ok("prune", "--events-before", "90d")  # a live task's history stays
    assert (report["archive"], report["archived"]) == (None, 0)
    assert "no archive was written" in report["message"]
    assert sorted(Path(kanban.db).parent.iterdir()) == folder
    with kanban.board() as board:
        board.move(task.id, "done")
    report = kanban.ok("prune", "--events-before", "90d")  # the same cut, the same day's name
    assert report["archived"] == report["pruned"] == 2
    assert Path(report["archive"]).name.startswith("board.events-before-")
    assert str(report["archived"]) in report["message"]


ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def loopback_link(target: str, port: int = 0) -> Iterator[int]:
    """The benchmarks' TCP proxy (no delay) in front of `target`: the network between a
    follower and its Postgres server, to cut and restore. Yields the port it listens on."""
    proxy = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "delay_proxy.py"), "--target", target,
         "--delay-ms", "0", "--port", str(port)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proxy.stdout is not None
        yield int(json.loads(proxy.stdout.readline())["listening"].rpartition(":")[2])
    finally:
        proxy.kill()
        proxy.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["events", "watch"])
def test_a_follower_waits_out_a_lost_database_and_goes_on(
    postgres_cluster: "Cluster", tmp_path: Path, how: str
) -> None:
    """`events --follow` and `watch` exited database_unavailable when the Postgres server restarted,
    while `serve` and the terminal board came back: a watch forwarding to a webhook went quiet until
    someone restarted it. The link to the server is cut and restored here; the follower says so on
    stderr and goes on."""
    board_url = new_postgres_board(postgres_cluster)
    kanban = Kanban(board_url)  # type: ignore[arg-type]
    url = urlsplit(board_url)
    log = tmp_path / "delivered.jsonl"
    with loopback_link(url.netloc.rpartition("@")[2]) as port:
        via = urlunsplit(url._replace(netloc=url.netloc.replace(f":{url.port}", f":{port}")))
        args = (
            ("events", "--follow", "--since", "0", "--poll-ms", "50", "--timeout", "60",
             "--limit", "2")
            if how == "events"
            else ("watch", "--consumer", "hook", "--on", "task_created", "--since", "0",
                  "--poll-ms", "50", "--timeout", "60", "--limit", "2", "--",
                  "sh", "-c", f"cat >> {log}")
        )  # fmt: skip
        follower = kanban.popen("--db", via, *args)
        kanban.ok("task", "dispatch", "--title", "before the cut")
        # the first event reaches the follower before the cut: it is past its start-up (a
        # database unreachable when a follower starts is refused at once, as it should be)
        first = ""
        if how == "events":
            assert follower.stdout is not None
            first = follower.stdout.readline()
        deadline = time.monotonic() + 60

        def acknowledged() -> bool:  # delivered, and its cursor recorded: no second delivery
            consumers = kanban.ok("consumers", "list")
            return any(c["name"] == "hook" and c["lastSeq"] >= 1 for c in consumers)

        while how == "watch" and not (log.exists() and log.read_text() and acknowledged()):
            assert time.monotonic() < deadline and follower.poll() is None, follower.communicate()
            time.sleep(0.05)
    try:
        time.sleep(1.5)  # the link is down: the follower's polls fail meanwhile
        assert follower.poll() is None, follower.communicate()
        kanban.ok("task", "dispatch", "--title", "during the cut")
        with loopback_link(url.netloc.rpartition("@")[2], port):
            out, err = follower.communicate(timeout=60)
        out = first + out
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    assert "waiting for it" in err and "reachable again" in err, err
    lines = (out if how == "events" else log.read_text()).splitlines()
    created = [(json.loads(line)["kind"], json.loads(line)["taskId"]) for line in lines]
    assert created == [("task_created", "TASK-1"), ("task_created", "TASK-2")], lines


def test_events_last_reads_what_just_happened(kanban: Kanban) -> None:
    """An operator asking `kanban events` what just happened got the log's oldest 1,000 events (a
    day's board: the first hour); the newest needed a seq found first. `--last N` is the newest N,
    oldest of them first, of one task with `--task`; it refuses a cursor's options, and reads
    without writing."""
    with kanban.board() as board:
        tasks = [board.create_task(f"task {n}") for n in range(5)]
        board.claim(tasks[0].id, "alice")
        board.complete(tasks[0].id, "alice")
    every = kanban.ok("events")
    with unchanged(kanban.db):
        assert kanban.ok("events", "--last", "3") == every[-3:]
        assert kanban.ok("events", "--last", "100") == every
        mine = kanban.ok("events", "--last", "2", "--task", tasks[0].id)
        assert [e["kind"] for e in mine] == ["task_claimed", "status_changed"], mine
        table = kanban.run("events", "--last", "1", "--format", "table", env={"COLUMNS": "80"})
        assert table.code == 0 and f"alice finished {tasks[0].id}" in table.out, str(table)
        for clash in (("--follow",), ("--since", "1"), ("--consumer", "c")):
            refused = kanban.run("events", "--last", "1", *clash)
            assert refused.code == 2 and refused.error["reason"] == "usage", str(refused)
            assert clash[0] in refused.error["error"], str(refused)
