"""The `kanban` command line: the lease protocol of seed 002 over the shared board.

Agents in any language drive the board from a shell: each call prints one JSON document on stdout
and exits 0, or prints `{"error": ..., "reason": ...}` on stderr and exits 2 (refused), 3 (nothing
to claim), 4 (database busy, try again) or 1 (unexpected). Subcommands load lazily, so a claim
imports only click and the board core.
"""

from .entry import main

__all__ = ["main"]
