"""The floor of a Postgres claim on this machine: the cheapest correct claim, without the board.

    python benchmarks/claim_floor.py --db postgresql://user@host/db [--workers 1,4,16,64]

What `benchmarks/claim.py --db` measures for the board's own claim path, this measures for the
least a claim can be: one statement, one round trip, autocommit (its COMMIT is the statement's
own), that picks the best ready row with `FOR NO KEY UPDATE SKIP LOCKED` down the ready partial
index, claims it with the guarded `UPDATE ... RETURNING` and writes its `task_claimed` event, on
the same 100,000-task board (`claim.py`'s "ready" board, copied into a fresh schema), from N
spawned processes with one psycopg connection each. Variants (`--variants`):

  floor       that statement, a server-side prepared statement from the first call
              (`prepare_threshold=0`);
  unprepared  the same with `prepare_threshold=None`: parsed and planned on every call;
  notify    `floor` plus `pg_notify()` of the board's channel inside the same transaction;
  board     the board's own `claim_next` (everything `claim.py` runs), for the ratio.

Per line: claims/s, p50/p99 ms, the client processes' CPU per claim (getrusage) and the server's
(every `postgres` process on this machine, from /proc; run the server here for that figure: the
backends serving the claimers, and the server's own background processes apart), with the
server's durability settings. Wall-clock figures move with the machine's load; CPU per claim less,
but on a shared 2-core VM one 3 s run of a variant still moved its total by a third from run to
run. So each worker count runs `--rounds` rounds of every variant, interleaved (floor, board,
floor, board...), and the summary's ratios are of the rounds' medians, with each round's own
ratio beside them to show the spread.
"""

import argparse
import multiprocessing
import resource
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import psycopg
import record
from claim import build_board
from claim_postgres import Boards, postmaster_pid, server_cpu_by_role, server_facts
from postgres_url import postgres_url

from boardlib import Board

CTX = multiprocessing.get_context("spawn")

_FLOOR = """
WITH pick AS (
    SELECT id FROM tasks WHERE status = 'todo' AND dropped = 0 AND unmet_deps = 0
    ORDER BY priority DESC, updated_at DESC LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED
), claimed AS (
    UPDATE tasks SET status = 'in_progress', assignee_agent_id = %(agent)s,
        claimed_by = COALESCE(claimed_by, %(agent)s),
        holders = (holders::jsonb || jsonb_build_array(%(agent)s::text))::text,
        claim_epoch = claim_epoch + 1, lease_until = %(lease)s, last_heartbeat_at = %(now)s,
        attempts = attempts + 1, updated_at = %(now)s
    FROM pick WHERE tasks.id = pick.id AND tasks.status = 'todo'
        AND tasks.assignee_agent_id IS NULL AND tasks.dropped = 0
    RETURNING tasks.*
), event AS (
    INSERT INTO events (seq, task_id, kind, actor, data, created_at, ttl_seconds, tenant_id)
    SELECT nextval('event_seq'), id, 'task_claimed', %(agent)s,
           '{"epoch":' || claim_epoch || ',"verb":"claim_next"}', %(now)s, 259200, tenant_id
    FROM claimed
)
SELECT * FROM claimed{notify}
"""


