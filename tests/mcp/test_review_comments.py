"""Review comments anchored to lines through the MCP server (the SDK's client over stdio): a
reviewer comments on a line and rejects with more, and the builder's `get_task` (detail) carries
them; a bad anchor is a tool error that writes nothing."""

from pathlib import Path

from boardlib import Board
from boardlib import transitions as t
from tests.mcp.conftest import fingerprint, mcp_session, ok, refused


async def test_a_reviewer_comments_on_lines_and_the_builder_reads_them(tmp_path: Path) -> None:
    db = tmp_path / "board.db"
    with Board(db) as board:
        task = board.create_task("Fix the answer")
        board.claim(task.id, "alice")
        board.complete(task.id, "alice")
    async with mcp_session(db, "grace", "--tools", "reviewer") as reviewer:
        comment = await ok(
            reviewer, "add_comment", task_id=task.id, body="twelve is off by one",
            path="app.py", line=12,
        )  # fmt: skip
        assert (comment["path"], comment["line"], comment["side"]) == ("app.py", 12, "new")
        rejected = await ok(
            reviewer, "reject_task", task_id=task.id, reason="see the comments",
            comments=[{"path": "app.py", "line": 3, "body": "three too"},
                      {"path": "README.md", "body": "say so here"}],
        )  # fmt: skip
        assert rejected["status"] == t.TODO
    async with mcp_session(db, "alice") as builder:
        view = await ok(builder, "get_task", task_id=task.id, detail=True)
    assert [(e["path"], e["line"], e["body"], e["author"]) for e in view["review"]] == [
        ("app.py", 12, "twelve is off by one", "grace"),
        ("app.py", 3, "three too", "grace"),
        ("README.md", None, "say so here", "grace"),
    ]


async def test_a_bad_anchor_is_a_tool_error_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "board.db"
    with Board(db) as board:
        task = board.create_task("x")
    before = fingerprint(db)
    async with mcp_session(db, "grace") as client:
        await refused(client, "add_comment", "invalid_input", task_id=task.id, body="x",
                      path="../etc/passwd", line=1)  # fmt: skip
    assert fingerprint(db) == before
