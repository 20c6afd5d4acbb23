"""Latency of the worktree operations against the raw git work they wrap, measured in one run.

Baseline: the bare git commands a provision cannot avoid (`git worktree add -b` + writing and
committing five files), run through subprocess in the same repository. Each operation prints one
JSON line: {"op", "n", "p50_ms", "max_ms", "baseline_p50_ms", "ratio"} (ratio = p50 / baseline p50).

    python benchmarks/worktrees.py [--tasks 20] [--files 500]

This is a benchmark, not a test: nothing is asserted.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import script_path  # noqa: F401  (first: see its docstring)

# isort: split

import record

from boardlib import Board

GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


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


def timed(samples: list[float], work: Callable[[], object]) -> None:
    started = time.perf_counter()
    work()
    samples.append((time.perf_counter() - started) * 1000)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--files", type=int, default=500)
    record.add_arguments(parser)
    args = parser.parse_args()
    with record.Run("worktrees", args) as bench:
        measure(args, bench)


def measure(args: argparse.Namespace, bench: record.Run) -> None:
    os.environ.update({"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"})
    with tempfile.TemporaryDirectory(prefix="kanban-bench-") as folder:
        tmp = Path(folder)
        os.environ["KANBAN_WORKTREES"] = str(tmp / "worktrees")
        repo = tmp / "repo"
        make_repo(repo, args.files)
        from boardlib.worktrees import Worktrees

        baseline: list[float] = []
        samples: dict[str, list[float]] = {}

        def measure(op: str, work: Callable[[], object]) -> None:
            timed(samples.setdefault(op, []), work)

        def raw(index: int) -> None:
            path = tmp / "raw" / str(index)
            git(repo, "worktree", "add", "-q", "-b", f"raw/{index}", str(path), "HEAD")
            for name in ("a", "b", "c", "d", "e"):
                (path / name).write_text(name)
            git(path, "add", "a", "b", "c", "d", "e")
            git(path, "commit", "-q", "--no-verify", "-m", "scaffold")

        with Board(tmp / "board.db") as board:
            trees = Worktrees(board)
            ids = []
            for index in range(args.tasks):
                task = board.create_task("bench task", description="measure me")
                board.claim(task.id, "alice")
                ids.append(task.id)
                # Alternate the baseline and the provision so both see the same machine state.
                timed(baseline, partial(raw, index))
                measure("provision", partial(trees.provision, task.id, repo))
            handoff = {"handoffFrom": "alice", "runtime": "bench", "commands": {"verify": "true"}}
            for task_id in ids:
                measure("provision_reuse", partial(trees.provision, task_id, repo))
                measure("write_handoff", partial(trees.write_handoff, task_id, handoff))
                measure("resume", partial(trees.resume, task_id))
                path = Path(board.get_task(task_id).worktree_ref or "")
                (path / "pkg0" / "module0.py").write_text("VALUE = -1\n")
                measure("detail", partial(trees.detail, task_id))
                measure("pause", partial(trees.pause, task_id))
                measure("provision_reattach", partial(trees.provision, task_id, repo))
            for index, task_id in enumerate(ids):
                if index % 2:
                    path = Path(board.get_task(task_id).worktree_ref or "")
                    (path / "pkg0" / "module0.py").write_text("VALUE = 0\n")
                    measure("complete_empty", partial(trees.complete, task_id, "alice"))
                else:
                    measure("complete_verified", partial(trees.complete, task_id, "alice"))
        base = statistics.median(baseline)
        rows = [{"op": "baseline_raw_git", "n": len(baseline), "p50_ms": round(base, 1),
                 "max_ms": round(max(baseline), 1)}]  # fmt: skip
        for op, values in samples.items():
            p50 = statistics.median(values)
            rows.append(
                {
                    "op": op,
                    "n": len(values),
                    "p50_ms": round(p50, 1),
                    "max_ms": round(max(values), 1),
                    "baseline_p50_ms": round(base, 1),
                    "ratio": round(p50 / base, 2),
                }
            )
        for row in rows:
            bench.emit(row)


if __name__ == "__main__":
    main()