def floor_worker(
    url: str, variant: str, agent: str, seconds: float, barrier: Any, out: Any, release: Any
) -> None:
    threshold = None if variant == "unprepared" else 0
    notify = ", pg_notify('kanban_floor', '')" if variant == "notify" else ""
    statement = _FLOOR.replace("{notify}", notify)
    notify_after = "BEGIN; SET LOCAL synchronous_commit = off; NOTIFY kanban_floor; COMMIT"
    claims: list[str] = []
    latencies: list[float] = []
    if variant == "board":
        board = Board(url, reconcile_orphans=False)
        board.claim_next(agent + "-warmup", role="nobody")

        def claim() -> str | None:
            task = board.claim_next(agent)
            return None if task is None else task.id
    elif variant == "one_trip":
        conn = psycopg.connect(url, autocommit=True)
        named = statement.replace("%(agent)s", "$1").replace("%(now)s", "$2")
        named = named.replace("%(lease)s", "$3")
        conn.execute(f"PREPARE floor_claim(text, bigint, bigint) AS {named}")
        cursor = psycopg.ClientCursor(conn)

        def claim() -> str | None:
            now = int(time.time() * 1000)
            text = cursor.mogrify(
                "BEGIN; EXECUTE floor_claim(%s, %s, %s); COMMIT; " + notify_after,
                (agent, now, now + 600_000),
            )
            cursor.execute(text)
            cursor.nextset()
            row = cursor.fetchone()
            return None if row is None else str(row[1])
    else:
        conn = psycopg.connect(url, autocommit=True, prepare_threshold=threshold)

        def claim() -> str | None:
            now = int(time.time() * 1000)
            row = conn.execute(
                statement,
                {"agent": agent, "now": now, "lease": now + 600_000},
            ).fetchone()
            if variant == "floor_notify":
                conn.execute(notify_after, prepare=False)
            return None if row is None else str(row[1])

    barrier.wait()
    before = resource.getrusage(resource.RUSAGE_SELF)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        task = claim()
        latencies.append(time.perf_counter() - started)
        if task is None:
            break
        claims.append(task)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    out.put({"agent": agent, "claims": claims, "latencies": latencies, "cpu_s": cpu})
    # Connected until the server's CPU has been read: a backend that exits in between takes its
    # time out of the live processes before the postmaster has reaped it into its own.
    release.wait(timeout=seconds * 20 + 120)


def run(
    url: str, variant: str, workers: int, seconds: float, postmaster: int | None
) -> dict[str, Any]:
    barrier, release = CTX.Barrier(workers + 1), CTX.Event()
    out = CTX.Queue()
    procs = [
        CTX.Process(
            target=floor_worker, args=(url, variant, f"w{n}", seconds, barrier, out, release)
        )
        for n in range(workers)
    ]
    for proc in procs:
        proc.start()
    barrier.wait()
    server_before = server_cpu_by_role(postmaster)
    started = time.perf_counter()
    results = [out.get(timeout=seconds * 20 + 120) for _ in procs]
    elapsed = time.perf_counter() - started
    server_after = server_cpu_by_role(postmaster)
    release.set()
    for proc in procs:
        proc.join()
    ids = Counter(task for result in results for task in result["claims"])
    latencies = sorted(x for result in results for x in result["latencies"])
    claims = sum(ids.values())
    line: dict[str, Any] = {
        "variant": variant,
        "workers": workers,
        "claims_per_s": round(claims / elapsed, 1),
        "p50_ms": round(1000 * statistics.median(latencies), 2),
        "p99_ms": round(1000 * latencies[int(0.99 * (len(latencies) - 1))], 2),
        "client_cpu_us_per_claim": round(1e6 * sum(r["cpu_s"] for r in results) / claims, 1),
        "double_claims": sum(count - 1 for count in ids.values() if count > 1),
        "claims": claims,
    }
    if server_before is not None and server_after is not None:
        # from the barrier to the last worker's report: its start-up is not counted
        used = {role: server_after[role] - server_before[role] for role in server_after}
        line["server_cpu_us_per_claim"] = round(1e6 * sum(used.values()) / claims, 1)
        line["backend_cpu_us_per_claim"] = round(1e6 * used["backends"] / claims, 1)
        line["background_cpu_us_per_claim"] = round(1e6 * used["background"] / claims, 1)
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", metavar="URL", type=postgres_url, required=True)
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--workers", default="1,4,16,64")
    parser.add_argument("--variants", default="floor,unprepared,notify,board")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of each variant")
    record.add_arguments(parser)
    args = parser.parse_args()
    with record.Run("claim_floor", args) as bench:
        measure(args, bench)


