"""The REST surface against the library it serves, measured side by side in one run.

    python benchmarks/http.py [--tasks 10000] [--clients 16] [--duration 5] [--files 500]

1. claims: a board of `--tasks` tasks (55% todo, every dependency done, as benchmarks/claim.py's
   `ready` board). Baseline: `--clients` spawned processes calling `Board.claim_next` for
   `--duration` s. Then the real `kanban serve` (a subprocess, access log off) on a copy of the same
   board, and `--clients` spawned processes, each one httpx keep-alive client, calling
   `POST /api/board/claim-next` for the same time. Claims/s, p50, p99, 5xx count and double claims
   (every claimed id is checked against the stored row), and the server's CPU time per claim (from
   /proc) beside one library claim's CPU time in this process: less sensitive to what else the
   machine runs than wall-clock rates.
2. `GET /api/board?ready=true` and `GET /api/board` on the untouched board (p50/p99 of 20 calls).
3. `GET .../workspace/detail` on a worktree where 500 files changed (p50/p99 of 10 calls).

One JSON line per measurement, then a summary line checking the issue's targets (>= 0.5 of the
library's rate, p99 <= 50 ms, no double claim, no 5xx). A benchmark, not a test: figures move
with the machine's load, ratios less so.
"""

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import httpx
import record
from claim import build_board
from claim import run as library_run
from proc_stat import cpu_seconds

from boardlib import Board

CTX = multiprocessing.get_context("spawn")
KANBAN = Path(sys.executable).parent / "kanban"
CLAIM_NEXT = "/api/board/claim-next"


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[int(fraction * (len(ordered) - 1))]


def server_pids(pid: int) -> list[int]:
    """The server process and its workers (`--workers N` forks them)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *(int(child) for child in children)]


class Server:
    """`kanban serve` on a free loopback port, as an operator would start it."""

    def __init__(self, db: Path, env: dict[str, str] | None = None, workers: int = 1) -> None:
        self.process = subprocess.Popen(
            [str(KANBAN), "--db", str(db), "serve", "--port", "0", "--workers", str(workers)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(self.process.stderr.read() if self.process.stderr else "no output")
        self.url = json.loads(line)["listening"]

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)


def http_worker(
    url: str, agent: str, seconds: float, barrier: Any, results: Any, path: str = CLAIM_NEXT
) -> None:
    """One client process: one httpx keep-alive connection, POSTing `{"agent": ...}` to `path`
    as fast as answers come back. Its own CPU time is measured too: the clients share the
    machine's cores with the server, so what a request costs them caps the rate as surely as
    what it costs the server."""
    latencies: list[float] = []
    claimed: list[str] = []
    statuses: Counter[int] = Counter()
    with httpx.Client(base_url=url, timeout=30) as client:
        client.get("/healthz")  # open the keep-alive connection
        barrier.wait()
        cpu_started = time.process_time()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            answer = client.post(path, json={"agent": agent})
            latencies.append(time.perf_counter() - started)
            statuses[answer.status_code] += 1
            if answer.status_code == 204:
                break
            if answer.status_code == 200:
                claimed.append(answer.json()["task"]["id"])
        cpu_used = time.process_time() - cpu_started
    results.put(
        {
            "agent": agent,
            "latencies": latencies,
            "claimed": claimed,
            "statuses": dict(statuses),
            "cpu_s": cpu_used,
        }
    )


def drive(
    server: "Server | BareServer", clients: int, seconds: float, path: str = CLAIM_NEXT
) -> dict[str, Any]:
    """`clients` spawned client processes against `server` for `seconds`: their outcomes, the
    wall time and the server's CPU seconds (all its processes) over the run."""
    barrier = CTX.Barrier(clients + 1)
    results = CTX.Queue()
    procs = [
        CTX.Process(target=http_worker, args=(server.url, f"h{n}", seconds, barrier, results, path))
        for n in range(clients)
    ]
    for proc in procs:
        proc.start()
    barrier.wait()
    pids = server_pids(server.process.pid)
    cpu_before = sum(cpu_seconds(pid) for pid in pids)
    started = time.perf_counter()
    outcomes = [results.get(timeout=seconds * 20 + 120) for _ in procs]
    elapsed = time.perf_counter() - started
    cpu_used = sum(cpu_seconds(pid) for pid in pids) - cpu_before
    for proc in procs:
        proc.join()
    return {"outcomes": outcomes, "elapsed": elapsed, "server_cpu_s": cpu_used}


