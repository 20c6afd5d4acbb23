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
    core with the cyclic collector running cost ~30 million instructions, a tenth of a `kanban
    task claim-next` call (callgrind), collecting nothing; so the first call imports them with
    the collector paused (`startup.load_paused`), and so does opening the board. The command
    itself runs with the collector on as usual.
    """
    from .startup import load_paused

    load_paused("kanban.cli.entry")  # click and the CLI's root
    from .entry import main as run

    return run(argv)


__all__ = ["main"]
