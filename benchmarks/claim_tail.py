"""Where the slow claims' time goes, at 16 claiming processes (a diagnostic, not a target check).

    python benchmarks/claim_tail.py [--tasks 100000] [--duration 3] [--workers 16] [--slow-ms 10]

Runs the workers of benchmarks/claim.py on a copy of its ready board, with the writer turn timed
from outside the library (the store's `run_transaction` is swapped for a timed copy in each worker
process, so the library's hot path carries no instrumentation). For every claim it records, on the
shared monotonic clock: asking for the writer turn, getting it (and whether it was free at once),
BEGIN IMMEDIATE, the claim's statements, COMMIT, giving the turn back; and, from
/proc/thread-self/schedstat and getrusage, the process's run-queue wait (runnable but not on a
core) and involuntary context switches (preemptions) in each of those windows.

Then, for the claims slower than --slow-ms: their time split into those windows, how much of it
their own process spent waiting for a core, and for the time they waited for the turn, the turns
held by others in that window: how long, and how much of that the holder itself spent preempted,
waiting for a core while it held the lock. One JSON line per view.
"""

import argparse
import multiprocessing
import os
import resource
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import record
from claim import CTX, build_board

from boardlib import Board, BoardConfig, BoardError, Reason

FIELDS = (
    "t0",  # claim_next called
    "q0",  # asking for the writer turn
    "q1",  # got it
    "b1",  # BEGIN IMMEDIATE returned
    "w1",  # the claim's statements done
    "c1",  # COMMIT returned
    "r0",  # giving the turn back
    "r1",  # turn given back
    "t1",  # claim_next returned
)


def _install_probe(record: dict[str, int]) -> None:
    """Swap the store's transaction runner for a timed copy (same steps, no retry sleeps)."""
    from boardlib.store import contention, sqlite

    stat_fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)

    def run_delay() -> int:
        return int(os.pread(stat_fd, 128, 0).split()[1])

    def mark(name: str) -> None:
        record[name] = time.perf_counter_ns()
        record[name + "_rq"] = run_delay()
        usage = resource.getrusage(resource.RUSAGE_THREAD)
        record[name + "_iv"] = usage.ru_nivcsw
        record[name + "_v"] = usage.ru_nvcsw

    def timed(conn: Any, work: Any, *, config: Any, write: bool = True, queue: Any = None) -> Any:
        if queue is None or not write:
            return contention.run_transaction(conn, work, config=config, write=write, queue=queue)
        mark("q0")
        record["fast"] = int(_try_nb(queue))
        if not record["fast"] and not queue.acquire(config.retry_budget_ms / 1000):
            raise BoardError(Reason.BUSY, "database busy, try again", waited="writer queue")
        mark("q1")
        try:
            conn.execute("BEGIN IMMEDIATE")
            mark("b1")
            try:
                result = work(conn)
                mark("w1")
                conn.execute("COMMIT")
                mark("c1")
                return result
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        finally:
            mark("r0")
            queue.release()
            mark("r1")

    sqlite.run_transaction = timed  # type: ignore[attr-defined]


