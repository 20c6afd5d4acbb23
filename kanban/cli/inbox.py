"""`kanban inbox`: what needs a person now, oldest first (the rule: `boardlib.attention`).

The same list as `GET /api/board/inbox`, the MCP tool `inbox` and the TUI's `i` screen: each
item with its task, kind, why, since (epoch ms) and the one obvious action.
"""

import click

from boardlib.attention import KINDS

from .context import global_options, open_board
from .output import emit


@click.command(
    "inbox",
    short_help="What needs a person now, oldest first.",
    help=f"What needs a person now, oldest first. Each item is one of: {', '.join(KINDS)}; "
    "with its task, why, since when and the one obvious action (docs/inbox.md).",
)
@global_options
def inbox() -> None:
    with open_board(reconcile_orphans=False, read_only=True) as board:
        found = board.inbox()
    emit(found.to_json(), kind="inbox")