def http_claims(db: Path, clients: int, seconds: float, workers: int = 1) -> dict[str, Any]:
    server = Server(db, workers=workers)
    try:
        run = drive(server, clients, seconds)
    finally:
        code = server.stop()
    outcomes, elapsed, cpu_used = run["outcomes"], run["elapsed"], run["server_cpu_s"]
    latencies = [x for outcome in outcomes for x in outcome["latencies"]]
    ids = Counter(task_id for outcome in outcomes for task_id in outcome["claimed"])
    owner = {task_id: o["agent"] for o in outcomes for task_id in o["claimed"]}
    with Board(db, read_only=True) as board:
        wrong_owner = sum(
            1
            for task_id, agent in owner.items()
            if board.get_task(task_id).assignee_agent_id != agent
        )
    statuses: Counter[int] = Counter()
    for outcome in outcomes:
        statuses.update({int(code): count for code, count in outcome["statuses"].items()})
    claims = sum(ids.values())
    return {
        "claims": claims,
        "claims_per_s": claims / elapsed,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * percentile(latencies, 0.99),
        "server_cpu_ms_per_claim": 1000 * cpu_used / max(claims, 1),
        "client_cpu_ms_per_request": client_cpu_ms(outcomes),
        "double_claims": sum(n - 1 for n in ids.values() if n > 1) + wrong_owner,
        "status_5xx": sum(n for status, n in statuses.items() if status >= 500),
        "statuses": dict(statuses),
        "server_exit": code,
    }


def client_cpu_ms(outcomes: list[dict[str, Any]]) -> float:
    requests = sum(len(outcome["latencies"]) for outcome in outcomes)
    return 1000 * float(sum(outcome["cpu_s"] for outcome in outcomes)) / max(requests, 1)


# -- the ceiling: the same clients against a server that does nothing -------------------------


def real_claim_answer(template: Path, tmp: Path) -> Path:
    """The answer `kanban serve` gives a claim, body and headers, from a claim on a copy of the
    board through the route's own reply: the bare servers send exactly these bytes, so the
    clients parse the same answer from every server and only the serving differs. (A canned
    answer written out by hand went stale as the task grew fields: 632 bytes against the
    server's 944, and two headers fewer.)"""
    from kanban.http.replies import reply

    copy = tmp / "canned.db"
    shutil.copy(template, copy)
    with Board(copy) as board:
        task = board.claim_next("h1")
    assert task is not None
    answer = reply({"ok": True, "task": task.to_json()})
    headers = [[name.decode(), value.decode()] for name, value in answer.raw_headers]
    path = tmp / "canned.json"
    path.write_text(json.dumps({"body": bytes(answer.body).decode(), "headers": headers}))
    return path


