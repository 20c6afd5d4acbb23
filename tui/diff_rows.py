"""The Diff tab's rows, for a diff of any size: a few made-up rows (the stat, the file list, each
file's header and notes) around the diff's own lines, which are never copied. A stretch of a
file's hunks is one segment of rows, so a 200,000-line diff is a few hundred segments, not
200,000 objects; a row is looked up (bisect) only when it is drawn or searched. The side-by-side
rows pair each hunk's removed and added lines, old | new.

Agent text stays raw here (search runs on it); the view makes each drawn line inert.
How: docs/tui.md#reviewing-in-depth
"""

import bisect
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len

from boardlib.inert import inert
from boardlib.records import ANCHOR_OLD, Comment
from boardlib.worktrees.diffs import (
    ADDED_LINE,
    CONTEXT_LINE,
    HUNK,
    META,
    NO_NEWLINE_LINE,
    REMOVED_LINE,
    DiffIndex,
    IndexedFile,
)

TAB_SIZE = 4

# Row kinds.
STAT = "stat"
LISTED = "listed"  # a file in the list under the stat
HEADER = "header"  # a file's header before its hunks
HUNK_ROW = "hunk"
LINE = "line"
NOTE = "note"
BLANK = "blank"
ODD = "odd"  # a line among the hunks that belongs to none (kept, shown as it is)

SIGN = {ADDED_LINE: "+", REMOVED_LINE: "-", CONTEXT_LINE: " ", NO_NEWLINE_LINE: "\\"}
_CHANGE_MARK = {"modified": "M", "added": "A", "deleted": "D", "renamed": "R"}


def display(text: str) -> str:
    """A diff line as it is drawn: tabs expanded, nothing a terminal would act on."""
    return inert(text.expandtabs(TAB_SIZE))


def text_cells(text: str) -> int:
    """The cells `text` takes when drawn (its plain length for the usual ASCII line)."""
    if text.isascii():
        if "\t" not in text and text.isprintable():
            return len(text)
        expanded = text.expandtabs(TAB_SIZE)
        if expanded.isprintable():  # no control character: one cell a character
            return len(expanded)
    return cell_len(display(text))


@dataclass(frozen=True, slots=True)
class ListedFile:
    """A changed file as the diff-stat knows it (it may be missing from a cut diff)."""

    path: str
    insertions: int | None
    deletions: int | None
    old_path: str | None = None
    size: int | None = None
    omitted: bool = False  # left out of the text for its size


@dataclass(frozen=True, slots=True)
class Row:
    """One row, as the view draws it. For a diff line, `line` is its index in the diff."""

    kind: str
    text: str = ""
    sign: str = " "
    old_no: int | None = None
    new_no: int | None = None
    file: int | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Pair:
    """A side-by-side row: the old line and the new line (or None), or a full-width row."""

    left: Row | None
    right: Row | None
    full: Row | None = None

    @property
    def file(self) -> int | None:
        for row in (self.full, self.left, self.right):
            if row is not None:
                return row.file
        return None


@dataclass(slots=True)
class _Segment:
    start: int  # the first row
    extras: list[Row] | None = None  # made-up rows
    first: int = 0  # or: diff lines first..last (exclusive)
    last: int = 0
    file: int | None = None
    pairs: "tuple[array[int], array[int]] | None" = None  # side by side: line index pairs (-1)


def human_size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / 1024 / 1024:.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size} bytes"


# A match: (row, column in the row's raw text (a diff line's without its sign), side: 0 left or
# unified, 1 right). Plain tuples: a common word in a 200,000-line diff has as many matches.
Match = tuple[int, int, int]
MATCHES_MAX = 100_000  # past this, the count says "100000+"


