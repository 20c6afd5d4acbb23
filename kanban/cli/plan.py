"""`kanban plan lint|apply FILE`: many tasks at once from a YAML or JSON plan.

`lint` reads the board (read-only, if it exists) only to tell references to existing tasks from
typos; it never writes. `apply` runs the same checks and creates the whole plan in one
transaction, or nothing: references to existing tasks are resolved inside that transaction.
"""

import sys
from pathlib import Path
from typing import Any

import click

from boardlib.errors import BoardError, Reason

from .context import board_path, global_options, open_board
from .options import actor_option
from .output import emit

plan_file = click.argument(
    "plan_file",
    metavar="FILE",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
)


@click.group("plan")
def plan() -> None:
    """Check and create a whole plan of tasks (YAML or JSON) at once."""


def _load(plan_file: Path) -> tuple[Any, Any]:
    """(plans module, parsed document); a syntax error is a refusal naming the line."""
    from boardlib import plans

    try:
        if str(plan_file) == "-":
            data = plans.parse_plan(sys.stdin.read(), name="<stdin>")
        else:
            data = plans.read_plan(plan_file)
    except plans.PlanSyntaxError as error:
        raise BoardError(
            Reason.INVALID_INPUT,
            str(error),
            problems=[{"kind": "syntax", "message": str(error)}],
        ) from None
    return plans, data


@plan.command("lint")
@plan_file
@global_options
def lint(plan_file: Path) -> None:
    """Report every problem of a plan without touching the board.

    Prints the report ({"ok", "tasks", "order", "existing", "problems"}); exits 2 when it has
    problems: bad fields, duplicate keys, unknown keys, dependency cycles (with their keys).
    """
    plans, data = _load(plan_file)
    if board_path().exists():
        with open_board(read_only=True) as board:
            report = plans.lint_against(board, data)
    else:
        report = plans.lint_against(None, data)
    emit(report.to_json(), kind="plan")
    if not report.ok:
        raise plans.refusal(report)


@plan.command("apply")
@plan_file
@actor_option
@global_options
def apply(plan_file: Path, actor: str) -> None:
    """Create every task of a plan in one transaction, or none.

    Prints {"count", "keys": {key: id}, "tasks": [...]} in creation order. Refused with the
    problems `plan lint` reports; as an agent (--agent), the create caps apply to the whole plan.
    """
    plans, data = _load(plan_file)
    if not board_path().exists():
        report = plans.lint_against(None, data)  # refused before a board is made for it
        if not report.ok:
            raise plans.refusal(report)
    with open_board(create=True) as board:
        created = plans.apply(board, data, actor=actor)
    emit(
        {
            "count": len(created),
            "keys": {key: task.id for key, task in created.items()},
            "tasks": [task.to_json() for task in created.values()],
        },
        kind="plan-applied",
    )
