"""Review comments anchored to a line, on both backends: stored with their anchor (the seed's
comment row plus `path`, `line`, `side`, `lineText`), carried by the view, refused when the anchor
is not one (and then nothing is written), and kept with a reject in its one transaction."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, BoardError, Reason
from boardlib import transitions as t
from boardlib.review import Anchor, ReviewNote, review_markdown
from boardlib.store.schema import MIGRATIONS
from tests.conftest import task_in


def test_an_anchored_comment_keeps_its_anchor(board: Board) -> None:
    task = board.create_task("parse plans")
    comment = board.add_comment(
        task.id, "off by one here", author_agent_id="operator:ana", author_type="user",
        path="app.py", line=12, line_text="    return items[1:]",
    )  # fmt: skip
    assert (comment.path, comment.line, comment.side, comment.line_text) == (
        "app.py", 12, "new", "    return items[1:]",
    )  # fmt: skip
    old = board.add_comment(task.id, "keep this", path="app.py", line=3, side="old")
    whole = board.add_comment(task.id, "split this file", path="docs/a b.md")
    plain = board.add_comment(task.id, "a plain one")
    stored = board.comments(task.id)
    assert [c.id for c in stored] == [comment.id, old.id, whole.id, plain.id]
    assert stored[0].to_json() == comment.to_json()
    assert stored[0].to_json()["lineText"] == "    return items[1:]"
    assert (stored[1].side, stored[2].line, stored[2].side) == ("old", None, None)
    assert (plain.path, plain.line, plain.side, plain.line_text) == (None, None, None, None)
    view = board.view(task.id).to_json()
    assert [entry["commentId"] for entry in view["review"]] == [comment.id, old.id, whole.id]
    assert view["review"][0] == {
        "commentId": comment.id, "path": "app.py", "line": 12, "side": "new",
        "lineText": "    return items[1:]", "body": "off by one here", "author": "operator:ana",
        "createdAt": comment.created_at,
    }  # fmt: skip
    [event] = [e for e in board.events(task_id=task.id) if e.data.get("commentId") == comment.id]
    assert event.data == {"commentId": comment.id, "path": "app.py", "line": 12}


@pytest.mark.parametrize(
    ("anchor", "field"),
    [
        ({"line": 3}, "line"),
        ({"path": "app.py", "side": "old"}, "side"),
        ({"path": "app.py", "lineText": "x"}, "lineText"),
        ({"path": ""}, "path"),
        ({"path": "/etc/passwd", "line": 1}, "path"),
        ({"path": "../outside.py", "line": 1}, "path"),
        ({"path": "a//b.py", "line": 1}, "path"),
        ({"path": "app.py/", "line": 1}, "path"),  # found by hand: a trailing `/` was taken
        ({"path": "./app.py", "line": 1}, "path"),  # and `.`: app.py as no diff names it
        ({"path": "src/./app.py", "line": 1}, "path"),
        ({"path": "evil\x1b]52;c;eA==\x07.py", "line": 1}, "path"),
        ({"path": "app.py", "line": 0}, "line"),
        ({"path": "app.py", "line": True}, "line"),
        ({"path": "app.py", "line": "12"}, "line"),
        ({"path": "app.py", "line": 1, "side": "left"}, "side"),
        ({"path": "app.py", "line": 1, "lineText": "x" * 4001}, "lineText"),
    ],
)
def test_a_bad_anchor_is_refused_and_changes_nothing(
    shared_board: Board, anchor: dict[str, Any], field: str
) -> None:
    board = shared_board
    task = board.create_task("parse plans")
    before = (board.comments(task.id), board.last_event_seq())
    names = {"lineText": "line_text"}
    with pytest.raises(BoardError) as refused:
        board.add_comment(task.id, "x", **{names.get(k, k): v for k, v in anchor.items()})
    assert refused.value.reason is Reason.INVALID_INPUT
    assert refused.value.details.get("field") == field
    assert (board.comments(task.id), board.last_event_seq()) == before


def test_a_reject_carries_several_anchored_comments_in_its_transaction(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW, builder="ada")
    rejected = board.reject(
        task.id, "grace", "the parser drops the last line",
        comments=[
            {"path": "app.py", "line": 12, "body": "this slice drops it", "lineText": "x[:-1]"},
            ReviewNote(Anchor("tests/test_app.py", 30, "old"), "why was this test removed?"),
            {"path": "README.md", "body": "say so in the README"},
        ],
    )  # fmt: skip
    assert rejected.status == t.TODO
    comments = board.comments(task.id)
    assert [c.body for c in comments] == [
        "rejected: the parser drops the last line",
        "this slice drops it",
        "why was this test removed?",
        "say so in the README",
    ]
    assert {c.author_agent_id for c in comments} == {"grace"}
    assert [(c.path, c.line, c.side) for c in comments[1:]] == [
        ("app.py", 12, "new"), ("tests/test_app.py", 30, "old"), ("README.md", None, None),
    ]  # fmt: skip
    assert len({c.created_at for c in comments}) == 1


def test_a_reject_with_one_bad_comment_writes_nothing(board: Board) -> None:
    task = task_in(board, t.IN_REVIEW, builder="ada")
    before = (board.get_task(task.id), board.comments(task.id), board.last_event_seq())
    with pytest.raises(BoardError) as refused:
        board.reject(
            task.id, "grace", "no",
            comments=[{"path": "app.py", "line": 1, "body": "fine"}, {"path": "x", "line": -1,
                                                                       "body": "bad"}],
        )  # fmt: skip
    assert refused.value.reason is Reason.INVALID_INPUT
    after = (board.get_task(task.id), board.comments(task.id), board.last_event_seq())
    assert after == before and after[0].status == t.IN_REVIEW


def test_comments_that_are_not_a_list_are_refused_and_none_is_no_comments(board: Board) -> None:
    """The library fuzz passed `comments=None` (a TypeError, a 500 on every surface)."""
    task = task_in(board, t.IN_REVIEW, builder="ada")
    before = (board.get_task(task.id), board.comments(task.id), board.last_event_seq())
    for bad in ("app.py:1 fine", 3, {"path": "app.py", "line": 1, "body": "fine"}):
        with pytest.raises(BoardError) as refused:
            board.reject(task.id, "grace", "no", comments=bad)  # type: ignore[arg-type]
        assert refused.value.reason is Reason.INVALID_INPUT, bad
    after = (board.get_task(task.id), board.comments(task.id), board.last_event_seq())
    assert after == before
    rejected = board.reject(task.id, "grace", "no", comments=None)  # type: ignore[arg-type]
    assert rejected.status == t.TODO


def test_review_markdown_lists_each_anchor_inert(board: Board) -> None:
    task = board.create_task("parse plans")
    board.add_comment(task.id, "a `tick` and\nmore", path="app.py", line=12,
                      line_text="    s = `x`", author_agent_id="operator:ana")  # fmt: skip
    board.add_comment(task.id, "\x1b[2Jwiped?", path="b.py", line=1, side="old")
    text = review_markdown(task.id, board.comments(task.id))
    assert "## `app.py:12`" in text and "> `` " in text and "`x`" in text
    assert "operator:ana, " in text and "a `tick` and\nmore" in text
    assert "## `b.py:1 (old)`" in text
    assert "\x1b" not in text and "␛[2Jwiped?" in text


def test_a_board_of_the_first_schema_gains_the_anchor_columns(tmp_path: Path) -> None:
    """A file migrated by the first release keeps its comments; the new columns are NULL."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version=1")
    conn.execute(
        "INSERT INTO tasks (seq, id, title, status, created_at, updated_at) "
        "VALUES (1, 'TASK-1', 'old', 'todo', 1, 1)"
    )
    conn.execute(
        "INSERT INTO task_comments (seq, id, task_id, author_type, body, created_at) "
        "VALUES (1, 'C-1', 'TASK-1', 'agent', 'from before', 1)"
    )
    conn.close()
    with Board(path) as board:
        [old] = board.comments("TASK-1")
        assert (old.body, old.path, old.line) == ("from before", None, None)
        new = board.add_comment("TASK-1", "after", path="app.py", line=2)
        assert board.comments("TASK-1")[1].to_json() == new.to_json()
