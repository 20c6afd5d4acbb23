"""Landing throughput and the mergeability preview, against bare git in the same run.

Landing: `--tasks` tasks (default 20), each changing its own file of a `--files`-file repository
(default 500, with `main` checked out in it as a user would have it), done through the
verification gate with a no-op verify command (`true`), landed by `--processes` lander processes
(default 4) started together. The work is written and completed a second after the worktrees
were made (`past_racy_window`), as an agent's is. Preview: `landing_preview` of a task whose
change touches every file of the repository, completed through the gate as reviewed work is (so
the change is committed), its base moved by one commit (so a real three-way merge runs).

The baselines, on the same repository in the same run (before and after the landings; the better
of the two counts), each landing the same 20 changes onto a branch of its own:
- `bare_loop`: one process, what a landing cannot avoid: `git merge-tree --write-tree` of the
  change onto the tip it remembers, `git commit-tree`, `git update-ref` (compare-and-swap);
- `bare_parallel`: the same by `--processes` processes at once, each reading the tip
  (`rev-parse`) and retrying when another moved it first (the same parallelism as the landings);
- `verified_loop`: `bare_loop` plus what the guarantees add, and nothing else: the merged commit
  checked out in a scratch worktree kept from landing to landing, the no-op verify command run
  there through bash (as the gate runs it), the user's checkout of the branch checked for local
  changes before the compare-and-swap and brought along after it (`read-tree -m -u`), and the
  scratch cleaned after the landing (outside its latency, inside the wall time): the floor of any
  verified landing, so the ratio shows what is overhead and what is the guarantee.

Landing with a slow verify command: `--slow-tasks` more tasks (default 8) whose verify command
sleeps `--slow-verify-s` (default 0.25 s), landed by the same processes after the rest. A queue
served one verify after another takes at least tasks x the sleep; waiting landings verify ahead
(docs/landing.md), so the ratio of the wall time to that shows how far they overlap.

Each measurement prints one JSON line:
- {"op": "land", "n", "processes", "wall_s", "landings_per_s", "p50_ms", "p99_ms", "turn_p50_ms",
  "turn_p99_ms", "git_per_landing", "cpu_ms_per_landing", "landers_cpu_ms_per_landing",
  "verified_ahead"}: latency
  is one `land` call (queue wait included), throughput is n over the wall time from the start
  signal, the turn is how long a landing held its branch's queue (from taking the turn to the
  landing recorded: what bounds a branch's throughput); git processes per landing; CPU per
  landing, the lander's and its git's within each `land` call (its heartbeat and its wait for
  the turn included), and the landers' whole CPU over the landings (their start-up too: four
  Python processes importing the library and opening the board); how many of the n were verified
  ahead, while they waited (their turn only checked the checkouts and moved the branch);
- {"op": "bare_loop" | "bare_parallel" | "verified_loop", "n", "wall_s", "landings_per_s",
  "p50_ms", "p99_ms", "git_per_landing"};
- {"op": "land_vs_bare", "ratio", "ratio_parallel", "turn_ratio", "target": 2.0}: bare landings/s
  over landings/s (one bare process, and as many as landers), and the turn's p50 over the bare
  loop's p50;
- {"op": "land_vs_verified", "ratio", "turn_ratio", "floor_vs_bare"}: the same against the
  verified floor, and the floor's own landings/s against the bare loop's (a verified landing can
  come no closer to the bare loop than that);
- {"op": "land_slow_verify", "n", "processes", "verify_s", "wall_s",
  "verifies_one_after_another_s", "ratio"}: the wall time of the slow-verify landings, against
  n x the verify command's time (the least a queue verifying one landing at a time can take);
- {"op": "preview", "files_changed", "n", "p50_ms", "max_ms", "first_ms",
  "first_uncommitted_ms", "target_ms": 300}: `first_ms` is the drawer's first look at the
  reviewed change (its merge asked for the first time); `first_uncommitted_ms` is a first look
  after all 500 files were edited again past the review, uncommitted (their blobs hashed cold).

Every line carries `benchmarks/record.py`'s stamp (date, machine, load, command), and the git
version and board kind. `--save` keeps them for docs/benchmarks.md.

    python benchmarks/land.py [--tasks 20] [--files 500] [--processes 4] [--slow-tasks 8]
        [--slow-verify-s 0.25] [--db URL] [--save]

This is a benchmark, not a test: nothing is asserted.
"""

import argparse
import importlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import record

from boardlib import Board

GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str, data: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True,
        input=data,
    )  # fmt: skip
    return done.stdout.strip()


