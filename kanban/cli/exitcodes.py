"""The exit codes a shell loop branches on. Stable: agents in any language depend on them."""

OK = 0  # success: one JSON document on stdout
UNEXPECTED = (
    1  # a bug or an environment failure: one line on stderr (traceback with KANBAN_DEBUG=1)
)
REFUSED = 2  # the board refused (a protocol error: JSON on stderr) or click's usage error
IDLE = 3  # claim-next found nothing claimable: `{"task": null}` on stdout
BUSY = 4  # another writer held the lock past the retry budget; nothing was written, try again
INTERRUPTED = 130  # Ctrl-C
