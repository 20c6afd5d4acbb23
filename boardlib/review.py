"""Review comments anchored to lines of a task's diff: what an anchor is, the checks every surface
gets, and the words an agent reads them in (`REVIEW.md` in the worktree, the resume read).

An anchor is `path` (relative to the repository's top), optionally `line` on `side` (the new file
for an added or unchanged line, the old one for a removed line), and the line's text when the
comment was written, so a reader can find the line again after the file moved on. How the comments
reach the agent: docs/agents.md#review-comments
"""

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from . import validation as validate
from .errors import invalid_input
from .inert import inert
from .records import ANCHOR_NEW, ANCHOR_SIDES, Comment
from .shell import shell_command

PATH_MAX = 1000
LINE_MAX = 10**9
LINE_TEXT_MAX = 4000
NOTES_MAX = 100  # anchored comments one reject may carry


@dataclass(frozen=True, slots=True)
class Anchor:
    path: str
    line: int | None = None
    side: str = ANCHOR_NEW
    line_text: str | None = None

    @property
    def label(self) -> str:
        """`app.py:12`, `app.py:12 (old)` for a removed line, or the path alone."""
        if self.line is None:
            return self.path
        return f"{self.path}:{self.line}" + ("" if self.side == ANCHOR_NEW else f" ({self.side})")


@dataclass(frozen=True, slots=True)
class ReviewNote:
    """One anchored comment a reject carries (its author is the reviewer)."""

    anchor: Anchor
    body: str


def anchor(
    path: Any = None, line: Any = None, side: Any = None, line_text: Any = None
) -> Anchor | None:
    """The anchor the caller gave, checked; None when it gave none. A line needs a path; a path
    is a file's, as a diff names it (relative, no `.`, `..` or empty segment), without control
    characters (it is shown in terminals and written into files)."""
    if path is None:
        for value, field in ((line, "line"), (side, "side"), (line_text, "lineText")):
            if value is not None:
                raise invalid_input(f"{field} needs a path", field=field)
        return None
    if not isinstance(path, str) or not path:
        raise invalid_input("path must be a non-empty string", field="path")
    if len(path) > PATH_MAX:
        raise invalid_input(f"path is longer than {PATH_MAX} characters", field="path")
    if inert(path) != path or not path.strip() or "\\" in path:
        raise invalid_input(
            "path must be a file name: no control characters or backslashes", field="path"
        )
    # every segment a name: `a//b` and `./a` name the file `a/b` and `a` differently from the
    # diff (the anchor then matched no line of it), and `a/` names no file at all
    if {"", ".", ".."} & set(path.split("/")):
        raise invalid_input(
            "path must be a file's path from the repository's top: no leading or trailing `/`, "
            "and no `.`, `..` or empty segment",
            field="path",
        )
    number = None
    if line is not None:
        number = validate.integer(line, "line", minimum=1, maximum=LINE_MAX)
    where = ANCHOR_NEW
    if side is not None:
        if side not in ANCHOR_SIDES:
            raise invalid_input(f"side must be one of {', '.join(ANCHOR_SIDES)}", field="side")
        if number is None:
            raise invalid_input("side needs a line", field="side")
        where = side
    text = None
    if line_text is not None:
        if number is None:
            raise invalid_input("lineText needs a line", field="lineText")
        if not isinstance(line_text, str):
            raise invalid_input("lineText must be a string", field="lineText")
        if len(line_text) > LINE_TEXT_MAX:
            raise invalid_input(
                f"lineText is longer than {LINE_TEXT_MAX} characters", field="lineText"
            )
        validate.text(line_text, "lineText", limit=LINE_TEXT_MAX, required=False)  # UTF-8
        text = line_text
    return Anchor(path, number, where, text)


def notes(items: Iterable[Any] | None) -> list[ReviewNote]:
    """A reject's anchored comments, checked: each a `ReviewNote`, or a mapping with `path`,
    `line`, `side`, `lineText` (or `line_text`) and `body`. None is none of them."""
    checked: list[ReviewNote] = []
    if items is None:
        return checked
    if isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable):
        raise invalid_input("comments must be a list of review comments", field="comments")
    for item in items:
        body: Any
        if isinstance(item, ReviewNote):
            given = item.anchor
            found = anchor(given.path, given.line, given.side, given.line_text)
            body = item.body
        elif isinstance(item, dict):
            found = anchor(
                item.get("path"),
                item.get("line"),
                item.get("side"),
                item.get("lineText", item.get("line_text")),
            )
            body = item.get("body")
        else:
            raise invalid_input("each review comment must have a path and a body", field="comments")
        if found is None:
            raise invalid_input("each review comment needs a path", field="path")
        text = validate.text(body, "body")
        assert text is not None
        checked.append(ReviewNote(found, text))
        if len(checked) > NOTES_MAX:
            raise invalid_input(
                f"a reject carries at most {NOTES_MAX} review comments", field="comments"
            )
    return checked


def anchor_of(comment: Comment) -> Anchor | None:
    if comment.path is None:
        return None
    return Anchor(comment.path, comment.line, comment.side or ANCHOR_NEW, comment.line_text)


def review_comments(comments: Sequence[Comment]) -> list[Comment]:
    """The anchored ones, oldest first."""
    return [comment for comment in comments if comment.anchored]


def review_entries(comments: Sequence[Comment]) -> list[dict[str, Any]]:
    """The anchored comments as an agent reads them in JSON (`Comment.review_entry`)."""
    return [comment.review_entry() for comment in review_comments(comments)]


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))


def _code(text: str) -> str:
    """Inline code that holds any backticks the text has."""
    fence = "`" * (_ticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _ticks(text: str) -> int:
    longest = current = 0
    for char in text:
        current = current + 1 if char == "`" else 0
        longest = max(longest, current)
    return longest


def review_markdown(task_id: str, comments: Sequence[Comment]) -> str:
    """`REVIEW.md`: every anchored comment, oldest first, under its file and line."""
    anchored = review_comments(comments)
    lines = [
        f"# Review of {task_id}",
        "",
        "Comments a reviewer anchored to lines of this task's work, oldest first. kanban rewrites",
        "this file whenever one is added; the board has them too "
        f"(`{shell_command('kanban', 'task', 'view', task_id)}`).",
        "Each names the file and line it is about and the line's text when it was written: if",
        "the line moved, find that text.",
        "",
    ]
    if not anchored:
        lines += ["No review comments yet.", ""]
    for comment in anchored:
        found = anchor_of(comment)
        assert found is not None
        lines.append(f"## {_code(inert(found.label))}")
        lines.append("")
        if found.line_text is not None:
            lines.append(f"> {_code(inert(found.line_text))}")
            lines.append("")
        who = comment.author_agent_id or comment.author_type
        lines.append(f"{inert(who)}, {_when(comment.created_at)}:")
        lines.append("")
        lines += [inert(line) for line in comment.body.splitlines() or [""]]
        lines.append("")
    return "\n".join(lines)
