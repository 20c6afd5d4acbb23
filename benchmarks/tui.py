"""Benchmark (not a test): the terminal board in a real pseudo-terminal at 200x50, exactly as an
operator runs it, measured from outside.

    python benchmarks/tui.py --tasks 10000,100000 [--repeat 2] [--starts 3] [--poll-ms 500]

Each size is built once (up to 10,000 tasks: a working board, 30% finished; larger: a year of
work, 90% done or cancelled over two years), then each round measures every size back to back on
a fresh copy: first frame, peak RSS, keystroke to frame, idle bytes and CPU, change to screen and
bytes for a one-card change, the end of the done column (`G`) and a filter that finds its oldest
task, and `kanban db check`, `prune --events-before 90d` and `db import-events` beside the CLI's
start-up. The first frame is also timed over `--starts` starts of the app per size, the sizes in
turn, with the app's CPU seconds by then. A summary line per round gives the largest board against
the smallest (first frames: the medians, wall and CPU). Targets: first frame <= 1.3x, RSS <= 100
MB, change on screen <= 0.5 s and < 16 KB, db check <= 2 s, events identical after the import.

    python benchmarks/tui.py --drawer

Prints one JSON line of task-drawer figures on a board with real git worktrees
(`tui.review_board`), in the same pseudo-terminal: opening the drawer on a typical task, the first
screen of a 20,000-line diff after `3`, keystroke-to-frame while scrolling it; reviewing in depth:
`/BIGMARK 19999` answered on the 20,000-line diff (and the search itself, in process), a
200,000-line diff's first screen and `G` to its last line, and `s` (side by side) on it; each with
its ratio to a baseline measured in the same run (a cursor move on the board; the 23-line diff's
first screen and side by side). Targets: the 20,000-line diff's first screen < 1 s, scrolling at
keystroke speed (<= 50 ms), a search <= 100 ms, the 200,000-line diff's first screen <= 2 s.
"""

import argparse
import fcntl
import os
import pty
import random
import select
import shutil
import statistics
import struct
import sys
import tempfile
import termios
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import record
from postgres_url import postgres_url
from proc_stat import cpu_seconds

from boardlib import Board, PlanItem
from boardlib import transitions as t

COLUMNS, ROWS = 200, 50
QUIET_S = 0.03  # a frame is over when the terminal has been quiet this long


LIVE_SHARES = {t.BACKLOG: 1, t.TODO: 8, t.IN_PROGRESS: 2, t.IN_REVIEW: 2, t.BLOCKED: 1}
FINISHED_SHARES = {t.DONE: 5, t.CANCELLED: 1}
OLDEST_TITLE = "Zebra ledger migration"
HISTORY_DAYS = 730  # a large board's finished work spans two years
DAY_MS = 86_400_000


def finished_share(count: int) -> float:
    """How much of a board of `count` tasks is finished: a working board of up to 10,000 tasks
    has 30% done or cancelled; a larger one is a year (or two) of work on one board: 90%."""
    return 0.3 if count <= 10_000 else 0.9


