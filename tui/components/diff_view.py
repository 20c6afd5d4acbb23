"""The drawer's Diff tab: the diff-stat, the changed files, then the unified diff, drawn with
Textual's line API.

A `ScrollView` that builds only the visible rows, each once (cached strips), with git's `+`/`-`
in a gutter so it reads without colour; diff text goes through `boardlib.inert`. Why:
docs/architecture.md#the-task-drawer
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from boardlib.inert import inert
from boardlib.worktrees.diffs import ADDED, CONTEXT, NO_NEWLINE, REMOVED, DiffFile

from . import tcss

TAB_SIZE = 4

# Row kinds.
STAT = "stat"
LISTED = "listed"  # a file in the list under the stat
HEADER = "header"  # a file's header before its hunks
HUNK = "hunk"
LINE = "line"
NOTE = "note"
BLANK = "blank"

_BOLD = Style(bold=True)
_ITALIC = Style(italic=True)
_DIM_ITALIC = Style(dim=True, italic=True)

_CHANGE_MARK = {"modified": "M", "added": "A", "deleted": "D", "renamed": "R"}


@dataclass(frozen=True, slots=True)
class Row:
    kind: str
    text: str = ""
    sign: str = " "  # for LINE: "+", "-", " " or "\\"
    old_no: int | None = None
    new_no: int | None = None
    file: int | None = None  # the file index this row belongs to


@dataclass(frozen=True, slots=True)
class ListedFile:
    """A changed file as the diff-stat knows it (it may be missing from a cut diff)."""

    path: str
    insertions: int | None
    deletions: int | None
    old_path: str | None = None


def _plain(text: str) -> str:
    return inert(text.expandtabs(TAB_SIZE))


def build_rows(
    files: Sequence[DiffFile],
    listed: Sequence[ListedFile] = (),
    *,
    truncated: bool = False,
    limit_bytes: int | None = None,
) -> list[Row]:
    """The rows of the view: stat, file list, then every file's hunks. `listed` is the diff-stat's
    file list (all changed files, even those cut from the text); without it the parsed files
    stand in."""
    shown = {file.path for file in files}
    catalogue = list(listed) or [
        ListedFile(f.path, f.insertions, f.deletions, f.old_path) for f in files
    ]
    insertions = sum(item.insertions or 0 for item in catalogue)
    deletions = sum(item.deletions or 0 for item in catalogue)
    count = len(catalogue)
    rows = [
        Row(STAT, f"{count} file{'s' if count != 1 else ''} changed, +{insertions} -{deletions}")
    ]
    missing = [item for item in catalogue if item.path not in shown]
    if truncated:
        size = f"{limit_bytes / 1024 / 1024:.1f} MB" if limit_bytes else "its size cap"
        what = f"; {len(missing)} file(s) not shown" if missing else ""
        rows.append(Row(NOTE, f"the diff was cut at {size}{what} (marked below)"))
    index = {file.path: number for number, file in enumerate(files)}
    by_path = {file.path: file for file in files}
    for item in catalogue:
        file = by_path.get(item.path)
        mark = _CHANGE_MARK.get(file.change, "M") if file else "?"
        counts = (
            "binary"
            if item.insertions is None and item.deletions is None
            else f"+{item.insertions or 0} -{item.deletions or 0}"
        )
        name = f"{item.old_path} -> {item.path}" if item.old_path else item.path
        tail = "" if file else "  (cut: not shown)"
        if file is not None and file.cut:
            tail = "  (cut part-way)"
        rows.append(
            Row(LISTED, f"{mark} {_plain(name)}  {counts}{tail}", file=index.get(item.path))
        )
    for number, file in enumerate(files):
        rows.append(Row(BLANK))
        change = "" if file.change == "modified" else f" ({file.change})"
        name = f"{file.old_path} -> {file.path}" if file.old_path else file.path
        rows.append(
            Row(
                HEADER,
                f"{_plain(name)}{change}  +{file.insertions} -{file.deletions}",
                file=number,
            )
        )
        if file.binary:
            rows.append(Row(NOTE, "binary file: not shown", file=number))
        for hunk in file.hunks:
            rows.append(Row(HUNK, _plain(hunk.header), file=number))
            for line in hunk.lines:
                if line.kind == NO_NEWLINE:
                    rows.append(Row(NOTE, "\\ no newline at end of file", file=number))
                    continue
                rows.append(
                    Row(
                        LINE,
                        _plain(line.text),
                        sign=line.kind,
                        old_no=line.old_no,
                        new_no=line.new_no,
                        file=number,
                    )
                )
        if file.cut:
            rows.append(Row(NOTE, "the diff was cut here (size cap)", file=number))
    return rows


class DiffView(ScrollView, can_focus=False):
    """A unified diff, line by line; `n`/`p` between files, `g`/`G` to the ends (the drawer's
    keys call `next_file`, `previous_file`, `scroll_home`, `scroll_end`)."""

    DEFAULT_CSS = tcss(__file__)
    COMPONENT_CLASSES = {
        "diff-view--gutter",
        "diff-view--added",
        "diff-view--removed",
        "diff-view--context",
        "diff-view--hunk",
        "diff-view--header",
        "diff-view--stat",
        "diff-view--listed",
        "diff-view--note",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self.file_rows: list[int] = []  # the row of each file's header
        self.number_width = 1
        self._cache: LRUCache[int, Strip] = LRUCache(2048)
        self._styles: dict[str, Style] | None = None
        self._signature: object = None
        self.paths: list[str] = []  # each file's path, for its lexer
        self._lexers: dict[int, Any] = {}

    # -- content --------------------------------------------------------------------------------

    def show(self, rows: list[Row], *, signature: object = None, paths: Sequence[str] = ()) -> None:
        """Replace the rows, keeping the scroll position (clamped): a live refresh of the same
        task must not throw the reader back to the top. `signature`: rows with the same signature
        as the current ones are not redrawn at all."""
        if signature is not None and signature == self._signature:
            return
        self._signature = signature
        self.rows = rows
        self.paths = list(paths)
        self._lexers = {}
        self.file_rows = [i for i, row in enumerate(rows) if row.kind == HEADER]
        highest = max(
            (max(r.old_no or 0, r.new_no or 0) for r in rows if r.kind == LINE), default=0
        )
        self.number_width = max(1, len(str(highest)))
        self._cache.clear()
        width = max((self._row_width(row) for row in rows), default=0)
        y = self.scroll_offset.y
        self.virtual_size = Size(width, len(rows))
        self.scroll_to(y=min(y, max(0, len(rows) - self.scrollable_content_region.height)),
                       animate=False, immediate=True)  # fmt: skip
        self.refresh()

    def _gutter_width(self) -> int:
        return 2 * self.number_width + 4  # "old new + "

    def _row_width(self, row: Row) -> int:
        return cell_len(row.text) + (self._gutter_width() if row.kind == LINE else 0)

    @property
    def top_row(self) -> int:
        return int(self.scroll_offset.y)

    # -- navigation -----------------------------------------------------------------------------

    def next_file(self) -> bool:
        """Put the next file's header at the top; False when there is none below."""
        for row in self.file_rows:
            if row > self.top_row:
                self.scroll_to(y=row, animate=False, immediate=True)
                return True
        return False

    def previous_file(self) -> bool:
        for row in reversed(self.file_rows):
            if row < self.top_row:
                self.scroll_to(y=row, animate=False, immediate=True)
                return True
        return False

    # -- drawing --------------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._cache.clear()

    @property
    def styles_by_kind(self) -> dict[str, Style]:
        if self._styles is None:
            get = self.get_component_rich_style
            self._styles = {
                name: get(f"diff-view--{name}")
                for name in ("gutter", "added", "removed", "context", "hunk", "header", "stat",
                             "listed", "note")
            }  # fmt: skip
        return self._styles

    def render_line(self, y: int) -> Strip:
        index = self.top_row + y
        width = self.scrollable_content_region.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        strip = self._cache.get(index)
        if strip is None:
            strip = self._cache[index] = self._strip(self.rows[index])
        x = int(self.scroll_offset.x)
        return strip.crop_extend(x, x + width, self.rich_style)

    def _strip(self, row: Row) -> Strip:
        styles = self.styles_by_kind
        base = self.rich_style
        if row.kind == LINE:
            style = styles["added" if row.sign == ADDED else "removed" if row.sign == REMOVED
                          else "context"]  # fmt: skip
            width = self.number_width
            old = "" if row.old_no is None else str(row.old_no)
            new = "" if row.new_no is None else str(row.new_no)
            sign = row.sign if row.sign in (ADDED, REMOVED) else " "
            segments = [
                Segment(f"{old:>{width}} {new:>{width}} ", base + styles["gutter"]),
                Segment(f"{sign} ", base + style + Style(bold=sign != CONTEXT)),
                *self._marked(row, base + style),
            ]
        elif row.kind == BLANK:
            segments = []
        else:
            segments = [Segment(row.text, base + styles[row.kind])]
        return Strip(segments)

    def _lexer(self, file: int | None) -> Any:
        if file is None or file >= len(self.paths):
            return None
        if file not in self._lexers:
            self._lexers[file] = lexer_for(self.paths[file])
        return self._lexers[file]

    def _marked(self, row: Row, style: Style) -> list[Segment]:
        """The line's text, its syntax marked by weight and slant only (see the module doc)."""
        lexer = self._lexer(row.file)
        if lexer is None or not row.text:
            return [Segment(row.text, style)]
        from pygments.token import Comment, Keyword, String  # type: ignore[import-untyped]

        segments = []
        for token, value in lexer.get_tokens(row.text):
            if not value or "\n" in value:
                value = value.replace("\n", "")
                if not value:
                    continue
            if token in Keyword:
                extra = _BOLD
            elif token in Comment:
                extra = _DIM_ITALIC
            elif token in String:
                extra = _ITALIC
            else:
                extra = None
            segments.append(Segment(value, style + extra if extra else style))
        return segments

    def text_of_screen(self) -> list[str]:
        """The visible rows as plain text (for tests and for reading aloud)."""
        height = self.scrollable_content_region.height
        return [
            "".join(segment.text for segment in self.render_line(y)).rstrip() for y in range(height)
        ]


_LEXERS: dict[str, Any] = {}


def lexer_for(path: str) -> Any:
    """The Pygments lexer for a file name, or None; cached. The first call imports Pygments'
    lexer (tens of ms): `warm_lexers` does that in the worker that read the diff, off the event
    loop."""
    name = path.rsplit("/", 1)[-1]
    if name not in _LEXERS:
        from pygments.lexers import get_lexer_for_filename  # type: ignore[import-untyped]
        from pygments.util import ClassNotFound  # type: ignore[import-untyped]

        try:
            _LEXERS[name] = get_lexer_for_filename(name, stripnl=False, ensurenl=False)
        except ClassNotFound:
            _LEXERS[name] = None
    return _LEXERS[name]


def warm_lexers(paths: Sequence[str]) -> None:
    for path in paths:
        lexer = lexer_for(path)
        if lexer is not None:
            for _ in lexer.get_tokens("x = 1"):  # the lexer's own first-use set-up
                pass


def listed_files(diff_files: Sequence[Any]) -> list[ListedFile]:
    """The detail's `diff_files` (`boardlib.worktrees.FileStat`) as the view's file list."""
    return [
        ListedFile(item.path, item.insertions, item.deletions, item.old_path) for item in diff_files
    ]
