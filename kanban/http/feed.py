"""The change feed: the board's event log, paged or streamed live over Server-Sent Events.

Writers in other processes (agents' CLI calls) never pass through this server, so a change is
noticed from the database itself: one poller per server asks the board's change token (SQLite:
`PRAGMA data_version`, ~4 µs; Postgres: a LISTEN/NOTIFY check) every `poll_s`, and only when it
moved reads the newest event's seq. Every open stream waits on that one poller, and the streams
at the same cursor after a wake share one read of the next page (kept until the next wake): two
hundred followers cost one probe per interval and one query per change.

Waiting is a plain `asyncio.Event` per generation: the poller sets the current one and puts a
fresh one in its place. A follower that leaves (its task cancelled, as sse-starlette does on a
disconnect) only takes its own future off that event; it holds no lock, so it cannot leave one
half-held for the others (docs/architecture.md, "The change feed and shutdown"). `close()` ends
every follower at once.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from anyio import to_thread

from boardlib import Board, Event

PAGE = 500

log = logging.getLogger(__name__)


class ChangeFeed:
    """Wakes followers when the board's newest event seq grows. The poller runs only while
    someone follows: a server nobody streams from pays nothing for it."""

    def __init__(self, board: Board, poll_s: float) -> None:
        self.board = board
        self.poll_s = poll_s
        self.latest = 0
        self.closing = False
        self._followers = 0
        self._changed = asyncio.Event()  # this generation's; set once, then replaced
        self._task: asyncio.Task[None] | None = None
        # this generation's page reads, shared by the followers at the same cursor
        self._pages: dict[tuple[int, str | None], asyncio.Future[list[Event]]] = {}

    @property
    def followers(self) -> int:
        return self._followers

    @property
    def polling(self) -> bool:
        return self._task is not None and not self._task.done()

    def _wake(self) -> None:
        """Wake everyone waiting now; later waiters wait on the next generation."""
        woken, self._changed = self._changed, asyncio.Event()
        self._pages = {}
        woken.set()

    def close(self) -> None:
        """Shutdown begins: every stream ends now (`follow` returns) and no new one starts, so
        open streams are not waited on as in-flight requests."""
        self.closing = True
        self._wake()

    async def stop(self) -> None:
        """Close, then cancel the poller and wait for it to leave (at once: see `_poll`)."""
        self.close()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _ensure_poller(self) -> None:
        if self._task is None and not self.closing:
            self._task = asyncio.create_task(self._poll(), name="kanban-change-feed")
            self._task.add_done_callback(self._poller_ended)

    def _poller_ended(self, task: asyncio.Task[None]) -> None:
        if self._task is task:
            self._task = None
        if not task.cancelled() and task.exception() is not None:
            log.error("the change feed's poller failed", exc_info=task.exception())
        self._wake()  # anyone still following re-checks, and starts a new poller

    async def _poll(self) -> None:
        version = -1
        while self._followers and not self.closing:
            try:
                # Abandoned if the poller is cancelled: shutdown does not wait on a probe that a
                # slow database holds up (the thread finishes or is left behind, server.py).
                now = await to_thread.run_sync(self.board.change_token, abandon_on_cancel=True)
                if now != version:
                    version = now
                    seq = await to_thread.run_sync(
                        self.board.last_event_seq, abandon_on_cancel=True
                    )
                    if seq != self.latest:
                        self.latest = seq
                        self._wake()
            except Exception:  # a busy or briefly locked board: try again next tick
                log.debug("change feed probe failed; trying again", exc_info=True)
            await asyncio.sleep(self.poll_s)

    async def _wait_past(self, seq: int) -> None:
        """Until the newest seq passes `seq`, or the feed closes. No timeout is needed: only the
        poller wakes followers, and if it ends for any reason its done callback wakes them."""
        changed = self._changed  # taken before the check: a change after it sets this one
        if self.latest > seq or self.closing:
            return
        self._ensure_poller()
        await changed.wait()

    def _page(self, since: int, task_id: str | None) -> list[Event]:
        return self.board.events(since=since, task_id=task_id, limit=PAGE)

    async def _shared_page(self, since: int, task_id: str | None) -> list[Event]:
        """The page after `since`, read once per generation for every follower that asks: a read
        begun after this generation's wake sees everything the wake announced."""
        key = (since, task_id)
        pages = self._pages
        page = pages.get(key)
        if page is None:
            page = asyncio.ensure_future(to_thread.run_sync(self._page, since, task_id))
            pages[key] = page
            page.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            return await asyncio.shield(page)  # one follower leaving does not cancel the read
        except Exception:
            if pages.get(key) is page:
                del pages[key]  # a failed read is not shared: the next asker tries again
            raise

    async def follow(self, since: int, task_id: str | None = None) -> AsyncIterator[Event]:
        """Every event after `since`, then each new one as it is written, until the feed closes
        (the caller then says goodbye). A follower that leaves is logged at debug, once."""
        self._followers += 1
        cursor = since
        try:
            while not self.closing:
                horizon = self.latest  # every event up to here exists, whichever task it names
                events = await self._shared_page(cursor, task_id)
                for event in events:
                    if self.closing:
                        return
                    yield event
                    cursor = event.seq
                if len(events) == PAGE:
                    continue
                await self._wait_past(max(cursor, horizon))
        except (asyncio.CancelledError, GeneratorExit):
            log.debug("a follower left at seq %d (task %s)", cursor, task_id or "any")
            raise
        finally:
            self._followers -= 1
