"""Old events out of the board and back: `kanban prune --events-before 90d` writes them to an
archive file, then deletes them; `kanban db import-events FILE` puts them back as they were.

A prune never takes a task (only events), an event a consumer (`boardlib.watch`) has not read
yet, an event of a task still in flight, or the newest event (so seqs only grow):
`store.queries.PRUNABLE`, which spells the consumers' rule as the TTL purge does. The archive is
whole on disk (fsynced, renamed into place) before the first delete, and the deletes run in short
transactions that re-check the rule, so agents keep working. An import checks the whole file (its
count and sha256), that it is an archive of this board (its end line names each task the archive
holds, and the board's first, with the time it was created: tasks are never deleted, and another
board's TASK-3 was created at another time), and every seq the board already holds before it
writes, then inserts what is missing: twice is the same as once.
Why: docs/agents.md#pruning-old-events
"""

import hashlib
import json
import os
import re
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import BoardError, Reason, invalid_input
from .events import EventKind

if TYPE_CHECKING:
    from .board import Board
    from .store.base import Row, Tx

ARCHIVE_FORMAT = "kanban-events-archive"
ARCHIVE_VERSION = 1
BATCH = 2_000  # events per read and per delete transaction: each holds the write turn briefly
COLUMNS = ("seq", "task_id", "kind", "actor", "data", "created_at", "ttl_seconds", "tenant_id")
TASK_ID, KIND, CREATED_AT = (COLUMNS.index(name) for name in ("task_id", "kind", "created_at"))
_AGE = re.compile(r"(\d{1,6})([smhdw])")
_UNIT_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}


def cut_off(text: str, now_ms: int) -> int:
    """`--events-before`: an age (`90d`, `12h`, `2w`) before now, or a UTC date (`2025-01-31`),
    as epoch milliseconds."""
    raw = text.strip() if isinstance(text, str) else ""
    age = _AGE.fullmatch(raw)
    if age:
        cut = now_ms - int(age.group(1)) * _UNIT_MS[age.group(2)]
    else:
        try:
            day = datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise invalid_input(
                f"events-before must be an age such as 90d, 12h or 2w, or a date as YYYY-MM-DD, "
                f"not {text!r}",
                field="eventsBefore",
            ) from None
        cut = int(day.timestamp() * 1000)
    if cut < 0:  # the board's times start at 1970: say so, not the epoch-ms field's rule
        raise invalid_input(
            f"events-before {text!r} is before 1970-01-01, when the board's times begin",
            field="eventsBefore",
        )
    return cut


@dataclass(frozen=True, slots=True)
class PruneReport:
    archive: str | None  # None: nothing to archive, so no file was written (its name stays free)
    before_ms: int
    archived: int  # events written to the archive
    pruned: int  # events deleted from the board (fewer when a rule held some back meanwhile)
    through_seq: int  # the highest seq a prune could take (a consumer's cursor, the log's end)
    events_left: int
    held_back: int = 0  # events older than the cut a prune would take but for the consumers
    held_back_by: tuple[tuple[str, int], ...] = ()  # those consumers: (name, cursor), lowest first

    def to_json(self) -> dict[str, Any]:
        return {
            "archive": self.archive,
            "beforeMs": self.before_ms,
            "archived": self.archived,
            "pruned": self.pruned,
            "throughSeq": self.through_seq,
            "eventsLeft": self.events_left,
            "heldBack": self.held_back,
            "heldBackBy": [{"consumer": name, "lastSeq": seq} for name, seq in self.held_back_by],
            "message": self.message,
        }

    @property
    def message(self) -> str:
        if self.archive is None:
            said = "no event older than the cut could be pruned: no archive was written"
        else:
            said = f"archived {self.archived} event(s) to {self.archive}; pruned {self.pruned}"
        if not self.held_back:
            return said
        who = ", ".join(f"{name} (read through seq {seq})" for name, seq in self.held_back_by)
        return (
            f"{said}; {self.held_back} older event(s) stay until consumer(s) {who} read them "
            "(`kanban consumers forget NAME` lets them go)"
        )


