"""The agent loop of seed 002: claim (next or by id), renew the lease, and finish.

Claims print the task, whose `claimEpoch` the holder may quote back with `--epoch` on every
lease-protected verb: if the lease lapsed and someone (even an agent of the same name) reclaimed
the task, the stale worker is refused instead of overwriting its successor.
"""

import click

from boardlib.config import DEFAULT_LEASE_MINUTES

from .context import global_options, lease_ms, open_board
from .exitcodes import IDLE
from .options import AGENT, agent_option, epoch_option, minutes_option, task_id_argument
from .output import emit


@click.command("claim-next")
@agent_option
@click.option(
    "--role", "-r", metavar="ROLE", help="Your role: tasks for it, or for no role in particular."
)
@click.option(
    "--respect-deps",
    type=click.BOOL,
    default="true",  # as typed on the command line: help says true, not Python's True
    is_flag=False,
    flag_value=True,
    show_default=True,
    metavar="BOOL",
    help="Skip tasks whose dependencies are not all done (--respect-deps=false to ignore them).",
)
@minutes_option(f"Lease length (default: the board's, {DEFAULT_LEASE_MINUTES} min).")
@click.option("--runtime", metavar="NAME", help="The agent runtime, recorded on the task.")
@click.option(
    "--explain",
    is_flag=True,
    help="Claim nothing: say which task would be claimed, or why none would.",
)
@click.option("--dry-run", is_flag=True, help="The same as --explain.")
@global_options
def claim_next(
    agent: str,
    role: str | None,
    respect_deps: bool,
    minutes: float | None,
    runtime: str | None,
    explain: bool,
    dry_run: bool,
) -> None:
    """Claim the best ready task for your role.

    Ready: todo with every dependency done, or in progress with an expired lease.
    Prints the task (with its claimEpoch and leaseUntil). Nothing claimable: prints
    {"task": null} and exits 3 ({"task": null, "heldByYou": [ids]} when tasks you claimed
    earlier are still yours: go on with them). With --explain (or --dry-run) it claims
    nothing and writes nothing: {"task": null, "dryRun": true, "wouldClaim",
    "wouldRelease", "reasons", "explain"}, exit 0 if a task would be claimed, else 3.
    """
    if explain or dry_run:
        with open_board(read_only=True) as board:  # a diagnosis writes nothing, no lease release
            preview = board.preview_claim_next(role=role, respect_deps=respect_deps, agent=agent)
        emit({"task": None, "dryRun": True, **preview.to_json()}, kind="preview")
        if not preview.claimable:
            raise click.exceptions.Exit(IDLE)
        return
    with open_board(reconcile_orphans=False) as board:
        task = board.claim_next(
            agent,
            role=role,
            respect_deps=respect_deps,
            runtime=runtime,
            lease_ms=lease_ms(minutes),
        )
        if task is None:
            yours = board.held_by(agent)
            emit({"task": None, **({"heldByYou": yours} if yours else {})}, kind="idle")
            raise click.exceptions.Exit(IDLE)
    emit(task.to_json(), kind="task")


@click.command("claim")
@task_id_argument
@agent_option
@click.option("--transfer", is_flag=True, help="Hand a task you hold to --to (fresh lease).")
@click.option(
    "--to", "to_agent", type=AGENT, metavar="NAME", help="The new holder, with --transfer."
)
@epoch_option
@minutes_option(f"Lease length (default: the board's, {DEFAULT_LEASE_MINUTES} min).")
@click.option("--runtime", metavar="NAME", help="The agent runtime, recorded on the task.")
@global_options
def claim(
    task_id: str,
    agent: str,
    transfer: bool,
    to_agent: str | None,
    epoch: int | None,
    minutes: float | None,
    runtime: str | None,
) -> None:
    """Claim a todo task by id, or --transfer one you hold.

    Refused if its dependencies are unmet or someone holds it. With --transfer --to B:
    hand the in-progress task you hold to B.
    """
    if transfer:
        if not to_agent:
            raise click.UsageError("--transfer needs --to NAME")
        if minutes is not None or runtime is not None:
            raise click.UsageError("--minutes and --runtime apply to a claim, not a transfer")
        with open_board(reconcile_orphans=False) as board:
            task = board.transfer(task_id, agent, to_agent, epoch=epoch)
    else:
        if to_agent:
            raise click.UsageError("--to needs --transfer")
        if epoch is not None:
            raise click.UsageError("--epoch applies to --transfer; a claim starts a new epoch")
        with open_board(reconcile_orphans=False) as board:
            task = board.claim(task_id, agent, runtime=runtime, lease_ms=lease_ms(minutes))
    emit(task.to_json(), kind="task")