def _try_nb(queue: Any) -> bool:
    """The queue's own first step (a non-blocking `flock`), taken here to tell a free turn."""
    import fcntl

    try:
        fcntl.flock(queue._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    queue._held = queue._fd
    return True


def worker(
    path: str, agent: str, seconds: float, barrier: Any, results: Any, think_ms: float, pragma: str
) -> None:
    import random

    from boardlib.store import contention

    if pragma != "none":  # a variant: one more pragma on every connection
        name, value = pragma.split("=")
        contention.PRAGMAS = (*contention.PRAGMAS, (name, value))
    rng = random.Random(agent)
    record: dict[str, int] = {}
    _install_probe(record)
    stat_fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
    rows: list[dict[str, int]] = []
    with Board(path, config=BoardConfig(), reconcile_orphans=False) as board:
        board.claim_next(agent + "-warmup", role="nobody")
        barrier.wait()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            record.clear()
            record["t0"] = time.perf_counter_ns()
            record["t0_rq"] = int(os.pread(stat_fd, 128, 0).split()[1])
            record["t0_iv"] = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
            try:
                task = board.claim_next(agent)
            except BoardError as error:
                if error.reason is not Reason.BUSY:
                    raise
                continue
            record["t1"] = time.perf_counter_ns()
            record["t1_rq"] = int(os.pread(stat_fd, 128, 0).split()[1])
            record["t1_iv"] = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
            if task is None:
                break
            rows.append({**record, "pid": os.getpid()})
            if think_ms:
                time.sleep(rng.uniform(0, 2 * think_ms) / 1000)
    results.put(rows)


def run(
    path: Path, workers: int, seconds: float, think_ms: float, pragma: str = "none"
) -> tuple[list[dict[str, int]], dict[str, float]]:
    """The workers' claim records, and the machine's runnable tasks (`procs_running` of
    /proc/stat, sampled every millisecond while they ran: the run queues of all cores)."""
    barrier = CTX.Barrier(workers + 1)
    results = CTX.Queue()
    procs = [
        CTX.Process(
            target=worker, args=(str(path), f"w{n}", seconds, barrier, results, think_ms, pragma)
        )
        for n in range(workers)
    ]
    for proc in procs:
        proc.start()
    samples: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.001):
            with open("/proc/stat") as stat:
                for line in stat:
                    if line.startswith("procs_running"):
                        samples.append(int(line.split()[1]) - 1)  # less this sampler
                        break

    barrier.wait()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    rows = [row for _ in procs for row in results.get(timeout=seconds * 20 + 120)]
    done.set()
    sampler.join()
    for proc in procs:
        proc.join()
    samples.sort()
    runnable = {
        "runnable_mean": round(statistics.mean(samples), 1) if samples else 0.0,
        "runnable_p90": samples[int(0.9 * (len(samples) - 1))] if samples else 0,
    }
    return rows, runnable


WINDOWS = [("before_turn", "t0", "q0"), ("turn_wait", "q0", "q1"), ("begin", "q1", "b1"),
           ("statements", "b1", "w1"), ("commit", "w1", "c1"), ("release", "r0", "r1"),
           ("after", "r1", "t1")]  # fmt: skip


def ms(ns: float) -> float:
    return round(ns / 1e6, 3)


