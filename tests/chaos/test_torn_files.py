"""Guarantee 4: a board file that is missing, read-only, a folder, a FIFO, a socket, a device, not
SQLite, another program's database, cut short, or written by a newer kanban gets one clear error
from every surface, and is left byte for byte as it was (and nothing is made beside what is not a
regular file).

The surfaces: the CLI (a read and a write), the live board (`kanban tui` in a real terminal: a
refusal before the screen is taken, or the board opened read-only with the reason in its header),
the MCP server (`kanban mcp` driven by the SDK's client: tool errors, the session stays up) and,
where it is installed, the REST server. "Read-only" is a board this user may read but not write:
root ignores file modes, so those runs drop every privilege in a new user namespace (`unshare
--user`, mapped to nobody), which makes the operating system's own permission checks apply.
"""

import hashlib
import json
import os
import pty
import re
import select
import signal
import socket
import sqlite3
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from boardlib import Board
from boardlib.store.schema import SCHEMA_VERSION
from tests.cli.conftest import KANBAN, clean_env, user_namespaces
from tests.cli.warm import run_kanban
from tests.http.warm import popen_serve
from tests.mcp.conftest import server_parameters, text_of

pytestmark = pytest.mark.slow  # every torn board on every surface, each a process

KINDS = (
    "missing",
    "read_only",
    "read_only_folder",
    "unreadable",
    "closed_folder",
    "folder",
    "fifo",
    "socket",
    "device",
    "not_sqlite",
    "foreign_sqlite",
    "truncated",
    "cut_to_whole_pages",
    "newer_schema",
)
# What a read and a write are refused with (None: the read works).
REFUSALS: dict[str, tuple[str | None, str]] = {
    "missing": ("no_board", "no_board"),
    "read_only": (None, "read_only"),
    "read_only_folder": (None, "read_only"),
    "unreadable": ("permission_denied", "permission_denied"),
    "closed_folder": ("permission_denied", "permission_denied"),
    "folder": ("not_a_board", "not_a_board"),
    "fifo": ("not_a_board", "not_a_board"),
    "socket": ("not_a_board", "not_a_board"),
    "device": ("not_a_board", "not_a_board"),
    "not_sqlite": ("not_a_board", "not_a_board"),
    "foreign_sqlite": ("not_a_board", "not_a_board"),
    "truncated": ("not_a_board", "not_a_board"),
    "cut_to_whole_pages": ("not_a_board", "not_a_board"),
    "newer_schema": ("newer_schema", "newer_schema"),
}


USERNS = user_namespaces()


def make_torn(kind: str, folder: Path) -> Path:
    path = folder / "board.db"
    if kind == "missing":
        return path
    if kind == "folder":
        path.mkdir()
        (path / "notes.txt").write_text("someone's folder\n")
        return path
    if kind == "fifo":
        os.mkfifo(path)
        return path
    if kind == "socket":
        with socket.socket(socket.AF_UNIX) as bound:
            bound.bind(str(path))  # the socket file stays after the socket is closed
        return path
    if kind == "device":  # through a link: SQLite resolves it, so its -journal would be in /dev
        path.symlink_to(os.devnull)
        return path
    if kind == "not_sqlite":
        path.write_text("id,title\n" + "1,a spreadsheet export\n" * 200)
        return path
    if kind == "foreign_sqlite":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
        conn.commit()
        conn.close()
        return path
    with Board(path) as board:
        for number in range(60):
            board.create_task(f"task {number} " + "x" * 300)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if kind == "newer_schema":
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    for side in folder.glob("board.db-*"):
        side.unlink()
    data = path.read_bytes()
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2 + 1000])  # cut mid-page
    elif kind == "cut_to_whole_pages":
        path.write_bytes(data[: len(data) - 2 * 4096])  # whole pages, fewer than the header says
    elif kind == "read_only":
        path.chmod(0o444)
    elif kind == "read_only_folder":  # the file may be written, but no -shm can be made
        folder.chmod(0o555)
    elif kind == "unreadable":
        path.chmod(0o000)
    elif kind == "closed_folder":  # the file is never even seen
        folder.chmod(0o000)
    return path


