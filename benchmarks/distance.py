"""Claimers at a network distance: the board's claim through a TCP delay proxy, on one machine.

    python benchmarks/distance.py --db postgresql://user@127.0.0.1:port/db
        [--delays 0.5,2,5] [--workers 1,16,64] [--duration 3] [--parts pg,http] [--rounds 1]

`pg`: N spawned processes run the board's `claim_next` against Postgres through
benchmarks/delay_proxy.py (a one-way delay each way), on a fresh copy of a ready board per run.
`verbs`: one process through the largest delay, each lease verb's p50 in round trips.
`http`: the real `kanban serve`, local to its SQLite board, and N spawned httpx keep-alive
clients calling `POST /api/board/claim-next` through the proxy. Per line: claims/s, p50, p99,
double claims, and the round trip measured in the same run through the same proxy (`SELECT 1`
on one connection; `GET /healthz` for HTTP), beside the nominal 2 x delay. The summary checks
p50 <= 1 round trip + 1.5 ms at 16 workers for every delay, and derives how many agents one
server carries (an agent making 4 lease calls a minute: claim, two heartbeats, complete).
The proxy, clients and server share this machine's cores: the delay is real, the distance is
not, so the throughput rows are the cores' limit as much as the distance's.

The ceilings (`--ceiling-workers`, default 16), through the same proxy at each delay in the same
run: for `pg`, `benchmarks/claim_floor.py`'s floor statement (the least a correct claim is: one
prepared statement, one round trip, no board), on a fresh copy of the same board; for `http`, a
bare ASGI app answering a canned claim under uvicorn (`benchmarks/http.py`'s ceiling), with the
same clients. What a ceiling row's p50 exceeds the round trip by is this machine's share of the
latency (the cores queued for by clients, proxy and server), not the board's; the summary also
says how far the board's p50 is over its ceiling's (`*_over_ceiling_ms`, `*<=ceiling+1.5ms`).
One run of a row moved that figure by several ms on a shared VM, so `--rounds N` runs each
delay's rows N times, board and ceiling back to back, and the summary takes the medians (with
each round's own `*_over_ceiling_ms_rounds` beside them).
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import importlib.util

import httpx
import psycopg
import record
from claim import build_board
from claim_floor import run as pg_run
from claim_postgres import Boards

from boardlib import Board

HERE = Path(__file__).resolve().parent
PG_FLOOR, BARE = "postgres floor", "bare asgi"  # the ceiling rows' names


def _sibling(name: str, stem: str) -> Any:
    """benchmarks/<stem>.py as module `name` (`http` is the standard library's name); registered
    in sys.modules, so spawned workers (which import this script first) unpickle its functions."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / f"{stem}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


bench_http = _sibling("bench_http", "http")
Server, drive, percentile = bench_http.Server, bench_http.drive, bench_http.percentile
BareServer = bench_http.BareServer
real_claim_answer = bench_http.real_claim_answer
CALLS_PER_AGENT_MINUTE = 4  # claim, two heartbeats, complete: one task a minute


class Proxy:
    """benchmarks/delay_proxy.py in its own process, in front of `target` (host:port)."""

    def __init__(self, target: str, delay_ms: float) -> None:
        self.stats = Path(tempfile.mkstemp(prefix="kanban-proxy-", suffix=".json")[1])
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "delay_proxy.py"), "--target", target,
             "--delay-ms", str(delay_ms), "--stats", str(self.stats)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        self.address = json.loads(self.process.stdout.readline())["listening"]

    def stop(self) -> dict[str, int]:
        """Stop; the chunks it carried (each way) and the connections it served."""
        self.process.terminate()
        self.process.wait(timeout=30)
        try:
            return dict(json.loads(self.stats.read_text() or "{}"))
        finally:
            self.stats.unlink(missing_ok=True)


def through(url: str, address: str) -> str:
    """`url` with its host and port replaced by the proxy's."""
    parts = urlsplit(url)
    user = parts.netloc.rpartition("@")[0]
    netloc = f"{user}@{address}" if user else address
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def pg_round_trip_ms(url: str, n: int = 100) -> float:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT 1")
        samples = []
        for _ in range(n):
            started = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            samples.append(1000 * (time.perf_counter() - started))
    return round(statistics.median(samples), 2)


