"""`python -m tui`, the documented way to run the board without the CLI (docs/tui.md), answers bad
input as `kanban tui` does, before the terminal is taken: found in tmux, `--db` with a typo made
a new empty board there (and its WAL) that the operator then watched, `--theme nosuch` and
`--poll-ms 0` were tracebacks."""

import os
import socket
import subprocess
import sys
from pathlib import Path

from boardlib import Board

TIMEOUT_S = 30


def run_module(
    *argv: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *argv],
        cwd=cwd, capture_output=True, text=True, check=False, timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip


def test_a_mistyped_db_is_refused_and_makes_no_board(tmp_path: Path) -> None:
    typo = tmp_path / "bord.db"
    run = run_module("--db", str(typo), cwd=tmp_path)
    assert run.returncode == 2, run
    assert "no_board" in run.stderr or "no board" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def test_a_bad_theme_or_poll_interval_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "board.db"
    Board(path).close()
    for argv, said in (
        (["--theme", "textual-lite"], "textual-light"),
        (["--poll-ms", "0"], "--poll-ms"),
    ):
        run = run_module("--db", str(path), *argv, cwd=tmp_path)
        assert run.returncode == 2, run
        assert said in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_an_unreachable_database_is_refused_not_a_traceback(tmp_path: Path) -> None:
    """A PostgreSQL URL whose server refuses the connection: `database_unavailable`, exit 2, as
    `kanban tui` answers; it was a traceback, exit 1 (the check caught refusals of the board, not
    a server's)."""
    with socket.socket() as bound:  # bound, never listening: connections are refused
        bound.bind(("127.0.0.1", 0))
        url = f"postgresql://nobody@127.0.0.1:{bound.getsockname()[1]}/x"
        run = run_module("--db", url, cwd=tmp_path)
    assert run.returncode == 2, run
    assert "database_unavailable" in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_a_read_only_look_makes_no_default_board(tmp_path: Path) -> None:
    """Found comparing the two entries' copies of the board check: `python -m tui --read-only`
    made the per-user default board, where `kanban tui --read-only` refuses it as `no_board`
    (a look changes nothing). Both now keep one rule (`check_board_to_watch`)."""
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if k != "KANBAN_DB"} | {"XDG_STATE_HOME": str(state)}
    run = run_module("--read-only", cwd=tmp_path, env=env)
    assert run.returncode == 2, run
    assert "no_board" in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not (state / "kanban" / "board.db").exists()
