"""The change feed: the board's event log, paged or streamed live over Server-Sent Events.

Writers in other processes (agents' CLI calls) never pass through this server, so a change is
noticed from the database file itself: one poller per server reads `PRAGMA data_version` (~4 µs)
every `poll_s`, and only when it moved reads the newest event's seq. Every open stream waits on
that one poller, so a hundred followers cost one probe per interval, not a hundred.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator

from anyio import to_thread

from boardlib import Board, Event

PAGE = 500


class ChangeFeed:
    """Wakes followers when the board's newest event seq grows. The poller runs only while
    someone follows: a server nobody streams from pays nothing for it."""

    def __init__(self, board: Board, poll_s: float) -> None:
        self.board = board
        self.poll_s = poll_s
        self.latest = 0
        self._followers = 0
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _poll(self) -> None:
        version = -1
        while self._followers:
            try:
                now = await to_thread.run_sync(self.board.data_version)
                if now != version:
                    version = now
                    seq = await to_thread.run_sync(self.board.last_event_seq)
                    if seq != self.latest:
                        self.latest = seq
                        async with self._changed:
                            self._changed.notify_all()
            except Exception:  # a busy or briefly locked board: try again next tick
                pass
            await asyncio.sleep(self.poll_s)
        self._task = None

    async def _wait_past(self, seq: int, timeout_s: float) -> None:
        async with self._changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait_for(lambda: self.latest > seq), timeout_s)

    def _page(self, since: int, task_id: str | None) -> list[Event]:
        return self.board.events(since=since, task_id=task_id, limit=PAGE)

    async def follow(self, since: int, task_id: str | None = None) -> AsyncIterator[Event]:
        """Every event after `since`, then each new one as it is written, forever."""
        self._followers += 1
        if self._task is None:
            self._task = asyncio.create_task(self._poll(), name="kanban-change-feed")
        try:
            async for event in self._follow(since, task_id):
                yield event
        finally:
            self._followers -= 1

    async def _follow(self, since: int, task_id: str | None) -> AsyncIterator[Event]:
        cursor = since
        while True:
            horizon = self.latest  # every event up to here exists, whichever task it names
            events = await to_thread.run_sync(self._page, cursor, task_id)
            for event in events:
                yield event
            if events:
                cursor = events[-1].seq
                if len(events) == PAGE:
                    continue
            await self._wait_past(max(cursor, horizon), timeout_s=max(self.poll_s * 20, 1.0))