@dataclass(frozen=True, slots=True)
class ImportReport:
    archive: str
    events: int  # in the archive
    imported: int  # inserted now
    already_there: int  # identical rows the board held already

    def to_json(self) -> dict[str, Any]:
        return {
            "archive": self.archive,
            "events": self.events,
            "imported": self.imported,
            "alreadyThere": self.already_there,
        }


def prune_through(tx: "Tx") -> int:
    """The highest seq a prune may take in this transaction: the log's safe end, and never past
    the lowest consumer cursor (the statements re-check that rule themselves)."""
    through = tx.last_event_seq()
    lowest = tx.lowest_consumer_cursor()
    return through if lowest is None else min(through, lowest)


def _cut_and_holders(tx: "Tx", *, before: int) -> tuple[int, int, tuple[tuple[str, int], ...]]:
    """`prune_through`, and what the consumers hold back past it: how many events older than the
    cut wait for them, and each consumer whose cursor is below one of those (lowest first)."""
    through, end = prune_through(tx), tx.last_event_seq()
    if through >= end:
        return through, 0, ()
    held, highest = tx.unread_old_events(through, end, before)
    holders = sorted(
        (int(row["last_seq"]), str(row["name"]))
        for row in tx.consumers()
        if int(row["last_seq"]) < highest
    )
    return through, held, tuple((name, seq) for seq, name in holders)


