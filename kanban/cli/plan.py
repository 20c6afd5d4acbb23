"""`kanban plan lint|apply FILE`: many tasks at once from a YAML or JSON plan.

`lint` reads the board (read-only, if it exists) to tell references to existing tasks from typos
and to find the plan's items already on the board; it never writes. `apply` runs the same checks
and applies the whole plan in one transaction, or nothing: items already on the board (found by
the plan's name and their key) are not created again.
"""

import sys
from pathlib import Path
from typing import Any

import click

from boardlib.config import BoardConfig
from boardlib.errors import BoardError, Reason
from boardlib.location import location_exists

from .context import board_path, global_options, open_board
from .creating import creating_as
from .options import actor_option, actor_option_saying
from .output import emit

plan_file = click.argument(
    "plan_file",
    metavar="FILE",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
)


name_option = click.option(
    "--name",
    "name",
    metavar="NAME",
    help="The plan's name, which scopes its keys on the board (default: the file's `name:`, "
    "else the file name without its extension).",
)
UPDATABLE = (
    "the title and description of a task nobody claimed, and new dependencies that close no cycle"
)
update_option = click.option(
    "--update",
    is_flag=True,
    help=f"Change what is still safe to change where an item differs from its task: {UPDATABLE}.",
)
# lint writes nothing: its --update and --agent judge the plan as apply would with them.
lint_update_option = click.option(
    "--update",
    is_flag=True,
    help=f"Judge it as `plan apply --update` would: a difference it may change ({UPDATABLE}) "
    "is no problem.",
)
lint_actor_option = actor_option_saying(
    "Judge it as `plan apply --agent NAME` would: the create caps and no links onto another "
    "agent's tasks (env: KANBAN_AGENT)."
)


def _source(plan_file: Path) -> str | None:
    return None if str(plan_file) == "-" else plan_file.name


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
@name_option
@lint_update_option
@lint_actor_option
@global_options
def lint(plan_file: Path, name: str | None, update: bool, actor: str) -> None:
    """Report every problem of a plan without touching the board.

    Prints the report ({"ok", "plan", "tasks", "order", "existing", "matched", "changes",
    "unplannedLinks", "problems"}); "unplannedLinks" are dependencies the board's tasks have
    beyond the plan's (kept: not a problem). Exits 2 when it has problems: bad fields, duplicate
    keys, unknown keys,
    dependency cycles (with their keys), items on the board already whose content differs
    (with --update: only differences it may not change), links onto cancelled tasks; as an
    agent (--agent), what `plan apply --agent` refuses too: links onto another agent's tasks
    and the create caps (kind cap).
    """
    plans, data = _load(plan_file)
    scope = plans.plan_name(data, given=name, source=_source(plan_file))
    config = BoardConfig.from_env()
    with creating_as(actor, config, parameter="actor", notice=False):
        try:
            with open_board(read_only=True) as board:  # read-only: a missing board stays missing
                report = plans.lint_against(board, data, plan=scope, update=update, actor=actor)
        except BoardError as error:
            if error.reason is not Reason.NO_BOARD:
                raise
            report = plans.lint_against(None, data, plan=scope, actor=actor, config=config)
        emit(report.to_json(), kind="plan")
        if not report.ok:
            raise plans.refusal(report)


@plan.command("apply")
@plan_file
@name_option
@update_option
@actor_option
@global_options
def apply(plan_file: Path, name: str | None, update: bool, actor: str) -> None:
    """Apply a plan in one transaction, or nothing: what is on the board already stays.

    Each item's key is recorded on its task, so applying the same plan again creates nothing
    ("4 existing, 0 created"). Prints {"plan", "summary", "count" (created), "created",
    "existing", "updated", "keys": {key: id}, "tasks": [the new ones]}. Refused with the
    problems `plan lint` reports; as an agent (--agent), the create caps apply to its new tasks.
    """
    plans, data = _load(plan_file)
    scope = plans.required_plan_name(data, given=name, source=_source(plan_file))
    config = BoardConfig.from_env()
    if not location_exists(board_path()):  # refused before a board is made
        with creating_as(actor, config, parameter="actor", notice=False):  # said once, below
            report = plans.lint_against(None, data, plan=scope, actor=actor, config=config)
            if not report.ok:
                raise plans.refusal(report)
    with open_board(create=True) as board, creating_as(actor, board.config, parameter="actor"):
        applied = plans.apply(board, data, plan=scope, actor=actor, update=update)
    emit(applied.to_json(), kind="plan-applied")
