"""Benchmark (not a test): the terminal board on 10,000 tasks, run in a real pseudo-terminal at
200x50 exactly as an operator would run it, measured from outside.

    python benchmarks/tui.py [--tasks 10000] [--poll-ms 500]

Prints one JSON line: time to first frame (the board with its cards), peak RSS, keystroke-to-frame
while moving through the cards, change-to-screen latency for one agent write, and CPU and bytes
written to the terminal per poll while idle and for a one-card change (plus, for reference, a card
moving between columns and the highlight ending), and bytes per poll while the activity pane is
open and idle. Targets (issues 5 and 10): first frame <= 1 s, RSS <= 150 MB, keystroke-to-frame
<= 50 ms, idle 0 bytes and < 1% CPU (the activity pane open too: 0 bytes), a one-card change
< 2 KB.
"""

import argparse
import fcntl
import json
import os
import pty
import random
import select
import statistics
import struct
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

from boardlib import Board, PlanItem
from boardlib import transitions as t

COLUMNS, ROWS = 200, 50
QUIET_S = 0.03  # a frame is over when the terminal has been quiet this long
TICKS = os.sysconf("SC_CLK_TCK")


def build_board(path: Path, count: int) -> dict[str, str]:
    """`count` tasks over all seven columns; returns the ids the measurements act on."""
    rng = random.Random(7)
    with Board(path) as board:
        items = [
            PlanItem(
                key=str(i),
                title=f"Task {i}: {rng.choice(['parse', 'render', 'store', 'verify'])} the "
                f"{rng.choice(['plan', 'board', 'lease', 'verdict'])} ({rng.randint(1, 999)})",
                priority=rng.randint(0, 5),
                role=rng.choice(["builder", "reviewer", None]),
                status=t.BACKLOG if i % 20 == 0 else t.TODO,
            )
            for i in range(count)
        ]
        created = board.create_plan(items)
        ids = [created[str(i)].id for i in range(count)]
        todo = [task_id for i, task_id in enumerate(ids) if i % 20]
        plan = {
            "in_progress": todo[: count // 10],
            "in_review": todo[count // 10 : count // 5],
            "blocked": todo[count // 5 : count // 4],
            "done": todo[count // 4 : count // 2],
            "cancelled": todo[count // 2 : count // 2 + count // 20],
        }
        for task_id in plan["in_progress"] + plan["in_review"] + plan["blocked"] + plan["done"]:
            board.claim(task_id, f"agent-{rng.randint(1, 40)}", runtime="bench")
        for task_id in plan["in_review"]:
            board.move(task_id, t.IN_REVIEW)
        for task_id in plan["blocked"]:
            board.move(task_id, t.BLOCKED, reason="waiting for the benchmark")
        for task_id in plan["done"]:
            board.move(task_id, t.DONE)
        for task_id in plan["cancelled"]:
            board.cancel(task_id)
        # The cards the measurements touch sit on top of their columns.
        watched = plan["in_progress"][0]
        board.update_task(watched, priority=100)
        mover = todo[-1]
        board.update_task(mover, priority=100)
    return {"watched": watched, "mover": mover, "agent": "", "first": watched}


class Terminal:
    """The app in a pty: everything it writes is timestamped and counted."""

    def __init__(self, db: Path, poll_ms: int) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(
            TERM="xterm-256color", COLORTERM="truecolor", COLUMNS=str(COLUMNS), LINES=str(ROWS)
        )
        self.started = time.monotonic()
        pid, fd = pty.fork()
        if pid == 0:
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
            args = ["-m", "tui", "--db", str(db), "--poll-ms", str(poll_ms)]
            os.execve(sys.executable, [sys.executable, *args], env)
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

    def wait_for(self, needle: bytes, timeout: float = 20) -> float:
        deadline = time.monotonic() + timeout
        seen = b""
        index = 0
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
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--poll-ms", type=int, default=500)
    args = parser.parse_args()
    poll_s = args.poll_ms / 1000
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "board.db"
        built = time.monotonic()
        ids = build_board(db, args.tasks)
        build_s = time.monotonic() - built
        term = Terminal(db, args.poll_ms)
        try:
            first_paint = term.wait_for(b"kanban") - term.started
            first_frame = term.wait_for(ids["watched"].encode()) - term.started
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

            # For reference: a card that moves between columns (an agent claims the top todo).
            mark = term.mark()
            agent.claim(ids["mover"], "agent-bench")
            _first, _last, move_bytes = term.burst(mark, timeout=poll_s * 3)
            agent.close()
            rss = term.peak_rss_mb()
        finally:
            term.close()
    result = {
        "tasks": args.tasks,
        "poll_ms": args.poll_ms,
        "terminal": f"{COLUMNS}x{ROWS}",
        "build_board_s": round(build_s, 1),
        "first_paint_s": round(first_paint, 3),
        "first_frame_s": round(first_frame, 3),
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
        "loadavg_1m": os.getloadavg()[0],
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
    print(json.dumps(result))


if __name__ == "__main__":
    main()
