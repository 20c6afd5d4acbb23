"""Many watchers on one `kanban serve`: the live event stream's fan-out and a stalled client.

    python benchmarks/sse.py [--subscribers 200] [--agents 16] [--duration 8]
        [--parts fanout,stalled]

`fanout`: the real server on a ready board; `--subscribers` SSE streams read by a few reader
processes (raw sockets, one selector each, noting when each event id arrives), while `--agents`
spawned httpx clients claim and complete tasks through the same server (`--think-ms` between
calls, as agents think). Every event is looked up in the board afterwards: its delivery latency
is arrival - `createdAt`, for every subscriber. The baseline is one subscriber, same agents, same
run: the ratio says what the other 199 cost. Target: p99 <= 1 s and nothing missed.
`stalled`: 20 streams that never read (a 4 KB receive window) beside one reader, while the board
gains events in plans of `--batch` tasks; the server's RSS sampled throughout, against its
RSS before.
Target: RSS bounded (peak <= 1.5x the start) and every stalled stream ended by the server
(`--sse-send-timeout`), while the reader misses nothing.
"""

import argparse
import contextlib
import multiprocessing
import os
import re
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import json

import httpx
import record
from claim import build_board
from proc_stat import cpu_seconds

from boardlib import Board, PlanItem

HERE = Path(__file__).resolve().parent
KANBAN = Path(sys.executable).parent / "kanban"
CTX = multiprocessing.get_context("spawn")
ID = re.compile(rb"id: (\d+)\r?\n")