# The kinds that open, read-only; those run as a user file modes apply to; and those that are no
# regular file, beside which nothing may appear.
OPEN_READ_ONLY = ("read_only", "read_only_folder", "newer_schema")
UNPRIVILEGED = ("read_only", "read_only_folder", "unreadable", "closed_folder")
NOT_FILES = ("fifo", "socket", "device")


def fingerprint(path: Path) -> Any:
    """The path's bytes (a folder: every file's), what a FIFO, socket or device is (never read:
    a FIFO would wait for a writer), or None when nothing is there."""
    link = os.readlink(path) if path.is_symlink() else None
    if path.is_dir():
        return sorted((p.name, p.read_bytes()) for p in path.iterdir())
    if not path.exists():
        return link
    found = path.stat()
    if not stat.S_ISREG(found.st_mode):
        return link, stat.S_IFMT(found.st_mode), found.st_ino, found.st_rdev
    return link, hashlib.sha256(path.read_bytes()).hexdigest()


def beside(path: Path) -> list[str]:
    """Everything in the board path's folder, and what is named after what it resolves to beside
    that (`/dev/null-journal`, for a link to /dev/null)."""
    target = Path(os.path.realpath(path))
    return sorted(str(p) for p in {*path.parent.iterdir(), *target.parent.glob(f"{target.name}-*")})


def as_user(kind: str, argv: list[str]) -> list[str]:
    """The command as a user file modes apply to, for the boards they refuse (root ignores
    them): in a user namespace of its own it keeps its uid (it owns what root owns) but loses
    root's override, so the owner's bits decide. The other kinds run as this user, and the
    CLI, MCP and REST runs among them are forked from warm interpreters (tests/cli/warm.py,
    tests/mcp/zygote.py, tests/http/warm.py: the same `main`, ~1 CPU-s less each); a process
    in a namespace of its own must be started fresh."""
    return ["unshare", "--user", *argv] if kind in UNPRIVILEGED else argv


@pytest.fixture(params=KINDS)
def torn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    kind = str(request.param)
    if kind in UNPRIVILEGED and not USERNS:
        pytest.skip("needs user namespaces (unshare --user) to run without root's privileges")
    folder = tmp_path / "boards"
    folder.mkdir()
    path = make_torn(kind, folder)
    before = fingerprint(path)
    around = beside(path)
    yield kind, path
    assert fingerprint(path) == before, f"{kind}: the board file changed"
    if kind in NOT_FILES:
        assert beside(path) == around, f"{kind}: files were made beside it"
    if kind == "missing":
        assert list(folder.iterdir()) == [], "a board appeared at a mistyped path"


def one_error(stderr: str) -> dict[str, Any]:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return dict(json.loads(lines[0]))


def test_the_cli_refuses_each_torn_board_with_one_typed_line(torn: tuple[str, Path]) -> None:
    kind, path = torn
    read_reason, write_reason = REFUSALS[kind]
    env = clean_env(KANBAN_DB=str(path))
    for args, reason in (
        (["task", "list"], read_reason),
        (["task", "claim-next", "--agent", "ada"], write_reason),
        (["task", "move", "TASK-1", "--to", "cancelled"], write_reason),
    ):
        argv = [str(KANBAN), *args]
        run = (
            subprocess.run(as_user(kind, argv), env=env, capture_output=True, text=True, timeout=60)
            if kind in UNPRIVILEGED
            else run_kanban(argv, env=env, timeout=60)
        )
        if reason is None:
            assert run.returncode == 0, run.stderr
            assert len(json.loads(run.stdout)) == 60
            continue
        assert run.returncode == 2 and run.stdout == "", (args, run)
        error = one_error(run.stderr)
        assert error["reason"] == reason, (args, error)
        assert str(path) in error["error"]


# -- the live board, in a real terminal -------------------------------------------------------

ANSI = re.compile(
    rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-B]"
)


