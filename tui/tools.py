"""The operator's own tools, opened from the drawer while the app is suspended: `$EDITOR` on a
file at a line, `$PAGER` (else `less -R`) on the diff in the terminal's colours, `$SHELL` in the
task's worktree.

Agent text is data here too: a command is an argument list run without a shell, the file is
always an absolute path (a file named `-rf` never becomes an option), and the pager's file holds
inert text between our own colour codes only (no escape sequence from a diff line reaches the
terminal). The paths come from the core (`Worktrees.checkout_file`), inside the state folder.
"""

import os
import shlex
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from .diff_rows import BLANK, HEADER, HUNK_ROW, LINE, DiffRows, display

# Editors that take `FILE:LINE` (or `-g FILE:LINE`) instead of the usual `+LINE FILE`.
_GOTO_FLAG = frozenset({"code", "code-insiders", "codium", "vscodium", "cursor"})
_COLON_LINE = frozenset({"subl", "sublime_text", "zed", "hx", "helix", "mate"})

RESET = "\x1b[0m"
_SGR = {"+": "\x1b[32m", "-": "\x1b[31m", "hunk": "\x1b[36m", "header": "\x1b[1m"}


def _program(environ: Mapping[str, str], name: str, fallback: list[str]) -> list[str]:
    value = (environ.get(name) or "").strip()
    if not value:
        return list(fallback)
    try:
        words = shlex.split(value)
    except ValueError:
        words = [value]
    return words or list(fallback)


def editor_command(path: Path, line: int | None, environ: Mapping[str, str]) -> list[str]:
    """`$VISUAL`, else `$EDITOR`, else vi, on `path` at `line`."""
    words = _program(environ, "VISUAL", []) or _program(environ, "EDITOR", ["vi"])
    assert path.is_absolute(), path  # an absolute path is never read as an option
    name = os.path.basename(words[0])
    if line is None:
        return [*words, str(path)]
    if name in _GOTO_FLAG:
        return [*words, "-g", f"{path}:{line}"]
    if name in _COLON_LINE:
        return [*words, f"{path}:{line}"]
    return [*words, f"+{line}", str(path)]


def pager_command(path: Path, environ: Mapping[str, str]) -> list[str]:
    """`$PAGER` (less gets `-R`, so colours show as colours), else `less -R`, on `path`."""
    words = _program(environ, "PAGER", ["less", "-R"])
    if os.path.basename(words[0]) == "less" and not any(
        word.startswith("-") and "R" in word and not word.startswith("--") for word in words[1:]
    ):
        words.append("-R")
    return [*words, str(path)]


def shell_command(environ: Mapping[str, str]) -> list[str]:
    return _program(environ, "SHELL", ["/bin/sh"])


def pager_text(rows: DiffRows) -> Iterator[str]:
    """The diff as the pager shows it: git's unified format, coloured with our own SGR codes
    around inert text (a diff line's own escape sequences arrive as `␛` pictures)."""
    for row in rows:
        if row.kind == BLANK:
            yield "\n"
        elif row.kind == LINE:
            colour = _SGR.get(row.sign)
            text = f"{row.sign}{display(row.text)}"
            yield f"{colour}{text}{RESET}\n" if colour else f"{text}\n"
        elif row.kind == HUNK_ROW:
            yield f"{_SGR['hunk']}{display(row.text)}{RESET}\n"
        elif row.kind == HEADER:
            yield f"{_SGR['header']}{row.text}{RESET}\n"
        else:
            yield f"{row.text}\n"


@contextmanager
def pager_file(rows: DiffRows, task_id: str) -> Iterator[Path]:
    """The coloured diff in a private temporary file (mode 600), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="kanban-diff-") as folder:
        safe = "".join(char if char.isalnum() or char in "-_." else "_" for char in task_id)
        path = Path(folder) / f"{safe or 'task'}.diff"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.writelines(pager_text(rows))
        yield path
