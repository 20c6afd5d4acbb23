"""`kanban stats`: the flow at a glance, computed by the board in one snapshot."""

import click

from boardlib.stats import DEFAULT_WINDOW

from .context import global_options, open_board
from .output import emit


@click.command("stats")
@click.option(
    "--since",
    default=DEFAULT_WINDOW,
    show_default=True,
    metavar="DURATION",
    help="The window that ends now: 90m, 24h, 7d, 2w.",
)
@click.option("--team", metavar="ID", help="Only this team's tasks.")
@click.option(
    "--fold-sessions",
    is_flag=True,
    help="Fold the agents rows of a runtime's sessions (NAME-PID, `kanban init --per-session`) "
    "under NAME, `sessions` saying how many. Read off the name: worker-1 and worker-2 fold too.",
)
@global_options
def stats(since: str, team: str | None, fold_sessions: bool) -> None:
    """Throughput, cycle and review times, leases, gate verdicts, cost and agents.

    Throughput per hour; cycle time claim -> done and the wait in review (p50/p90,
    and the human's share of the cycle); lease expiries and reclaims; gate pass and fail
    rates; cost per agent, task and day against the budgets; the agents seen (a runtime's
    sessions as one row with --fold-sessions).
    """
    with open_board(create=False) as board:
        figures = board.stats(since=since, team_id=team, by_runtime=fold_sessions)
    emit(figures.to_json(), kind="stats")