def http_round_trip_ms(url: str, n: int = 100) -> float:
    with httpx.Client(base_url=url, timeout=30) as client:
        client.get("/healthz")
        samples = []
        for _ in range(n):
            started = time.perf_counter()
            client.get("/healthz")
            samples.append(1000 * (time.perf_counter() - started))
    return round(statistics.median(samples), 2)


class Proxied:
    """A running server seen through the proxy: what `http.drive` needs."""

    def __init__(self, server: Any, address: str) -> None:  # an http.py Server
        self.process = server.process
        self.url = f"http://{address}"


def http_run(db: Path, delay_ms: float, clients: int, seconds: float) -> dict[str, Any]:
    return http_through_proxy(Server(db), db, delay_ms, clients, seconds)


def bare_http_run(delay_ms: float, clients: int, seconds: float, canned: Path) -> dict[str, Any]:
    """The ceiling of `http_run`: a bare ASGI app answering the server's own claim answer
    (`http.real_claim_answer`) behind the same proxy."""
    return http_through_proxy(BareServer("asgi", canned=canned), None, delay_ms, clients, seconds)


def http_through_proxy(
    server: Any, db: Path | None, delay_ms: float, clients: int, seconds: float
) -> dict[str, Any]:
    """`clients` httpx clients claiming from `server` through a proxy of `delay_ms` each way;
    double claims are read back from the board at `db` (none for a bare app: it claims nothing)."""
    probe = Proxy(urlsplit(server.url).netloc, delay_ms)
    try:
        rtt = http_round_trip_ms(f"http://{probe.address}")
    finally:
        probe.stop()
    proxy = Proxy(urlsplit(server.url).netloc, delay_ms)
    carried: dict[str, int] = {}
    try:
        run = drive(Proxied(server, proxy.address), clients, seconds)
    finally:
        carried = proxy.stop()
        server.stop()
    outcomes = run["outcomes"]
    latencies = [x for outcome in outcomes for x in outcome["latencies"]]
    requests = sum(len(outcome["latencies"]) for outcome in outcomes)
    ids: Counter[str] = Counter()
    wrong = 0
    if db is not None:
        ids.update(task_id for outcome in outcomes for task_id in outcome["claimed"])
        owner = {task_id: o["agent"] for o in outcomes for task_id in o["claimed"]}
        with Board(db, read_only=True) as board:
            wrong = sum(
                1 for t, agent in owner.items() if board.get_task(t).assignee_agent_id != agent
            )
    statuses: Counter[int] = Counter()
    for outcome in outcomes:
        statuses.update({int(code): count for code, count in outcome["statuses"].items()})
    claims = sum(ids.values()) if db is not None else requests  # a bare app's every answer
    return {
        "claims_per_s": round(claims / run["elapsed"], 1),
        "p50_ms": round(1000 * statistics.median(latencies), 2),
        "p99_ms": round(1000 * percentile(latencies, 0.99), 2),
        "round_trip_ms": rtt,
        "flights_per_claim": flights(carried, requests),
        "double_claims": sum(n - 1 for n in ids.values() if n > 1) + wrong,
        "status_5xx": sum(n for status, n in statuses.items() if status >= 500),
        "claims": claims,
    }


def verb_trips(url: str, address: str, n: int) -> dict[str, Any]:
    """Each lease verb's p50 through the proxy, one process, one task at a time: claim_next,
    heartbeat, complete, approve (by another agent). p50 / the measured round trip is how many
    round trips the verb takes (its server and client time included)."""
    proxied = through(url, address)
    times: dict[str, list[float]] = {"claim_next": [], "heartbeat": [], "complete": [],
                                     "approve": []}  # fmt: skip
    with Board(proxied, reconcile_orphans=False) as board:
        for _ in range(n):
            started = time.perf_counter()
            task = board.claim_next("builder")
            times["claim_next"].append(time.perf_counter() - started)
            assert task is not None
            for verb, call, agent in (
                ("heartbeat", board.heartbeat, "builder"),
                ("complete", board.complete, "builder"),
                ("approve", board.approve, "judge"),
            ):
                started = time.perf_counter()
                call(task.id, agent)
                times[verb].append(time.perf_counter() - started)
    return {verb: round(1000 * statistics.median(xs), 2) for verb, xs in times.items()}


