"""Leases, heartbeats and crash recovery: one mechanism.

A claim gives the worker a lease; heartbeats and progress renew it. When it runs out, the worker is
presumed dead: `release_expired_leases` puts the task back in todo (new claim epoch, so the lapsed
worker can no longer write) and times out its running executions with a recovery tombstone. The same
function is the orphan pass at open, the interval sweep of long-running processes (`LeaseSweeper`),
and a claim's second step inside its own transaction: the claim statement claims nothing while any
lease on the board has expired (one probe of the lease index), the claim then sweeps and claims
again, so an abandoned task competes the moment its lease lapses without a sweep statement in
every claim.
"""

import threading
from collections.abc import Callable

from .clock import local_time
from .records import Task
from .store.sqlite import SqliteTx


def release_expired_leases(
    tx: SqliteTx, now: int, ttl_seconds: int | None
) -> tuple[list[Task], list[str]]:
    """Release every in-progress task whose lease expired; return the released tasks and the ids of
    the executions timed out. A second pass finds nothing, so it is safe to run anywhere."""
    released: list[Task] = []
    timed_out: list[str] = []
    for row in tx.expired_leases(now):
        previous = Task.from_row(row)
        task = Task.from_row(tx.release_after_lease_expiry(previous.id, now))
        executions = tx.time_out_running_executions(
            task.id,
            now,
            f"lease expired at {local_time(previous.lease_until or now)} "
            f"(holder {previous.assignee_agent_id})",
        )
        timed_out += [execution["id"] for execution in executions]
        tx.insert_event(
            "lease_expired",
            task.id,
            "system",
            {
                "from": previous.status,
                "to": task.status,
                "assignee": previous.assignee_agent_id,
                "leaseUntil": previous.lease_until,
                "claimEpoch": task.claim_epoch,
                "timedOutExecutions": [execution["id"] for execution in executions],
            },
            now,
            ttl_seconds,
            task.tenant_id,
        )
        released.append(task)
    return released, timed_out


class LeaseSweeper:
    """Runs a recovery pass on an interval in a daemon thread, for processes that live longer than
    one command (the TUI, the demo, a server). `stop()` ends it promptly."""

    def __init__(self, sweep: Callable[[], object], interval_s: float) -> None:
        self._sweep = sweep
        self._interval = interval_s
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kanban-lease-sweeper", daemon=True)

    def start(self) -> "LeaseSweeper":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                self._sweep()
            except Exception:  # a busy or vanished board must not kill the sweeper
                continue

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)
