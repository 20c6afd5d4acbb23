"""Issue 29, in-process: the change feed under cancellation. Followers are cancelled as
sse-starlette cancels them on a disconnect (an anyio task group's cancel scope, which delivers
the cancellation again on every loop pass until each task has left), a hundred at a time, and
the feed must come out as it went in: nobody following, nothing raised, the next followers
woken by the next event."""

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from boardlib import Board, BoardConfig
from kanban.http.feed import ChangeFeed
from tests.http.conftest import live_server
from tests.http.sse_clients import Fleet

FOLLOWERS = 100


async def until(predicate: Callable[[], bool], timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def follow_into(feed: ChangeFeed, since: int, seen: list[int]) -> None:
    async for event in feed.follow(since):
        seen.append(event.seq)


async def test_a_hundred_followers_cancelled_together_twenty_times(
    board_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="kanban.http.feed")
    with Board(board_path, config=BoardConfig()) as board:
        feed = ChangeFeed(board, poll_s=0.01)
        cursor = 0
        for round_no in range(1, 21):
            seen: list[list[int]] = [[] for _ in range(FOLLOWERS)]
            async with anyio.create_task_group() as group:
                for mine in seen:
                    group.start_soon(follow_into, feed, cursor, mine)
                assert await until(lambda: feed.followers == FOLLOWERS)
                task = await anyio.to_thread.run_sync(board.create_task, f"round {round_no}")
                seq = board.last_event_seq()

                def all_woken(seen: list[list[int]] = seen, seq: int = seq) -> bool:
                    return all(mine == [seq] for mine in seen)

                assert await until(all_woken), (
                    f"round {round_no}: {sum(m != [seq] for m in seen)} followers missed "
                    f"the event of {task.id}"
                )
                group.cancel_scope.cancel()  # every follower leaves at once
            assert feed.followers == 0, f"round {round_no}"
            cursor = seq
        await feed.stop()
        assert not feed.polling
    left = [r for r in caplog.records if r.name == "kanban.http.feed"]
    assert len(left) == 20 * FOLLOWERS  # one debug line per follower that left, no more
    assert {r.levelno for r in left} == {logging.DEBUG}
    assert all("a follower left" in r.getMessage() for r in left)


async def test_close_ends_every_follower_and_refuses_new_ones(board_path: Path) -> None:
    with Board(board_path, config=BoardConfig()) as board:
        board.create_task("before")
        feed = ChangeFeed(board, poll_s=0.01)
        seen: list[list[int]] = [[] for _ in range(10)]
        with anyio.fail_after(10):  # close() ends them: nobody is cancelled here
            async with anyio.create_task_group() as group:
                for mine in seen:
                    group.start_soon(follow_into, feed, 0, mine)
                assert await until(lambda: all(mine == [1] for mine in seen))
                assert await until(lambda: feed.polling)
                feed.close()
        assert feed.followers == 0
        late: list[int] = []
        with anyio.fail_after(1):
            await follow_into(feed, 0, late)  # a stream that starts during shutdown ends at once
        assert late == []
        await feed.stop()
        assert not feed.polling


async def test_the_poller_runs_only_while_someone_follows(board_path: Path) -> None:
    with Board(board_path, config=BoardConfig()) as board:
        feed = ChangeFeed(board, poll_s=0.01)
        for _ in range(3):
            seen: list[int] = []
            async with anyio.create_task_group() as group:
                group.start_soon(follow_into, feed, 0, seen)
                assert await until(lambda: feed.polling)
                await anyio.to_thread.run_sync(board.create_task, "woken")
                count = board.last_event_seq()
                assert await until(lambda seen=seen, count=count: len(seen) == count)
                group.cancel_scope.cancel()
            assert await until(lambda: not feed.polling)
        await feed.stop()


def test_followers_that_disconnect_log_one_debug_line_each_and_nothing_else(
    tmp_path: Path, board_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Through uvicorn and sse-starlette: sockets that close are disconnects, which are normal."""
    caplog.set_level(logging.DEBUG, logger="kanban.http.feed")
    with live_server(tmp_path, board_path, feed_poll_s=0.02) as live:
        service = live.app.state.service
        for round_no in range(3):
            fleet = Fleet(live.url, 20, since=0)
            assert fleet.all_streaming()
            live.api.create(f"round {round_no}")
            assert fleet.all_have(range(1, round_no + 2))
            fleet.close()
            deadline = time.monotonic() + 10
            while service.feed.followers and time.monotonic() < deadline:
                time.sleep(0.02)
            assert service.feed.followers == 0
    left = [r for r in caplog.records if r.name == "kanban.http.feed"]
    assert len(left) == 3 * 20 and {r.levelno for r in left} == {logging.DEBUG}
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [r.getMessage() for r in loud]