def make_repo(path: Path, files: int) -> None:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "bench")
    git(path, "config", "user.email", "bench@example.com")
    for index in range(files):
        folder = path / f"pkg{index % 20}"
        folder.mkdir(exist_ok=True)
        (folder / f"module{index}.py").write_text(f"VALUE = {index}\n" * 20)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")


def module(path: Path, index: int) -> Path:
    return path / f"pkg{index % 20}" / f"module{index}.py"


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(op: str, latencies: list[float], wall_s: float, **extra: object) -> dict[str, Any]:
    return {
        "op": op,
        "n": len(latencies),
        **extra,
        "wall_s": round(wall_s, 3),
        "landings_per_s": round(len(latencies) / wall_s, 2),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(quantile(latencies, 0.99), 1),
    }


def set_verify(path: Path, command: str) -> None:
    init = (path / "init.sh").read_text()
    (path / "init.sh").write_text(init.replace("VERIFY_CMD=''", f"VERIFY_CMD='{command}'"))


def own_cpu_seconds() -> float:
    """This process's CPU and its reaped children's (the git it ran), from getrusage as the
    other benchmarks time themselves (proc_stat is for other processes; its ticks are 10 ms):
    taken around each landing, so the lander's start-up is not counted per landing."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def worker(db: str, ids: list[str]) -> None:
    """One lander process: wait for the start line, land each task, print each latency."""
    from boardlib.worktrees import Worktrees

    marks: dict[str, float] = {}

    def on_step(step: str, _info: dict[str, object]) -> None:
        marks[step] = time.perf_counter()

    spawned = {"git": 0, "all": 0}
    popen_init = subprocess.Popen.__init__

    def counting(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> None:
        spawned["all"] += 1
        spawned["git"] += isinstance(args, list | tuple) and Path(str(args[0])).name == "git"
        popen_init(self, args, *rest, **options)

    subprocess.Popen.__init__ = counting  # type: ignore[method-assign]
    with Board(db, create=False) as board:
        lander = Worktrees(board).lander(on_step=on_step)
        print(json.dumps({"ready": True}), flush=True)
        sys.stdin.readline()
        for task_id in ids:
            marks.clear()
            spawned.update(git=0, all=0)
            cpu_before = own_cpu_seconds()
            started = time.perf_counter()
            result = lander.land(task_id, actor="bench-reviewer")
            elapsed = (time.perf_counter() - started) * 1000
            cpu_ms = (own_cpu_seconds() - cpu_before) * 1000
            turn = (marks["recorded"] - marks["turn"]) * 1000
            steps = {step: (marks[step] - started) * 1000 for step in marks}
            print(json.dumps({"task": task_id, "ms": elapsed, "turnMs": turn, "cpuMs": cpu_ms,
                              **spawned, "steps": steps, "commit": result.commit,
                              "verifiedAhead": result.verified_ahead}),
                  flush=True)  # fmt: skip


def bare_loop(repo: Path, changes: list[str], base: str) -> tuple[list[float], float]:
    """merge-tree + commit-tree + update-ref per change, on branch `bare` from `base`."""
    git(repo, "update-ref", "refs/heads/bare", base)
    tip = base
    latencies = []
    started = time.perf_counter()
    for change in changes:
        one = time.perf_counter()
        tree = git(repo, "merge-tree", "--write-tree", tip, change).split()[0]
        commit = git(repo, "commit-tree", tree, "-p", tip, "-m", "bare landing")
        git(repo, "update-ref", "refs/heads/bare", commit, tip)
        tip = commit
        latencies.append((time.perf_counter() - one) * 1000)
    return latencies, time.perf_counter() - started


def bare_worker(repo: str, ref: str, changes: list[str]) -> None:
    """One process of `bare_parallel`: read the tip, merge, commit, compare-and-swap; again from
    the new tip when another process moved it first. Prints each latency and its git count."""
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.readline()
    for change in changes:
        one, spawned = time.perf_counter(), 0
        while True:
            tip = git(Path(repo), "rev-parse", ref)
            tree = git(Path(repo), "merge-tree", "--write-tree", tip, change).split()[0]
            commit = git(Path(repo), "commit-tree", tree, "-p", tip, "-m", "bare landing")
            moved = subprocess.run(["git", "update-ref", ref, commit, tip], cwd=repo, env=GIT_ENV,
                                   capture_output=True).returncode  # fmt: skip
            spawned += 4
            if moved == 0:
                break
        print(json.dumps({"ms": (time.perf_counter() - one) * 1000, "git": spawned}), flush=True)


def start_together(commands: list[list[str]]) -> tuple[list[dict[str, Any]], float, float]:
    """Start processes, wait until each says it is ready, release them at once; their JSON lines,
    the wall time from the release, and the CPU time they and their children used."""
    procs = [
        subprocess.Popen(command, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for command in commands
    ]
    for proc in procs:
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())
    before = os.times()
    started = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    docs = []
    for proc in procs:
        out, _ = proc.communicate()
        docs += [json.loads(line) for line in out.splitlines()]
    wall = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    return docs, wall, cpu


def bare_parallel(
    repo: Path, changes: list[str], base: str, processes: int
) -> tuple[list[float], float, int]:
    """`bare_worker` in `processes` processes on branch `bare-parallel` from `base`."""
    ref = "refs/heads/bare-parallel"
    git(repo, "update-ref", ref, base)
    shares = [changes[index::processes] for index in range(processes)]
    commands = [[sys.executable, __file__, "--bare-worker", str(repo), ref, ",".join(share)]
                for share in shares if share]  # fmt: skip
    docs, wall, _ = start_together(commands)
    return [doc["ms"] for doc in docs], wall, sum(doc["git"] for doc in docs)


def verified_loop(
    repo: Path, changes: list[str], base: str, scratch: Path, checkout: Path
) -> tuple[list[float], float]:
    """`bare_loop` plus what the guarantees add to it (see the module docstring), on branch
    `verified`, checked out at `checkout`."""
    git(repo, "update-ref", "refs/heads/verified", base)
    if not scratch.exists():
        git(repo, "worktree", "add", "-q", "--detach", str(scratch), base)
    if not checkout.exists():
        git(repo, "worktree", "add", "-q", str(checkout), "verified")
    else:
        git(checkout, "reset", "-q", "--hard", base)
    shell = shutil.which("bash") or "/bin/sh"
    tip = base
    latencies = []
    started = time.perf_counter()
    for change in changes:
        one = time.perf_counter()
        tree = git(repo, "merge-tree", "--write-tree", tip, change).split()[0]
        commit = git(repo, "commit-tree", tree, "-p", tip, "-m", "verified landing")
        git(scratch, "checkout", "--force", "--quiet", "--detach", commit)
        subprocess.run([shell, "-c", "true"], cwd=scratch, check=True)
        if git(checkout, "status", "--porcelain", "--untracked-files=no"):
            raise RuntimeError("the floor's checkout has local changes")
        git(repo, "update-ref", "refs/heads/verified", commit, tip)
        git(checkout, "read-tree", "-m", "-u", tip, commit)
        tip = commit
        latencies.append((time.perf_counter() - one) * 1000)
        git(scratch, "clean", "-ffdxq")
    return latencies, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--previews", type=int, default=10)
    parser.add_argument("--slow-tasks", type=int, default=8)
    parser.add_argument("--slow-verify-s", type=float, default=0.25)
    parser.add_argument("--db", help="a postgresql:// URL (default: a SQLite file)")
    parser.add_argument("--worker", nargs=2, metavar=("DB", "IDS"), help=argparse.SUPPRESS)
    parser.add_argument("--bare-worker", nargs=3, help=argparse.SUPPRESS)
    record.add_arguments(parser)
    args = parser.parse_args()
    os.environ.update({"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"})
    if args.worker:
        worker(args.worker[0], args.worker[1].split(","))
        return
    if args.bare_worker:
        bare_worker(args.bare_worker[0], args.bare_worker[1], args.bare_worker[2].split(","))
        return
    with record.Run("land", args) as bench:
        measure(args, bench)


def past_racy_window() -> None:
    """Wait until the worktrees' checkouts (and the preview task's edits) are more than a second
    old, as an agent's are by the time it completes and anyone looks at its work. Git, built
    without nanosecond timestamps as distributions build it, trusts a file's cached hash only
    when the file is older than the index by a whole second: landed within the second its 500
    files were checked out in, a worktree's first snapshot re-hashed every one of them (about
    50 ms a landing, which is not what an agent's landing costs)."""
    time.sleep(1.0 - time.time() % 1.0 + 1.0)