def load_answer(path: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    doc = json.loads(Path(path).read_text())
    headers = [(name.encode(), value.encode()) for name, value in doc["headers"]]
    return doc["body"].encode(), headers


# `asgi` again under `kanban serve`'s own HTTP protocol class (uvicorn's with the stall guard,
# kanban/http/stalls.py): what the guard costs, apart from the app.
GUARDED = "asgi+stall-guard"
# `asgi` again, claiming each request's task with the store's own statements on one connection:
# the least a server that writes the claim to this board file can do, the ceiling of the target.
CLAIM_SQL = "asgi+claim-sql"
BARE_KINDS = ("asgi", GUARDED, CLAIM_SQL, "fastapi")
RECORDS_LIST = "records-list"  # the list served as before: records built, then dumped


def records_list_app(db: str) -> Any:
    """`GET /api/board` as kanban served it before the database wrote the documents: the rows
    read into `Task` records, `to_json()` each, one orjson dump (the baseline of the lists'
    target, measured beside the real server in the same run)."""
    from fastapi import FastAPI

    from kanban.http.replies import reply

    board = Board(db, read_only=True, reconcile_orphans=False)
    fast = FastAPI()

    @fast.get("/healthz")
    def healthz() -> Any:
        return reply({"ok": True})

    @fast.get("/api/board")
    def listed() -> Any:
        return reply({"tasks": [task.to_json() for task in board.list_tasks()]})

    return fast


def bare_app(kind: str, canned: str, db: str | None = None) -> Any:
    """`asgi`: a raw ASGI callable that reads the body and answers the canned claim (the file
    `real_claim_answer` wrote), the least any ASGI server can do per request. `CLAIM_SQL`: the
    same, after claiming a task of `db` for the body's agent as `claim_sql` does. `fastapi`:
    FastAPI's least for a JSON POST (a pydantic body, a sync endpoint on the thread pool, a
    ready-made Response with the same body and headers)."""
    body, headers = load_answer(canned)
    if kind == CLAIM_SQL:
        write_claim = claim_sql(Path(db or ""))

        async def claiming(scope: dict[str, Any], receive: Any, send: Any) -> None:
            chunks, more = [], True
            while more:
                message = await receive()
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
            if scope["path"] == CLAIM_NEXT:
                write_claim(json.loads(b"".join(chunks))["agent"])
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        return claiming
    if kind in ("asgi", GUARDED):

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            more = True
            while more:
                more = (await receive()).get("more_body", False)
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        return app
    from fastapi import FastAPI, Response
    from pydantic import BaseModel

    class Agent(BaseModel):
        agent: str

    fast = FastAPI()

    @fast.get("/healthz")
    def healthz() -> Response:
        return Response(b"{}", media_type="application/json")

    extra = {
        name.decode(): value.decode()
        for name, value in headers
        if name not in (b"content-length", b"content-type")
    }

    @fast.post(CLAIM_NEXT)
    def claim(agent: Agent) -> Response:
        return Response(body, media_type="application/json", headers=extra)

    return fast


def claim_sql(db: Path) -> Any:
    """A claim as SQL alone: on one connection opened as the store opens its writer, `BEGIN
    IMMEDIATE`, the store's claim-next statement (the same text), the store's event insert,
    `COMMIT`. No board around it: no contention retries, no records, no lease checks, no reply
    built. What is left of a server's CPU per claim above this row is its own."""
    from boardlib.store.contention import connect
    from boardlib.store.sqlite import SqliteTx, claim_best_ready_sql

    conn = connect(db)
    conn.isolation_level = None  # the statements below are the whole transaction
    statement = claim_best_ready_sql(by_role=False, respect_deps=True, by_team=False)
    tx = SqliteTx(conn)

    def claim(agent: str) -> None:
        now = int(time.time() * 1000)
        conn.execute("BEGIN IMMEDIATE")
        params = {"agent": agent, "runtime": None, "now": now, "lease_until": now + 900_000}
        row = conn.execute(statement, {**params, "role": None, "team": None}).fetchone()
        if row is not None:  # the task as one JSON array, its id first
            task_id = json.loads(row[0])[0]
            tx.insert_event("task_claimed", task_id, agent, {"epoch": 1}, now, None)
        conn.execute("COMMIT")

    return claim


def serve_bare(kind: str, db: str | None = None, canned: str | None = None) -> None:
    """The child process of `BareServer`: uvicorn with `kanban serve`'s settings (httptools,
    uvloop, no access log; the stall guard too for `GUARDED`) on a free loopback port, announced
    as `kanban serve` does."""
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(json.dumps({"listening": f"http://127.0.0.1:{sock.getsockname()[1]}"}), flush=True)
    app = records_list_app(db or "") if kind == RECORDS_LIST else bare_app(kind, canned or "", db)
    protocol: dict[str, Any] = {}
    if kind == GUARDED:
        from kanban.http.service import ServerSettings
        from kanban.http.stalls import stall_guarded_protocol

        protocol["http"] = stall_guarded_protocol(ServerSettings(db="").sse_send_timeout_s)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, server_header=False, lifespan="off",
        **protocol,
    )  # fmt: skip
    uvicorn.Server(config).run(sockets=[sock])