def _split(total: int, shares: dict[str, int]) -> dict[str, int]:
    whole = sum(shares.values())
    sizes = {status: total * share // whole for status, share in shares.items()}
    sizes[next(iter(shares))] += total - sum(sizes.values())
    return sizes


def build_board(path: Path, count: int, finished: float | None = None) -> dict[str, Any]:
    """`count` tasks over all seven columns; returns the ids the measurements act on and the
    board's shape. The finished ones are history, spread over the last two years (created,
    claimed and closed then); the live ones are today's work, on the real clock."""
    from boardlib import ManualClock

    rng = random.Random(7)
    share = finished_share(count) if finished is None else finished
    done_n = round(count * share)
    sizes = {**_split(count - done_n, LIVE_SHARES), **_split(done_n, FINISHED_SHARES)}

    def items(n: int, status: str, offset: int) -> list[PlanItem]:
        return [
            PlanItem(
                key=str(offset + i),
                title=f"Task {offset + i}: {rng.choice(['parse', 'render', 'store', 'verify'])} "
                f"the {rng.choice(['plan', 'board', 'lease', 'verdict'])} ({rng.randint(1, 999)})",
                priority=rng.randint(0, 5),
                role=rng.choice(["builder", "reviewer", None]),
                status=status,
            )
            for i in range(n)
        ]

    now = int(time.time() * 1000)
    outcomes = [t.DONE] * sizes[t.DONE] + [t.CANCELLED] * sizes[t.CANCELLED]
    rng.shuffle(outcomes)
    clock = ManualClock(now - HISTORY_DAYS * DAY_MS)
    step = (HISTORY_DAYS * DAY_MS - DAY_MS) // max(len(outcomes), 1)
    oldest = newest_done = ""
    first_done = outcomes.index(t.DONE) if t.DONE in outcomes else -1
    with Board(path, clock=clock) as board:
        for chunk in range(0, len(outcomes), 1000):
            batch = outcomes[chunk : chunk + 1000]
            batch_plan = items(len(batch), t.TODO, chunk)
            if chunk <= first_done < chunk + 1000:  # the oldest done task: one a search finds
                at = first_done - chunk
                batch_plan[at] = replace(
                    batch_plan[at], title=f"{OLDEST_TITLE}, the first of {count:,}"
                )
            created = board.create_plan(batch_plan)
            for i, outcome in enumerate(batch):
                task_id = created[str(chunk + i)].id
                if outcome == t.DONE:
                    board.claim(task_id, f"agent-{rng.randint(1, 40)}", runtime="bench")
                    board.move(task_id, t.DONE)
                    oldest = oldest or task_id
                    newest_done = task_id
                else:
                    board.cancel(task_id)
                clock.advance(ms=step)
    with Board(path) as board:
        live = [
            replace(item, status=t.BACKLOG) if i % 20 == 0 else item
            for i, item in enumerate(items(count - done_n, t.TODO, len(outcomes)))
        ]
        created = board.create_plan(live)
        ids = [created[item.key].id for item in live]
        todo = [task_id for i, task_id in enumerate(ids) if i % 20]
        plan: dict[str, list[str]] = {}
        at = 0
        for status in (t.IN_PROGRESS, t.IN_REVIEW, t.BLOCKED):
            plan[status] = todo[at : at + sizes[status]]
            at += sizes[status]
        for task_id in plan[t.IN_PROGRESS] + plan[t.IN_REVIEW] + plan[t.BLOCKED]:
            board.claim(task_id, f"agent-{rng.randint(1, 40)}", runtime="bench")
        for task_id in plan[t.IN_REVIEW]:
            board.move(task_id, t.IN_REVIEW)
        for task_id in plan[t.BLOCKED]:
            board.move(task_id, t.BLOCKED, reason="waiting for the benchmark")
        # The cards the measurements touch sit on top of their columns.
        watched = plan[t.IN_PROGRESS][0]
        board.update_task(watched, priority=100)
        mover = todo[-1]
        board.update_task(mover, priority=100)
    return {
        "watched": watched,
        "mover": mover,
        "oldest_done": oldest,
        "newest_done": newest_done,
        "finished_share": share,
        "live_tasks": count - done_n,
        "tasks": count,
    }


class Terminal:
    """The app in a pty: everything it writes is timestamped and counted."""

    def __init__(
        self,
        db: Path | str,
        poll_ms: int,
        *,
        extra: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        environ.update(
            TERM="xterm-256color", COLORTERM="truecolor", COLUMNS=str(COLUMNS), LINES=str(ROWS)
        )
        environ.update(env or {})
        self.started = time.monotonic()
        pid, fd = pty.fork()
        if pid == 0:
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
            args = ["-m", "tui", "--db", str(db), "--poll-ms", str(poll_ms), *extra]
            os.execve(sys.executable, [sys.executable, *args], environ)
        self.pid, self.fd = pid, fd
        self.chunks: list[tuple[float, bytes]] = []
        self.lock = threading.Lock()
        self.alive = True
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while self.alive:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.fd, 1 << 16)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.chunks.append((time.monotonic(), data))

    def mark(self) -> int:
        with self.lock:
            return len(self.chunks)

    def since(self, mark: int) -> list[tuple[float, bytes]]:
        with self.lock:
            return list(self.chunks[mark:])

    def wait_for(self, needle: bytes, timeout: float = 20, start: int = 0) -> float:
        """When `needle` first appeared in the output after chunk `start` (a `mark()`)."""
        deadline = time.monotonic() + timeout
        seen = b""
        index = start
        while time.monotonic() < deadline:
            for stamp, data in self.since(index):
                index += 1
                seen = (seen + data)[-(len(needle) + 1 << 16) :]
                if needle in seen:
                    return stamp
            time.sleep(0.005)
        raise TimeoutError(f"{needle!r} never appeared")

    def burst(self, mark: int, timeout: float = 2.0) -> tuple[float | None, float | None, int]:
        """First byte, last byte and byte count of the output after `mark`, once quiet."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunks = self.since(mark)
            if chunks and time.monotonic() - chunks[-1][0] > QUIET_S:
                break
            time.sleep(0.002)
        chunks = self.since(mark)
        if not chunks:
            return None, None, 0
        return chunks[0][0], chunks[-1][0], sum(len(data) for _, data in chunks)

    def settle(self, mark: int, quiet_s: float = 0.5, timeout: float = 10) -> None:
        """Wait for output after `mark`, then until the terminal has been quiet for `quiet_s`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunks = self.since(mark)
            if chunks and time.monotonic() - chunks[-1][0] >= quiet_s:
                return
            time.sleep(0.05)

    def send(self, keys: bytes) -> float:
        stamp = time.monotonic()
        os.write(self.fd, keys)
        return stamp

    def cpu_s(self) -> float:
        return cpu_seconds(self.pid)

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        try:
            os.write(self.fd, b"q")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not os.waitpid(self.pid, os.WNOHANG)[0]:
                time.sleep(0.05)
        except (OSError, ChildProcessError):
            pass
        self.alive = False
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (OSError, ChildProcessError):
            pass


def _keystrokes(
    term: Terminal, keys: list[bytes], gap_s: float = 0.12
) -> tuple[list[float], list[float]]:
    """(first byte, frame end) latencies in ms for each key, sent one at a time."""
    firsts, ends = [], []
    for key in keys:
        mark = term.mark()
        sent = term.send(key)
        first, last, _ = term.burst(mark)
        if first is not None and last is not None:
            firsts.append((first - sent) * 1000)
            ends.append((last - sent) * 1000)
        time.sleep(gap_s)
    return firsts, ends


def drawer_figures(poll_ms: int) -> dict[str, object]:
    """The drawer on the review board: open, a 20,000-line diff, scrolling it."""
    from boardlib import ManualClock
    from tui.review_board import START_MS, build_review_board

    with tempfile.TemporaryDirectory(prefix="kanban-bench-drawer-") as folder:
        before = os.environ.get("KANBAN_WORKTREES")
        built = time.monotonic()
        board = build_review_board(
            Path(folder), ManualClock(START_MS), big_diff=True, huge_lines=HUGE_LINES
        )
        build_s = time.monotonic() - built
        if before is None:
            os.environ.pop("KANBAN_WORKTREES", None)
        # The run's own view settings: `w` is kept, and an operator's own must not skew a figure.
        settings = str(Path(folder) / "settings.toml")
        env = {"KANBAN_WORKTREES": str(board.worktrees), "KANBAN_SETTINGS": settings}
        term = Terminal(board.db, poll_ms, env=env)
        try:
            term.wait_for(board.ids["review"].encode())
            time.sleep(1.5)
            # Baseline: moving the cursor on the board.
            _, cursor = _keystrokes(term, [b"j", b"k"] * 5)
            # Open the drawer on a typical task (in review, a 23-line diff), from the board.
            opens, open_cpu = [], []
            for _ in range(5):
                term.send(b"G")  # somewhere else first, so enter opens afresh
                time.sleep(0.3)
                mark, cpu0 = term.mark(), term.cpu_s()
                sent = term.send(b"\x1b")  # close any drawer
                time.sleep(0.4)
                mark, cpu0 = term.mark(), term.cpu_s()
                sent = term.send(b"\r")
                term.wait_for(b"5 History", timeout=10, start=mark)
                _first, last, _ = term.burst(mark, timeout=3)
                opens.append(((last or time.monotonic()) - sent) * 1000)
                open_cpu.append((term.cpu_s() - cpu0) * 1000)
            term.close()

            def first_screen(task: str, needle: bytes) -> tuple[float, float]:
                """Start on the task's drawer, then `3`: ms to the diff's first screen."""
                shell = Terminal(board.db, poll_ms, extra=("--open", board.ids[task]), env=env)
                try:
                    shell.wait_for(b"5 History", timeout=30)
                    time.sleep(1.0)
                    mark, cpu0 = shell.mark(), shell.cpu_s()
                    sent = shell.send(b"3")
                    shown = shell.wait_for(needle, timeout=30, start=mark)
                    shell.burst(mark, timeout=3)
                    return (shown - sent) * 1000, (shell.cpu_s() - cpu0) * 1000
                finally:
                    shell.close()

            small_ms, small_cpu = first_screen("review", b"shop/cart.py")
            big_ms, big_cpu = first_screen("big", b"generated/module_00.py")
            review = review_figures(board, poll_ms, env)
            # Scrolling the 20,000-line diff: j, page down, G, g, n.
            shell = Terminal(board.db, poll_ms, extra=("--open", board.ids["big"]), env=env)
            try:
                shell.wait_for(b"5 History", timeout=30)
                shell.send(b"3")
                shell.wait_for(b"generated/module_00.py", timeout=30)
                time.sleep(1.0)
                keys = [b"j"] * 10 + [b"\x04"] * 10 + [b"G", b"g"] + [b"n"] * 5
                _, scroll = _keystrokes(shell, keys)
                rss = shell.peak_rss_mb()
            finally:
                shell.close()
        finally:
            term.close()
    base = statistics.median(cursor)
    huge = review["huge_first_screen_ms"]
    return {
        "board": "tui.review_board: 9 tasks with real git worktrees",
        "build_board_s": round(build_s, 1),
        "terminal": f"{COLUMNS}x{ROWS}",
        "cursor_move_ms_p50": round(base, 1),
        "open_drawer_ms_p50": round(statistics.median(opens), 1),
        "open_drawer_cpu_ms_p50": round(statistics.median(open_cpu), 1),
        "open_drawer_ratio_to_cursor_move": round(statistics.median(opens) / base, 1),
        "diff_23_lines_first_screen_ms": round(small_ms, 1),
        "diff_20000_lines_first_screen_ms": round(big_ms, 1),
        "diff_23_lines_cpu_ms": round(small_cpu, 1),
        "diff_20000_lines_cpu_ms": round(big_cpu, 1),
        "diff_20000_ratio_to_23_lines": round(big_ms / small_ms, 2),
        "diff_scroll_keystroke_to_frame_ms_p50": round(statistics.median(scroll), 1),
        "diff_scroll_keystroke_to_frame_ms_max": round(max(scroll), 1),
        "diff_scroll_ratio_to_cursor_move": round(statistics.median(scroll) / base, 2),
        "peak_rss_mb_with_20000_line_diff": round(rss, 1),
        **review,
        "diff_200000_ratio_to_23_lines": round(huge / small_ms, 2),
        "targets_met": {
            "diff_first_screen_under_1s": big_ms < 1000,
            "diff_scroll_keystroke_speed": statistics.median(scroll) <= 50,
            "search_20000_lines_within_100ms": review["search_20000_lines_in_process_ms"] <= 100,
            "diff_200000_first_screen_within_2s": huge <= 2000,
            "diff_200000_first_screen_cpu_within_2s": review["huge_first_screen_cpu_ms"] <= 2000,
        },
    }


HUGE_LINES = 200_000


def review_figures(board: Any, poll_ms: int, env: dict[str, str]) -> dict[str, float]:
    """Reviewing in depth: search on the 20,000-line diff, the 200,000-line diff's first screen
    and its end, and side by side on it and on the 23-line diff."""
    from boardlib import Board
    from boardlib.worktrees.diffs import index_diff
    from tui.diff_rows import DiffRows, SideBySideRows, find_all
    from tui.drawer_data import DIFF_LIMIT, FILE_LIMIT

    figures: dict[str, float] = {}
    # In process: what `/` costs on the 20,000-line diff, and building the views of 200,000.
    saved = os.environ.get("KANBAN_WORKTREES")
    os.environ["KANBAN_WORKTREES"] = env["KANBAN_WORKTREES"]
    try:
        from boardlib.worktrees import Worktrees

        with Board(board.db, read_only=True) as reader:
            trees = Worktrees(reader)
            big = trees.detail(board.ids["big"], diff_limit_bytes=DIFF_LIMIT,
                               file_limit_bytes=FILE_LIMIT)  # fmt: skip
            huge = trees.detail(board.ids["huge"], diff_limit_bytes=DIFF_LIMIT,
                                file_limit_bytes=FILE_LIMIT)  # fmt: skip
    finally:
        if saved is None:
            os.environ.pop("KANBAN_WORKTREES", None)
        else:
            os.environ["KANBAN_WORKTREES"] = saved
    rows = DiffRows(index_diff(big.diff))
    searches = []
    for query in ("BIGMARK 19999", "bigmark 1999", "compute(4"):
        started = time.perf_counter()
        find_all(rows, query)
        searches.append((time.perf_counter() - started) * 1000)
    figures["search_20000_lines_in_process_ms"] = round(max(searches), 1)
    started = time.perf_counter()
    index = index_diff(huge.diff)
    figures["index_200000_lines_ms"] = round((time.perf_counter() - started) * 1000, 1)
    started = time.perf_counter()
    SideBySideRows(DiffRows(index))
    figures["side_by_side_rows_200000_lines_ms"] = round((time.perf_counter() - started) * 1000, 1)
    figures["diff_200000_lines_bytes"] = len(huge.diff.encode())

    def session(task: str) -> Terminal:
        shell = Terminal(board.db, poll_ms, extra=("--open", board.ids[task]), env=env)
        shell.wait_for(b"5 History", timeout=60)
        time.sleep(1.0)
        return shell

    def answered(shell: Terminal, keys: bytes, needle: bytes, timeout: float = 60) -> float:
        mark = shell.mark()
        sent = shell.send(keys)
        shown = shell.wait_for(needle, timeout=timeout, start=mark)
        shell.burst(mark, timeout=3)
        return (shown - sent) * 1000

    shell = session("big")
    try:
        answered(shell, b"3", b"generated/module_00.py")
        time.sleep(0.5)
        answered(shell, b"/", b"search diff")
        for char in b"BIGMARK 19999":
            shell.send(bytes([char]))
            time.sleep(0.01)
        figures["search_20000_lines_keystroke_to_match_ms"] = round(
            answered(shell, b"\r", b"match 1/1"), 1
        )
    finally:
        shell.close()
    shell = session("huge")
    try:
        cpu0 = shell.cpu_s()  # the app's own CPU: what the wall clock is on an idle machine
        figures["huge_first_screen_ms"] = round(answered(shell, b"3", b"generated/module_00.py"), 1)
        figures["huge_first_screen_cpu_ms"] = round((shell.cpu_s() - cpu0) * 1000, 1)
        last = f"BIGMARK {HUGE_LINES - 1}".encode()
        figures["huge_to_its_end_ms"] = round(answered(shell, b"G", last), 1)
        figures["huge_wrap_ms"] = round(answered(shell, b"w", b"wrap"), 1)  # lays out every row
        shell.send(b"w")  # and back, before side by side
        time.sleep(1.5)
        figures["huge_side_by_side_first_screen_ms"] = round(
            answered(shell, b"s", b"side by side"), 1
        )
        figures["peak_rss_mb_with_200000_line_diff"] = round(shell.peak_rss_mb(), 1)
    finally:
        shell.close()
    shell = session("review")
    try:
        answered(shell, b"3", b"shop/cart.py")
        time.sleep(0.5)
        small_sbs = answered(shell, b"s", b"side by side")
        figures["diff_23_lines_side_by_side_first_screen_ms"] = round(small_sbs, 1)
        figures["side_by_side_200000_ratio_to_23_lines"] = round(
            figures["huge_side_by_side_first_screen_ms"] / small_sbs, 2
        )
    finally:
        shell.close()
    figures["diff_200000_lines"] = HUGE_LINES
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--tasks",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[10_000],
        help="board sizes, comma-separated, measured back to back in this order (each board "
        "built once); with two or more, a summary line gives the largest's ratios to the smallest",
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds over the sizes")
    parser.add_argument(
        "--starts",
        type=int,
        default=3,
        help="app starts per size and round for the first frame (the summary compares medians)",
    )
    parser.add_argument("--poll-ms", type=int, default=500)
    parser.add_argument("--drawer", action="store_true", help="the task drawer's figures")
    parser.add_argument(
        "--db",
        metavar="URL",
        type=postgres_url,
        help="the same board on this PostgreSQL database (a fresh schema, dropped after): the "
        "live view then follows LISTEN/NOTIFY instead of the file's data_version",
    )
    record.add_arguments(parser)
    args = parser.parse_args()
    name = "tui_drawer" if args.drawer else "tui_postgres" if args.db else "tui"
    with record.Run(name, args) as bench:
        if args.drawer:
            bench.emit(drawer_figures(args.poll_ms))
            return
        with tempfile.TemporaryDirectory(prefix="kanban-bench-tui-") as folder:
            boards = {}
            for count in args.tasks:
                template = Path(folder) / f"board-{count}.db"
                built = time.monotonic()
                ids = build_board(template, count)
                boards[count] = (template, ids, time.monotonic() - built)
            for round_ in range(1, args.repeat + 1):
                lines = {}
                # More starts of the app for the first frame alone, the sizes in turn, so the
                # ratio compares medians the machine's load weighed on alike.
                starts: dict[int, list[tuple[float, float]]] = {n: [] for n in args.tasks}
                for _ in range(args.starts - 1):
                    for count in args.tasks:
                        template, ids, _ = boards[count]
                        starts[count].append(one_start(template, ids, args.poll_ms))
                for count in args.tasks:
                    template, ids, build_s = boards[count]
                    figures = board_figures(args, template, ids)
                    starts[count].append((figures["first_frame_s"], figures["first_frame_cpu_s"]))
                    figures |= {
                        "first_frames_s": [round(wall, 3) for wall, _ in starts[count]],
                        "first_frame_s_median": round(
                            statistics.median(wall for wall, _ in starts[count]), 3
                        ),
                        "first_frame_cpu_s_median": round(
                            statistics.median(cpu for _, cpu in starts[count]), 2
                        ),
                    }
                    if not args.db:
                        figures |= upkeep_figures(template)
                    lines[count] = bench.emit(
                        {"round": round_, "build_board_s": round(build_s, 1), **figures}
                    )
                if len(args.tasks) > 1:
                    bench.emit(summary(round_, lines[min(lines)], lines[max(lines)]))


def upkeep_figures(template: Path) -> dict[str, Any]:
    """`kanban db check` (three times: the median), then `kanban prune --events-before 90d` and
    `kanban db import-events` on a copy, as an operator runs them (wall time of the command),
    beside the CLI's own start-up (`kanban db path`) in the same run; the events must be
    identical after the import."""
    import hashlib
    import resource
    import sqlite3
    import subprocess

    def events_digest(path: Path) -> tuple[int, str]:
        conn = sqlite3.connect(path)
        try:
            rows = conn.execute("SELECT * FROM events ORDER BY seq").fetchall()
        finally:
            conn.close()
        return len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()

    with tempfile.TemporaryDirectory() as folder:
        copy = fresh_copy(template, folder)
        env = {**os.environ, "KANBAN_DB": str(copy)}
        kanban = str(Path(sys.executable).parent / "kanban")

        cpu: dict[str, float] = {}

        def run(*args: str) -> float:
            """The command's wall time; its CPU seconds (user + system) go to `cpu`, a figure
            the shared machine's load moves far less than the wall."""
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            subprocess.run([kanban, *args], env=env, check=True, capture_output=True)
            wall = time.monotonic() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[" ".join(args[:2])] = (after.ru_utime - before.ru_utime) + (
                after.ru_stime - before.ru_stime
            )
            return wall

        before = events_digest(copy)
        startup = min(run("db", "path") for _ in range(3))
        checks = []
        for _ in range(3):  # the median of three: one run on a shared machine is one draw
            checks.append((run("db", "check"), cpu["db check"]))
        check = statistics.median(wall for wall, _ in checks)
        check_cpu = statistics.median(used for _, used in checks)
        archive = Path(folder) / "old.jsonl"
        prune = run("prune", "--events-before", "90d", "--archive", str(archive))
        left = events_digest(copy)[0]
        check_after = run("db", "check")
        imported = run("db", "import-events", str(archive))
        after = events_digest(copy)
    return {
        "events": before[0],
        "cli_startup_s": round(startup, 2),
        "db_check_s": round(check, 2),
        "db_check_cpu_s": round(check_cpu, 2),
        "db_checks_s": [round(wall, 2) for wall, _ in checks],
        "prune_90d_s": round(prune, 2),
        "pruned_events": before[0] - left,
        "db_check_after_prune_s": round(check_after, 2),
        "import_events_s": round(imported, 2),
        "events_identical_after_import": after == before,
    }


FIRST_FRAME_RATIO = 1.3  # the largest board's first frame against the smallest's, same run
RSS_MB = 100
CHANGE_MS = 500
CHANGE_BYTES = 16 * 1024
DB_CHECK_S = 2.0


def summary(round_: int, small: dict[str, Any], large: dict[str, Any]) -> dict[str, Any]:
    """The targets of a year of work on one board, from two lines of the same round."""
    ratio = large["first_frame_s_median"] / small["first_frame_s_median"]
    cpu_ratio = large["first_frame_cpu_s_median"] / small["first_frame_cpu_s_median"]
    return {
        "summary": f"{large['tasks']:,} against {small['tasks']:,} tasks",
        "round": round_,
        "first_frame_ratio": round(ratio, 2),
        "first_frame_s": [small["first_frame_s_median"], large["first_frame_s_median"]],
        "first_frame_cpu_ratio": round(cpu_ratio, 2),
        "first_frame_cpu_s": [small["first_frame_cpu_s_median"], large["first_frame_cpu_s_median"]],
        "peak_rss_mb": large["peak_rss_mb"],
        "change_to_screen_ms_p50": large["change_to_screen_ms_p50"],
        "one_card_change_bytes_p50": large["one_card_change_bytes_p50"],
        "db_check_s": large.get("db_check_s"),
        "db_check_cpu_s": large.get("db_check_cpu_s"),
        "targets_met": {
            "first_frame_ratio": ratio <= FIRST_FRAME_RATIO,
            "rss": large["peak_rss_mb"] <= RSS_MB,
            "change_to_screen": large["change_to_screen_ms_p50"] <= CHANGE_MS,
            "one_card_change_bytes": large["one_card_change_bytes_p50"] < CHANGE_BYTES,
            **({"db_check": large["db_check_s"] <= DB_CHECK_S} if "db_check_s" in large else {}),
            **(
                {"events_identical_after_import": large["events_identical_after_import"]}
                if "events_identical_after_import" in large
                else {}
            ),
        },
    }


def fresh_copy(template: Path, folder: str) -> Path:
    """A copy of the board, on disk before the app starts: a 75 MB copy still being written back
    would weigh on the larger board's start-up alone."""
    copy = Path(folder) / "board.db"
    shutil.copyfile(template, copy)
    with open(copy, "rb+") as written:
        os.fsync(written.fileno())
    return copy


def one_start(template: Path, ids: dict[str, Any], poll_ms: int) -> tuple[float, float]:
    """One start of the app on a fresh copy: (seconds to its first frame, the app's CPU seconds
    by then)."""
    with tempfile.TemporaryDirectory() as folder:
        term = Terminal(fresh_copy(template, folder), poll_ms)
        try:
            seconds = term.wait_for(ids["watched"].encode()) - term.started
            return seconds, term.cpu_s()
        finally:
            term.close()


def board_figures(args: argparse.Namespace, template: Path, ids: dict[str, Any]) -> dict[str, Any]:
    """One board in a fresh copy: the app started on it and measured from outside."""
    poll_s = args.poll_ms / 1000
    with tempfile.TemporaryDirectory() as folder:
        copy = fresh_copy(template, folder)
        db: Path | str = copy
        boards = None
        if args.db:
            from claim_postgres import Boards

            boards = Boards(args.db)
            db = boards.fresh(copy)
        term = Terminal(db, args.poll_ms)
        try:
            first_paint = term.wait_for(b"kanban") - term.started
            first_frame = term.wait_for(ids["watched"].encode()) - term.started
            first_frame_cpu = term.cpu_s()
            time.sleep(1.5)  # let start-up settle (the first poll, any layout pass)

            # Keystroke to frame, moving down through the biggest column and paging.
            term.send(b"l")  # to the in-progress column
            time.sleep(0.3)
            latencies, ends = [], []
            for key in [b"j"] * 20 + [b"\x04"] * 5 + [b"k"] * 5:  # j, ctrl+d (page), k
                mark = term.mark()
                sent = term.send(key)
                first, last, _ = term.burst(mark)
                if first is not None and last is not None:
                    latencies.append((first - sent) * 1000)
                    ends.append((last - sent) * 1000)
                time.sleep(0.12)
            term.send(b"g")
            time.sleep(0.5)

            # Idle: nothing changes for ten polls.
            mark, cpu0, t0 = term.mark(), term.cpu_s(), time.monotonic()
            time.sleep(10 * poll_s)
            idle_bytes = sum(len(data) for _, data in term.since(mark))
            idle_cpu = (term.cpu_s() - cpu0) / (time.monotonic() - t0) * 100

            # The activity pane open (A), idle: it repaints only when an event arrives.
            mark = term.mark()
            term.send(b"A")
            term.settle(mark)  # the pane's own opening frame (slow on a loaded machine)
            mark = term.mark()
            time.sleep(10 * poll_s)
            activity_idle_bytes = sum(len(data) for _, data in term.since(mark))
            term.send(b"A")
            time.sleep(0.5)

            # One agent write to one visible card (a heartbeat: its lease moves).
            agent = Board(db)
            holder = agent.get_task(ids["watched"]).assignee_agent_id or ""
            change_ms, change_bytes, change_cpu, clear_bytes = [], [], [], []
            for _ in range(5):
                time.sleep(poll_s * 1.37)  # land at varying points of the poll cycle
                mark, cpu0 = term.mark(), term.cpu_s()
                agent.heartbeat(ids["watched"], holder)
                committed = time.monotonic()
                first, _last, count = term.burst(mark, timeout=poll_s * 3)
                if first is not None:
                    change_ms.append((first - committed) * 1000)
                change_bytes.append(count)
                change_cpu.append(term.cpu_s() - cpu0)
                mark = term.mark()
                time.sleep(4.5)  # the highlight ends
                clear_bytes.append(sum(len(data) for _, data in term.since(mark)))

            # Two years down the done column: the end of it (`G`), then a filter that finds the
            # oldest task; both are read from the store, never loaded at start.
            for _ in range(3):  # in progress -> in review -> blocked -> done
                term.send(b"l")
                time.sleep(0.3)
            time.sleep(0.5)
            needle = OLDEST_TITLE.encode()
            mark = term.mark()
            sent = term.send(b"G")
            done_end_ms = (term.wait_for(needle, timeout=60, start=mark) - sent) * 1000
            term.settle(mark)
            term.send(b"g")
            term.settle(term.mark(), quiet_s=1.0)
            term.send(b"/")  # the filter line opens, then the word is typed at once
            term.settle(term.mark(), quiet_s=0.3)
            mark = term.mark()
            sent = term.send(OLDEST_TITLE.split()[0].lower().encode())
            filter_ms = (term.wait_for(needle, timeout=60, start=mark) - sent) * 1000
            term.settle(mark)
            term.send(b"\x1b")  # esc: the filter cleared
            term.settle(term.mark(), quiet_s=1.0)

            # For reference: a card that moves between columns (an agent claims the top todo).
            mark = term.mark()
            agent.claim(ids["mover"], "agent-bench")
            _first, _last, move_bytes = term.burst(mark, timeout=poll_s * 3)
            agent.close()
            rss = term.peak_rss_mb()
        finally:
            term.close()
            if boards is not None:
                boards.close()
    result = {
        "backend": "postgres" if args.db else "sqlite",
        "tasks": ids["tasks"],
        "live_tasks": ids["live_tasks"],
        "finished_share": ids["finished_share"],
        "poll_ms": args.poll_ms,
        "terminal": f"{COLUMNS}x{ROWS}",
        "first_paint_s": round(first_paint, 3),
        "first_frame_s": round(first_frame, 3),
        "first_frame_cpu_s": round(first_frame_cpu, 2),
        "peak_rss_mb": round(rss, 1),
        "keystroke_to_first_byte_ms_p50": round(statistics.median(latencies), 1),
        "keystroke_to_frame_ms_p50": round(statistics.median(ends), 1),
        "keystroke_to_frame_ms_max": round(max(ends), 1),
        "idle_bytes_per_poll": round(idle_bytes / 10, 1),
        "idle_cpu_percent": round(idle_cpu, 2),
        "activity_pane_idle_bytes_per_poll": round(activity_idle_bytes / 10, 1),
        "change_to_screen_ms_p50": round(statistics.median(change_ms), 1),
        "change_to_screen_ms_max": round(max(change_ms), 1),
        "one_card_change_bytes_p50": int(statistics.median(change_bytes)),
        "one_card_change_cpu_ms_p50": round(statistics.median(change_cpu) * 1000, 1),
        "highlight_end_bytes_p50": int(statistics.median(clear_bytes)),
        "card_moves_column_bytes": move_bytes,
        "done_end_ms": round(done_end_ms, 1),
        "filter_finds_oldest_ms": round(filter_ms, 1),
        "targets_met": {
            "first_frame": first_frame <= 1.0,
            "rss": rss <= 150,
            "keystroke_to_frame": statistics.median(ends) <= 50,
            "idle_bytes": idle_bytes == 0,
            "activity_pane_idle_bytes": activity_idle_bytes == 0,
            "idle_cpu": idle_cpu < 1.0,
            "one_card_change": statistics.median(change_bytes) < 2048,
        },
    }
    return result


if __name__ == "__main__":
    main()
