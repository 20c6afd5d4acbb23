"""The server's long-lived parts, built once per app from what `kanban serve` was told: the
board, the worktree subsystem, the change feed, the lease verbs' thread pool and the upkeep
(stale-task reconciliation and worktree garbage collection on an interval)."""

import os
from collections.abc import MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from anyio import to_thread
from fastapi import Request

from boardlib import Board, BoardConfig, Clock
from boardlib.location import DatabaseUrl, redact_url
from boardlib.recovery import StaleTaskReconciler
from boardlib.worktrees import WorktreeJanitor, Worktrees, start_worktree_gc

from .acting import Caller, identity_in
from .auth import TokenBook
from .feed import ChangeFeed
from .limits import BODY_LIMIT
from .pages import PageCache


@dataclass
class ServerSettings:
    """What `kanban serve` was told. `db` is handed to `Board` as given: a path, or a
    `postgresql://` URL (a Postgres board then keeps a connection pool for the request threads)."""

    db: str | Path | DatabaseUrl
    tokens: TokenBook | None = None
    repo_roots: tuple[Path, ...] = ()
    sse_ping_s: float = 15.0
    # A connection whose client has taken nothing for this long while its buffers are full is
    # dropped (stalls.py); an event stream's client resumes with Last-Event-ID.
    sse_send_timeout_s: float = 10.0
    feed_poll_s: float = 0.1
    upkeep: bool = True
    reconcile_interval_ms: int | None = None
    gc_interval_ms: int | None = None
    worktrees_root: Path | None = None
    body_limit: int = BODY_LIMIT
    clock: Clock | None = None
    config: BoardConfig | None = None
    # The lease verbs' fast lane (`fastpath.py`); off, FastAPI answers them as every route (the
    # tests compare the two answer for answer).
    fast_lane: bool = True


def shown_location(location: "str | Path | DatabaseUrl") -> str:
    """The board's location as it may be shown (ready line, /readyz): a database URL loses its
    password, so a probe never hands out credentials (`boardlib.location` does the redacting)."""
    if isinstance(location, DatabaseUrl):
        return location.display
    return redact_url(str(location)) if "://" in str(location) else str(location)


POOL_SIZE = 8
# Threads for the lease verbs' fast lane, by store. A SQLite board has one writer connection
# per process, so a second thread would only wait on its lock: under 16 claiming clients the
# server spent 0.31-0.32 ms of CPU a claim with one thread, 0.35-0.36 with two, 0.39-0.44 with
# four. A Postgres board claims in parallel on its pool's connections.
LEASE_THREADS = {"sqlite": 1}
# How long shutdown waits for an upkeep pass under way (the loops are daemon threads).
UPKEEP_STOP_S = 0.5


def open_server_board(
    location: str | Path | DatabaseUrl,
    *,
    clock: Clock | None,
    config: BoardConfig,
    create: bool = True,
) -> Board:
    """The board as a server holds it: requests run on worker threads (a Postgres board keeps a
    pool of `POOL_SIZE` connections; SQLite keeps its two), and lease verbs on the event loop,
    where a SQLite checkpoint's fsyncs must not stall them (they run on a thread of their own).
    Orphans are reconciled at open."""
    return Board(
        location,
        clock=clock,
        config=config,
        create=create,
        reconcile_orphans=True,
        pool_size=POOL_SIZE,
        background_checkpoints=True,
    )


class Service:
    """The server's long-lived parts: one board (thread-safe), the worktree subsystem, the
    change feed and the background upkeep."""

    def __init__(self, settings: ServerSettings, board: Board | None = None) -> None:
        self.settings = settings
        self._owns_board = board is None
        self.board = board if board is not None else self._open_board()
        self.trees = Worktrees(self.board, root=settings.worktrees_root)
        self.feed = ChangeFeed(self.board, settings.feed_poll_s)
        self.lease_pool = ThreadPoolExecutor(
            max_workers=LEASE_THREADS.get(self.board.store.backend, POOL_SIZE),
            thread_name_prefix="kanban-lease",
        )
        self.pages = PageCache()
        self.reconciler: StaleTaskReconciler | None = None
        self.janitor: WorktreeJanitor | None = None
        self.repo_roots = tuple(Path(os.path.realpath(root)) for root in settings.repo_roots)

    def _open_board(self) -> Board:
        settings = self.settings
        return open_server_board(
            settings.db, clock=settings.clock, config=settings.config or BoardConfig.from_env()
        )

    async def start(self) -> None:
        """The upkeep that keeps the board healthy with nobody calling: orphan reconciliation
        now (one read when nothing expired), stale-task reconciliation on an interval, and
        worktree garbage collection."""
        if self.settings.upkeep:
            await to_thread.run_sync(self.board.reconcile_orphans)
            self.reconciler = self.board.start_stale_task_reconciler(
                self.settings.reconcile_interval_ms
            )
            self.janitor = start_worktree_gc(
                self.board,
                interval_ms=self.settings.gc_interval_ms,
                root=self.settings.worktrees_root,
            )

    async def stop(self) -> None:
        """Stop the feed and the upkeep, fold the WAL into the board file and close it. Each
        wait is bounded: shutdown has to fit in `kanban serve --graceful` (server.py)."""
        await self.feed.stop()
        await to_thread.run_sync(partial(self.lease_pool.shutdown, cancel_futures=True))
        if self.janitor is not None:
            await to_thread.run_sync(self.janitor.stop, UPKEEP_STOP_S)
            self.janitor = None
        if self.reconciler is not None:
            await to_thread.run_sync(self.reconciler.stop, UPKEEP_STOP_S)
            self.reconciler = None
        if self._owns_board:
            try:
                await to_thread.run_sync(self.board.checkpoint)
            finally:
                self.board.close()

    def caller(self, request: Request) -> Caller:
        return self.caller_for(request.scope)

    def caller_for(self, scope: MutableMapping[str, Any]) -> Caller:
        return Caller(identity_in(scope), self.board, self.trees, self.repo_roots)