@click.command("transfer")
@task_id_argument
@agent_option
@click.option("--to", "to_agent", required=True, type=AGENT, metavar="NAME", help="The new holder.")
@epoch_option
@global_options
def transfer(task_id: str, agent: str, to_agent: str, epoch: int | None) -> None:
    """Hand a task you hold to another agent.

    Same as `claim ID --transfer --to NAME`: fresh lease, new claim epoch.
    """
    with open_board(reconcile_orphans=False) as board:
        task = board.transfer(task_id, agent, to_agent, epoch=epoch)
    emit(task.to_json(), kind="task")


@click.command("heartbeat")
@task_id_argument
@agent_option
@epoch_option
@global_options
def heartbeat(task_id: str, agent: str, epoch: int | None) -> None:
    """Renew your lease without a note."""
    with open_board(reconcile_orphans=False) as board:
        task = board.heartbeat(task_id, agent, epoch=epoch)
    emit(task.to_json(), kind="task")


@click.command("log-progress")
@task_id_argument
@agent_option
@click.option(
    "--note", "-m", required=True, metavar="TEXT", help="What you did (kept as a comment)."
)
@epoch_option
@global_options
def log_progress(task_id: str, agent: str, note: str, epoch: int | None) -> None:
    """Record progress and renew your lease.

    The note is kept as a comment; the lease becomes now + the board's lease.
    """
    with open_board(reconcile_orphans=False) as board:
        task = board.log_progress(task_id, agent, note, epoch=epoch)
    emit(task.to_json(), kind="task")


@click.command("extend-lease")
@task_id_argument
@agent_option
@minutes_option(f"New lease length from now (default: the board's, {DEFAULT_LEASE_MINUTES} min).")
@epoch_option
@global_options
def extend_lease(task_id: str, agent: str, minutes: float | None, epoch: int | None) -> None:
    """Set your lease to now + N minutes.

    For a long quiet step; without --minutes, the board's lease length.
    """
    with open_board(reconcile_orphans=False) as board:
        task = board.extend_lease(task_id, agent, minutes=minutes, epoch=epoch)
    emit(task.to_json(), kind="task")


@click.command("complete")
@task_id_argument
@agent_option
@click.option("--summary", "-m", metavar="TEXT", help="What was done (kept as a comment).")
@epoch_option
@global_options
def complete(task_id: str, agent: str, summary: str | None, epoch: int | None) -> None:
    """Finish: to in_review, for another agent to judge.

    The task leaves you (no owner, no lease); whoever held it cannot approve it.
    A task with a worktree is refused (gate_required): `kanban task workspace
    complete` commits its work and runs the verify gate.
    """
    from boardlib.worktrees import Worktrees  # a task with a worktree is refused here

    with open_board(reconcile_orphans=False) as board:
        task = Worktrees(board).complete_lease(task_id, agent, summary=summary, epoch=epoch)
    emit(task.to_json(), kind="task")


@click.command("block")
@task_id_argument
@agent_option
@click.option("--reason", "-m", required=True, metavar="TEXT", help="Why you cannot go on.")
@epoch_option
@global_options
def block(task_id: str, agent: str, reason: str, epoch: int | None) -> None:
    """Stop: blocked with a reason, lease cleared.

    `kanban task unblock ID` puts it back in todo.
    """
    with open_board(reconcile_orphans=False) as board:
        task = board.block(task_id, agent, reason, epoch=epoch)
    emit(task.to_json(), kind="task")


@click.command("release")
@task_id_argument
@agent_option
@epoch_option
@global_options
def release(task_id: str, agent: str, epoch: int | None) -> None:
    """Give a task you hold back to todo for someone else."""
    with open_board(reconcile_orphans=False) as board:
        task = board.release(task_id, agent, epoch=epoch)
    emit(task.to_json(), kind="task")