def _line(row: "Row") -> bytes:
    values = {column: row[column] for column in COLUMNS}
    return (json.dumps(values, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def prune_events(
    board: "Board", before_ms: int, archive: Path, *, next_free_name: bool = False
) -> PruneReport:
    """Archive every prunable event older than `before_ms` to `archive` (a new file), then
    delete them from the board. With nothing to take, no file is written and no name is judged
    (a retried daily job succeeds). `next_free_name` (the CLI's default name, the cut's day):
    when `archive` is taken, the first free `NAME.2.jsonl`, `NAME.3.jsonl`, ...; a name the
    caller chose is never exchanged for another."""
    try:
        taken = archive.exists()
    except (OSError, ValueError) as error:  # a name too long, a NUL byte
        raise invalid_input(
            f"cannot use {archive!s} as an archive: {error}", path=str(archive)
        ) from None
    through, held, holders = board.store.read(partial(_cut_and_holders, before=before_ms))
    if not board.store.read(partial(_prunable, after=0, through=through, before=before_ms)):
        left = board.store.read(_count_events)
        return PruneReport(None, before_ms, 0, 0, through, left, held, holders)
    if taken and not next_free_name:
        raise invalid_input(
            f"{archive} exists: an archive is never overwritten; name a new file with "
            "--archive FILE",
            path=str(archive),
        )
    pending = archive.with_name(archive.name + ".partial")
    try:
        seqs = _write_archive(board, before_ms, through, pending)
        written = _link_free_name(pending, archive, next_free_name) if seqs else None
    except OSError as error:
        raise invalid_input(
            f"cannot write the archive {archive}: {error.strerror}", path=str(archive)
        ) from None
    finally:
        with suppress(OSError):
            pending.unlink(missing_ok=True)  # a refusal leaves no half-written file behind
    _sync_folder(archive.parent)
    pruned = 0
    for start in range(0, len(seqs), BATCH):
        batch = seqs[start : start + BATCH]
        pruned += board.store.write(partial(_delete, seqs=batch, before=before_ms))
    left = board.store.read(_count_events)
    archived = None if written is None else str(written)
    return PruneReport(archived, before_ms, len(seqs), pruned, through, left, held, holders)


def _count_events(tx: "Tx") -> int:
    return tx.count_events()


def _link_free_name(pending: Path, archive: Path, next_free_name: bool) -> Path:
    """Link the written archive to its name, never over a file (one may appear meanwhile);
    with `next_free_name`, to the first free numbered name after `archive`."""
    name, number = archive, 1
    while True:
        try:
            os.link(pending, name)
            return name
        except FileExistsError:
            if not next_free_name:
                raise
        number += 1
        name = archive.with_name(f"{archive.stem}.{number}{archive.suffix}")


def _write_archive(board: "Board", before_ms: int, through: int, pending: Path) -> list[int]:
    """Write the archive to `pending` and fsync it; the seqs it holds. The caller links it to
    its name only when it holds some: an empty file would take a name for nothing."""
    digest, seqs, named = hashlib.sha256(), [], set[str]()
    with open(pending, "wb") as out:
        header = {
            "format": ARCHIVE_FORMAT,
            "version": ARCHIVE_VERSION,
            "board": board.store.display,
            "backend": board.store.backend,
            "beforeMs": before_ms,
            "throughSeq": through,
            "writtenAt": board.now(),
            "columns": list(COLUMNS),
        }
        out.write((json.dumps(header) + "\n").encode())
        after = 0
        while True:
            ask = partial(_prunable, after=after, through=through, before=before_ms)
            rows = board.store.read(ask)
            if not rows:
                break
            for row in rows:
                line = _line(row)
                digest.update(line)
                out.write(line)
            seqs += [int(row["seq"]) for row in rows]
            named.update(row["task_id"] for row in rows if row["task_id"] is not None)
            after = seqs[-1]
        end = {"end": True, "events": len(seqs), "sha256": digest.hexdigest(),
               "tasks": _identity(board, named)}  # fmt: skip
        out.write((json.dumps(end, separators=(",", ":")) + "\n").encode())
        out.flush()
        os.fsync(out.fileno())
    return seqs  # the caller removes `pending`


def _identity(board: "Board", named: set[str]) -> dict[str, int]:
    """The board as an archive names it: when each of these tasks, and the board's first, was
    created (an import onto another board finds other times, or no such task)."""
    first = board.store.read(lambda tx: tx.first_task_id())
    wanted = sorted(named | ({first} if first else set()))
    return board.store.read(partial(_created_at, task_ids=wanted))


def _created_at(tx: "Tx", *, task_ids: list[str]) -> dict[str, int]:
    created = {}
    for start in range(0, len(task_ids), BATCH):
        for row in tx.tasks_by_id(task_ids[start : start + BATCH]):
            created[str(row["id"])] = int(row["created_at"])
    return created


def _sync_folder(folder: Path) -> None:
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


@dataclass(frozen=True, slots=True)
class Archive:
    header: dict[str, Any]
    rows: list[tuple[Any, ...]]  # the events, in `COLUMNS` order
    tasks: dict[str, int] | None  # when each task it names was created (None: written before)


def read_archive(archive: Path) -> Archive:
    """An archive's header, events and board identity, checked whole: a file cut short, edited
    or of another format is refused before anything is written."""
    try:
        lines = archive.read_bytes().splitlines(keepends=True)
    except (OSError, ValueError) as error:  # missing, a folder, a name too long, a NUL byte
        reason = error.strerror if isinstance(error, OSError) else error
        raise invalid_input(f"cannot read {archive!s}: {reason}", path=str(archive)) from None
    header, trailer = (_json_line(lines[0]) if lines else None), None
    if len(lines) >= 2:  # a file cut mid-line ends in half an event: cut short, not foreign
        trailer = _json_line(lines[-1])
    if not isinstance(header, dict) or header.get("format") != ARCHIVE_FORMAT:
        raise invalid_input(f"{archive} is not a kanban events archive", path=str(archive))
    if header.get("version") != ARCHIVE_VERSION or header.get("columns") != list(COLUMNS):
        raise invalid_input(
            f"{archive} is an archive of version {header.get('version')!r}; this kanban reads "
            f"version {ARCHIVE_VERSION}",
            path=str(archive),
        )
    body = lines[1:-1]
    digest = hashlib.sha256(b"".join(body)).hexdigest()
    if not isinstance(trailer, dict) or trailer.get("end") is not True:
        raise invalid_input(f"{archive} is cut short (no end line)", path=str(archive))
    tasks = trailer.get("tasks")
    whole = tasks is None or (
        isinstance(tasks, dict) and all(type(at) is int for at in tasks.values())
    )
    if trailer.get("events") != len(body) or trailer.get("sha256") != digest or not whole:
        raise invalid_input(
            f"{archive} does not match its end line (events or sha256 differ): it was cut or "
            "edited",
            path=str(archive),
        )
    rows = []
    for number, line in enumerate(body, start=2):
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not _valid_event(event):
            raise invalid_input(f"{archive} line {number} is not an event", path=str(archive))
        rows.append(tuple(event[column] for column in COLUMNS))
    return Archive(header, rows, tasks)


def _json_line(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _valid_event(event: Any) -> bool:
    if not isinstance(event, dict) or set(event) != set(COLUMNS):
        return False
    whole = ("seq", "created_at")
    if not all(type(event[name]) is int for name in whole) or event["seq"] < 1:
        return False
    if not isinstance(event["kind"], str) or not isinstance(event["data"], str):
        return False
    optional_text = ("task_id", "actor", "tenant_id")
    if not all(event[name] is None or isinstance(event[name], str) for name in optional_text):
        return False
    return event["ttl_seconds"] is None or type(event["ttl_seconds"]) is int


def _batches(rows: list[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    for start in range(0, len(rows), BATCH):
        yield rows[start : start + BATCH]


def _prunable(tx: "Tx", *, after: int, through: int, before: int) -> "list[Row]":
    return tx.prunable_events(after, through, before, BATCH)


def _delete(tx: "Tx", *, seqs: list[int], before: int) -> int:
    return tx.delete_events(seqs, prune_through(tx), before)


def _insert_missing(tx: "Tx", *, batch: list[tuple[Any, ...]]) -> int:
    missing, _held = _split(tx, batch=batch)
    return tx.load_rows("events", COLUMNS, missing) if missing else 0


def _split(tx: "Tx", *, batch: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], int]:
    """The rows of `batch` the board lacks, and how many it holds already; a seq it holds with
    other content is a refusal (this archive is not of this board, or the board moved on)."""
    held = {int(row["seq"]): tuple(row[column] for column in COLUMNS)
            for row in tx.events_at([row[0] for row in batch])}  # fmt: skip
    missing = []
    for row in batch:
        there = held.get(row[0])
        if there is None:
            missing.append(row)
        elif there != row:
            raise BoardError(
                Reason.CONFLICT,
                f"event {row[0]} on the board differs from the archive's: nothing was imported",
                seq=row[0],
            )
    return missing, len(batch) - len(missing)


def _check_same_board(board: "Board", archive: Path, read: Archive) -> None:
    """Refuse an archive of another board: each task it names must be here, created when the
    archive says (an archive written before archives named their tasks: when its `task_created`
    events say)."""
    claimed = read.tasks
    if claimed is None:
        created = str(EventKind.TASK_CREATED)
        claimed = {row[TASK_ID]: row[CREATED_AT] for row in read.rows
                   if row[KIND] == created and row[TASK_ID] is not None}  # fmt: skip
    named = set(claimed) | {row[TASK_ID] for row in read.rows if row[TASK_ID] is not None}
    here = board.store.read(partial(_created_at, task_ids=sorted(named)))
    missing = sorted(named - set(here))
    other = sorted(task for task, at in claimed.items() if task in here and here[task] != at)
    if not missing and not other:
        return
    said = [
        f"{len(found)} of its tasks {why} ({', '.join(found[:3])}{', ...' * (len(found) > 3)})"
        for found, why in ((missing, "are not on this board"), (other, "were created at another "
                           "time here")) if found
    ]  # fmt: skip
    raise BoardError(
        Reason.CONFLICT,
        f"{archive} is not an archive of this board: {'; '.join(said)}; nothing was imported",
        path=str(archive),
    )


def import_events(board: "Board", archive: Path) -> ImportReport:
    """Put an archive's events back, verbatim (seqs included); those already there are kept.
    An archive of another board is refused before anything is written."""
    read = read_archive(archive)
    rows = read.rows
    newest = board.store.read(lambda tx: tx.last_event_seq())
    if rows and max(row[0] for row in rows) >= newest:
        raise BoardError(
            Reason.CONFLICT,
            f"{archive} holds events at or past this board's newest ({newest}): it is not an "
            "archive of this board",
            path=str(archive),
        )
    _check_same_board(board, archive, read)
    already = 0
    for batch in _batches(rows):  # the whole file checked before anything is written
        already += board.store.read(partial(_split, batch=batch))[1]
    imported = 0
    for batch in _batches(rows):
        imported += board.store.write(partial(_insert_missing, batch=batch))
    return ImportReport(str(archive), len(rows), imported, already)
