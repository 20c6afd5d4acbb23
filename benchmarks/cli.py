"""Start-up cost of the `kanban` CLI against a bare interpreter, measured side by side.

Agents call the CLI in loops, so its start-up is part of every claim. The target (issue 16): a
`kanban task ...` call stays within 3x of `python -c pass` on the same machine. This runs each
command and the baseline in interleaved rounds (so a burst of load on a shared machine hits both
alike), and prints the median and minimum wall time of each, its ratio to the baseline, and one
JSON line per command.

With `--instructions` (needs valgrind) it also counts each command's user-space instructions
once under callgrind: a ratio that does not move with the machine's load, for comparing changes
on a busy machine (it leaves out the kernel's share, so it reads somewhat above the wall ratio).

The children run with PYTHONDONTWRITEBYTECODE unset (this environment sets it): an installed CLI
keeps its bytecode cache, and without one every call would recompile the CLI's modules, which is
a cost of this sandbox, not of the tool. A few warm-up calls write the cache first.

    python benchmarks/cli.py [--rounds 30] [--instructions]
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from boardlib import Board

BIN = Path(sys.executable).parent
KANBAN = str(BIN / "kanban")


def child_env(db: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("KANBAN_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["KANBAN_DB"] = str(db)
    return env


def timed(argv: list[str], env: dict[str, str], expect: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in expect:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()}")
    return elapsed * 1000


def instructions(argv: list[str], env: dict[str, str]) -> int | None:
    """User-space instructions of one run under callgrind, or None without valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        env=env,
        capture_output=True,
        check=False,
    )
    found = re.search(rb"Collected : (\d+)", done.stderr)
    return int(found.group(1)) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--instructions", action="store_true", help="also count instructions")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "board.db"
        with Board(db) as board:
            for n in range(args.rounds + 10):
                board.create_task(f"bench task {n}", priority=n % 5)
            held = board.create_task("held by the bench", priority=-1)
            board.claim(held.id, "holder")
        env = child_env(db)
        python = sys.executable
        commands: dict[str, tuple[list[str], tuple[int, ...]]] = {
            "python -c pass": ([python, "-c", "pass"], (0,)),
            "python -c 'import boardlib, click'": (
                [python, "-c", "import boardlib, click"],
                (0,),
            ),
            "kanban task claim-next": ([KANBAN, "task", "claim-next", "--agent", "bench"], (0, 3)),
            "kanban task log-progress": (
                [KANBAN, "task", "log-progress", held.id, "--agent", "holder", "--note", "tick"],
                (0,),
            ),
            "kanban task get": ([KANBAN, "task", "get", held.id], (0,)),
            "kanban task dispatch": ([KANBAN, "task", "dispatch", "--title", "bench"], (0,)),
        }
        for argv, expect in commands.values():  # warm the OS cache and the bytecode cache
            for _ in range(3):
                timed(argv, env, expect)

        load_before = os.getloadavg()
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, (argv, expect) in commands.items():
                samples[name].append(timed(argv, env, expect))
        load_after = os.getloadavg()
        counted = {
            name: instructions(argv, env) if args.instructions else None
            for name, (argv, _) in commands.items()
        }

    base = samples["python -c pass"]
    base_median, base_min = statistics.median(base), min(base)
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average {load_before[0]:.1f} -> {load_after[0]:.1f}; "
        f"{args.rounds} interleaved rounds; PYTHONDONTWRITEBYTECODE unset in the children"
    )
    print(f"{'command':40} {'median ms':>10} {'min ms':>8} {'ratio':>7} {'ratio(min)':>11}")
    for name, times in samples.items():
        median, fastest = statistics.median(times), min(times)
        print(
            f"{name:40} {median:10.1f} {fastest:8.1f} {median / base_median:7.2f} "
            f"{fastest / base_min:11.2f}"
        )
    base_instructions = counted["python -c pass"]
    for name, times in samples.items():
        median = statistics.median(times)
        line: dict[str, object] = {
            "command": name,
            "median_ms": round(median, 1),
            "min_ms": round(min(times), 1),
            "baseline_median_ms": round(base_median, 1),
            "ratio": round(median / base_median, 2),
            "ratio_of_minimums": round(min(times) / base_min, 2),
            "within_3x": median / base_median <= 3,
        }
        count = counted[name]
        if count is not None and base_instructions:
            line["instructions_m"] = round(count / 1e6, 1)
            line["instructions_ratio"] = round(count / base_instructions, 2)
        print(json.dumps(line))


if __name__ == "__main__":
    main()
