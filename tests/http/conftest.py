"""The real app over a real board file, driven through HTTP by Starlette's TestClient (the app's
lifespan runs: the change feed, and upkeep when asked for). The board is opened by the test with a
clock it moves, and the rows a route wrote are read back through a second, read-only `Board` on
the same file, so a test sees what any other process would."""

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from boardlib import Board, BoardConfig, Event, ManualClock, Task
from kanban.http.app import ServerSettings, create_app
from kanban.http.auth import Identity, TokenBook
from tests.backends import content_digest, is_postgres


def pytest_configure(config: "pytest.Config") -> None:
    # The suite-wide registration belongs in tests/conftest.py; until it lands there, this one
    # keeps `-m "not slow"` and --strict-markers working for the HTTP wing.
    config.addinivalue_line("markers", "slow: a long test (real processes, many rounds)")


CONTRACT_RUN = "test_every_route_keeps_its_declared_contract"  # tests/http/test_schema.py
REST_FUZZ = "test_every_rest_body_is_answered_and_a_refusal_writes_nothing"  # tests/chaos


@pytest.hookimpl(trylast=True)  # after -m and -k have chosen
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The contract run without a token is a subset of the chaos REST fuzz: the same
    schemathesis checks (the fuzz imports `CHECKS`) on the same seeded board, ten times the
    examples, and the refusal-writes-nothing check on top. When the fuzz runs in the session,
    the contract run is deselected (about 50 s of a worker in CI); `pytest tests/http` keeps it,
    and the agent-token run always stays (the fuzz has no tokens). Every xdist worker collects
    alike."""

    def named(item: pytest.Item) -> str:
        return item.name.split("[")[0]

    if not any(named(item) == REST_FUZZ for item in items):
        return
    dropped = [item for item in items if named(item) == CONTRACT_RUN]
    if dropped:
        items[:] = [item for item in items if item not in dropped]
        config.hook.pytest_deselected(items=dropped)


START_MS = 1_800_000_000_000

TOKENS = {
    "alice": "alice-token-0123456789",
    "bob": "bob-token-0123456789ab",
    "carol": "carol-token-0123456789",  # roles: reviewer only
    "ops": "ops-token-0123456789abcd",  # operator:ops
}
SHARED_TOKEN = "shared-token-0123456789"


def token_book() -> TokenBook:
    return TokenBook(
        [
            (TOKENS["alice"], Identity("agent", "alice")),
            (TOKENS["bob"], Identity("agent", "bob")),
            (TOKENS["carol"], Identity("agent", "carol", frozenset({"reviewer"}))),
            (TOKENS["ops"], Identity("operator", "ops")),
        ]
    )


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name]}"}


@dataclass
class Api:
    client: httpx.Client  # a TestClient in-process, or a real client of a live server
    board: Board
    clock: ManualClock
    path: Path  # the board file, or (on the Postgres half of the suite) its URL

    # -- reading back what any other process would see ------------------------------------------

    @contextmanager
    def reader(self) -> Iterator[Board]:
        with Board(self.path, read_only=True, reconcile_orphans=False) as other:
            yield other

    def stored(self, task_id: str) -> Task:
        with self.reader() as other:
            return other.get_task(task_id)

    def events(self, since: int = 0) -> list[Event]:
        with self.reader() as other:
            return other.events(since=since)

    def kinds(self, since: int = 0) -> list[str]:
        return [event.kind for event in self.events(since)]

    def last_seq(self) -> int:
        with self.reader() as other:
            return other.last_event_seq()

    def fingerprint(self) -> str:
        """sha256 of the board file and its write-ahead log (on Postgres: of every table's
        content and the sequences): equal before and after a refusal means nothing was written."""
        if is_postgres(self.path):
            return repr(content_digest(self.path))
        digest = hashlib.sha256()
        for suffix in ("", "-wal"):
            part = Path(f"{self.path}{suffix}")
            digest.update(part.read_bytes() if part.exists() else b"-")
        return digest.hexdigest()

    # -- driving ---------------------------------------------------------------------------------

    def create(self, title: str = "task", **fields: Any) -> dict[str, Any]:
        answer = self.client.post("/api/board", json={"title": title, **fields})
        assert answer.status_code == 200, answer.text
        return answer.json()["task"]  # type: ignore[no-any-return]

    def claimed(self, agent: str = "alice", **fields: Any) -> dict[str, Any]:
        task = self.create(**fields)
        answer = self.client.post(f"/api/board/{task['id']}/claim", json={"assigneeAgentId": agent})
        assert answer.status_code == 200, answer.text
        return answer.json()["task"]  # type: ignore[no-any-return]


@contextmanager
def serving(
    tmp_path: Path,
    *,
    tokens: TokenBook | None = None,
    headers: dict[str, str] | None = None,
    board_config: BoardConfig | None = None,
    db: Any = None,
    **settings: Any,
) -> Iterator[Api]:
    """The app on the board at `db` (a path or a Postgres URL; default a file in `tmp_path`)."""
    clock = ManualClock(start_ms=START_MS)
    path = db if db is not None else tmp_path / "board.db"
    board = Board(path, clock=clock, config=board_config or BoardConfig())
    settings.setdefault("upkeep", False)
    settings.setdefault("worktrees_root", tmp_path / "state" / "worktrees")
    config = ServerSettings(db=path, tokens=tokens, **settings)
    app = create_app(config, board=board)
    try:
        with TestClient(
            app, base_url="http://localhost", raise_server_exceptions=False, headers=headers or {}
        ) as client:
            yield Api(client=client, board=board, clock=clock, path=path)
    finally:
        board.close()


@dataclass
class Live:
    """The app under a real uvicorn on a free loopback port, in a thread of the test process."""

    url: str
    api: Api
    app: Any


def seed_every_state(api: Api) -> None:
    """Three todo tasks, one in review (built by alice) and one in progress (bob's): a board on
    which every route has something to act on, for the schema-driven tests."""
    for n in range(3):
        api.create(f"task {n}")
    held = api.claimed("alice", title="held")
    api.client.post(f"/api/board/{held['id']}/complete", json={"agent": "alice"})
    api.claimed("bob", title="in progress")


@contextmanager
def live_server(tmp_path: Path, db: Any = None, **settings: Any) -> Iterator[Live]:
    import threading

    import uvicorn

    from kanban.http.server import bind

    clock = ManualClock(start_ms=START_MS)
    path = db if db is not None else tmp_path / "board.db"
    board = Board(path, clock=clock, config=BoardConfig())
    settings.setdefault("upkeep", False)
    settings.setdefault("worktrees_root", tmp_path / "state" / "worktrees")
    app = create_app(ServerSettings(db=path, **settings), board=board)
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = 200
        while not server.started and deadline:
            threading.Event().wait(0.05)
            deadline -= 1
        assert server.started, "uvicorn did not start"
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, timeout=30) as client:
            api = Api(client=client, board=board, clock=clock, path=path)
            yield Live(url=url, api=api, app=app)
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
        board.close()