def in_terminal(
    argv: list[str],
    env: dict[str, str],
    *,
    wait_for: bytes,
    keys: bytes = b"q",
    timeout: float = 60.0,
) -> tuple[int, str]:
    """Run `argv` on a pseudo-terminal until `wait_for` appears on it (or it exits), then type
    `keys`; the exit code and the screen's text."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the app in a terminal of its own
        os.environ.clear()
        os.environ.update(env | {"TERM": "xterm-256color", "TEXTUAL_COLOR_SYSTEM": "256"})
        os.execvp(argv[0], argv)
    seen = b""
    deadline = time.monotonic() + timeout
    typed = False
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the terminal closed: the app is gone
                    break
                if not chunk:
                    break
                seen += chunk
            if not typed and wait_for in ANSI.sub(b"", seen):
                time.sleep(0.3)
                os.write(fd, keys)
                typed = True
    finally:
        os.close(fd)
    stop_by = time.monotonic() + 15
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > stop_by:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.05)
    code = os.waitstatus_to_exitcode(status)
    return code, ANSI.sub(b"", seen).decode(errors="replace")


def test_the_live_board_refuses_or_opens_read_only_and_says_why(
    torn: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    kind, path = torn
    env = {k: v for k, v in clean_env().items() if k not in ("COLUMNS", "LINES")}
    argv = as_user(kind, [str(KANBAN), "tui", "--db", str(path)])
    if kind in OPEN_READ_ONLY:
        code, screen = in_terminal(argv, env, wait_for=b"read-only")
        assert code == 0, screen[-2000:]
        assert "read-only" in screen
        why = "newer kanban" if kind == "newer_schema" else "write access"
        assert why in screen, screen[-2000:]
        return
    code, screen = in_terminal(argv, env, wait_for=b"\x00never")
    assert code == 2, screen[-2000:]
    error = json.loads(screen.strip().splitlines()[-1])
    assert error["reason"] == REFUSALS[kind][1]


# -- the MCP server ---------------------------------------------------------------------------


@asynccontextmanager
async def mcp_on(kind: str, path: Path):  # type: ignore[no-untyped-def]
    if kind in UNPRIVILEGED:
        argv = as_user(kind, [str(KANBAN), "mcp", "--agent", "ada"])
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=clean_env(KANBAN_DB=str(path))
        )
    else:
        params = server_parameters(path, "ada")
    async with Client(params) as client:
        yield client


async def test_the_mcp_server_answers_each_torn_board_with_tool_errors(
    torn: tuple[str, Path],
) -> None:
    kind, path = torn
    read_reason, write_reason = REFUSALS[kind]
    async with mcp_on(kind, path) as client:
        for tool, reason in (("list_tasks", read_reason), ("claim_next", write_reason)):
            result = await client.call_tool(tool, {})
            text = text_of(result)
            if reason is None:
                assert not result.is_error, text
                continue
            assert result.is_error and text.startswith(f"{reason}: "), (tool, text)
            assert isinstance(result.structured_content, dict)
            assert result.structured_content["reason"] == reason
        # The session stays up after the refusals: the same answer again, not a dead pipe.
        again = await client.call_tool("claim_next", {})
        assert again.is_error and text_of(again).startswith(f"{write_reason}: ")


# -- the REST server ----------------------------------------------------------------------------


def test_the_server_refuses_to_start_on_a_torn_board_or_serves_it_read_only(
    torn: tuple[str, Path],
) -> None:
    kind, path = torn
    argv, env = [str(KANBAN), "serve", "--port", "0"], clean_env(KANBAN_DB=str(path))
    server = (
        subprocess.Popen(
            as_user(kind, argv), env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        if kind in UNPRIVILEGED
        else popen_serve(argv, env=env)
    )
    if kind not in ("read_only", "read_only_folder"):
        out, err = server.communicate(timeout=60)
        assert server.returncode == 2 and out == "", (out, err)
        assert one_error(err)["reason"] == REFUSALS[kind][1]
        return
    try:
        assert server.stdout is not None
        url = json.loads(server.stdout.readline())["listening"]
        with httpx.Client(base_url=url, timeout=30) as client:
            listed = client.get("/api/board")
            assert listed.status_code == 200 and len(listed.json()["tasks"]) == 60
            claimed = client.post("/api/board/claim-next", json={"agent": "ada"})
            assert claimed.status_code == 403, claimed.text
            assert claimed.json()["reason"] == "read_only"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    assert server.returncode == 0
