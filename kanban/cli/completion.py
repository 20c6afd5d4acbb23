"""Shell completion: `kanban completion bash|zsh|fish` prints the script that completes commands,
options, choices and task ids (from the board, unfinished first, each with its status and title).

Completing must never get in the way of typing: a board that is missing, locked or unreachable
completes no ids, silently, and nothing is created or written. Titles are agent text: zsh and fish
show them beside the ids, so they pass through `inert` and are cut to one short line.
"""

import os
import threading
from typing import TYPE_CHECKING, Any

import click
from click.shell_completion import CompletionItem, get_completion_class

from .context import Settings, refuse_table_format
from .usage import Choice

if TYPE_CHECKING:
    from boardlib.board import Board

SHELLS = ("bash", "zsh", "fish")
# How many ids a shell is offered at once: a page a person reads, not a year of finished work.
OFFERED = 50
_TITLE_WIDTH = 60
# How long a person's Tab waits for the board to open and answer (the code is loaded first)
# before it gives up and offers no ids.
PATIENCE_S = 2.0


def complete_task_id(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[Any]:
    """The task ids starting with what was typed (any case), for a shell to offer; none when
    the board does not answer within `PATIENCE_S` (a database across a dead network)."""
    found: list[Any] = []
    from boardlib.board import Board

    def look() -> None:
        try:
            found.extend(_tasks_starting(Board, ctx, incomplete))
        except Exception:  # completion is a convenience: no board, no ids, never a traceback
            found.clear()

    looking = threading.Thread(target=look, name="kanban-completion", daemon=True)
    looking.start()
    looking.join(PATIENCE_S)
    if looking.is_alive():
        return []
    return [CompletionItem(task.id, help=_described(task.status, task.title)) for task in found]


def _tasks_starting(board_class: type["Board"], ctx: click.Context, incomplete: str) -> list[Any]:
    from boardlib.location import board_location
    from boardlib.paths import default_board_path

    chosen = ctx.find_root().ensure_object(Settings).db
    path = board_location(chosen) if chosen is not None else default_board_path()
    board = board_class(path, reconcile_orphans=False, read_only=True, create=False)
    try:
        return board.tasks_by_id_prefix(incomplete, limit=OFFERED)
    finally:
        board.close()


def _described(status: str, title: str) -> str:
    from boardlib.inert import inert
    from boardlib.transitions import label

    shown = inert(title)
    if len(shown) > _TITLE_WIDTH:
        shown = shown[: _TITLE_WIDTH - 1] + "…"
    return f"{label(status)}: {shown}"


@click.command()
@click.argument("shell", type=Choice(SHELLS), required=False)
@click.pass_context
def completion(ctx: click.Context, shell: str | None) -> None:
    """Print the completion script for bash, zsh or fish (default: $SHELL's).

    \b
    Load it from your shell's start-up file:
      bash  ~/.bashrc:                  eval "$(kanban completion bash)"
      zsh   ~/.zshrc:                   eval "$(kanban completion zsh)"
      fish  ~/.config/fish/config.fish: kanban completion fish | source

    It completes commands, options and choices, and task ids from the board (--db or
    KANBAN_DB): the unfinished first, each with its status and title where the shell shows one.
    """
    refuse_table_format("a shell script")
    chosen = shell or os.path.basename(os.environ.get("SHELL", ""))
    if chosen not in SHELLS:
        raise click.UsageError(
            f"name the shell: kanban completion {'|'.join(SHELLS)} ($SHELL is "
            f"{os.environ.get('SHELL') or 'not set'})"
        )
    script_class = get_completion_class(chosen)
    assert script_class is not None  # every name in SHELLS is one of click's
    root = ctx.find_root().command
    click.echo(script_class(root, {}, "kanban", "_KANBAN_COMPLETE").source(), nl=False)
