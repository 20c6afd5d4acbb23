"""`python -m kanban.demo`: the demo without the CLI (the flags of `kanban demo`, and --seed)."""

import argparse
import sys
from pathlib import Path

from .runner import DEFAULT_AGENTS, DEFAULT_POLL_MS, DEFAULT_SPEED, DEFAULT_TASKS, run_demo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kanban.demo", description=__doc__)
    parser.add_argument("--dir", type=Path, default=None, help="board folder (default: temp)")
    parser.add_argument("--agents", type=int, default=DEFAULT_AGENTS)
    parser.add_argument("--tasks", type=int, default=DEFAULT_TASKS)
    parser.add_argument("--speed", type=float, default=DEFAULT_SPEED)
    parser.add_argument("--keep", action="store_true", help="keep the board when done")
    parser.add_argument("--no-tui", action="store_true", help="run the agents only, print a feed")
    parser.add_argument("--duration", type=float, default=None, help="stop after S seconds")
    parser.add_argument("--poll-ms", type=int, default=DEFAULT_POLL_MS)
    parser.add_argument("--seed", type=int, default=None, help="repeat a run's choices")
    args = parser.parse_args(argv)
    return run_demo(
        directory=args.dir, agents=args.agents, tasks=args.tasks, speed=args.speed,
        keep=args.keep, open_tui=not args.no_tui, duration=args.duration,
        poll_ms=args.poll_ms, seed=args.seed,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