def measure(args: argparse.Namespace, bench: record.Run) -> None:
    counts = [int(n) for n in args.workers.split(",")]
    facts = server_facts(args.db)
    with psycopg.connect(args.db, autocommit=True) as conn:
        for name in ("full_page_writes", "shared_buffers", "wal_sync_method", "commit_delay"):
            row = conn.execute(f"SHOW {name}").fetchone()
            facts[name] = str(row[0]) if row else "?"
    bench.emit({"server": facts})
    postmaster = postmaster_pid(args.db)
    boards = Boards(args.db)
    try:
        with tempfile.TemporaryDirectory(prefix="kanban-floor-") as tmp:
            template = Path(tmp) / "ready.db"
            build_board(template, args.tasks, mixed=False, seed=7)
            lines: dict[tuple[str, int], list[dict[str, Any]]] = {}
            for workers in counts:
                for round_ in range(1, max(args.rounds, 1) + 1):
                    for variant in args.variants.split(","):
                        target = boards.fresh(template)
                        line = {**run(target, variant, workers, args.duration, postmaster),
                                "round": round_}  # fmt: skip
                        lines.setdefault((variant, workers), []).append(line)
                        bench.emit(line)
    finally:
        boards.close()
    bench.emit(summary(lines, counts))


def cpu_per_claim(line: dict[str, Any], *, background: bool = True) -> float | None:
    """Client + server CPU us per claim (None without the server's figure); without the server's
    background processes when asked."""
    if "server_cpu_us_per_claim" not in line:
        return None
    server = line["server_cpu_us_per_claim" if background else "backend_cpu_us_per_claim"]
    return float(line["client_cpu_us_per_claim"] + server)


def median_of(
    rounds: list[dict[str, Any]], figure: Callable[[dict[str, Any]], float | None]
) -> float | None:
    """The median of `figure` over a variant's rounds (those that have it)."""
    values = [value for value in map(figure, rounds) if value is not None]
    return statistics.median(values) if values else None


def summary(
    lines: dict[tuple[str, int], list[dict[str, Any]]], counts: list[int]
) -> dict[str, Any]:
    """The one-round-trip claim's targets, from this run: the board's claim_next at most 1.4x
    the floor's client + server CPU per claim (at each worker count), p99 <= 25 ms at 16
    workers, no double claim. Each figure is the median of its rounds; `cpu_ratio_N_rounds`
    pairs round r of the board with round r of the floor. `cpu_ratio_N_vs_notify` holds the
    board to the floor that also sends the board's NOTIFY, which the target's floor leaves out
    though the board must send it (every watcher wakes on it)."""
    out: dict[str, Any] = {"summary": "the board's claim against the floor, same run"}
    for workers in counts:
        board, floor = lines.get(("board", workers)), lines.get(("floor", workers))
        if not board or not floor:
            continue
        mine, least = median_of(board, cpu_per_claim), median_of(floor, cpu_per_claim)
        if mine is not None and least:
            out[f"cpu_ratio_{workers}"] = round(mine / least, 2)
            out[f"cpu_ratio_{workers}<=1.4"] = mine / least <= 1.4
            pairs = zip(board, floor, strict=False)
            out[f"cpu_ratio_{workers}_rounds"] = [
                round(a / b, 2)
                for a, b in ((cpu_per_claim(x), cpu_per_claim(y)) for x, y in pairs)
                if a is not None and b
            ]
            apart = median_of(board, lambda ln: cpu_per_claim(ln, background=False))
            least_apart = median_of(floor, lambda ln: cpu_per_claim(ln, background=False))
            if apart is not None and least_apart:
                out[f"cpu_ratio_{workers}_without_background"] = round(apart / least_apart, 2)
        notify = lines.get(("notify", workers))
        least_notify = median_of(notify, cpu_per_claim) if notify else None
        if mine is not None and least_notify:
            out[f"cpu_ratio_{workers}_vs_notify"] = round(mine / least_notify, 2)
        client = median_of(board, lambda ln: ln["client_cpu_us_per_claim"])
        client_floor = median_of(floor, lambda ln: ln["client_cpu_us_per_claim"])
        if client is not None and client_floor:
            out[f"client_cpu_ratio_{workers}"] = round(client / client_floor, 2)
    if ("board", 16) in lines:
        p99 = median_of(lines[("board", 16)], lambda ln: ln["p99_ms"])
        out["board_p99_16_ms"] = p99
        out["board_p99_16<=25ms"] = p99 is not None and p99 <= 25
    out["zero_double_claims"] = all(
        line["double_claims"] == 0 for rounds in lines.values() for line in rounds
    )
    return out


if __name__ == "__main__":
    main()
