"""Old events archived out of the board and imported back (`boardlib.archive`), on both backends:
the events are identical after the round trip, a prune takes no task and none of a live task's
history, the newest event stays, and a bad archive changes nothing."""

import json
from pathlib import Path

import pytest

from boardlib import Board, BoardConfig, BoardError, ManualClock, Reason
from boardlib import archive as archive_module
from boardlib import transitions as t
from boardlib.archive import COLUMNS, cut_off, prune_through
from boardlib.watch import Consumers

DAY_MS = 86_400_000


def events(board: Board) -> list[tuple[object, ...]]:
    """Every event row, as the store holds it."""
    rows = board.store.read(lambda tx: tx.table_rows("events"))
    return [tuple(row[column] for column in COLUMNS) for row in rows]


def a_year(board: Board, clock: ManualClock) -> dict[str, str]:
    """A year of work: tasks finished every week, one still in flight since the start, and the
    ones of the last month."""
    ids = {"old_live": board.claim(board.create_task("in flight all year").id, "ada").id}
    for week in range(52):
        clock.advance(ms=7 * DAY_MS)
        task = board.create_task(f"week {week}")
        board.claim(task.id, "bob")
        board.heartbeat(task.id, "bob")
        board.move(task.id, t.DONE)
        ids.setdefault("first_done", task.id)
    ids["cancelled"] = board.cancel(board.create_task("not needed").id).id
    return ids


def read_through(consumers: Consumers, name: str, seq: int) -> None:
    """Consumer `name` has read the log through `seq` (placed there when new), as a watcher
    that delivered up to it and stopped."""
    consumers.open(name, since=seq if consumers.get(name) is None else None)
    consumers.delivered(name, seq)
    consumers.release(name)


def test_prune_then_import_gives_back_the_same_events(
    board: Board, clock: ManualClock, tmp_path: Path
) -> None:
    ids = a_year(board, clock)
    before_events, before_tasks = events(board), board.all_tasks()
    archive = tmp_path / "old.jsonl"
    report = board.prune_events("90d", archive)
    after = events(board)
    cut = clock.now_ms() - 90 * DAY_MS
    assert report.archived == report.pruned == len(before_events) - len(after) > 100
    assert report.before_ms == cut
    # No task goes, and what stays is every recent event, the live task's whole history, and
    # the newest event.
    assert board.all_tasks() == before_tasks
    kept = {row[0] for row in after}
    for row in before_events:
        recent = row[5] >= cut
        live = row[1] == ids["old_live"]
        assert (row[0] in kept) == (recent or live or row == before_events[-1]), row
    assert board.get_task(ids["first_done"]).status == t.DONE
    # The archive: a header, the events oldest first, an end line that counts and hashes them.
    lines = archive.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "kanban-events-archive"
    assert json.loads(lines[-1])["events"] == report.archived
    # Re-imported: the events are identical to before the prune; twice is once.
    imported = board.import_events(archive)
    assert (imported.imported, imported.already_there) == (report.archived, 0)
    assert events(board) == before_events
    again = board.import_events(archive)
    assert (again.imported, again.already_there) == (0, report.archived)
    assert events(board) == before_events
    # A second prune of the same events writes the same lines.
    second = tmp_path / "again.jsonl"
    board.prune_events(report.before_ms, second)
    assert second.read_text().splitlines()[1:] == lines[1:]


def test_a_prune_never_passes_a_consumer(board: Board, clock: ManualClock, tmp_path: Path) -> None:
    """A consumer's cursor (`boardlib.watch`, the one `kanban watch` keeps) holds a prune back:
    nothing it has not read goes, whatever its age; as it reads on, or once it is forgotten, the
    next prune takes the rest. The delete statement re-checks the cursors itself, so a cursor
    that appears mid-prune holds too."""
    ids = a_year(board, clock)
    before = events(board)
    old = [row[0] for row in before if row[1] != ids["old_live"]]
    slow = old[20]
    consumers = Consumers(board)
    read_through(consumers, "slow-reader", slow)
    read_through(consumers, "fast-reader", board.last_event_seq())
    read_through(consumers, "slow-reader", 3)
    assert consumers.get("slow-reader").last_seq == slow  # type: ignore[union-attr]  # never back
    with pytest.raises(BoardError) as refused:  # a cursor past the newest event would skip some
        consumers.open("eager-reader", since=board.last_event_seq() + 1)
    assert refused.value.reason == Reason.CONFLICT
    assert [c.name for c in consumers.all()] == ["fast-reader", "slow-reader"]
    assert board.store.read(prune_through) == slow
    first = board.prune_events("90d", tmp_path / "first.jsonl")
    left = {row[0] for row in events(board)}
    assert first.through_seq == slow and first.pruned == 21  # read through `slow`: up to it
    assert first.held_back_by == (("slow-reader", slow),) and first.held_back > 100  # said
    assert all(seq in left for seq in [row[0] for row in before] if seq > slow)
    # Read on: the next prune goes further; forgotten: the rest of the old events go.
    read_through(consumers, "slow-reader", old[40])
    assert board.prune_events("90d", tmp_path / "second.jsonl").pruned == 20
    consumers.forget("slow-reader")
    with pytest.raises(BoardError) as unknown:
        consumers.forget("slow-reader")
    assert unknown.value.reason == Reason.NOT_FOUND
    rest = board.prune_events("90d", tmp_path / "rest.jsonl")
    assert rest.pruned > 100 and rest.through_seq == board.last_event_seq()
    for name in ("first", "second", "rest"):
        board.import_events(tmp_path / f"{name}.jsonl")
    assert events(board) == before
    # Deleting past the lowest cursor is refused by the statement itself, even when the caller
    # passes the log's end as its bound.
    floor = old[4]
    read_through(consumers, "late-reader", floor)
    board.prune_events("90d", tmp_path / "late.jsonl")
    assert {row[0] for row in events(board)} >= set(old[5:])
    end = board.last_event_seq()
    removed = board.store.write(lambda tx: tx.delete_events(old[:10], end, clock.now_ms()))
    assert removed == 0  # the first five went with the prune; the statement keeps the rest


