"""`kanban budget ...`: the operator's budgets. A task's budget covers its subtree; the daily
budgets cover the board or one team for a UTC day. Agents never set them (operator_only)."""

import sys
from typing import TYPE_CHECKING, Any

import click

from boardlib.budgets import KEEP, daily_answer, short_of
from boardlib.records import BUDGET_TASK, BUDGET_TOKENS, BUDGET_USD

from .amounts import DOLLARS, TOKEN_COUNT
from .context import global_options, open_board
from .options import actor_option, complete_task_id
from .output import emit

if TYPE_CHECKING:
    from boardlib import Board

NONE_WORDS = ("none", "off")


class Limit(click.ParamType):  # type: ignore[type-arg]
    """A budget on the command line: `none` removes it, anything else is the amount option's
    (`DOLLARS`, `TOKEN_COUNT`), checked by it alone: a limit past its range is the same usage
    refusal as a cost past it (`-1` was a usage error, `1e10` the board's invalid_input)."""

    def __init__(self, amount: click.ParamType) -> None:  # type: ignore[type-arg]
        self.amount = amount
        self.name = f"{amount.name}|none"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is KEEP:  # the option left out
            return value
        if isinstance(value, str) and value.strip().lower() in NONE_WORDS:
            return None
        try:
            return self.amount.convert(value, param, ctx)
        except click.BadParameter as error:
            self.fail(f"{error.message.rstrip('.')}; 'none' removes the budget", param, ctx)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        return self.amount.get_metavar(param, ctx)


USD = Limit(DOLLARS)
TOKENS = Limit(TOKEN_COUNT)
# the ranges the amounts take, said in --help (the amount types' own ceilings)
USD_RANGE = f", 0 to {DOLLARS.max:g}"
TOKENS_RANGE = f", 0 to {TOKEN_COUNT.max:g}"


@click.group("budget")
def budget() -> None:
    """Set and read budgets: a task's (covering its subtree), a team's or the board's per day.

    A run cannot start while a budget over its task is spent (budget_exceeded); the run whose
    close spends one blocks its task until an operator raises the budget and unblocks it.
    """


def still_spent(board: "Board", task_id: str, units: list[str]) -> list[str]:
    """A task budget just set at or below what its subtree spent: taken (lowering is a real
    choice), and said on stderr in the words the TUI refuses it with (`budgets.short_of`), as
    the task it blocked stays blocked and an unblock is refused."""
    said = []
    for standing in board.budgets_of(task_id):
        if (standing.scope, standing.owner) == (BUDGET_TASK, task_id) and standing.unit in units:
            short = short_of(standing, standing.limit, kept=True)
            said += [short] if short is not None else []
    return said


@budget.command("set")
@click.argument("task_id", metavar="[ID]", required=False, shell_complete=complete_task_id)
@click.option(
    "--usd", type=USD, default=KEEP, metavar="N|none", help=f"The task's dollar budget{USD_RANGE}."
)
@click.option(
    "--tokens", type=TOKENS, default=KEEP, metavar="N|none", help=f"Its token budget{TOKENS_RANGE}."
)
@click.option(
    "--daily-usd", type=USD, default=KEEP, metavar="N|none", help=f"Dollars per UTC day{USD_RANGE}."
)
@click.option(
    "--daily-tokens",
    type=TOKENS,
    default=KEEP,
    metavar="N|none",
    help=f"Tokens a day{TOKENS_RANGE}.",
)
@click.option("--team", metavar="ID", help="The team's daily budget rather than the board's.")
@click.option("--reason", "-m", required=True, metavar="TEXT", help="Why (kept with the change).")
@actor_option
@global_options
def set_budget(
    task_id: str | None,
    usd: Any,
    tokens: Any,
    daily_usd: Any,
    daily_tokens: Any,
    team: str | None,
    reason: str,
    actor: str,
) -> None:
    """Set, raise, lower or remove (none) a budget; every change is audited.

    Each change is a budget_changed event (`kanban events`; a task's: --task ID) and an audit row:
    who, which budget, from, to and why.

    With ID, the task's budget (--usd, --tokens), covering the task and its descendants.
    Without, the board's daily budget (--daily-usd, --daily-tokens), or a team's with --team.
    """
    per_task = usd is not KEEP or tokens is not KEEP
    daily = daily_usd is not KEEP or daily_tokens is not KEEP
    if task_id is not None and (daily or team is not None or not per_task):
        raise click.UsageError("with a task ID, set --usd and/or --tokens (no --daily-*, --team)")
    if task_id is None and (per_task or not daily):
        raise click.UsageError("without a task ID, set --daily-usd and/or --daily-tokens")
    with open_board() as board:
        if task_id is not None:
            task = board.set_budget(task_id, usd=usd, tokens=tokens, reason=reason, actor=actor)
            units = [unit for unit, limit in ((BUDGET_USD, usd), (BUDGET_TOKENS, tokens))
                     if limit is not KEEP and limit is not None]  # fmt: skip
            still = still_spent(board, task.id, units)
            emit(task.to_json(), kind="task")
            for words in still:
                sys.stderr.write(f"kanban: {words}\n")
            return
        stored = board.set_daily_budget(
            team_id=team, usd=daily_usd, tokens=daily_tokens, reason=reason, actor=actor
        )
    emit(daily_answer(stored, team).to_json())


@budget.command("show")
@click.argument("task_id", metavar="[ID]", required=False, shell_complete=complete_task_id)
@global_options
def show(task_id: str | None) -> None:
    """Every budget and today's spend; with ID, the budgets over that task."""
    with open_board(create=False) as board:
        if task_id is not None:
            standings = board.budgets_of(task_id)
            emit([standing.to_json() for standing in standings], kind="budgets")
            return
        report = board.budget_report()
    emit(report.to_json(), kind="budget-report")