class DiffRows:
    """The unified rows of one diff (`index`), with the diff-stat's file list (`listed`: every
    changed file, even those the text does not hold)."""

    side_by_side = False

    def __init__(
        self,
        index: DiffIndex | None,
        listed: Sequence[ListedFile] = (),
        *,
        truncated: bool = False,
        limit_bytes: int | None = None,
        notes: Sequence[str] = (),
        unread: str | None = None,
    ) -> None:
        """`unread`: why there is no diff to read (the checkout is gone): said instead of "0
        files changed", which reads as work with no change."""
        self.index = index or DiffIndex([], bytearray(), array("l"), array("l"), [])
        self.omitted: list[ListedFile] = []
        self.files: list[IndexedFile] = self.index.files
        self.paths = [file.path for file in self.files]
        self._segments: list[_Segment] = []
        self._starts: list[int] = []
        self.count = 0
        self.file_rows: list[int] = []  # each file's header row
        self.highest = self.index.highest
        self.unread: str | None = None  # why there is no diff, said in its one row
        if index is None and not listed:
            return  # nothing read yet, or no workspace: no rows at all
        files = self.index.files
        shown = {file.path for file in files}
        catalogue = list(listed) or [
            ListedFile(f.path, f.insertions, f.deletions, f.old_path) for f in files
        ]
        top: list[Row] = []
        insertions = sum(item.insertions or 0 for item in catalogue)
        deletions = sum(item.deletions or 0 for item in catalogue)
        count = len(catalogue)
        if unread is not None and not catalogue:
            self.unread = inert(unread)
            top.append(Row(NOTE, f"no diff to show: {self.unread}"))
        else:
            changed = f"{count} file{'s' if count != 1 else ''} changed"
            top.append(Row(STAT, f"{changed}, +{insertions} -{deletions}"))
        top += [Row(NOTE, inert(note)) for note in notes]
        missing = [item for item in catalogue if item.path not in shown and not item.omitted]
        if truncated:
            size = f"{limit_bytes / 1024 / 1024:.1f} MB" if limit_bytes else "its size cap"
            what = f"; {len(missing)} file(s) not shown" if missing else ""
            top.append(Row(NOTE, f"the diff was cut at {size}{what} (marked below)"))
        number = {file.path: n for n, file in enumerate(files)}
        by_path = {file.path: file for file in files}
        self.omitted = [item for item in catalogue if item.omitted]
        for item in catalogue:
            file = by_path.get(item.path)
            mark = _CHANGE_MARK.get(file.change, "M") if file else "?"
            counts = (
                "binary"
                if item.insertions is None and item.deletions is None
                else f"+{item.insertions or 0} -{item.deletions or 0}"
            )
            name = f"{item.old_path} -> {item.path}" if item.old_path else item.path
            if item.omitted:
                tail = f"  ({human_size(item.size or 0)}: not shown)"
            elif file is None:
                tail = "  (cut: not shown)"
            elif file.cut:
                tail = "  (cut part-way)"
            else:
                tail = ""
            top.append(
                Row(LISTED, f"{mark} {display(name)}  {counts}{tail}", file=number.get(item.path))
            )
        for item in self.omitted:
            top.append(
                Row(
                    NOTE,
                    f"{display(item.path)}: {human_size(item.size or 0)}, "
                    f"+{item.insertions or 0} -{item.deletions or 0}, too large to show "
                    "(O opens the diff in your pager; ! a shell in the worktree)",
                )
            )
        self._add_extras(top)
        sizes = {item.path: item.size for item in catalogue}
        for n, file in enumerate(files):
            change = "" if file.change == "modified" else f" ({file.change})"
            name = f"{file.old_path} -> {file.path}" if file.old_path else file.path
            counts = f"+{file.insertions} -{file.deletions}"
            if file.binary:  # one line, its size, never its bytes ("+0 -0" read as no change)
                weight = sizes.get(file.path)
                counts = "binary, not shown" + (f" ({human_size(weight)})" if weight else "")
            head = [Row(BLANK, file=n), Row(HEADER, f"{display(name)}{change}  {counts}", file=n)]
            self.file_rows.append(self.count + 1)
            self._add_extras(head)
            if file.end > file.start:
                self._add_lines(file.start, file.end, n)
            if file.cut:
                self._add_extras([Row(NOTE, "the diff was cut here (size cap)", file=n)])

    # -- building ---------------------------------------------------------------------------------

    def _add_extras(self, rows: list[Row]) -> None:
        if not rows:
            return
        self._segments.append(_Segment(self.count, extras=rows))
        self._starts.append(self.count)
        self.count += len(rows)

    def _add_lines(self, first: int, last: int, file: int) -> None:
        self._segments.append(_Segment(self.count, first=first, last=last, file=file))
        self._starts.append(self.count)
        self.count += last - first

    # -- reading ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Row]:
        """Every row in order (for tests and the pager: a screen reads `row`)."""
        for segment in self._segments:
            if segment.extras is not None:
                yield from segment.extras
            else:
                for line in range(segment.first, segment.last):
                    yield self.line_row(line, segment.file)

    def _segment(self, row: int) -> _Segment:
        return self._segments[bisect.bisect_right(self._starts, row) - 1]

    def wrapped_heights(self, width: int) -> "array[int]":
        """Each row's height with its text wrapped at `width` cells, read from the index with no
        `Row` made: a 200,000-line diff's layout in one quick pass, not one object per line."""
        heights: array[int] = array("l")
        kinds, lines = self.index.kinds, self.index.lines
        width = max(1, width)
        for segment in self._segments:
            if segment.extras is not None:
                heights.extend(
                    max(1, -(-text_cells(row.text) // width)) if row.kind == LINE else 1
                    for row in segment.extras
                )
                continue
            heights.extend(
                1
                if kinds[line] in (HUNK, META)
                else max(1, -(-text_cells(lines[line][1:]) // width))
                for line in range(segment.first, segment.last)
            )
        return heights

    def row(self, row: int) -> Row:
        segment = self._segment(row)
        if segment.extras is not None:
            return segment.extras[row - segment.start]
        return self.line_row(segment.first + row - segment.start, segment.file)

    def line_row(self, line: int, file: int | None) -> Row:
        index = self.index
        kind = index.kinds[line]
        text = index.lines[line]
        if kind == HUNK:
            return Row(HUNK_ROW, text, file=file, line=line)
        if kind == META:
            return Row(ODD, text, file=file, line=line)
        return Row(
            LINE,
            text[1:],
            sign=SIGN[kind],
            old_no=index.old_no[line] or None,
            new_no=index.new_no[line] or None,
            file=file,
            line=line,
        )

    def row_of_line(self, line: int) -> int | None:
        """The row showing diff line `line` (None when no row does)."""
        for segment in self._segments:
            if segment.extras is None and segment.first <= line < segment.last:
                return segment.start + line - segment.first
        return None

    def file_of(self, row: int) -> int | None:
        segment = self._segment(row)
        if segment.extras is not None:
            return segment.extras[row - segment.start].file
        return segment.file

    def texts(self) -> Iterator[tuple[int, str, int]]:
        """(first row, text, side) of each stretch of rows, for search: made-up rows one by one,
        a stretch of diff lines as one text joined by newlines (its sign column kept)."""
        for segment in self._segments:
            if segment.extras is not None:
                for offset, row in enumerate(segment.extras):
                    if row.kind != BLANK:
                        yield segment.start + offset, row.text, -1
            else:
                yield segment.start, "\n".join(self.index.lines[segment.first : segment.last]), 0

    def anchor_rows(self, comments: Sequence[Comment]) -> dict[int, list[Comment]]:
        """Where each review comment shows: under its line (found by number, else by the line's
        text nearest to it), else under its file's header, else under the stat."""
        placed: dict[int, list[Comment]] = {}
        by_path = {path: n for n, path in enumerate(self.paths)}
        for comment in comments:
            if comment.path is None:
                continue
            file = by_path.get(comment.path)
            if file is None:
                row = 0
            else:
                line = self._find_line(self.files[file], comment)
                found = self.row_of_line(line) if line is not None else None
                row = found if found is not None else self.file_rows[file]
            placed.setdefault(row, []).append(comment)
        return placed

    def _find_line(self, file: IndexedFile, comment: Comment) -> int | None:
        if comment.line is None:
            return None
        index = self.index
        numbers = index.old_no if comment.side == ANCHOR_OLD else index.new_no
        exact = None
        for line in range(file.start, file.end):
            if numbers[line] == comment.line:
                exact = line
                break
        wanted = comment.line_text
        if wanted is None or (exact is not None and index.lines[exact][1:] == wanted):
            return exact
        best: int | None = None
        for line in range(file.start, file.end):
            if not numbers[line] or index.lines[line][1:] != wanted:
                continue
            if best is None or abs(numbers[line] - comment.line) < abs(
                numbers[best] - comment.line
            ):
                best = line
        return best if best is not None else exact


class SideBySideRows:
    """The same diff, old | new: context lines on both sides, each run of removed lines beside
    the added lines that follow it (padded with blanks), hunk headers and made-up rows across."""

    side_by_side = True

    def __init__(self, unified: DiffRows) -> None:
        self.unified = unified
        self.index = unified.index
        self.files = unified.files
        self.paths = unified.paths
        self.highest = unified.highest
        self.omitted = unified.omitted
        self._segments: list[_Segment] = []
        self._starts: list[int] = []
        self.count = 0
        self.file_rows: list[int] = []
        self._pending: list[Row] = []
        kinds = self.index.kinds
        for segment in unified._segments:
            if segment.extras is not None:
                for row in segment.extras:
                    if row.kind == HEADER:
                        self.file_rows.append(self.count + len(self._pending))
                    self._pending.append(row)
                continue
            self._flush_extras()
            left: array[int] = array("l")
            right: array[int] = array("l")
            removed: list[int] = []
            added: list[int] = []

            previous = CONTEXT_LINE
            for line in range(segment.first, segment.last):
                kind = kinds[line]
                if kind == REMOVED_LINE:
                    if added:
                        _pair_runs(left, right, removed, added)
                    removed.append(line)
                elif kind == ADDED_LINE:
                    added.append(line)
                else:
                    _pair_runs(left, right, removed, added)
                    if kind == NO_NEWLINE_LINE:
                        left.append(line if previous != ADDED_LINE else -1)
                        right.append(line if previous != REMOVED_LINE else -1)
                    else:  # context, a hunk header or an odd line: across (-2 marks across)
                        left.append(line)
                        right.append(line if kind == CONTEXT_LINE else -2)
                previous = kind
            _pair_runs(left, right, removed, added)
            self._segments.append(
                _Segment(self.count, first=segment.first, last=segment.last, file=segment.file,
                         pairs=(left, right))
            )  # fmt: skip
            self._starts.append(self.count)
            self.count += len(left)
        self._flush_extras()

    def _flush_extras(self) -> None:
        rows = self._pending
        if not rows:
            return
        self._segments.append(_Segment(self.count, extras=list(rows)))
        self._starts.append(self.count)
        self.count += len(rows)
        rows.clear()

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Row]:
        for row in range(self.count):
            yield self.row(row)

    def _segment(self, row: int) -> _Segment:
        return self._segments[bisect.bisect_right(self._starts, row) - 1]

    def pair(self, row: int) -> Pair:
        segment = self._segment(row)
        if segment.extras is not None:
            return Pair(None, None, segment.extras[row - segment.start])
        assert segment.pairs is not None
        left, right = segment.pairs
        at = row - segment.start
        a, b = left[at], right[at]
        unified = self.unified
        if b == -2:
            return Pair(None, None, unified.line_row(a, segment.file))
        return Pair(
            unified.line_row(a, segment.file) if a >= 0 else None,
            unified.line_row(b, segment.file) if b >= 0 else None,
        )

    def row(self, row: int) -> Row:
        """The row an action on this row acts on: the new side when there is one."""
        pair = self.pair(row)
        return pair.full or pair.right or pair.left or Row(BLANK)

    def file_of(self, row: int) -> int | None:
        segment = self._segment(row)
        if segment.extras is not None:
            return segment.extras[row - segment.start].file
        return segment.file

    def row_of_line(self, line: int) -> int | None:
        for segment in self._segments:
            if segment.extras is None and segment.first <= line < segment.last:
                assert segment.pairs is not None
                for side in segment.pairs:
                    for at, value in enumerate(side):
                        if value == line:
                            return segment.start + at
        return None

    def texts(self) -> Iterator[tuple[int, str, int]]:
        lines = self.index.lines
        for segment in self._segments:
            if segment.extras is not None:
                for offset, row in enumerate(segment.extras):
                    if row.kind != BLANK:
                        yield segment.start + offset, row.text, -1
                continue
            assert segment.pairs is not None
            for side, values in enumerate(segment.pairs):
                yield segment.start, "\n".join(lines[v] if v >= 0 else " " for v in values), side

    def anchor_rows(self, comments: Sequence[Comment]) -> dict[int, list[Comment]]:
        placed: dict[int, list[Comment]] = {}
        unified = self.unified
        for row, found in unified.anchor_rows(comments).items():
            target = unified.row(row)
            where = self.row_of_line(target.line) if target.line is not None else None
            if where is None:
                file = unified.file_of(row)
                where = self.file_rows[file] if file is not None and self.file_rows else 0
            placed.setdefault(where, []).extend(found)
        return placed


def _pair_runs(
    left: "array[int]", right: "array[int]", removed: list[int], added: list[int]
) -> None:
    """A run of removed lines beside the added lines after it, the shorter padded (-1)."""
    if not removed and not added:
        return
    for k in range(max(len(removed), len(added))):
        left.append(removed[k] if k < len(removed) else -1)
        right.append(added[k] if k < len(added) else -1)
    removed.clear()
    added.clear()


RowSource = DiffRows | SideBySideRows


def find_all(source: Any, query: str) -> list[Match]:
    """Every occurrence of `query` in the rows, in row order (smart case: a query with a capital
    letter matches case; else any case). A diff line's sign column never matches."""
    if not query:
        return []
    fold = query == query.lower()
    needle = query.lower() if fold else query
    found: list[Match] = []
    for start, text, side in source.texts():
        if len(found) >= MATCHES_MAX:
            break
        hay = text.lower() if fold else text
        if len(hay) != len(text):  # a letter whose lower case is longer: search line by line
            hay = "\n".join(part.lower() if fold else part for part in text.split("\n"))
        position = hay.find(needle)
        if position < 0:
            continue
        if side < 0:  # one made-up row
            while position >= 0:
                found.append((start, position, 0))
                position = hay.find(needle, position + 1)
            continue
        line = 0
        counted = 0
        while position >= 0:
            line += hay.count("\n", counted, position)  # C speed: only between hits
            counted = position
            column = position - (hay.rfind("\n", 0, position) + 1)
            if column > 0 and "\n" not in needle:  # the sign column is not text
                found.append((start + line, column - 1, side))
            position = hay.find(needle, position + 1)
    if source.side_by_side:
        found.sort()
    return found[:MATCHES_MAX]
