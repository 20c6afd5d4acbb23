"""`kanban task deps ...`: dependency links. A link that would close a cycle is refused
(dependency_cycle, naming the cycle) in the same transaction as the insert."""

import click

from .context import global_options, open_board
from .options import actor_option, complete_task_id, split_ids, task_id_argument
from .output import emit


@click.group("deps")
def deps() -> None:
    """Link, unlink and list dependencies.

    `deps add ID --on OTHER [--on ...]`: ID waits until each OTHER is done.
    """


@deps.command("add")
@task_id_argument
@click.option(
    "--on",
    "on",
    required=True,
    multiple=True,
    metavar="ID",
    shell_complete=complete_task_id,
    help="A task ID must wait for; repeat it, or give a comma-separated list, for several.",
)
@actor_option
@global_options
def add(task_id: str, on: tuple[str, ...], actor: str) -> None:
    """ID depends on each --on (re-linking is harmless).

    Several links are made in one transaction: all of them, or none when one is refused.
    """
    with open_board() as board:
        task = board.link_dependencies(task_id, split_ids(on), actor=actor)
    emit(task.to_json(), kind="task")


@deps.command("remove")
@task_id_argument
@click.option(
    "--on",
    "on",
    required=True,
    metavar="ID",
    shell_complete=complete_task_id,
    help="The task it no longer waits on.",
)
@actor_option
@global_options
def remove(task_id: str, on: str, actor: str) -> None:
    """Drop the link ID -> --on."""
    with open_board() as board:
        task = board.unlink_dependency(task_id, on, actor=actor)
    emit(task.to_json(), kind="task")


@deps.command("list")
@task_id_argument
@global_options
def list_deps(task_id: str) -> None:
    """What ID waits on, and what waits on ID."""
    with open_board() as board:
        view = board.view(task_id)
    emit(
        {
            "id": view.task.id,
            "dependencies": [linked.to_json() for linked in view.dependencies],
            "dependents": [linked.to_json() for linked in view.dependents],
        },
        kind="deps",
    )