def analyse(rows: list[dict[str, int]], slow_ms: float) -> list[dict[str, Any]]:
    latencies = sorted(r["t1"] - r["t0"] for r in rows)

    def p(q: float) -> int:
        return latencies[int(q * (len(latencies) - 1))]

    out: list[dict[str, Any]] = [
        {
            "view": "all",
            "claims": len(rows),
            "p50_ms": ms(p(0.5)),
            "p90_ms": ms(p(0.9)),
            "p99_ms": ms(p(0.99)),
            "max_ms": ms(latencies[-1]),
            "turn_free_at_once": round(sum(r["fast"] for r in rows) / len(rows), 3),
            "hold_ms_p50": ms(statistics.median(r["r0"] - r["q1"] for r in rows)),
            "hold_ms_p99": ms(sorted(r["r0"] - r["q1"] for r in rows)[int(0.99 * (len(rows) - 1))]),
            "holds_preempted": round(sum(r["r0_iv"] > r["q1_iv"] for r in rows) / len(rows), 4),
            "median_window_us": {
                name: round(statistics.median(r[b] - r[a] for r in rows) / 1e3, 1)
                for name, a, b in WINDOWS
            },
        }
    ]
    holds = sorted(
        (r["q1"], r["r0"], r["r0_rq"] - r["q1_rq"], r["r0_iv"] - r["q1_iv"], r["pid"]) for r in rows
    )
    slow = [r for r in rows if r["t1"] - r["t0"] > slow_ms * 1e6]
    split: dict[str, float] = {}
    own_rq: dict[str, float] = {}
    for name, a, b in WINDOWS:
        split[name] = ms(sum(r[b] - r[a] for r in slow) / max(1, len(slow)))
        own_rq[name] = ms(sum(r[b + "_rq"] - r[a + "_rq"] for r in slow) / max(1, len(slow)))
    # For each slow claim's turn wait: the turns held by others inside it.
    others_hold = others_hold_rq = preempted_holds = holds_in = 0.0
    longest_hold_rq: list[float] = []
    for r in slow:
        lo, hi = r["q0"], r["q1"]
        inside = [h for h in holds if h[1] > lo and h[0] < hi and h[4] != r["pid"]]
        holds_in += len(inside)
        others_hold += sum(min(h[1], hi) - max(h[0], lo) for h in inside)
        others_hold_rq += sum(h[2] for h in inside)
        preempted_holds += sum(1 for h in inside if h[3] > 0)
        if inside:
            longest_hold_rq.append(max(h[2] for h in inside))
    n = max(1, len(slow))
    out.append(
        {
            "view": f"claims > {slow_ms} ms",
            "count": len(slow),
            "share": round(len(slow) / len(rows), 4),
            "mean_ms": ms(sum(r["t1"] - r["t0"] for r in slow) / n),
            "mean_split_ms": split,
            "own_runqueue_wait_ms": own_rq,
            "own_preempted_while_holding": round(sum(r["r0_iv"] > r["q1_iv"] for r in slow) / n, 3),
            "turn_was_free_at_once": round(sum(r["fast"] for r in slow) / n, 3),
            "sleeps_per_turn_wait": round(
                sum(r["q1_v"] - r["q0_v"] for r in slow if not r["fast"])
                / max(1, sum(1 for r in slow if not r["fast"])),
                1,
            ),
            "turns_by_others_during_wait": round(holds_in / n, 1),
            "others_hold_ms_during_wait": ms(others_hold / n),
            "others_holders_runqueue_wait_ms": ms(others_hold_rq / n),
            "preempted_holds_during_wait": round(preempted_holds / n, 2),
            "worst_holder_runqueue_wait_ms_mean": ms(
                sum(longest_hold_rq) / max(1, len(longest_hold_rq))
            ),
        }
    )
    # Gaps: time inside slow claims' turn waits when nobody held the turn (lock free, waiter not
    # yet running: a wake-up delay), from the merged hold intervals.
    gap_total = 0.0
    for r in slow:
        lo, hi = r["q0"], r["q1"]
        spans = sorted((max(h[0], lo), min(h[1], hi)) for h in holds if h[1] > lo and h[0] < hi)
        covered, cursor = 0, lo
        for start, end in spans:
            start = max(start, cursor)
            if end > start:
                covered += end - start
                cursor = end
        gap_total += (hi - lo) - covered
    out[-1]["turn_free_but_waiter_not_yet_running_ms"] = ms(gap_total / n)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--slow-ms", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--pragmas", default="none", help="variants: none or NAME=VALUE, comma-separated"
    )
    parser.add_argument(
        "--think-ms", default="0", help="mean pause between claims (uniform 0-2x), comma-separated"
    )
    record.add_arguments(parser)
    args = parser.parse_args()
    with record.Run("claim_tail", args) as bench:
        measure(args, bench)


def measure(args: argparse.Namespace, bench: record.Run) -> None:
    with tempfile.TemporaryDirectory(prefix="tail-bench-") as tmp:
        template = Path(tmp) / "ready.db"
        build_board(template, args.tasks, mixed=False, seed=7)
        for i in range(args.runs):
            variants = [
                (float(ms), pragma)
                for ms in args.think_ms.split(",")
                for pragma in args.pragmas.split(",")
            ]
            for think, pragma in variants:
                copy = Path(tmp) / f"ready-{i}-{think}-{pragma}.db"
                shutil.copy(template, copy)
                rows, runnable = run(copy, args.workers, args.duration, think, pragma)
                head = {"run": i, "think_ms": think, "pragma": pragma, **runnable}
                for line in analyse(rows, args.slow_ms):
                    bench.emit({**head, **line})


if __name__ == "__main__":
    multiprocessing.freeze_support()
    main()
