"""Lease expiry and reconciliation: how abandoned work gets back to todo, by one function.

When a lease runs out, `release_expired_leases` puts the task back in todo (a new claim epoch:
the lapsed holder's late calls are `stale_claim`) and times out its running executions with a
recovery tombstone, so a second pass finds nothing. The seeds' passes, and where each runs it:

- orphan reconciliation, once at startup (seed 000): `Board.reconcile_orphans`, at open
  (`Board(..., reconcile_orphans=True)`, best effort) and when a server starts;
- stale-task reconciliation, on an interval (seed 000): `Board.reconcile_stale_tasks` (it also
  purges old events; `kanban reconcile` runs one) in a `StaleTaskReconciler` thread
  (`Board.start_stale_task_reconciler`);
- expired-lease reclaim on claim-next (seed 002): `Board._reclaim_expired_leases`, inside the
  claim's transaction, when its statement claimed nothing (it does while any lease has lapsed).
A workspace's `stale` status (seed 000: garbage collection found it gone) is not about leases.
"""

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .clock import local_time
from .events import EventKind, wire
from .records import Task
from .store.base import Tx

if TYPE_CHECKING:  # types only: see boardlib/payloads.py
    from .payloads import LeaseExpired


# Expired leases released per write transaction by the passes (`Board._release_in_batches`):
# 10,000 leases lapsing together (a fleet dying at once) took 1.8 s as one SQLite write, past the
# 1.5 s other writers wait for the write lock before `busy`; 200 take ~40 ms.
RELEASE_BATCH = 200


def release_expired_leases(
    tx: Tx, now: int, ttl_seconds: int | None, *, only: str | None = None, limit: int | None = None
) -> tuple[list[Task], list[str]]:
    """Release every in-progress task whose lease expired (the `limit` longest expired, when
    given; or just `only`, a task the caller read and judged expired in this transaction: a
    person's reclaim); return the released tasks and the ids of the executions timed out. A
    second pass finds nothing, so it is safe anywhere."""
    released: list[Task] = []
    timed_out: list[str] = []
    rows = tx.expired_leases(now, limit) if only is None else [r for r in [tx.task(only)] if r]
    for row in rows:
        previous = Task.from_row(row)
        task = Task.from_row(tx.release_after_lease_expiry(previous.id, now))
        executions = tx.time_out_running_executions(
            task.id,
            now,
            f"lease expired at {local_time(previous.lease_until or now)} "
            f"(holder {previous.assignee_agent_id})",
        )
        timed_out += [execution["id"] for execution in executions]
        expired: LeaseExpired = {
            "from": previous.status,
            "to": task.status,
            "assignee": previous.assignee_agent_id,
            "lease_until": previous.lease_until,
            "claim_epoch": task.claim_epoch,
            "timed_out_executions": [execution["id"] for execution in executions],
        }
        tx.insert_event(
            str(EventKind.LEASE_EXPIRED),
            task.id,
            "system",
            wire(expired),
            now,
            ttl_seconds,
            task.tenant_id,
        )
        released.append(task)
    return released, timed_out


class StaleTaskReconciler:
    """Stale-task reconciliation on an interval, in a daemon thread, for processes that live
    longer than one command (the TUI, the demo, a server). `stop()` ends it promptly."""

    def __init__(self, reconcile: Callable[[], object], interval_s: float) -> None:
        self._reconcile = reconcile
        self._interval = interval_s
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="kanban-stale-task-reconciler", daemon=True
        )

    def start(self) -> "StaleTaskReconciler":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                self._reconcile()
            except Exception:  # a busy or vanished board must not kill the reconciler
                continue

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ask the loop to end and wait up to `timeout_s` for a pass under way (a daemon thread:
        one still running then does not keep the process alive)."""
        self._stopped.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=timeout_s)
