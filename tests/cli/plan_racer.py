"""`python -m tests.cli.plan_racer ARGS...`: the `kanban` console script held at a barrier.

It imports the CLI and everything `kanban plan apply` loads, says `ready` on stderr, waits for a
line on stdin, then runs `kanban ARGS...` in this process: the racers of a test start their
commands at the same moment instead of one interpreter start-up apart.
"""

import sys

from kanban.cli import main


def run() -> int:
    import yaml  # noqa: F401  # what `plan apply` loads on first use, loaded before the barrier

    from boardlib import plans  # noqa: F401
    from kanban.cli import plan  # noqa: F401

    sys.stderr.write("ready\n")
    sys.stderr.flush()
    sys.stdin.readline()
    return main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(run())
