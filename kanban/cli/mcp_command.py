"""`kanban mcp`: serve the board to one agent over MCP on stdin/stdout.

The identity is fixed here, for the whole session: `--agent` or `KANBAN_AGENT` (with
`--per-session`, that name and the runtime's process id: `boardlib.actors.session_agent`). No
tool takes an agent name, so the model behind the session cannot act as anyone else. The SDK is
imported only when the command runs, so the rest of the CLI never pays for it.
"""

import os
import sys

import click

from boardlib.actors import is_agent, session_agent
from boardlib.paths import is_default_board
from boardlib.validation import name
from kanban.mcp.catalog import DEFAULT_TOOL_SET, TOOL_SETS, TOOL_SETS_ENV, tool_sets_text

from .context import board_path, db_option, refuse_table_format
from .options import agent_option
from .usage import Choice


@click.command("mcp")
@agent_option
@click.option(
    "--role",
    "-r",
    metavar="ROLE",
    help="Your role: claim_next and explain use it unless a call names another.",
)
@click.option(
    "--tools",
    "tool_set",
    type=Choice(tuple(TOOL_SETS)),
    default=DEFAULT_TOOL_SET,
    show_default=True,
    envvar=TOOL_SETS_ENV,
    help=f"Which tools to list: {tool_sets_text()} (env: {TOOL_SETS_ENV}).",
)
@click.option(
    "--per-session",
    is_flag=True,
    help="Act as AGENT-PID, PID the runtime's process (this server's parent): each session of "
    "a runtime has a name of its own, so one may judge another's work (kanban init writes it).",
)
@db_option
def mcp(agent: str, role: str | None, tool_set: str, per_session: bool) -> None:
    """Serve the board's tools to an agent runtime over MCP (stdio).

    The session acts as --agent for every call; a claim's epoch is kept by the server and
    quoted on each lease-protected call. Register it with your runtime, e.g.
    `claude mcp add kanban -e KANBAN_AGENT=alice -- kanban mcp`.
    """
    refuse_table_format("it speaks MCP on stdin and stdout")
    agent = name(agent, "agent")
    if not is_agent(agent):
        raise click.BadParameter(
            f"{agent!r} is not an agent name: an MCP session acts as an agent, under the "
            "board's rules for agents",
            param_hint="--agent",
        )
    if per_session:
        # The runtime that started this server; a server orphaned to init (pid 1) is its own.
        parent = os.getppid()
        agent = name(session_agent(agent, parent if parent > 1 else os.getpid()), "agent")
    if sys.stdin.isatty():  # a person ran it by hand: say what it is waiting for
        click.echo(
            f"kanban mcp: serving the board to agent {agent!r} over MCP on stdin/stdout; "
            "register it with your agent runtime (see docs/mcp.md). Ctrl-C ends it.",
            err=True,
        )
    from kanban.mcp.server import serve_stdio

    path = board_path()
    serve_stdio(path, agent, role=role, create=is_default_board(path), tool_set=tool_set)