def flights(carried: dict[str, int], calls: int) -> float | None:
    """Client-to-server chunks the proxy carried per call: the round trips a call takes, its
    connection's set-up spread over its calls (a figure the machine's load does not move)."""
    return round(carried["up_chunks"] / calls, 2) if carried and calls else None


def measure(args: argparse.Namespace, bench: record.Run) -> None:
    delays = [float(d) for d in args.delays.split(",")]
    counts = [int(n) for n in args.workers.split(",")]
    parts = set(args.parts.split(","))
    ceiling_counts = [int(n) for n in args.ceiling_workers.split(",") if n]
    lines: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kanban-distance-") as tmp:
        template = Path(tmp) / "ready.db"
        build_board(template, args.tasks, mixed=False, seed=7)
        canned = real_claim_answer(template, Path(tmp))  # what the bare ceiling answers
        if "pg" in parts:
            boards = Boards(args.db)
            target = urlsplit(args.db).netloc.rpartition("@")[2]
            try:
                if "verbs" in parts:
                    delay = max(delays)
                    proxy = Proxy(target, delay)
                    try:
                        rtt = pg_round_trip_ms(through(args.db, proxy.address))
                        p50 = verb_trips(boards.fresh(template), proxy.address, args.verb_rounds)
                    finally:
                        proxy.stop()
                    line = {
                        "via": "postgres verbs", "one_way_ms": delay, "round_trip_ms": rtt,
                        **{f"{verb}_p50_ms": ms for verb, ms in p50.items()},
                        **{f"{verb}_trips": round(ms / rtt, 1) for verb, ms in p50.items()},
                    }  # fmt: skip
                    bench.emit(line)
                for delay, round_ in rounds_of(delays, args.rounds):
                    probe = Proxy(target, delay)
                    try:
                        rtt = pg_round_trip_ms(through(args.db, probe.address))
                    finally:
                        probe.stop()
                    # the board's claim_next beside the floor statement (its ceiling) at the
                    # ceiling's worker counts, back to back; then the board's other counts
                    for via, workers in paired(counts, ceiling_counts, "postgres", PG_FLOOR):
                        variant = "floor" if via == PG_FLOOR else "board"
                        fresh = boards.fresh(template)
                        proxy = Proxy(target, delay)
                        try:
                            got = pg_run(
                                through(fresh, proxy.address), variant, workers, args.duration, None
                            )
                        finally:
                            carried = proxy.stop()
                        line = {
                            "via": via, "one_way_ms": delay, "workers": workers,
                            "claims_per_s": got["claims_per_s"], "p50_ms": got["p50_ms"],
                            "p99_ms": got["p99_ms"], "round_trip_ms": rtt,
                            # the workers' warm-up claim and set-up are counted, spread over
                            "flights_per_claim": flights(carried, got["claims"] + workers),
                            "double_claims": got["double_claims"], "claims": got["claims"],
                            "round": round_,
                        }  # fmt: skip
                        lines.append(line)
                        bench.emit(line)
            finally:
                boards.close()
        if "http" in parts:
            http_counts = [int(n) for n in args.http_workers.split(",")]
            for delay, round_ in rounds_of(delays, args.rounds):
                for via, workers in paired(http_counts, ceiling_counts, "kanban serve", BARE):
                    if via == BARE:
                        got = bare_http_run(delay, workers, args.duration, canned)
                    else:
                        db = Path(tmp) / f"http-{delay}-{workers}-{round_}.db"
                        shutil.copy(template, db)
                        got = http_run(db, delay, workers, args.duration)
                    line = {"via": via, "one_way_ms": delay, "workers": workers, **got,
                            "round": round_}  # fmt: skip
                    lines.append(line)
                    bench.emit(line)
    bench.emit(summary(lines))


def rounds_of(delays: list[float], rounds: int) -> list[tuple[float, int]]:
    """Each delay's rounds, one after another: within a round the board's rows and their
    ceiling's run back to back, so a round's comparison shares the machine's mood."""
    return [(delay, round_) for delay in delays for round_ in range(1, max(rounds, 1) + 1)]


