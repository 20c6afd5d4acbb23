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
from claim import build_board
from claim import run as library_run

from boardlib import Board

CTX = multiprocessing.get_context("spawn")
KANBAN = Path(sys.executable).parent / "kanban"
TICKS = os.sysconf("SC_CLK_TCK")


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[int(fraction * (len(ordered) - 1))]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


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


def http_worker(url: str, agent: str, seconds: float, barrier: Any, results: Any) -> None:
    latencies: list[float] = []
    claimed: list[str] = []
    statuses: Counter[int] = Counter()
    with httpx.Client(base_url=url, timeout=30) as client:
        client.get("/healthz")  # open the keep-alive connection
        barrier.wait()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            answer = client.post("/api/board/claim-next", json={"agent": agent})
            latencies.append(time.perf_counter() - started)
            statuses[answer.status_code] += 1
            if answer.status_code == 204:
                break
            if answer.status_code == 200:
                claimed.append(answer.json()["task"]["id"])
    results.put(
        {"agent": agent, "latencies": latencies, "claimed": claimed, "statuses": dict(statuses)}
    )


def http_claims(db: Path, clients: int, seconds: float, workers: int = 1) -> dict[str, Any]:
    server = Server(db, workers=workers)
    try:
        barrier = CTX.Barrier(clients + 1)
        results = CTX.Queue()
        procs = [
            CTX.Process(target=http_worker, args=(server.url, f"h{n}", seconds, barrier, results))
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
    finally:
        code = server.stop()
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
        "double_claims": sum(n - 1 for n in ids.values() if n > 1) + wrong_owner,
        "status_5xx": sum(n for status, n in statuses.items() if status >= 500),
        "statuses": dict(statuses),
        "server_exit": code,
    }


def library_cpu_per_claim(db: Path, claims: int = 2000) -> float:
    """CPU ms of one `claim_next` in this process: what a claim costs the board itself, the
    floor under the server's CPU per claim."""
    with Board(db, recover=False) as board:
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
    parser.add_argument(
        "--server-workers",
        default="1,2",
        help="kanban serve --workers values to measure (comma-separated).",
    )
    parser.add_argument(
        "--parts",
        default="library,http,lists,detail",
        help="Which measurements to run (comma-separated; the summary needs library and http).",
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    lines: dict[str, dict[str, Any]] = {}
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
            print(json.dumps(lines["library"]), flush=True)
        if "http" in parts:
            cpu_copy = tmp / "cpu.db"
            shutil.copy(template, cpu_copy)
            cpu_floor = library_cpu_per_claim(cpu_copy)
            for workers in (int(n) for n in args.server_workers.split(",")):
                http_copy = tmp / f"http-{workers}.db"
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
                    "ratio_to_library": round(served["claims_per_s"] / library["claims_per_s"], 3)
                    if "library" in parts
                    else None,
                    "server_cpu_ms_per_claim": round(served["server_cpu_ms_per_claim"], 3),
                    "library_cpu_ms_per_claim": round(cpu_floor, 3),
                    "double_claims": served["double_claims"],
                    "status_5xx": served["status_5xx"],
                    "statuses": served["statuses"],
                    "server_exit": served["server_exit"],
                }
                lines[f"http-{workers}"] = line
                print(json.dumps(line), flush=True)

        if "lists" in parts:
            read_copy = tmp / "read.db"
            shutil.copy(template, read_copy)
            server = Server(read_copy)
            try:
                for name, path in (("ready", "/api/board?ready=true"), ("all", "/api/board")):
                    lines[name] = {
                        "measure": f"GET {path}",
                        "tasks": args.tasks,
                        "listed": built.get("ready") if name == "ready" else args.tasks,
                        **timed_gets(server.url, path, 20),
                    }
                    print(json.dumps(lines[name]), flush=True)
            finally:
                server.stop()
        if "detail" in parts:
            lines["detail"] = {
                "measure": "GET /api/board/{id}/workspace/detail",
                "files_changed": args.files,
                **detail_latency(tmp, args.files),
            }
            print(json.dumps(lines["detail"]), flush=True)

    served = [line for name, line in lines.items() if name.startswith("http-")]
    if not served:
        return
    best = max(served, key=lambda line: line["claims_per_s"])
    summary = {
        "summary": f"{args.clients} clients, {args.tasks} tasks, best of server workers "
        f"{args.server_workers}: {best['server_workers']}",
        "ratio>=0.5": best["ratio_to_library"] is not None and best["ratio_to_library"] >= 0.5,
        "p99<=50ms": best["p99_ms"] <= 50,
        "zero_double_claims": all(line["double_claims"] == 0 for line in served)
        and lines["library"]["double_claims"] == 0,
        "zero_5xx": all(line["status_5xx"] == 0 for line in served),
        "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"load {os.getloadavg()[0]:.1f}",
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
