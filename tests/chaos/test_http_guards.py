"""Guarantee 8: the REST server's guards, against the real `kanban serve` on a loopback port.

- Off loopback a token is required (tests/http/test_serve.py starts and refuses 0.0.0.0); here:
  a wrong or missing token gets the same 401, whatever the guess, and the token check takes no
  time that depends on how much of a guess was right (measured on the check itself, with a
  control that shows the measurement sees a leak when there is one, and over HTTP against the
  noise of the requests).
- A body over 2 MB is refused with 413 without being read whole: a declared length is refused
  before the body is sent, a chunked one as soon as it passes the cap, and a 50 MB stream leaves
  the server's memory where it was.
- A per-agent token cannot act as another agent: every body field of every route in
  `/openapi.json` that names an agent is in the table below, and naming another agent there is
  403 `forbidden` with nothing written.
"""

import json
import os
import signal
import socket
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from boardlib import Board
from kanban.http.auth import Identity, TokenBook
from tests.cli.conftest import KANBAN, clean_env
from tests.http.warm import popen_serve

pytestmark = pytest.mark.slow  # a 50 MB stream and timing-equal 401s

TOKENS = {
    "alice": "alice-chaos-token-0123456789abcdef",
    "bob": "bob-chaos-token-0123456789abcdef00",
    "dana": "dana-chaos-token-0123456789abcdef0",
}