def test_a_prune_spanning_many_batches(
    board: Board, clock: ManualClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads, deletes and imports go a batch at a time (short transactions): small batches here,
    so a year of events spans dozens of them."""
    monkeypatch.setattr(archive_module, "BATCH", 7)
    a_year(board, clock)
    before = events(board)
    report = board.prune_events("90d", tmp_path / "a.jsonl")
    assert report.archived == report.pruned > 20 * 7
    board.import_events(tmp_path / "a.jsonl")
    assert events(board) == before


def test_bad_archives_change_nothing(board: Board, clock: ManualClock, tmp_path: Path) -> None:
    a_year(board, clock)
    # An archive is never written over.
    taken = tmp_path / "taken.jsonl"
    taken.write_bytes(b"someone's file\n")
    held = events(board)
    with pytest.raises(BoardError) as exists:
        board.prune_events("90d", taken)
    assert exists.value.reason == Reason.INVALID_INPUT and events(board) == held
    assert taken.read_bytes() == b"someone's file\n"
    archive = tmp_path / "old.jsonl"
    board.prune_events("90d", archive)
    held = events(board)
    lines = archive.read_text().splitlines(keepends=True)
    cases = {
        "cut.jsonl": "".join(lines[:-5]),  # torn: no end line
        "edited.jsonl": "".join([lines[0], lines[1].replace('"kind"', '"kind" '), *lines[2:]]),
        "short.jsonl": "".join([lines[0], *lines[2:]]),  # a line gone: the count and hash say
        "other.jsonl": '{"format": "something else"}\n',
    }
    cases["torn.jsonl"] = archive.read_text()[: len(lines[0]) + len(lines[1]) // 2]  # mid-line
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(BoardError) as refused:
            board.import_events(tmp_path / name)
        assert refused.value.reason == Reason.INVALID_INPUT, name
        assert events(board) == held, name
        if name in ("cut.jsonl", "torn.jsonl"):  # said as what happened to it
            assert "cut short" in refused.value.message, name
    # An event the board holds with other content: a conflict, and nothing is imported.
    first = json.loads(lines[1])
    board.import_events(archive)
    restored = events(board)
    row = next(r for r in restored if r[0] == first["seq"])
    board.store.write(
        lambda tx: (
            tx.delete_events([row[0]], row[0], clock.now_ms() + 1),
            tx.load_rows("events", COLUMNS, [(*row[:4], '{"changed":1}', *row[5:])]),
        )
    )
    changed = events(board)
    with pytest.raises(BoardError) as conflict:
        board.import_events(archive)
    assert conflict.value.reason == Reason.CONFLICT and events(board) == changed


def without_identity(archive: Path, written: Path) -> Path:
    """`archive` as a kanban before archives named their tasks wrote it: no `tasks` on its end
    line (outside the sha256, which covers the events)."""
    lines = archive.read_text().splitlines(keepends=True)
    end = json.loads(lines[-1])
    del end["tasks"]
    written.write_text("".join([*lines[:-1], json.dumps(end) + "\n"]))
    return written


def test_an_archive_of_another_board_is_refused_and_writes_nothing(
    board: Board, clock: ManualClock, tmp_path: Path
) -> None:
    """An archive pruned from board A imported onto board B (the same year of work, built a little
    later) went in whole, A's history under B's TASK-n, since only seqs were compared. Now an
    archive names when each of its tasks was created, and B's tasks were created at other times; an
    archive written before that is judged by its own `task_created` events, and still imports onto
    its own board."""
    a_year(board, clock)
    clock.advance(ms=1)
    with Board(tmp_path / "other.db", clock=clock, config=BoardConfig()) as other:
        a_year(other, clock)
        other.create_task("a little more")  # B's log runs past A's: the seqs alone do not say
        archive = tmp_path / "a.jsonl"
        pruned = board.prune_events("90d", archive)
        assert pruned.archived > 100
        old_style = without_identity(archive, tmp_path / "a-old.jsonl")
        held = events(other)
        for name in (archive, old_style):
            with pytest.raises(BoardError) as refused:
                other.import_events(name)
            assert refused.value.reason == Reason.CONFLICT, name
            assert "not an archive of this board" in refused.value.message, name
            assert "created at another time" in refused.value.message, name
            assert events(other) == held, name
        with Board(tmp_path / "empty.db", clock=clock) as empty:  # none of its tasks is there
            for _ in range(pruned.through_seq + 1):
                empty.store.write(lambda tx: tx.insert_event("note", None, None, {}, 1, None))
            before = events(empty)
            with pytest.raises(BoardError) as missing:
                empty.import_events(archive)
            assert "are not on this board" in missing.value.message
            assert events(empty) == before
    # Both spellings import onto the board they came from.
    assert board.import_events(old_style).imported == pruned.archived
    assert board.import_events(archive).already_there == pruned.archived


def test_imported_events_past_their_ttl_are_purged_again(
    board: Board, clock: ManualClock, tmp_path: Path
) -> None:
    """docs/agents.md#pruning-old-events says so (kept as the rule): an import restores each event's
    TTL with it, and the next purge takes those past it."""
    a_year(board, clock)
    archive = tmp_path / "old.jsonl"
    report = board.prune_events("90d", archive)
    board.import_events(archive)
    board.reconcile_stale_tasks()
    restored = {row[0] for row in events(board)}
    archived = [json.loads(line)["seq"] for line in archive.read_text().splitlines()[1:-1]]
    assert len(archived) == report.archived and not restored & set(archived)


def test_an_archive_path_or_cut_off_it_cannot_use_is_refused_and_leaves_no_file(
    board: Board, clock: ManualClock, tmp_path: Path
) -> None:
    a_year(board, clock)
    held = events(board)
    folder = tmp_path / "archives"
    folder.mkdir()
    cases: dict[str, tuple[str | Path, str | int]] = {
        "a name too long": (folder / ("y" * 300), "90d"),
        "a NUL byte": (f"{folder}/x\0y.jsonl", "90d"),
        "a NUL byte alone (the fuzz's; exists() says False)": ("\0", "90d"),
        "a folder that is not there": (folder / "missing" / "old.jsonl", "90d"),
        "a cut-off past 64 bits": (folder / "old.jsonl", 2**63),
        "a cut-off before 1970": (folder / "old.jsonl", -1),
    }
    for why, (archive, before) in cases.items():
        with pytest.raises(BoardError) as refused:
            board.prune_events(before, archive)
        assert refused.value.reason == Reason.INVALID_INPUT, why
        assert events(board) == held, why
        assert sorted(folder.iterdir()) == [], why  # not even a .partial


def test_an_archive_to_import_that_cannot_be_read_is_refused_typed(
    board: Board, clock: ManualClock, tmp_path: Path
) -> None:
    a_year(board, clock)
    held = events(board)
    cases: dict[str, object] = {
        "no path at all": None,
        "a number": 3,
        "a NUL byte": str(tmp_path / "x\0y.jsonl"),
        "a folder": tmp_path,
        "a name too long": tmp_path / ("y" * 300),
        "a file that is not there": tmp_path / "missing.jsonl",
    }
    for why, archive in cases.items():
        with pytest.raises(BoardError) as refused:
            board.import_events(archive)  # type: ignore[arg-type]
        assert refused.value.reason == Reason.INVALID_INPUT, why
        assert events(board) == held, why


def test_ages_and_dates() -> None:
    now = 1_800_000_000_000
    assert cut_off("90d", now) == now - 90 * DAY_MS
    assert cut_off("12h", now) == now - 12 * 3_600_000
    assert cut_off("2w", now) == now - 14 * DAY_MS
    assert cut_off("2025-01-31", now) == 1_738_281_600_000
    for bad in ("90", "d90", "-3d", "1e3d", "2025-02-30", ""):
        with pytest.raises(BoardError):
            cut_off(bad, now)
    assert cut_off("1970-01-01", now) == 0
    for before_1970 in ("999999d", "1969-12-31"):  # the pattern's, but past the board's times
        with pytest.raises(BoardError) as refused:
            cut_off(before_1970, now)
        assert refused.value.details["field"] == "eventsBefore", before_1970
        assert "before 1970-01-01" in refused.value.message, before_1970