class BareServer(Server):
    def __init__(  # not super().__init__
        self, kind: str, db: Path | None = None, canned: Path | None = None
    ) -> None:
        extra = ["--bare-db", str(db)] if db is not None else []
        extra += ["--bare-canned", str(canned)] if canned is not None else []
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--bare-server", kind, *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(self.process.stderr.read() if self.process.stderr else "no output")
        self.url = json.loads(line)["listening"]


def ceiling(
    kind: str, clients: int, seconds: float, canned: Path, db: Path | None = None
) -> dict[str, Any]:
    server = BareServer(kind, db=db, canned=canned)
    try:
        run = drive(server, clients, seconds)
    finally:
        server.stop()
    outcomes = run["outcomes"]
    requests = sum(len(outcome["latencies"]) for outcome in outcomes)
    latencies = [x for outcome in outcomes for x in outcome["latencies"]]
    server_ms = 1000 * run["server_cpu_s"] / max(requests, 1)
    client_ms = client_cpu_ms(outcomes)
    return {
        "requests_per_s": requests / run["elapsed"],
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * percentile(latencies, 0.99),
        "server_cpu_ms_per_request": server_ms,
        "client_cpu_ms_per_request": client_ms,
        # What the machine's cores could serve if clients and server had them all to themselves.
        "cores_bound_per_s": (os.cpu_count() or 1) * 1000 / (server_ms + client_ms),
    }


def library_cpu_per_claim(db: Path, claims: int = 2000) -> float:
    """CPU ms of one `claim_next` in this process: what a claim costs the board itself, the
    floor under the server's CPU per claim."""
    with Board(db, reconcile_orphans=False) as board:
        board.claim_next("warm-up")
        started = time.process_time()
        for _ in range(claims):
            board.claim_next("cpu")
        return 1000 * (time.process_time() - started) / claims


def timed_gets(url: str, path: str, n: int) -> dict[str, Any]:
    samples = []
    size = 0
    with httpx.Client(base_url=url, timeout=60) as client:
        client.get(path)  # warm
        for _ in range(n):
            started = time.perf_counter()
            answer = client.get(path)
            samples.append(1000 * (time.perf_counter() - started))
            assert answer.status_code == 200, answer.text[:300]
            size = len(answer.content)
    return {
        "p50_ms": round(statistics.median(samples), 1),
        "p99_ms": round(percentile(samples, 0.99), 1),
        "bytes": size,
    }


def interleaved_gets(
    urls: dict[str, tuple[str, str, dict[str, str]]], n: int, pids: dict[str, int] | None = None
) -> dict[str, dict[str, Any]]:
    """`n` rounds of one GET of each named (base URL, path, headers), in turn, so whatever else
    the machine runs weighs on every one alike: p50/p99 ms, the status and size of the answers,
    and, for the names in `pids`, the serving process's CPU per call (from /proc, in clock ticks:
    the mean is good to ~10 ms / n). A path may be a callable of the call's number (a walk)."""
    clients = {name: httpx.Client(base_url=url, timeout=60) for name, (url, _, _) in urls.items()}
    samples: dict[str, list[float]] = {name: [] for name in urls}
    cpu: dict[str, float] = dict.fromkeys(urls, 0.0)
    pids = pids or {}
    last: dict[str, httpx.Response] = {}

    def path_of(path: Any, call: int) -> str:
        return str(path(call) if callable(path) else path)

    try:
        for name, (_, path, headers) in urls.items():
            clients[name].get(path_of(path, -1), headers=headers)  # warm: connection, caches
        for call in range(n):
            for name, (_, path, headers) in urls.items():
                pid = pids.get(name)
                cpu_before = cpu_seconds(pid) if pid else 0.0
                started = time.perf_counter()
                answer = clients[name].get(path_of(path, call), headers=headers)
                samples[name].append(1000 * (time.perf_counter() - started))
                if pid:
                    cpu[name] += cpu_seconds(pid) - cpu_before
                assert answer.status_code in (200, 304), answer.text[:300]
                last[name] = answer
    finally:
        for client in clients.values():
            client.close()
    return {
        name: {
            "p50_ms": round(statistics.median(values), 2),
            "p99_ms": round(percentile(values, 0.99), 2),
            **({"server_cpu_ms": round(1000 * cpu[name] / n, 2)} if name in pids else {}),
            "status": last[name].status_code,
            "bytes": len(last[name].content),
        }
        for name, values in samples.items()
    }


