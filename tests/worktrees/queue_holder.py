"""A process that takes a place in a branch's landing queue as a lander does (`LandQueue.join`)
and keeps it until killed: the racer a test starts at the moment it chooses (from a git hook),
so a landing joins exactly there.

    python -m tests.worktrees.queue_holder DB TASK REPO REF READY

Writes its pid to READY once it holds the place, then sleeps.
"""

import os
import sys
import time

from boardlib import Board
from boardlib.landings import LandQueue, holder_token


def main() -> None:
    db, task_id, repo, ref, ready = sys.argv[1:6]
    with Board(db, create=False) as board:
        LandQueue(board).join(
            task_id, repo_path=repo, ref=ref, lander="bob", holder=holder_token(),
            strategy="squash", fence="0" * 40,
        )  # fmt: skip
        with open(ready + ".tmp", "w") as out:
            out.write(str(os.getpid()))
        os.replace(ready + ".tmp", ready)
        time.sleep(600)


if __name__ == "__main__":
    main()
