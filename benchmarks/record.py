"""One stamp and one place for the benchmarks' figures.

Every benchmark prints its figures as JSON lines on stdout through `Run.emit`, each stamped with
the run's `benchmark` name, `date` (when the run started, UTC), `machine` (cores, CPU, kernel,
Python, SQLite), `command` (the command line, so non-default parameters show), `load_at_start` and
`load` (the one-minute load average then and as the line was written), and `note` when given.
With `--save` the run's lines replace `benchmarks/results/<name>.jsonl` once the run has finished;
`benchmarks/report.py` writes docs/benchmarks.md from those files.
"""

import argparse
import json
import os
import platform
import shlex
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every benchmark takes: where its figures go and what to say about the run."""
    parser.add_argument(
        "--save",
        action="store_true",
        help="also keep this run's lines as benchmarks/results/<name>.jsonl (replacing the last)",
    )
    parser.add_argument(
        "--note", default="", help="a sentence about the conditions, kept with every line"
    )


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """What the figures were taken on, in one line."""
    return (
        f"{os.cpu_count()} cores ({cpu_model()}), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def load() -> float:
    return round(os.getloadavg()[0], 2)


def command_line() -> str:
    script = Path(sys.argv[0])
    shown = f"benchmarks/{script.name}" if script.parent.name == "benchmarks" else sys.argv[0]
    kept: list[str] = []
    skip = False
    for arg in sys.argv[1:]:  # --save and the note are shown apart from the command
        if skip or arg == "--save" or arg.startswith("--note="):
            skip = False
            continue
        if arg == "--note":
            skip = True
            continue
        kept.append(arg)
    # a Postgres URL names a throwaway server and may carry a password: shown as its scheme only
    kept = ["postgresql://..." if arg.startswith("postgresql://") else arg for arg in kept]
    return shlex.join(["python", shown, *kept])


class Run:
    """One run of one benchmark: `emit` its lines; as a context manager, saved when it ends well."""

    def __init__(self, name: str, args: argparse.Namespace) -> None:
        self.stamp: dict[str, Any] = {
            "benchmark": name,
            "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "machine": machine(),
            "command": command_line(),
            "load_at_start": load(),
        }
        if getattr(args, "note", ""):
            self.stamp["note"] = args.note
        self.save = bool(getattr(args, "save", False))
        self.lines: list[dict[str, Any]] = []

    def emit(self, figures: dict[str, Any]) -> dict[str, Any]:
        line = {**self.stamp, "load": load(), **figures}
        self.lines.append(line)
        print(json.dumps(line), flush=True)
        return line

    def __enter__(self) -> "Run":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None and self.save and self.lines:
            RESULTS.mkdir(exist_ok=True)
            path = RESULTS / f"{self.stamp['benchmark']}.jsonl"
            partial = path.with_suffix(".partial")
            partial.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
            partial.replace(path)
            print(f"saved {len(self.lines)} lines to {path}", file=sys.stderr)
