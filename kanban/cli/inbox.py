"""`kanban inbox`: what needs a person now, oldest first (the rule: `boardlib.attention`).

The same list as `GET /api/board/inbox`, the MCP tool `inbox` and the TUI's `i` screen: each
item with its task, kind, why, since (epoch ms) and the one obvious action. `--as AGENT` reads
it for one judge: the work that agent built is left out (`attention.judged_by`).
"""

import click

from boardlib.attention import KINDS

from .context import global_options, open_board
from .options import AGENT
from .output import emit


@click.command(
    "inbox",
    short_help="What needs a person now, oldest first.",
    help=f"What needs a person now, oldest first. Each item is one of: {', '.join(KINDS)}; "
    "with its task, why, since when and the one obvious action (docs/inbox.md).",
)
@click.option(
    "--as",
    "judge",
    type=AGENT,
    metavar="AGENT",
    help="Read for this agent: leave out the work it built, which it may not judge "
    "(self_review); `leftOut` counts it. A reviewer's loop takes the first item left.",
)
@global_options
def inbox(judge: str | None) -> None:
    with open_board(reconcile_orphans=False, read_only=True) as board:
        found = board.inbox(judge)
    emit(found.to_json(), kind="inbox")