def paired(
    counts: list[int], ceiling_counts: list[int], via: str, ceiling_via: str
) -> list[tuple[str, int]]:
    """The rows of one delay's round, as (via, workers): the board's row at each of the ceiling's
    worker counts followed at once by its ceiling's, then the board's other counts (a 64-worker
    run leaves the machine busy for a while: it does not go between a pair)."""
    runs: list[tuple[str, int]] = []
    for workers in ceiling_counts:
        if workers in counts:
            runs.append((via, workers))
        runs.append((ceiling_via, workers))
    runs += [(via, n) for n in counts if n not in ceiling_counts]
    return runs


def p50_median(lines: list[dict[str, Any]]) -> float:
    """The median over a row's rounds of its p50 (one round: that p50)."""
    return float(statistics.median(ln["p50_ms"] for ln in lines))


def summary(lines: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"summary": "p50 at 16 workers <= 1 round trip + 1.5 ms, every delay"}
    for via, ceiling_via in (("postgres", PG_FLOOR), ("kanban serve", BARE)):
        mine = [ln for ln in lines if ln["via"] == via and "workers" in ln]
        if not mine:
            continue
        key = "pg" if via == "postgres" else "http"
        for delay in sorted({ln["one_way_ms"] for ln in mine if ln["workers"] == 16}):
            at16 = [ln for ln in mine if ln["workers"] == 16 and ln["one_way_ms"] == delay]
            ceiling = [
                ln
                for ln in lines
                if ln["via"] == ceiling_via and ln["workers"] == 16 and ln["one_way_ms"] == delay
            ]
            # each figure is the median of its rounds: against the nominal round trip, and the
            # one measured through the same proxy (its own scheduling delay included)
            p50, trip = p50_median(at16), statistics.median(ln["round_trip_ms"] for ln in at16)
            allowed = 2 * delay + 1.5
            out[f"{key}_p50_16_at_{delay}ms<={allowed}ms"] = p50 <= allowed
            out[f"{key}_p50_16_at_{delay}ms_minus_measured_trip_ms"] = round(p50 - trip, 2)
            if ceiling:
                over = round(p50 - p50_median(ceiling), 2)
                out[f"{key}_p50_16_at_{delay}ms_over_ceiling_ms"] = over
                out[f"{key}_p50_16_at_{delay}ms<=ceiling+1.5ms"] = over <= 1.5
                if len(at16) > 1:  # each round's own, board and ceiling paired by round
                    tops = {ln.get("round"): ln["p50_ms"] for ln in ceiling}
                    out[f"{key}_p50_16_at_{delay}ms_over_ceiling_ms_rounds"] = [
                        round(ln["p50_ms"] - tops[ln.get("round")], 2)
                        for ln in at16
                        if ln.get("round") in tops
                    ]
        for delay in sorted({ln["one_way_ms"] for ln in mine}):
            best = max(ln["claims_per_s"] for ln in mine if ln["one_way_ms"] == delay)
            out[f"{key}_agents_per_server_at_{delay}ms"] = int(best * 60 / CALLS_PER_AGENT_MINUTE)
        out[f"{key}_zero_double_claims"] = all(ln["double_claims"] == 0 for ln in mine)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", metavar="URL", help="Postgres on this machine (for `pg`)")
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--delays", default="0.5,2,5", help="one-way ms, comma-separated")
    parser.add_argument("--workers", default="1,16,64")
    parser.add_argument("--http-workers", default="1,16,64", help="client processes for http")
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--parts", default="pg,http,verbs")
    parser.add_argument(
        "--ceiling-workers", default="16", help="worker counts of the ceiling rows ('' for none)"
    )
    parser.add_argument("--verb-rounds", type=int, default=30)
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="rounds of each delay's rows, the board's and its ceiling's back to back; the "
        "summary takes the rounds' medians",
    )
    record.add_arguments(parser)
    args = parser.parse_args()
    if "pg" in args.parts and not args.db:
        parser.error("--db is needed for the pg part")
    with record.Run("distance", args) as bench:
        measure(args, bench)


if __name__ == "__main__":
    main()
