"""The exit codes a shell loop branches on. Stable: agents in any language depend on them.

`MEANINGS` says what each one means, once: the root command's help and the agent instructions
`kanban init` writes are generated from it.
"""

from boardlib.errors import Reason

OK = 0  # success: one JSON document on stdout
UNEXPECTED = (
    1  # a bug or an environment failure: one line on stderr (traceback with KANBAN_DEBUG=1)
)
REFUSED = 2  # the board refused (a protocol error: JSON on stderr) or click's usage error
IDLE = 3  # claim-next found nothing claimable: `{"task": null}` on stdout
BUSY = 4  # another writer held the lock past the retry budget; nothing was written, try again
INTERRUPTED = 130  # Ctrl-C

# In the order a shell loop meets them.
MEANINGS: dict[int, str] = {
    OK: "ok (one JSON document on stdout)",
    REFUSED: "refused by the board (JSON on stderr) or bad usage",
    IDLE: 'nothing to claim ({"task": null})',
    BUSY: "database busy (nothing written, try again)",
    UNEXPECTED: "unexpected",
}


def refusal_code(reason: str) -> int:
    """The exit code of a refusal: busy is worth retrying (4), every other reason is final (2)."""
    return BUSY if reason == Reason.BUSY else REFUSED
