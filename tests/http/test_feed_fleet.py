"""Issue 29: a fleet of SSE followers against the real `kanban serve`, in a subprocess.

A hundred followers that leave together must cost the server nothing but their own clean-up:
no traceback in its log, no lost wake-up for the next followers, no connection left behind; and
SIGTERM ends every stream still open (with a reconnect hint) and exits 0 within --graceful."""

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from boardlib import Board
from kanban.http.server import in_flight_budget
from tests.backends import is_postgres
from tests.cli.conftest import KANBAN, clean_env
from tests.http.sse_clients import Fleet
from tests.http.warm import popen_serve

FOLLOWERS = 100
ROUNDS = 20
GRACEFUL_S = 12.0
# A server that ends its streams at SIGTERM exits long before uvicorn's wait for in-flight requests
# (--graceful less the tail it keeps, 11 s) runs out; one that waits for its streams to end by
# themselves exits after it. Under CI load on a slow 2-core VM the first took 5.4 s: the margin.
STREAMS_ENDED_S = in_flight_budget(GRACEFUL_S)
# What a round's wait for its events may take on a loaded 2-core machine; a feed whose wake-ups
# are lost never gets there.
DELIVERY_S = 30.0


@dataclass
class Server:
    url: str
    process: "subprocess.Popen[str]"
    db: Path
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def terminate(self) -> tuple[int | None, float]:
        """SIGTERM; the exit code (None: still running at --graceful + 10 s) and the time taken."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.process.wait(timeout=GRACEFUL_S + 10)
        except subprocess.TimeoutExpired:
            code = None
        return code, time.monotonic() - started


@contextmanager
def kanban_serve(tmp_path: Path, db: Path) -> Iterator[Server]:
    Board(db).close()
    log = tmp_path / "server.log"
    with log.open("w") as stderr:
        process = popen_serve(
            [str(KANBAN), "--db", str(db), "serve", "--port", "0", "--graceful", str(GRACEFUL_S)],
            env=clean_env(KANBAN_WORKTREES=str(tmp_path / "state" / "worktrees")),
            stderr=stderr,  # a file, not a pipe: a server that logs a lot must not block on it
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line, f"kanban serve did not start: {log.read_text()}"
        yield Server(json.loads(line)["listening"], process, db, log)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def seqs_after(db: Path, cursor: int) -> list[int]:
    with Board(db, read_only=True, reconcile_orphans=False) as reader:
        return [event.seq for event in reader.events(since=cursor, limit=1000)]


def write_events(server: Server, http: httpx.Client, round_no: int) -> None:
    """Four tasks through the server, one from another process's connection (as an agent's CLI
    call would be): the feed must notice both kinds of writer."""
    for n in range(4):
        answer = http.post("/api/board", json={"title": f"round {round_no} task {n}"})
        assert answer.status_code == 200, answer.text
    with Board(server.db, reconcile_orphans=False) as other:
        other.create_task(f"round {round_no} from elsewhere")


def assert_clean_log(server: Server) -> None:
    text = server.log_text()
    for needle in ("Traceback", "unexpected failure", "ERROR", "Lock is not acquired"):
        assert needle not in text, f"the server logged {needle!r}:\n{text[-4000:]}"


def assert_checkpointed(server: Server) -> None:
    if not is_postgres(server.db):
        wal = Path(f"{server.db}-wal")
        assert not wal.exists() or wal.stat().st_size == 0, "the WAL was not checkpointed"


@pytest.mark.slow
def test_100_followers_leaving_together_20_times_break_nothing(
    tmp_path: Path, board_path: Path
) -> None:
    with (
        kanban_serve(tmp_path, board_path) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        start = seqs_after(server.db, 0)[-1:] or [0]
        witness = Fleet(server.url, 1, since=start[0])  # stays through every round
        assert witness.all_streaming()
        fds_after_round_1 = 0
        cursor = start[0]
        for round_no in range(1, ROUNDS + 1):
            fleet = Fleet(server.url, FOLLOWERS, since=cursor)
            assert fleet.all_streaming(), f"round {round_no}: not every follower got a stream"
            assert {f.status for f in fleet.followers} == {200}
            write_events(server, http, round_no)
            expected = seqs_after(server.db, cursor)
            assert len(expected) == 5
            delivered = fleet.all_have(expected, timeout_s=DELIVERY_S)
            short = [f.ids for f in fleet.followers if f.ids != expected]
            assert delivered, (
                f"round {round_no}: {len(short)} of {FOLLOWERS} followers missed events "
                f"(wanted {expected}, e.g. got {short[:1]}); log:\n{server.log_text()[-3000:]}"
            )
            fleet.close()  # all leave at once
            cursor = expected[-1]
            everything = seqs_after(server.db, start[0])
            assert witness.all_have(everything, timeout_s=DELIVERY_S), (
                f"round {round_no}: the follower that stayed missed events"
            )
            assert_clean_log(server)
            assert server.process.poll() is None
            if round_no == 1:  # the client's connection and the board's files are open by now
                assert witness.pump(lambda: server.open_fds() < 100, timeout_s=10)
                fds_after_round_1 = server.open_fds()
        # Every connection of the later rounds was let go too.
        assert witness.pump(lambda: server.open_fds() <= fds_after_round_1, timeout_s=10), (
            f"{server.open_fds() - fds_after_round_1} descriptors more than after round 1"
        )
        code, took = server.terminate()
        assert witness.all_ended(timeout_s=1), "the follower still open at SIGTERM was not ended"
        witness.close()
    assert code == 0, f"exit {code} after {took:.1f} s; log:\n{server.log_text()[-3000:]}"
    assert took < STREAMS_ENDED_S, (
        f"shutdown took {took:.2f} s: the streams were waited for, not ended (--graceful "
        f"{GRACEFUL_S} s leaves in-flight requests {STREAMS_ENDED_S} s)"
    )
    assert_clean_log(server)
    assert_checkpointed(server)


@pytest.mark.slow
def test_sigterm_ends_the_streams_of_100_followers_and_exits_within_graceful(
    tmp_path: Path, board_path: Path
) -> None:
    with (
        kanban_serve(tmp_path, board_path) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        fleet = Fleet(server.url, FOLLOWERS, since=0)
        assert fleet.all_streaming()
        write_events(server, http, 1)
        assert fleet.all_have(seqs_after(server.db, 0), timeout_s=DELIVERY_S)
        code, took = server.terminate()
        ended = fleet.all_ended(timeout_s=1)
        open_still = [n for n, f in enumerate(fleet.followers) if not f.eof]
        fleet.close()
    assert ended, f"{len(open_still)} streams were still open after the server stopped"
    assert code == 0, f"exit {code} after {took:.1f} s; log:\n{server.log_text()[-3000:]}"
    assert took < STREAMS_ENDED_S, (
        f"shutdown took {took:.2f} s: the streams were waited for, not ended (--graceful "
        f"{GRACEFUL_S} s leaves in-flight requests {STREAMS_ENDED_S} s)"
    )
    # Each stream was ended by the server, cleanly: the last chunk, and a hint to reconnect.
    assert all(f.last_chunk for f in fleet.followers), "a stream was cut instead of ended"
    assert all(f.retries for f in fleet.followers), "a stream ended without a reconnect hint"
    assert_clean_log(server)
    assert_checkpointed(server)
