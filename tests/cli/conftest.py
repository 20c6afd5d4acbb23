"""Running the real `kanban` console script in subprocesses against a temp board.

Every call gets a clean environment (no stray `KANBAN_*` from the developer's shell) and the test
clock: `KANBAN_TEST_CLOCK=1` with `KANBAN_NOW_MS` set to the time the test chose, so lease expiry is
tested by moving that number, never by sleeping. Set-up that is not under test goes through the
library in-process (`board()`), on the same file and the same clock, which is much faster than a
subprocess per step.
"""

import functools
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, ManualClock
from tests.backends import board_created, content_digest, is_postgres
from tests.cli.warm import run_kanban

BIN = Path(sys.executable).parent
KANBAN = BIN / "kanban"
START_MS = 1_800_000_000_000
MINUTE_MS = 60_000
LEASE_MS = 15 * MINUTE_MS


@functools.cache
def user_namespaces() -> bool:
    """Whether `unshare --user` works here: a process in a user namespace of its own keeps its
    uid but not root's override, so file modes apply to it (tests of what a user may not read
    or write, run as root)."""
    try:
        probe = subprocess.run(["unshare", "--user", "true"], capture_output=True, check=False)
    except FileNotFoundError:
        return False
    return probe.returncode == 0


def clean_env(**extra: str) -> dict[str, str]:
    """The developer's environment without kanban's variables. Bytecode caching is left on so
    each of the hundreds of subprocesses does not recompile the CLI's modules."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("KANBAN_")}
    env.pop("XDG_STATE_HOME", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


@dataclass(frozen=True)
class Run:
    args: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def doc(self) -> Any:
        return json.loads(self.out)

    @property
    def error(self) -> dict[str, Any]:
        """The refusal: exactly one JSON line on stderr."""
        lines = self.err.splitlines()
        assert len(lines) == 1, f"expected one stderr line, got {self.err!r}"
        return json.loads(lines[0])  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return (
            f"kanban {' '.join(self.args)} -> {self.code}\nstdout: {self.out}\nstderr: {self.err}"
        )


class Kanban:
    """The CLI on one board file, at a time the test controls."""

    def __init__(
        self, db: Path, *, now_ms: int = START_MS, test_clock: bool = True, init: bool = True
    ) -> None:
        """`init` creates the board first, as `kanban db init` would (the CLI's verbs refuse a
        missing board); `init=False` leaves the path as it is."""
        assert KANBAN.exists(), f"the console script is not installed at {KANBAN}"
        self.db = db
        self.now = now_ms
        self.test_clock = test_clock
        if init and not board_created(db):
            Board(db, reconcile_orphans=False).close()

    def env(self, **extra: str) -> dict[str, str]:
        env = clean_env(KANBAN_DB=str(self.db))
        if self.test_clock:
            env |= {"KANBAN_TEST_CLOCK": "1", "KANBAN_NOW_MS": str(self.now)}
        return env | extra

    def advance(self, *, minutes: float = 0, ms: int = 0) -> int:
        self.now += int(minutes * MINUTE_MS) + ms
        return self.now

    def run(self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Run:
        done = run_kanban([str(KANBAN), *args], env=self.env(**(env or {})), input=stdin)
        return Run(tuple(args), done.returncode, done.stdout, done.stderr)

    def on_terminal(self, *args: str, env: dict[str, str] | None = None) -> Run:
        """Run with stdout on a pseudo-terminal of 80 columns (as a person runs it) and stderr
        on a pipe, so what each says is told apart; the pty's CRLFs read as line breaks."""
        import pty

        leader, follower = pty.openpty()
        process = subprocess.Popen(
            [str(KANBAN), *args],
            env=self.env(COLUMNS="80", **(env or {})),
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
        )
        os.close(follower)
        said = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the pty's other end closed: the process is gone
                break
            if not chunk:
                break
            said += chunk
        os.close(leader)
        assert process.stderr is not None
        err = process.stderr.read().decode()
        process.stderr.close()
        code = process.wait()
        return Run(tuple(args), code, said.decode().replace("\r\n", "\n"), err)

    def popen(self, *args: str, **extra: str) -> "subprocess.Popen[str]":
        return subprocess.Popen(
            [str(KANBAN), *args],
            env=self.env(**extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ok(self, *args: str, **kwargs: Any) -> Any:
        """Run a command that must succeed: exit 0, nothing on stderr, one JSON document."""
        result = self.run(*args, **kwargs)
        assert result.code == 0, str(result)
        assert result.err == "", str(result)
        return result.doc

    def created(self, *args: str, board: Path | None = None, **kwargs: Any) -> Any:
        """Run a command that must succeed by making a new board: exit 0, one JSON document on
        stdout, and on stderr only the one line that says where the board was created."""
        result = self.run(*args, **kwargs)
        assert result.code == 0, str(result)
        assert result.err == f"kanban: created a new board at {board or self.db}\n", str(result)
        return result.doc

    def noticed(self, *args: str, notice: str, **kwargs: Any) -> Any:
        """Run a command that must succeed saying one thing on stderr: exit 0, one JSON document
        on stdout, and on stderr exactly the line `kanban: <notice>`."""
        result = self.run(*args, **kwargs)
        assert result.code == 0, str(result)
        assert result.err == f"kanban: {notice}\n", str(result)
        return result.doc

    def refused(self, *args: str, reason: str, **kwargs: Any) -> dict[str, Any]:
        """Run a command the board must refuse: exit 2, nothing on stdout, one JSON line naming
        `reason` on stderr."""
        result = self.run(*args, **kwargs)
        assert result.code == 2, str(result)
        assert result.out == "", str(result)
        error = result.error
        assert error["reason"] == reason, str(result)
        assert error["error"], str(result)
        return error

    @contextmanager
    def board(self) -> Iterator[Board]:
        """The same file through the library, at the test's time, without the orphan pass (so
        reading never changes what the CLI is about to judge)."""
        with Board(self.db, clock=ManualClock(self.now), reconcile_orphans=False) as opened:
            yield opened

    def row(self, task_id: str) -> dict[str, Any]:
        with self.board() as board:
            return board.get_task(task_id).to_json()

    def snapshot(self) -> tuple[list[dict[str, Any]], int]:
        """Every task and the event cursor: equal before and after means nothing was written."""
        with self.board() as board:
            tasks = [task.to_json() for task in board.all_tasks()]
            return tasks, board.last_event_seq()


def agent_notice(
    agent: str, *, by: str = "--agent", caps: str = "24 children, 30 roots per 5 minutes"
) -> str:
    """What a create as an agent says on stderr (`kanban/cli/creating.py`), named `by` the
    option or by the environment (`by="env"`)."""
    undo = "unset KANBAN_AGENT" if by == "env" else "leave out --agent"
    return (
        f"creating as agent {agent}: agent creates are capped ({caps}); {undo} to create as the "
        "operator"
    )


def file_digest(path: Path) -> str | None:
    """sha256 of a file's bytes (None when it does not exist)."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def board_digest(db: Path) -> tuple[str | None, str]:
    """The board file and its write-ahead log, byte for byte (the `-shm` index is not data, and
    an empty log is no log: the last connection to close deletes it)."""
    wal = db.with_name(db.name + "-wal")
    return file_digest(db), hashlib.sha256(wal.read_bytes() if wal.exists() else b"").hexdigest()


@contextmanager
def unchanged(db: Path) -> Iterator[None]:
    """Assert that the block wrote nothing to the board at `db`: the same bytes in the file and
    its WAL, and the same `PRAGMA data_version` on a connection held open across the block (it
    moves on every commit by anyone else, even one a checkpoint has not reached the file yet).
    The set-up's log is checkpointed first, so a reader's closing checkpoint moves nothing.
    On Postgres: the same rows in every table (content hashes) and the same sequence values."""
    if is_postgres(db):
        before_content = content_digest(db)
        yield
        assert content_digest(db) == before_content, "the board's rows changed"
        return
    settle = sqlite3.connect(db)
    settle.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    settle.close()
    before = board_digest(db)
    watcher = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        (version,) = watcher.execute("PRAGMA data_version").fetchone()
        yield
        assert watcher.execute("PRAGMA data_version").fetchone()[0] == version, "a commit happened"
    finally:
        watcher.close()
    assert board_digest(db) == before, "the board's bytes changed"


@pytest.fixture
def land_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board_path: Path
) -> Iterator[tuple["Kanban", Any, dict[str, str]]]:
    """The CLI on a board with a real repository to land in (`make_land_env`), and the
    environment its worktrees and git need."""
    from tests.worktrees.conftest import GIT_ENV, make_land_env

    land = make_land_env(tmp_path, monkeypatch, board_path)
    env = {
        "KANBAN_WORKTREES": str(land.root),
        **{key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")},
    }
    yield Kanban(board_path), land, env
    land.board.close()
