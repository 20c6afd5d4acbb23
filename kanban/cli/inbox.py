"""`kanban inbox`: what needs a person now, oldest first (the rule: `boardlib.attention`).

The same list as `GET /api/board/inbox`, the MCP tool `inbox` and the TUI's `i` screen: each
item with its task, kind, why, since (epoch ms) and the one obvious action.
"""

import click

from .context import global_options, open_board
from .output import emit


@click.command("inbox")
@global_options
def inbox() -> None:
    """What needs a person now: review, blocked, debt, lapsed leases, held deliveries."""
    with open_board(reconcile_orphans=False, read_only=True) as board:
        found = board.inbox()
    emit(found.to_json(), kind="inbox")
