"""A follower that stops reading, against the real `kanban serve`: the server ends its stream once
one send has waited `--sse-send-timeout` (nothing is queued for it past the socket's buffers), the
readers beside it miss nothing, and the stalled client resumes from the last `id:` it read with
`Last-Event-ID`, gap-free."""

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from boardlib import Board, PlanItem
from tests.cli.conftest import KANBAN, clean_env
from tests.http.sse_clients import Fleet, Follower

BATCH = 1000  # tasks a plan creates in one transaction: one event each
MOST_BATCHES = 60  # the socket buffers hold some thousands of events; far fewer than this


@contextmanager
def serve(tmp_path: Path, db: Path, *args: str) -> Iterator[tuple[str, Path]]:
    Board(db).close()
    log = tmp_path / "server.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [str(KANBAN), "--db", str(db), "serve", "--port", "0", *args],
            env=clean_env(KANBAN_WORKTREES=str(tmp_path / "worktrees")),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line, log.read_text()
        yield json.loads(line)["listening"], log
    finally:
        process.terminate()
        process.wait(timeout=30)


def stalled_follower(url: str, since: int) -> socket.socket:
    """A follower with a tiny receive window that never reads."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(
        f"GET /api/board/events?since={since} HTTP/1.1\r\nHost: {host}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    return sock


def read_to_end(sock: socket.socket, timeout_s: float = 30) -> Follower:
    follower = Follower(sock)
    sock.settimeout(timeout_s)
    while not follower.eof:
        try:
            follower.feed(sock.recv(65536))
        except ConnectionError:
            follower.feed(b"")
    return follower


def resume(url: str, last_id: int, until: int, timeout_s: float = 30) -> Follower:
    """Reconnect with `Last-Event-ID` and read until the id `until` arrives."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=timeout_s)
    sock.sendall(
        f"GET /api/board/events HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
        f"Last-Event-ID: {last_id}\r\n\r\n".encode()
    )
    follower = Follower(sock)
    deadline = time.monotonic() + timeout_s
    while not follower.ids or follower.ids[-1] < until:
        assert time.monotonic() < deadline, "the resumed stream fell short"
        follower.feed(sock.recv(65536))
        assert not follower.eof
    sock.close()
    return follower


def all_seqs(db: Path, since: int) -> list[int]:
    with Board(db, read_only=True, reconcile_orphans=False) as reader:
        seqs: list[int] = []
        while True:
            page = reader.events(since=seqs[-1] if seqs else since, limit=1000)
            if not page:
                return seqs
            seqs += [event.seq for event in page]


@pytest.mark.slow
def test_a_stalled_follower_is_ended_and_resumes_with_last_event_id(tmp_path: Path) -> None:
    db = tmp_path / "board.db"
    with serve(tmp_path, db, "--sse-send-timeout", "1") as (url, log):
        with Board(db, reconcile_orphans=False) as writer:
            start = writer.last_event_seq()
            stalled = stalled_follower(url, start)
            readers = Fleet(url, 3, since=start)
            assert readers.all_streaming()
            batches = 0
            while "client that stopped reading" not in log.read_text():
                assert batches < MOST_BATCHES, "the stalled follower was never ended"
                items = [PlanItem(key=f"k{batches}_{n}", title=f"t{n}") for n in range(BATCH)]
                writer.create_plan(items)
                batches += 1
                wanted = all_seqs(db, start)
                assert readers.all_have(wanted, timeout_s=60), "a reader fell behind"
            writer.create_task("after the stalled follower left")
        wanted = all_seqs(db, start)
        assert readers.all_have(wanted, timeout_s=60)  # the readers beside it miss nothing
        readers.close()

        got = read_to_end(stalled)  # what the socket buffers held, then the server's close
        assert got.ids, "the stalled follower read nothing at all"
        assert got.ids == wanted[: len(got.ids)]  # a gap-free prefix
        assert len(got.ids) < len(wanted)  # it was ended before the end
        resumed = resume(url, got.ids[-1], wanted[-1])
        assert got.ids + resumed.ids == wanted
        assert "Traceback" not in log.read_text()