def list_figures(
    tmp: Path, template: Path, tasks: int, built: dict[str, int], calls: int, bench: record.Run
) -> dict[str, dict[str, Any]]:
    """The lists' targets, one run: the whole list against the list served as before (records,
    then one dump) on a copy of the same board, a page of 100 (the first and one from the middle
    of the walk), a 304, and the ready list."""
    read_copy = tmp / "read.db"
    shutil.copy(template, read_copy)
    server = Server(read_copy)
    before = BareServer(RECORDS_LIST, read_copy)
    lines: dict[str, dict[str, Any]] = {}
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            etag = client.get("/api/board").headers["etag"]
            middle = client.get("/api/board", params={"limit": tasks // 2}).json()["nextCursor"]
            # A walk: each call the next page down from the top, so no call repeats a page (a
            # page asked again at the same version is answered from the server's kept bytes).
            walk: list[str | None] = [None]
            while len(walk) <= calls + 1:
                after = {"cursor": walk[-1]} if walk[-1] else {}
                page = client.get("/api/board", params={"limit": 100, **after})
                walk.append(page.json()["nextCursor"])
        urls: dict[str, tuple[str, Any, dict[str, str]]] = {
            "all": (server.url, "/api/board", {}),
            "all, as before": (before.url, "/api/board", {}),
            "page of 100": (server.url, "/api/board?limit=100", {}),
            "page of 100 mid-walk": (server.url, f"/api/board?limit=100&cursor={middle}", {}),
            "page of 100, each a new one": (
                server.url,
                lambda call: f"/api/board?limit=100&cursor={walk[call + 2]}",
                {},
            ),
            "304": (server.url, "/api/board", {"If-None-Match": etag}),
            "ready": (server.url, "/api/board?ready=true", {}),
        }
        pids = {name: server.process.pid for name, (url, _, _) in urls.items() if url == server.url}
        measured = interleaved_gets(urls, calls, pids | {"all, as before": before.process.pid})
    finally:
        server.stop()
        before.stop()
    for name, figures in measured.items():
        path = urls[name][1]
        shown = "/api/board?limit=100&cursor=(the next page)" if callable(path) else path
        lines[f"list {name}"] = {
            "measure": f"GET {shown}" + (" (If-None-Match)" if name == "304" else ""),
            "list": name,
            "tasks": tasks,
            "listed": built.get("ready") if name == "ready" else None,
            **figures,
        }
        bench.emit(lines[f"list {name}"])
    whole, old = measured["all"]["p50_ms"], measured["all, as before"]["p50_ms"]
    summary = {
        "summary": f"lists, {tasks} tasks, {calls} calls each, interleaved",
        "all_vs_before": round(whole / old, 3),
        "all<=0.5x_before": whole <= 0.5 * old,
        "page_of_100_p50<=10ms": measured["page of 100"]["p50_ms"] <= 10
        and measured["page of 100 mid-walk"]["p50_ms"] <= 10,
        "new_page_of_100_p50<=10ms": measured["page of 100, each a new one"]["p50_ms"] <= 10,
        "304_p50<=3ms": measured["304"]["status"] == 304 and measured["304"]["p50_ms"] <= 3,
    }
    lines["lists summary"] = summary
    bench.emit(summary)
    return lines


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def detail_latency(tmp: Path, files: int) -> dict[str, Any]:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.com")
    (repo / "README.md").write_text("# bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    db = tmp / "detail.db"
    with Board(db) as board:
        task = board.create_task("touch 500 files")
        board.claim(task.id, "alice")
    env = {
        "KANBAN_WORKTREES": str(tmp / "worktrees"),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    server = Server(db, env)
    try:
        made = httpx.post(
            f"{server.url}/api/board/{task.id}/workspace", json={"repoPath": str(repo)}, timeout=60
        )
        worktree = Path(made.json()["worktree"]["worktreePath"])
        for index in range(files):
            folder = worktree / f"pkg{index % 20}"
            folder.mkdir(exist_ok=True)
            (folder / f"module{index}.py").write_text(f"VALUE = {index}\n" * 20)
        result = timed_gets(server.url, f"/api/board/{task.id}/workspace/detail", 10)
    finally:
        server.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--list-calls", type=int, default=30, help="GETs of each list")
    parser.add_argument(
        "--server-workers",
        default="1,2",
        help="kanban serve --workers values to measure (comma-separated).",
    )
    parser.add_argument(
        "--parts",
        default="library,http,lists,detail",
        help="Which measurements to run (comma-separated; the summary needs library and http). "
        "`ceiling` adds the same clients against bare servers (a raw ASGI app, the same "
        "app writing each claim with the store's own SQL, a minimal FastAPI route) answering "
        "a canned claim: the most this machine can serve.",
    )
    parser.add_argument(
        "--bare-server", choices=(*BARE_KINDS, RECORDS_LIST), help=argparse.SUPPRESS
    )
    parser.add_argument("--bare-db", help=argparse.SUPPRESS)
    parser.add_argument("--bare-canned", help=argparse.SUPPRESS)
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="Interleaved rounds of the http and ceiling parts (serve, bare, serve, bare...): "
        "their ratio moved by about 0.1 between runs of the same code on a shared 2-core VM, so "
        "the summary takes the rounds' median.",
    )
    record.add_arguments(parser)
    args = parser.parse_args()
    if args.bare_server:
        serve_bare(args.bare_server, args.bare_db, args.bare_canned)
        return
    with record.Run("http", args) as bench:
        measure(args, bench)


def measure(args: argparse.Namespace, bench: record.Run) -> None:
    parts = set(args.parts.split(","))
    lines: dict[str, dict[str, Any]] = {}
    rounds: list[dict[str, dict[str, Any]]] = []  # each round's http and ceiling lines
    with tempfile.TemporaryDirectory(prefix="kanban-bench-http-") as folder:
        tmp = Path(folder)
        template = tmp / "board.db"
        built = build_board(template, args.tasks, mixed=False, seed=7)
        print(json.dumps({"board": built}), file=sys.stderr)

        library: dict[str, Any] = {"claims_per_s": float("nan")}
        if "library" in parts:
            library_copy = tmp / "library.db"
            shutil.copy(template, library_copy)
            library = library_run(library_copy, args.clients, args.duration)
        lines["library"] = (
            {
                "measure": "claim_next",
                "via": "library",
                "workers": args.clients,
                "claims_per_s": round(library["claims_per_s"], 1),
                "p50_ms": round(library["p50_ms"], 2),
                "p99_ms": round(library["p99_ms"], 2),
                "double_claims": library.get("double_claims", 0),
            }
            if "library" in parts
            else {"double_claims": 0}
        )
        if "library" in parts:
            bench.emit(lines["library"])
        canned = real_claim_answer(template, tmp)  # what the bare servers answer
        cpu_floor = 0.0
        if "http" in parts:
            cpu_copy = tmp / "cpu.db"
            shutil.copy(template, cpu_copy)
            cpu_floor = library_cpu_per_claim(cpu_copy)
        for round_ in range(1, max(args.rounds, 1) + 1):
            mine: dict[str, dict[str, Any]] = {}
            rounds.append(mine)
            if "http" in parts:
                for workers in (int(n) for n in args.server_workers.split(",")):
                    # a file of its own each round: no WAL left beside it by the last server
                    http_copy = tmp / f"http-{workers}-round-{round_}.db"
                    shutil.copy(template, http_copy)
                    served = http_claims(http_copy, args.clients, args.duration, workers)
                    line = {
                        "measure": "claim_next",
                        "via": "http",
                        "server_workers": workers,
                        "clients": args.clients,
                        "claims_per_s": round(served["claims_per_s"], 1),
                        "p50_ms": round(served["p50_ms"], 2),
                        "p99_ms": round(served["p99_ms"], 2),
                        "ratio_to_library": round(
                            served["claims_per_s"] / library["claims_per_s"], 3
                        )
                        if "library" in parts
                        else None,
                        "server_cpu_ms_per_claim": round(served["server_cpu_ms_per_claim"], 3),
                        "library_cpu_ms_per_claim": round(cpu_floor, 3),
                        "client_cpu_ms_per_request": round(served["client_cpu_ms_per_request"], 3),
                        # The rate the cores allow when clients and server have them to themselves:
                        # a figure other load on the machine moves far less than claims/s.
                        "cores_bound_per_s": round(
                            (os.cpu_count() or 1)
                            * 1000
                            / (
                                served["server_cpu_ms_per_claim"]
                                + served["client_cpu_ms_per_request"]
                            ),
                            1,
                        ),
                        "double_claims": served["double_claims"],
                        "status_5xx": served["status_5xx"],
                        "statuses": served["statuses"],
                        "server_exit": served["server_exit"],
                    }
                    line["round"] = round_
                    lines[f"http-{workers}"] = mine[f"http-{workers}"] = line
                    bench.emit(line)

            if "ceiling" in parts:
                for kind in BARE_KINDS:
                    claimed = None
                    if kind == CLAIM_SQL:  # a copy of its own, as each server's
                        claimed = tmp / f"claim-sql-round-{round_}.db"
                        shutil.copy(template, claimed)
                    bare = ceiling(kind, args.clients, args.duration, canned, claimed)
                    lines[f"ceiling-{kind}"] = mine[f"ceiling-{kind}"] = {
                        "round": round_,
                        "measure": "ceiling",
                        "via": f"bare {kind} app under uvicorn",
                        "clients": args.clients,
                        **{key: round(value, 3) for key, value in bare.items()},
                        "ratio_to_library": round(
                            bare["requests_per_s"] / library["claims_per_s"], 3
                        )
                        if "library" in parts
                        else None,
                    }
                    bench.emit(lines[f"ceiling-{kind}"])

        if "lists" in parts:
            lines.update(list_figures(tmp, template, args.tasks, built, args.list_calls, bench))
        if "detail" in parts:
            lines["detail"] = {
                "measure": "GET /api/board/{id}/workspace/detail",
                "files_changed": args.files,
                **detail_latency(tmp, args.files),
            }
            bench.emit(lines["detail"])

    checked = summary(args, lines, rounds, library, parts)
    if checked is not None:
        bench.emit(checked)


def summary(
    args: argparse.Namespace,
    lines: dict[str, dict[str, Any]],
    rounds: list[dict[str, dict[str, Any]]],
    library: dict[str, Any],
    parts: set[str],
) -> dict[str, Any] | None:
    """The targets, from each round's best server (of --server-workers) and its ceiling in the
    same round; every figure the median of the rounds', the ratio to the bare ASGI app with each
    round's own beside it."""
    bests = [
        max(served, key=lambda line: line["claims_per_s"])
        for served in (
            [line for name, line in mine.items() if name.startswith("http-")] for mine in rounds
        )
        if served
    ]
    if not bests:
        return None
    every = [line for mine in rounds for name, line in mine.items() if name.startswith("http-")]
    p99 = round(statistics.median(line["p99_ms"] for line in bests), 2)
    out: dict[str, Any] = {
        "summary": f"{args.clients} clients, {args.tasks} tasks, best of server workers "
        f"{args.server_workers} in each of {len(bests)} rounds: "
        + ", ".join(str(line["server_workers"]) for line in bests),
        "zero_double_claims": all(line["double_claims"] == 0 for line in every)
        and lines["library"]["double_claims"] == 0,
        "zero_5xx": all(line["status_5xx"] == 0 for line in every),
    }
    if "library" in parts:
        to_library = statistics.median(line["ratio_to_library"] for line in bests)
        out["ratio_to_library"] = round(to_library, 3)
        out["ratio>=0.5"] = to_library >= 0.5
        cores = statistics.median(line["cores_bound_per_s"] for line in bests)
        out["cores_bound_ratio"] = round(cores / library["claims_per_s"], 3)
    out["p99_ms"] = p99
    out["p99<=50ms"] = p99 <= 50
    by_workers: dict[int, list[float]] = {}
    for line in every:
        by_workers.setdefault(line["server_workers"], []).append(line["p99_ms"])
    out["p99_ms_by_server_workers"] = {
        str(workers): round(statistics.median(values), 2) for workers, values in by_workers.items()
    }
    paired = [
        best["claims_per_s"] / mine["ceiling-asgi"]["requests_per_s"]
        for best, mine in zip(bests, rounds, strict=False)
        if "ceiling-asgi" in mine
    ]
    if paired:
        # the clients' cost is in both rows: this ratio measures only the server
        ratio = statistics.median(paired)
        out["ratio_to_bare_asgi"] = round(ratio, 3)
        out["ratio_to_bare_asgi_rounds"] = [round(value, 3) for value in paired]
        out["ratio_to_bare_asgi>=0.75"] = ratio >= 0.75
        out["p99<=30ms"] = p99 <= 30
    floor = [
        (best["claims_per_s"], mine[f"ceiling-{CLAIM_SQL}"], mine["ceiling-asgi"])
        for best, mine in zip(bests, rounds, strict=False)
        if f"ceiling-{CLAIM_SQL}" in mine and "ceiling-asgi" in mine
    ]
    if floor:
        # How much of the bare app's rate a server keeps that only writes the claim (the
        # target's room on this machine), and how much of that rate kanban serve keeps.
        sql_over_bare = [sql["requests_per_s"] / bare["requests_per_s"] for _, sql, bare in floor]
        to_sql = [served / sql["requests_per_s"] for served, sql, _ in floor]
        out["claim_sql_over_bare_asgi"] = round(statistics.median(sql_over_bare), 3)
        out["claim_sql_over_bare_asgi_rounds"] = [round(value, 3) for value in sql_over_bare]
        out["ratio_to_claim_sql"] = round(statistics.median(to_sql), 3)
        out["ratio_to_claim_sql_rounds"] = [round(value, 3) for value in to_sql]
        out["server_cpu_ms_over_claim_sql"] = round(
            statistics.median(
                best["server_cpu_ms_per_claim"]
                - mine[f"ceiling-{CLAIM_SQL}"]["server_cpu_ms_per_request"]
                for best, mine in zip(bests, rounds, strict=False)
                if f"ceiling-{CLAIM_SQL}" in mine
            ),
            3,
        )
    guarded = [
        mine[f"ceiling-{GUARDED}"]["requests_per_s"] / mine["ceiling-asgi"]["requests_per_s"]
        for mine in rounds
        if f"ceiling-{GUARDED}" in mine and "ceiling-asgi" in mine
    ]
    if guarded:  # a diagnostic: the bare app under kanban's protocol class against uvicorn's
        out["stall_guard_over_bare_asgi"] = round(statistics.median(guarded), 3)
        out["stall_guard_over_bare_asgi_rounds"] = [round(value, 3) for value in guarded]
    return out


if __name__ == "__main__":
    main()
