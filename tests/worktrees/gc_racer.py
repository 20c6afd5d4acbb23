"""One machine's janitor for tests/worktrees/test_gc_machines.py: a garbage-collection pass that
stops before each workspace write, says `ready` and goes on at a line on stdin, so the test lets
two of them judge one workspace before either writes. Run in a mount namespace of its own (two
machines share no lock file). Prints the pass's report as one JSON line."""

import json
import sys

from boardlib import Board
from boardlib.worktrees import collect_garbage

if __name__ == "__main__":
    write = Board.update_workspace

    def held(self: Board, *args: object, **kwargs: object) -> object:
        print("ready", flush=True)
        sys.stdin.readline()
        return write(self, *args, **kwargs)  # type: ignore[arg-type]

    Board.update_workspace = held  # type: ignore[method-assign,assignment]
    with Board(sys.argv[1]) as board:
        report = collect_garbage(board, root=sys.argv[2], lock_timeout_s=10)
    print(json.dumps(report.to_json()), flush=True)
