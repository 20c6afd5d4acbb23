"""A lander process for the landing tests: lands tasks one after another, as a separate process.

    python -m tests.worktrees.land_procs DB TASK-1,TASK-5 --actor bob [--strategy squash]
        [--crash-at STEP] [--wait]

Prints `{"ready": true}`, then (with `--wait`) waits for a line on stdin so several landers start
together, then one JSON line per task: `{"task", "commit", "builds", "waitedMs"}` or
`{"task", "error", "reason"}`. `--crash-at STEP` kills the process with SIGKILL the moment the
landing reaches STEP (one of `boardlib.worktrees.LAND_STEPS`): the chaos test's hook point.
"""

import argparse
import json
import os
import signal
import sys
from typing import Any

from boardlib import Board, BoardError
from boardlib.worktrees import Worktrees


def say(**doc: Any) -> None:
    print(json.dumps(doc), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("tasks")
    parser.add_argument("--actor", default="bob")
    parser.add_argument("--strategy", default="squash")
    parser.add_argument("--crash-at")
    parser.add_argument("--wait", action="store_true")
    args = parser.parse_args()

    def on_step(step: str, info: dict[str, Any]) -> None:
        if step == args.crash_at:
            say(crashing=step, **info)
            os.kill(os.getpid(), signal.SIGKILL)

    with Board(args.db, create=False) as board:
        lander = Worktrees(board, verify_timeout_s=120).lander(on_step=on_step)
        say(ready=True)
        if args.wait:
            sys.stdin.readline()
        for task_id in args.tasks.split(","):
            try:
                result = lander.land(task_id, actor=args.actor, strategy=args.strategy)
            except BoardError as error:
                say(task=task_id, error=error.message, reason=error.reason.value)
                continue
            say(task=task_id, commit=result.commit, builds=result.builds,
                waitedMs=result.waited_ms, recovered=result.recovered)  # fmt: skip


if __name__ == "__main__":
    main()