class Server:
    def __init__(self, db: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [str(KANBAN), "--db", str(db), "serve", "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        self.url = json.loads(self.process.stdout.readline())["listening"]
        self.host, port = self.url.removeprefix("http://").rsplit(":", 1)
        self.port = int(port)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def sockets(self) -> int:
        fds = Path(f"/proc/{self.process.pid}/fd")
        count = 0
        for fd in fds.iterdir():
            with contextlib.suppress(OSError):
                count += os.readlink(fd).startswith("socket:")
        return count

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


def request(host: str, since: int) -> bytes:
    return (
        f"GET /api/board/events?since={since} HTTP/1.1\r\nHost: {host}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    ).encode()


def reader(
    host: str, port: int, count: int, since: int, ready: Any, stop: Any, out: Any, until: Any = None
) -> None:
    """`count` streams in one selector loop: per stream, (seq, arrival time) of every event; until
    `stop` is set, or every stream has read up to `until` (when it is set above 0)."""
    selector = selectors.DefaultSelector()
    arrivals: list[list[tuple[int, float]]] = []
    for index in range(count):
        sock = socket.create_connection((host, port), timeout=30)
        sock.sendall(request(host, since))
        sock.setblocking(False)
        arrivals.append([])
        selector.register(sock, selectors.EVENT_READ, (index, bytearray()))
    ready.release()
    while not stop.is_set():
        if (
            until is not None
            and until.value
            and all(seen and seen[-1][0] >= until.value for seen in arrivals)
        ):
            break
        for key, _ in selector.select(timeout=0.2):
            index, carry = key.data
            try:
                data = key.fileobj.recv(262144)  # type: ignore[union-attr]
            except BlockingIOError:
                continue
            now = time.time()
            if not data:
                selector.unregister(key.fileobj)
                continue
            carry += data
            seen = arrivals[index]
            last = seen[-1][0] if seen else since
            for match in ID.finditer(carry):
                seq = int(match.group(1))
                if seq > last:
                    seen.append((seq, now))
                    last = seq
            del carry[: max(0, len(carry) - 32)]  # an id split across two reads is read next time
    out.put(arrivals)


def agent(url: str, name: str, seconds: float, think_s: float, barrier: Any, out: Any) -> None:
    calls = 0
    with httpx.Client(base_url=url, timeout=30) as client:
        barrier.wait()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got = client.post("/api/board/claim-next", json={"agent": name})
            calls += 1
            if got.status_code != 200:
                break
            task = got.json()["task"]
            time.sleep(think_s)
            client.post(
                f"/api/board/{task['id']}/complete",
                json={"agent": name, "epoch": task["claimEpoch"]},
            )
            calls += 1
            time.sleep(think_s)
    out.put(calls)


def created_at(db: Path, since: int) -> dict[int, float]:
    with Board(db, read_only=True, reconcile_orphans=False) as board:
        seen: dict[int, float] = {}
        cursor = since
        while page := board.events(since=cursor, limit=1000):
            for event in page:
                seen[event.seq] = event.created_at / 1000
            cursor = page[-1].seq
    return seen


def fanout(template: Path, tmp: Path, subscribers: int, args: argparse.Namespace) -> dict[str, Any]:
    db = tmp / f"fanout-{subscribers}.db"
    shutil.copy(template, db)
    server = Server(db)
    try:
        with Board(db, read_only=True, reconcile_orphans=False) as board:
            since = board.last_event_seq()
        readers = max(1, min(args.readers, subscribers))
        ready, stop, out = CTX.Semaphore(0), CTX.Event(), CTX.Queue()
        shares = [subscribers // readers + (n < subscribers % readers) for n in range(readers)]
        procs = [
            CTX.Process(target=reader, args=(server.host, server.port, n, since, ready, stop, out))
            for n in shares
        ]
        for proc in procs:
            proc.start()
        for _ in procs:
            ready.acquire()
        time.sleep(1.0)  # every stream has its headers and waits on the feed
        barrier, done = CTX.Barrier(args.agents + 1), CTX.Queue()
        think = args.think_ms / 1000
        agents = [
            CTX.Process(
                target=agent, args=(server.url, f"a{n}", args.duration, think, barrier, done)
            )
            for n in range(args.agents)
        ]
        for proc in agents:
            proc.start()
        load_before = os.getloadavg()[0]
        cpu_before = cpu_seconds(server.process.pid)
        barrier.wait()
        started = time.monotonic()
        calls = sum(done.get(timeout=args.duration * 10 + 120) for _ in agents)
        elapsed = time.monotonic() - started
        for proc in agents:
            proc.join()
        time.sleep(2.0)  # the last events' delivery, well past the 1 s target
        server_cpu = cpu_seconds(server.process.pid) - cpu_before
        stop.set()
        streams = [stream for _ in procs for stream in out.get(timeout=120)]
        for proc in procs:
            proc.join()
    finally:
        server.stop()
    written = created_at(db, since)
    latencies: list[float] = []
    missed = 0
    for stream in streams:
        got = dict(stream)
        missed += sum(1 for seq in written if seq not in got)
        latencies += [max(0.0, got[seq] - at) for seq, at in written.items() if seq in got]
    latencies.sort()
    return {
        "subscribers": subscribers,
        "agents": args.agents,
        "think_ms": args.think_ms,
        "agent_calls": calls,
        "events": len(written),
        "deliveries": len(latencies),
        "missed": missed,
        "p50_ms": round(1000 * statistics.median(latencies), 1),
        "p99_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 1),
        "max_ms": round(1000 * latencies[-1], 1),
        "events_per_s": round(len(written) / elapsed, 1),
        # the server's CPU per event written, serving the agents' calls and every stream: what
        # the load on the machine moves far less than the latencies
        "server_cpu_ms_per_event": round(1000 * server_cpu / max(len(written), 1), 3),
        "load_when_agents_started": round(load_before, 2),
    }


def stalled(template: Path, tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    db = tmp / "stalled.db"
    shutil.copy(template, db)
    server = Server(db, "--sse-send-timeout", str(args.send_timeout))
    try:
        with Board(db, reconcile_orphans=False) as writer:
            since = writer.last_event_seq()
            stuck = []
            for _ in range(20):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect((server.host, server.port))
                sock.sendall(request(server.host, since))
                stuck.append(sock)
            ready, stop, out = CTX.Semaphore(0), CTX.Event(), CTX.Queue()
            until = CTX.Value("q", 0)
            watcher = CTX.Process(
                target=reader, args=(server.host, server.port, 1, since, ready, stop, out, until)
            )
            watcher.start()
            ready.acquire()
            time.sleep(1.0)
            sockets_before, rss_before = server.sockets(), server.rss_mb()
            peak, batches, started = rss_before, 0, time.monotonic()
            ended_after: float | None = None
            # a plan a second until the stalled streams are ended (or --most-batches), then no
            # more writes while the server catches up (at most --settle-s)
            while time.monotonic() - started < args.most_batches + args.settle_s:
                if batches < args.most_batches:
                    writer.create_plan(
                        [PlanItem(key=f"k{batches}_{n}", title=f"t{n}") for n in range(args.batch)]
                    )
                    batches += 1
                for _ in range(10):
                    time.sleep(0.1)
                    peak = max(peak, server.rss_mb())
                if server.sockets() <= sockets_before - 20:
                    ended_after = time.monotonic() - started
                    break
            last = writer.last_event_seq()
            until.value = last
            watcher.join(timeout=args.settle_s)
            stop.set()
            streams = out.get(timeout=120)
            watcher.join()
            peak = max(peak, server.rss_mb())
            rss_after, sockets_after = server.rss_mb(), server.sockets()
            for sock in stuck:
                sock.close()
    finally:
        server.stop()
    events = last - since
    got = [seq for seq, _ in streams[0]]
    return {
        "stalled_streams": 20,
        "send_timeout_s": args.send_timeout,
        "events_written": events,
        "stalled_ended": sockets_before - sockets_after,
        "seconds_to_end_all": None if ended_after is None else round(ended_after, 1),
        "reader_missed": events - len(got),
        "rss_before_mb": round(rss_before, 1),
        "rss_peak_mb": round(peak, 1),
        "rss_after_mb": round(rss_after, 1),
        "rss_peak_ratio": round(peak / rss_before, 2),
        # what the server would hold had it queued every event for every stalled stream (~200 B
        # of SSE per event)
        "unbounded_would_hold_mb": round(20 * events * 200 / 1e6, 1),
    }


def measure(args: argparse.Namespace, bench: record.Run) -> None:
    parts = set(args.parts.split(","))
    out: dict[str, Any] = {"summary": "many watchers on one server"}
    with tempfile.TemporaryDirectory(prefix="kanban-sse-") as folder:
        tmp = Path(folder)
        template = tmp / "ready.db"
        build_board(template, args.tasks, mixed=False, seed=7)
        if "fanout" in parts:
            one = fanout(template, tmp, 1, args)
            bench.emit({"part": "fanout", **one})
            many = fanout(template, tmp, args.subscribers, args)
            bench.emit({"part": "fanout", **many})
            out["fanout_p99_ms"] = many["p99_ms"]
            out["fanout_p99_vs_one_subscriber"] = round(many["p99_ms"] / max(one["p99_ms"], 1), 2)
            out[f"fanout_{args.subscribers}_p99<=1s"] = many["p99_ms"] <= 1000
            out["fanout_zero_missed"] = many["missed"] == 0 and one["missed"] == 0
            # One core's worth of fan-out: the events/s one core serves with this many streams
            # (agents' calls included), against the rate the agents wrote in this run.
            per_stream = (many["server_cpu_ms_per_event"] - one["server_cpu_ms_per_event"]) / max(
                args.subscribers - 1, 1
            )
            out["server_cpu_us_per_event_per_stream"] = round(1000 * per_stream, 1)
            out["one_core_events_per_s"] = round(1000 / many["server_cpu_ms_per_event"], 1)
            out["one_core_vs_agents_rate"] = round(
                out["one_core_events_per_s"] / max(many["events_per_s"], 0.1), 2
            )
        if "stalled" in parts:
            line = stalled(template, tmp, args)
            bench.emit({"part": "stalled", **line})
            out["stalled_rss_peak<=1.5x"] = line["rss_peak_ratio"] <= 1.5
            out["stalled_all_ended"] = line["stalled_ended"] >= 20
            out["stalled_reader_missed_none"] = line["reader_missed"] == 0
    bench.emit(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--readers", type=int, default=2, help="processes reading the streams")
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--think-ms", type=float, default=100.0)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--send-timeout", type=float, default=2.0)
    parser.add_argument("--batch", type=int, default=2000, help="events a plan writes")
    parser.add_argument("--most-batches", type=int, default=20, help="plans written, ~1/s")
    parser.add_argument("--settle-s", type=float, default=60.0)
    parser.add_argument("--parts", default="fanout,stalled")
    record.add_arguments(parser)
    args = parser.parse_args()
    with record.Run("sse", args) as bench:
        measure(args, bench)


if __name__ == "__main__":
    main()