def measure(args: argparse.Namespace, bench: record.Run) -> None:
    with tempfile.TemporaryDirectory(prefix="kanban-bench-land-") as folder:
        tmp = Path(folder)
        os.environ["KANBAN_WORKTREES"] = str(tmp / "worktrees")
        repo = tmp / "repo"
        make_repo(repo, args.files)
        db = args.db or str(tmp / "board.db")
        from boardlib.worktrees import Worktrees

        with Board(db) as board:
            trees = Worktrees(board)

            def provisioned(title: str, count: int) -> tuple[list[str], list[Path]]:
                ids, paths = [], []
                for index in range(count):
                    task = board.create_task(f"{title} {index}")
                    board.claim(task.id, "bench-builder")
                    paths.append(Path(trees.provision(task.id, repo).worktree.worktree_path))
                    ids.append(task.id)
                return ids, paths

            ids, paths = provisioned("bench change", args.tasks)
            slow_ids, slow_paths = provisioned("bench change with a slow verify", args.slow_tasks)
            preview_task = board.create_task("bench: touch every file")
            board.claim(preview_task.id, "bench-builder")
            preview_path = Path(trees.provision(preview_task.id, repo).worktree.worktree_path)
            for index in range(args.files):
                module(preview_path, index).write_text(f"VALUE = {index}\nCHANGED = True\n")
            past_racy_window()
            for index, (task_id, path) in enumerate(zip(ids, paths, strict=True)):
                set_verify(path, "true")
                module(path, index).write_text(f"VALUE = -{index}\n")
                assert trees.complete(task_id, "bench-builder").task_status == "done"
            set_verify(preview_path, "true")  # through the gate, as a reviewed change gets there
            assert trees.complete(preview_task.id, "bench-builder").task_status == "done"
            for index, (task_id, path) in enumerate(zip(slow_ids, slow_paths, strict=True)):
                set_verify(path, f"sleep {args.slow_verify_s:g}")
                module(path, args.tasks + index).write_text(f"VALUE = -{index}\n")
                assert trees.complete(task_id, "bench-builder").task_status == "done"

        # The preview: the base moves by one commit that does not touch the change's files.
        (repo / "NEWS.md").write_text("main moves on\n")
        git(repo, "add", "NEWS.md")
        git(repo, "commit", "-q", "-m", "main moves on")
        # The terminal board imports the landing module as it starts (tui/landing_data.py), so
        # the preview's first call is timed without the import; the import is its own figure.
        one = time.perf_counter()
        importlib.import_module("boardlib.worktrees.landing")
        import_ms = (time.perf_counter() - one) * 1000
        with Board(db) as board:
            trees = Worktrees(board)
            timings = []
            shown = None
            for _ in range(args.previews):
                one = time.perf_counter()
                shown = trees.landing_preview(preview_task.id)
                timings.append((time.perf_counter() - one) * 1000)
            uncommitted_ms = None
            if args.previews:  # edited again after its review: the 500 blobs are hashed cold
                for index in range(args.files):
                    module(preview_path, index).write_text(f"VALUE = {index}\nCHANGED = 2\n")
                past_racy_window()
                one = time.perf_counter()
                trees.landing_preview(preview_task.id)
                uncommitted_ms = (time.perf_counter() - one) * 1000

        # The bare loop's changes: each task's edit as a commit on the same base.
        base = git(repo, "rev-parse", "main")
        changes = []
        for index in range(args.tasks):
            blob = git(repo, "hash-object", "-w", "--stdin", data=f"VALUE = -{index}\n")
            index_file = tmp / "bare-index"
            env = {**GIT_ENV, "GIT_INDEX_FILE": str(index_file)}
            name = f"pkg{index % 20}/module{index}.py"
            subprocess.run(["git", "read-tree", base], cwd=repo, env=env, check=True)
            subprocess.run(["git", "update-index", "--cacheinfo", f"100644,{blob},{name}"],
                           cwd=repo, env=env, check=True)  # fmt: skip
            tree = subprocess.run(["git", "write-tree"], cwd=repo, env=env, check=True,
                                  capture_output=True, text=True).stdout.strip()  # fmt: skip
            changes.append(git(repo, "commit-tree", tree, "-p", base, "-m", f"change {index}"))
        scratch, checkout = tmp / "bench-scratch", tmp / "bench-checkout"
        bare_before = bare_loop(repo, changes, base)
        parallel_before = bare_parallel(repo, changes, base, args.processes)
        verified_before = verified_loop(repo, changes, base, scratch, checkout)

        shares = [ids[index :: args.processes] for index in range(args.processes)]
        commands = [[sys.executable, __file__, "--worker", db, ",".join(share)]
                    for share in shares if share]  # fmt: skip
        docs, wall, cpu_s = start_together(commands)
        latencies = [doc["ms"] for doc in docs]
        turns = [doc["turnMs"] for doc in docs]
        bare_after = bare_loop(repo, changes, base)
        parallel_after = bare_parallel(repo, changes, base, args.processes)
        verified_after = verified_loop(repo, changes, base, scratch, checkout)
        slow_docs, slow_wall, _ = start_together(
            [[sys.executable, __file__, "--worker", db, ",".join(slow_ids[index :: args.processes])]
             for index in range(args.processes) if slow_ids[index :: args.processes]]
        )  # fmt: skip
        bare = min((bare_before, bare_after), key=lambda run: run[1])
        parallel = min((parallel_before, parallel_after), key=lambda run: run[1])
        verified = min((verified_before, verified_after), key=lambda run: run[1])
        landed = summary("land", latencies, wall, processes=len(commands), files=args.files)
        landed["turn_p50_ms"] = round(statistics.median(turns), 1)
        landed["turn_p99_ms"] = round(quantile(turns, 0.99), 1)
        landed["git_per_landing"] = round(sum(doc["git"] for doc in docs) / len(docs), 1)
        landed["other_processes_per_landing"] = round(
            sum(doc["all"] - doc["git"] for doc in docs) / len(docs), 1
        )
        landed["cpu_ms_per_landing"] = round(statistics.mean(doc["cpuMs"] for doc in docs), 1)
        landed["verified_ahead"] = sum(bool(doc.get("verifiedAhead")) for doc in docs)
        landed["landers_cpu_ms_per_landing"] = round(cpu_s * 1000 / len(docs), 1)  # start-up too
        baseline = summary("bare_loop", bare[0], bare[1], files=args.files, git_per_landing=3)
        floor = summary("verified_loop", verified[0], verified[1], files=args.files,
                        git_per_landing=7, other_processes_per_landing=1)  # fmt: skip
        in_parallel = summary(
            "bare_parallel", parallel[0], parallel[1], files=args.files,
            processes=len(commands), git_per_landing=round(parallel[2] / len(parallel[0]), 1),
        )  # fmt: skip

        # where a landing's time goes: p50 of each step's time since the step before it
        order = ["joined", "turn", "built", "verified", "intent", "updated", "brought_along",
                 "recorded", "archived"]  # fmt: skip
        parts: dict[str, list[float]] = {step: [] for step in order}
        for doc in docs:
            previous = 0.0
            for step in order:
                if step in doc["steps"]:
                    parts[step].append(doc["steps"][step] - previous)
                    previous = doc["steps"][step]
        steps_row: dict[str, Any] = {"op": "land_steps", "unit": "ms, p50 since the step before"}
        steps_row.update({step: round(statistics.median(times), 1)
                          for step, times in parts.items() if times})  # fmt: skip

        def ratio(fast: dict[str, Any], slow: dict[str, Any], key: str = "landings_per_s") -> float:
            return round(float(fast[key]) / float(slow[key]), 2)

        rows = [
            landed,
            steps_row,
            baseline,
            in_parallel,
            {
                "op": "land_vs_bare",
                "ratio": ratio(baseline, landed),
                "ratio_parallel": ratio(in_parallel, landed),
                "turn_ratio": round(float(landed["turn_p50_ms"]) / float(baseline["p50_ms"]), 2),
                "target": 2.0,
            },
            floor,
            {
                "op": "land_vs_verified",
                "ratio": ratio(floor, landed),
                "turn_ratio": round(float(landed["turn_p50_ms"]) / float(floor["p50_ms"]), 2),
                # what the guarantees alone cost over the bare loop: the least any verified
                # landing can be against the 2x target
                "floor_vs_bare": ratio(baseline, floor),
            },
        ]
        if slow_docs:
            one_after_another = len(slow_docs) * args.slow_verify_s
            rows.append(
                {
                    "op": "land_slow_verify",
                    "n": len(slow_docs),
                    "processes": min(args.processes, len(slow_docs)),
                    "verify_s": args.slow_verify_s,
                    "wall_s": round(slow_wall, 3),
                    "verifies_one_after_another_s": round(one_after_another, 3),
                    "ratio": round(slow_wall / one_after_another, 2),
                }
            )
        if shown is not None:  # `--previews 0` measures landing only
            rows.append(
                {
                    "op": "preview",
                    "files_changed": args.files,
                    "state": shown.state,
                    "behind": shown.behind,
                    "n": len(timings),
                    "p50_ms": round(statistics.median(timings), 1),
                    "max_ms": round(max(timings), 1),
                    "first_ms": round(timings[0], 1),  # the drawer's first look at the change
                    "first_uncommitted_ms": round(uncommitted_ms or 0, 1),
                    "import_ms": round(import_ms, 1),  # the landing module's, before the first call
                    "target_ms": 300,
                }
            )
        context = {"git": git(repo, "--version").split()[-1], "board": "postgres" if args.db
                   else "sqlite"}  # fmt: skip
        for row in rows:
            bench.emit({**row, **context})


if __name__ == "__main__":
    main()
