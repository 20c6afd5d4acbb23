"""The `kanban` command line: the lease protocol of seed 002 over the shared board.

Agents in any language drive the board from a shell: each call prints one JSON document on stdout
and exits 0, or prints `{"error": ..., "reason": ...}` on stderr and exits 2 (refused), 3 (nothing
to claim), 4 (database busy, try again) or 1 (unexpected). Subcommands load lazily, so a claim
imports only click and the board core.
"""

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The console script (see `entry.main`).

    Agents call it in loops, so its start-up is part of every claim. Importing click and the board
    core creates ~100,000 objects and no garbage worth collecting, yet the cyclic collector ran
    over them again and again while they were created and once more at exit: ~30 million
    instructions, a tenth of a `kanban task claim-next` call (callgrind). So the first call
    imports them with the collector paused and then moves them to the permanent generation
    (`gc.freeze`), where no later collection looks at them; the command itself runs with the
    collector on as usual.
    """
    import gc
    import sys

    if "kanban.cli.entry" not in sys.modules:
        collecting = gc.isenabled()
        gc.disable()
        try:
            from . import entry  # noqa: F401  (click and the board core)
        finally:
            gc.freeze()
            if collecting:
                gc.enable()
    from .entry import main as run

    return run(argv)


__all__ = ["main"]