@dataclass
class Server:
    url: str
    port: int
    pid: int
    db: Path

    def client(self, who: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {TOKENS[who]}"} if who else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One `kanban serve` for the module's tests (a fresh one each cost most of their CPU): each
    judges only its own requests, and the memory test its own growth."""
    tmp_path = tmp_path_factory.mktemp("guards")
    db = tmp_path / "board.db"
    Board(db).close()
    tokens = tmp_path / "tokens"
    identities = {"alice": "agent:alice", "bob": "agent:bob", "dana": "operator:dana"}
    tokens.write_text("".join(f"{TOKENS[name]} {who}\n" for name, who in identities.items()))
    tokens.chmod(0o600)
    process = popen_serve(
        [str(KANBAN), "serve", "--port", "0", "--tokens", str(tokens)],
        env=clean_env(KANBAN_DB=str(db)),
        cwd=tmp_path,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line, process.stderr.read() if process.stderr else ""
        url = json.loads(line)["listening"]
        yield Server(url, int(url.rsplit(":", 1)[1]), process.pid, db)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


# -- tokens ---------------------------------------------------------------------------------------


def test_a_wrong_or_missing_token_gets_the_same_401(server: Server) -> None:
    real = TOKENS["alice"]
    guesses: dict[str, dict[str, str]] = {
        "missing": {},
        "empty bearer": {"Authorization": "Bearer"},
        "not bearer": {"Authorization": f"Basic {real}"},
        "wrong first char": {"Authorization": f"Bearer x{real[1:]}"},
        "wrong last char": {"Authorization": f"Bearer {real[:-1]}x"},
        "a prefix": {"Authorization": f"Bearer {real[:10]}"},
        "longer": {"Authorization": f"Bearer {real}x"},
        "another case": {"Authorization": f"Bearer {real.upper()}"},
    }
    seen = set()
    for label, headers in guesses.items():
        answer = httpx.get(f"{server.url}/api/board", headers=headers, timeout=30)
        assert answer.status_code == 401, (label, answer.text)
        seen.add((answer.text, answer.headers.get("www-authenticate")))
    assert len(seen) == 1, seen  # one answer: nothing says which guess came closer
    right = {"Authorization": f"Bearer {real}"}
    assert httpx.get(f"{server.url}/api/board", headers=right).status_code == 200


def _timed(call: Any, rounds: int) -> float:
    call()  # once untimed: the guess's 256 KB in the cache, whatever ran before it
    started = time.perf_counter_ns()
    for _ in range(rounds):
        call()
    return (time.perf_counter_ns() - started) / rounds


def test_the_token_check_takes_the_same_time_however_close_the_guess() -> None:
    """Long tokens (256 KB) make a content-dependent comparison measurable: a plain `==` is
    measured too, as the control that shows this measurement sees such a leak."""
    secret = "s" * 256 * 1024
    book = TokenBook([(secret, Identity("agent", "alice")), ("t" * 64, Identity("agent", "bob"))])
    first = "x" + secret[1:]  # wrong at the first character
    last = secret[:-1] + "x"  # wrong at the last: a prefix-comparing check would take longest
    checked: dict[str, list[float]] = {"first": [], "last": []}
    naive: dict[str, list[float]] = {"first": [], "last": []}
    for round_ in range(40):  # interleaved, so both see the same machine; the fastest of each
        # is its cost without interference (another process on the 2 cores only ever adds time).
        # The order alternates: whichever ran second ran after the other's plain ==, with
        # different memory hot (CI saw a ratio of 0.54 from that alone).
        order = (("first", first), ("last", last))
        for name, guess in order if round_ % 2 == 0 else order[::-1]:
            checked[name].append(_timed(lambda g=guess: book.identify(g), 20))
            naive[name].append(_timed(lambda g=guess: g == secret, 20))
    assert book.identify(first) is None and book.identify(last) is None
    control = min(naive["last"]) / min(naive["first"])
    assert control > 3, f"the control saw no leak in a plain ==: ratio {control:.2f}"
    ratio = min(checked["last"]) / min(checked["first"])
    # A leak is the control's size (a 256 KB prefix against one character: ~48 measured, and
    # asserted over 3); a loaded machine moved a sound check to 1.26 in CI and 1.51 beside
    # other test runs, so the band is wide (half to twice) and a leak still far outside it.
    assert 0.5 < ratio < 2, f"identify() time depends on the guess: ratio {ratio:.2f}"


def test_over_http_a_close_guess_is_not_told_apart_from_a_far_one(server: Server) -> None:
    real = TOKENS["alice"]
    guesses = {
        "far": {"Authorization": "Bearer " + "z" * len(real)},
        "close": {"Authorization": f"Bearer {real[:-1]}z"},
        "missing": {},
    }
    times: dict[str, list[float]] = {name: [] for name in guesses}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for _ in range(120):
            for name, headers in guesses.items():
                started = time.perf_counter()
                assert client.get("/api/board", headers=headers).status_code == 401
                times[name].append((time.perf_counter() - started) * 1000)
    pooled = sorted(t for series in times.values() for t in series)
    spread = pooled[len(pooled) * 3 // 4] - pooled[len(pooled) // 4]
    medians = {name: statistics.median(series) for name, series in times.items()}
    gap = abs(medians["close"] - medians["far"])
    assert gap <= max(spread, 0.5), (medians, spread)  # within the requests' own noise


# -- bodies over 2 MB -----------------------------------------------------------------------------

LIMIT = 2 * 1024 * 1024


def _raw(server: Server, head: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(head.encode())
    return sock


def _read_status(sock: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1])


def _head(server: Server, extra: str) -> str:
    return (
        f"POST /api/board HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Authorization: Bearer {TOKENS['dana']}\r\nContent-Type: application/json\r\n{extra}\r\n"
    )


def test_a_declared_oversize_body_is_refused_before_it_is_sent(server: Server) -> None:
    sock = _raw(server, _head(server, f"Content-Length: {50 * LIMIT}\r\n"))
    try:
        sock.sendall(b'{"title": "')  # and nothing more: the server must not wait for the rest
        assert _read_status(sock) == 413
    finally:
        sock.close()


def written(server: Server) -> tuple[int, list[dict[str, Any]]]:
    """What the board holds: its last event and every task (equal before and after: nothing
    was written in between)."""
    with Board(server.db, read_only=True) as board:
        return board.last_event_seq(), [task.to_json() for task in board.all_tasks()]


def test_a_chunked_body_is_cut_off_once_it_passes_the_cap(server: Server) -> None:
    before = written(server)
    sock = _raw(server, _head(server, "Transfer-Encoding: chunked\r\n"))
    try:
        piece = b"x" * 65536
        sent = 0
        while sent <= LIMIT:
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            sent += len(piece)
        # Past the cap, and the body not finished: the answer comes without the rest.
        assert _read_status(sock) == 413
    finally:
        sock.close()
    assert written(server) == before


def test_a_50_mb_stream_leaves_the_servers_memory_where_it_was(server: Server) -> None:
    with server.client("dana") as warm:
        warm.get("/api/board")
    before = server.rss_kb()
    sock = _raw(server, _head(server, "Transfer-Encoding: chunked\r\n"))
    piece = b"y" * 65536
    sent = 0
    try:
        while sent < 50 * 1024 * 1024:
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            sent += len(piece)
    except OSError:
        pass  # the server answered 413 and closed: it stopped reading long before 50 MB
    finally:
        sock.close()
    grown_mb = (server.rss_kb() - before) / 1024
    assert grown_mb < 10, f"the server's memory grew {grown_mb:.1f} MB on a refused body"
    with server.client("dana") as after:
        assert after.get("/api/board").status_code == 200  # and it still serves


# -- an agent's token is its identity -------------------------------------------------------------


def _agent_fields(schema: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(method, path, field) for every request-body property that names who acts."""
    components = schema.get("components", {}).get("schemas", {})
    found = set()
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            ref = content.get("application/json", {}).get("schema", {})
            for option in ref.get("anyOf", [ref]):
                name = option.get("$ref", "").rsplit("/", 1)[-1]
                for field in components.get(name, {}).get("properties", {}):
                    if field in ("agent", "assigneeAgentId", "authorAgentId"):
                        found.add((method.upper(), path, field))
    return found


# Every (method, path, field) of /openapi.json naming who acts, with the rest of a valid body.
POSING: dict[tuple[str, str, str], dict[str, Any]] = {
    ("POST", "/api/board/claim-next", "agent"): {},
    ("POST", "/api/board/{task_id}/claim", "assigneeAgentId"): {},
    ("POST", "/api/board/{task_id}/heartbeat", "agent"): {},
    ("POST", "/api/board/{task_id}/progress", "agent"): {"note": "n"},
    ("POST", "/api/board/{task_id}/extend-lease", "agent"): {},
    ("POST", "/api/board/{task_id}/complete", "agent"): {},
    ("POST", "/api/board/{task_id}/approve", "agent"): {},
    ("POST", "/api/board/{task_id}/reject", "agent"): {"reason": "r"},
    ("POST", "/api/board/{task_id}/block", "agent"): {"reason": "r"},
    ("POST", "/api/board/{task_id}/release", "agent"): {},
    ("POST", "/api/board/{task_id}/transfer", "agent"): {"to": "dana"},
    ("POST", "/api/board/{task_id}/comments", "authorAgentId"): {"body": "b"},
    ("POST", "/api/board/{task_id}/land", "agent"): {},
    ("POST", "/api/board/{task_id}/land/abandon", "agent"): {"reason": "r"},
    ("POST", "/api/board/{task_id}/workspace/sync", "agent"): {},
    ("POST", "/api/board/{task_id}/unblock", "agent"): {},
    ("POST", "/api/board/{task_id}/drop", "agent"): {},
    ("POST", "/api/board/{task_id}/restore", "agent"): {},
    ("POST", "/api/board/{task_id}/workspace", "agent"): {"repoPath": "."},
    ("PATCH", "/api/board/{task_id}/workspace", "agent"): {"action": "pause"},
}


def test_an_agent_token_cannot_name_another_agent_anywhere(server: Server) -> None:
    with server.client("dana") as operator:
        schema = operator.get("/openapi.json").json()
        fields = _agent_fields(schema)
        assert fields == set(POSING), f"routes naming an agent changed: {fields ^ set(POSING)}"
        held = operator.post("/api/board", json={"title": "alice's"}).json()["task"]
    with server.client("alice") as alice, server.client("bob") as bob:
        claimed = alice.post(
            f"/api/board/{held['id']}/claim", json={"assigneeAgentId": "alice"}
        ).json()
        epoch = claimed["task"]["claimEpoch"]
        before = written(server)
        for (method, path, field), rest in POSING.items():
            body = {**rest, field: "alice"}
            takes_no_epoch = path in (
                "/api/board/claim-next",
                "/api/board/{task_id}/workspace/sync",
                "/api/board/{task_id}/land/abandon",  # an operator's decision, under no claim
            )
            if "epoch" not in body and not takes_no_epoch and field == "agent":
                body["epoch"] = epoch
            answer = bob.request(method, path.replace("{task_id}", held["id"]), json=body)
            assert answer.status_code == 403, (path, field, answer.text)
            assert answer.json()["reason"] == "forbidden", (path, answer.text)
        assert written(server) == before  # nothing written by any of them
    assert os.path.exists(server.db)
