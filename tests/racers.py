"""The context the multi-process tests start their racers from: forked from a forkserver.

A spawned racer is a fresh interpreter that imports pytest, the board and its test module before
it races (about 0.2 s of CPU each, and those tests start some two hundred). The forkserver is one
clean process, started fresh (no thread, no connection, no board of the test's), that imports
`PRELOADED` once; every racer is forked from it. Each is still a process of its own that opens its
own `Board` (connection, locks, WAL reader) after the fork, exactly as a spawned one did, and
reaches the barrier within milliseconds instead of after an import.
"""

import multiprocessing
from multiprocessing.context import ForkServerContext

# Every module a racer's target lives in, and what they import: the server imports them once.
# (A module missing here still works: the racer imports it itself, as a spawned one would.)
PRELOADED = [
    "boardlib",
    "boardlib.board",
    "tests.core.test_budgets",
    "tests.core.test_postgres",
    "tests.core.test_races",
    "tests.http.test_pages",
]


def racing_context() -> ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOADED)  # read when the server starts: first use
    return context
