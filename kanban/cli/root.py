"""The root `kanban` group. Plain `kanban` opens the live board (the TUI) on the resolved board."""

import textwrap

import click

from .context import board_path, global_options
from .exitcodes import MEANINGS
from .lazy import LazyGroup

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

EPILOG = "\b\n" + textwrap.fill(
    "Exit codes: " + ", ".join(f"{code} {meaning}" for code, meaning in MEANINGS.items()) + ".",
    width=72,
)


@click.group(
    cls=LazyGroup,
    sections=[
        (
            "Set up",
            {
                "init": "kanban.cli.init:init",
                "completion": "kanban.cli.completion:completion",
            },
        ),
        (
            "Board work",
            {
                "task": "kanban.cli.task:task",
                "events": "kanban.cli.events:events",
                "inbox": "kanban.cli.inbox:inbox",
                "watch": "kanban.cli.watch:watch",
                "consumers": "kanban.cli.watch:consumers",
                "plan": "kanban.cli.plan:plan",
                "budget": "kanban.cli.budget:budget",
                "mcp": "kanban.cli.mcp_command:mcp",
            },
        ),
        (
            "Upkeep",
            {
                "reconcile": "kanban.cli.admin:reconcile",
                "prune": "kanban.cli.admin:prune",
                "db": "kanban.cli.admin:db",
            },
        ),
        (
            "Watch",
            {
                "stats": "kanban.cli.stats:stats",
                "tui": "kanban.cli.apps:tui",
                "demo": "kanban.cli.apps:demo",
            },
        ),
        (
            "Serve",
            {
                "serve": "kanban.cli.serve:serve",
            },
        ),
    ],
    invoke_without_command=True,
    context_settings=CONTEXT_SETTINGS,
    epilog=EPILOG,
)
@global_options
@click.version_option(package_name="kanban", prog_name="kanban")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """A coordination board for teams of AI agents: one SQLite file, or a PostgreSQL schema.

    Agents claim tasks, renew their lease while they work, and finish into review; another agent
    or a person judges the result. Run `kanban` alone to watch the board live.

    \b
    First steps (one JSON document each; --format table to read it):
      kanban db init                     # the board: --db, KANBAN_DB or default
      kanban task dispatch "Write the parser"
      export KANBAN_AGENT=worker-1       # who acts (or --agent on each call)
      kanban task claim-next             # the best ready task; exit 3: none
      kanban task complete TASK-1 -m ok  # into review, for another to approve
      kanban init --harness claude-code  # set a repo up for an agent runtime
    """
    if ctx.invoked_subcommand is None:
        from .apps import launch_tui

        launch_tui(board_path())
