"""An operator's "won't land" decision on done work, as the audit keeps it and a task read shows
it: no column holds it (none was added), so it is written as one audit row and read back from it.
Here, not in `landings`, so the board's task read imports no landing code.
"""

from collections.abc import Sequence

from . import transitions as t
from .records import AuditEntry, Task, WontLand

ABANDON_ACTION = "land_abandoned"  # the audit row of an operator's "won't land" decision
ABANDON_PREFIX = "won't land, decided by {actor}: "


def abandon_detail(actor: str, reason: str, kept: str) -> str:
    """The audit row of a "won't land" decision (`ABANDON_ACTION`): what `wont_land` reads."""
    return f"{ABANDON_PREFIX.format(actor=actor)}{reason}; {kept}"


def wont_land(task: Task, audit: "Sequence[AuditEntry]") -> WontLand | None:
    """The "won't land" decision standing on `task`, from its audit rows (`audit`, oldest first;
    no column holds it, so none was added): the last one taken since the task last became done,
    while it is done, not dropped and not landed. A later landing (from the kept branch) ends it:
    the task then says landed, not won't land."""
    if task.status != t.DONE or task.landed_commit is not None or task.dropped:
        return None
    for entry in reversed(audit):
        if entry.action != ABANDON_ACTION:
            continue
        if task.status_since is not None and entry.created_at < task.status_since:
            return None  # taken on an earlier stint in done: the work since is another
        said = (entry.detail or "").removeprefix(ABANDON_PREFIX.format(actor=entry.actor))
        reason, _, kept = said.rpartition("; ")  # a branch name has no space: the last "; "
        return WontLand(by=entry.actor, at=entry.created_at, reason=reason or said,
                        kept=kept if reason else None)  # fmt: skip
    return None
