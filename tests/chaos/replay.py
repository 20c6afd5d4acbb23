"""Judging a soak from the board's own event log, replayed in order.

The log is the board's account of every mutation (one event each, in commit order), so replaying
it rebuilds who held each task, under which epoch, and until when, at every moment. Against that:

- a claim is only of a task nobody holds (`double_held` otherwise): the guarded UPDATE's promise;
- a holder's write (heartbeat, progress, opening or closing a run, complete) comes from the current
  holder while its lease is live (`late_writes` otherwise): a frozen worker that thawed after
  its lease ran out, or a killed incarnation, never writes over its successor; a renewal its
  comment, edit or run carried (`lease_until` in the event) moves the lease's end too;
- a lease is released only once it has run out (`early_releases` otherwise);
- every task reaches done exactly once, and every run that was opened is closed.

Claims carry no lease end in the log; every process of a soak shares one `KANBAN_LEASE_MS`, so a
claim made at `created_at` holds until `created_at + lease_ms`, exactly as the board computed it.
"""

from dataclasses import dataclass, field
from typing import Any

from boardlib import transitions as t
from boardlib.events import EventKind, read

HOLDER_WRITES = frozenset(
    {EventKind.LEASE_RENEWED, EventKind.PROGRESS_LOGGED, EventKind.EXECUTION_STARTED}
)


@dataclass
class Holding:
    status: str = t.TODO
    holder: str | None = None
    epoch: int = 0
    lease_until: int | None = None
    done: int = 0


@dataclass
class Verdict:
    violations: list[str] = field(default_factory=list)
    double_held: int = 0
    late_writes: int = 0
    late_costs: int = 0  # costs of runs the board had timed out, reported late (counted apart)
    early_releases: int = 0
    claims: int = 0
    lease_expiries: int = 0
    runs_opened: int = 0
    runs_closed: int = 0
    open_runs: list[str] = field(default_factory=list)
    done_counts: dict[str, int] = field(default_factory=dict)
    final_status: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "violations": self.violations[:50],
            "violationCount": len(self.violations),
            "doubleHeld": self.double_held,
            "lateWritesAccepted": self.late_writes,
            "lateCosts": self.late_costs,
            "earlyReleases": self.early_releases,
            "claims": self.claims,
            "leaseExpiries": self.lease_expiries,
            "runsOpened": self.runs_opened,
            "runsClosed": self.runs_closed,
            "openRuns": self.open_runs[:50],
        }


def _event(raw: Any) -> tuple[int, str, str | None, str | None, int, dict[str, Any]]:
    """An event as (seq, kind, task, actor, at, payload), its payload read back in snake_case."""
    if isinstance(raw, dict):
        return (
            raw["seq"],
            raw["kind"],
            raw.get("taskId"),
            raw.get("actor"),
            raw["createdAt"],
            read(raw.get("data") or {}),
        )
    return raw.seq, raw.kind, raw.task_id, raw.actor, raw.created_at, read(raw.data or {})


def replay(events: list[Any], *, lease_ms: int, leases: dict[str, int] | None = None) -> Verdict:
    """Replay `events` (Event records or their JSON, in seq order) and judge them. `leases`
    names the agents that claimed with another lease than the board's (`claim(lease_ms=...)`)."""
    leases = leases or {}
    verdict = Verdict()
    tasks: dict[str, Holding] = {}
    runs: dict[str, tuple[str, str, int]] = {}  # open run -> (task, holder, epoch)

    def fault(kind: str, message: str) -> None:
        verdict.violations.append(message)
        if kind == "double":
            verdict.double_held += 1
        elif kind == "late":
            verdict.late_writes += 1
        elif kind == "early":
            verdict.early_releases += 1

    def check_holder(
        seq: int, what: str, task_id: str, state: Holding, actor: str | None, at: int
    ) -> None:
        if state.status != t.IN_PROGRESS or state.holder != actor:
            fault(
                "late",
                f"#{seq} {what} on {task_id} by {actor}, but it is {state.status} "
                f"held by {state.holder}",
            )
        elif state.lease_until is None or state.lease_until < at:
            fault(
                "late",
                f"#{seq} {what} on {task_id} by {actor} at {at}, after its lease "
                f"ended at {state.lease_until}",
            )

    def close_runs(ids: list[str]) -> None:
        for run_id in ids:
            if runs.pop(run_id, None) is not None:
                verdict.runs_closed += 1

    for raw in events:
        seq, kind, task_id, actor, at, data = _event(raw)
        if task_id is None:
            continue
        if kind == EventKind.TASK_CREATED:
            tasks[task_id] = Holding(status=str(data.get("status", t.TODO)))
            continue
        state = tasks.setdefault(task_id, Holding())
        if kind == EventKind.TASK_CLAIMED:
            verdict.claims += 1
            if state.status != t.TODO or state.holder is not None:
                live = state.lease_until is not None and state.lease_until >= at
                fault(
                    "double",
                    f"#{seq} {actor} claimed {task_id} while it was {state.status} "
                    f"held by {state.holder}" + (" under a live lease" if live else ""),
                )
            state.status, state.holder = t.IN_PROGRESS, actor
            state.epoch = int(data.get("epoch", state.epoch + 1))
            state.lease_until = at + leases.get(str(actor), lease_ms)
        elif kind in HOLDER_WRITES:
            check_holder(seq, kind, task_id, state, actor, at)
            if "lease_until" in data:  # a run's opening renews the lease too
                state.lease_until = int(data["lease_until"])
            if kind == EventKind.EXECUTION_STARTED:
                verdict.runs_opened += 1
                runs[str(data["execution_id"])] = (task_id, str(actor), state.epoch)
        elif kind == EventKind.EXECUTION_COMPLETED:
            run_id = str(data["execution_id"])
            opened = runs.get(run_id)
            if opened is None and data.get("late"):
                verdict.late_costs += 1  # a timed-out run's cost, taken once: no holder's write
            elif opened is None:
                fault("late", f"#{seq} {run_id} closed by {actor} but it was not running")
            elif actor == opened[1]:
                check_holder(seq, EventKind.EXECUTION_COMPLETED, task_id, state, actor, at)
                if state.epoch != opened[2]:
                    fault(
                        "late",
                        f"#{seq} {run_id} closed by {actor} under epoch {state.epoch}, "
                        f"opened under {opened[2]}",
                    )
            close_runs([run_id])
        elif kind in (EventKind.COMMENT_ADDED, EventKind.TASK_UPDATED) and "lease_until" in data:
            state.lease_until = int(data["lease_until"])  # the holder's note or edit renewed it
        elif kind == EventKind.LEASE_EXPIRED:
            verdict.lease_expiries += 1
            if state.status != t.IN_PROGRESS or state.holder != data.get("assignee"):
                fault(
                    "early",
                    f"#{seq} lease of {data.get('assignee')} on {task_id} released, "
                    f"but it was {state.status} held by {state.holder}",
                )
            elif state.lease_until is None or not state.lease_until < at:
                fault(
                    "early",
                    f"#{seq} lease on {task_id} released at {at}, still live until "
                    f"{state.lease_until}",
                )
            close_runs([str(run) for run in data.get("timed_out_executions", [])])
            state.status, state.holder, state.lease_until = t.TODO, None, None
            state.epoch = int(data.get("claim_epoch", state.epoch + 1))
        elif kind == EventKind.STATUS_CHANGED:
            source, target = data.get("from"), str(data.get("to"))
            if source == t.IN_PROGRESS and data.get("verb") == "complete":
                check_holder(seq, "complete", task_id, state, actor, at)
            if target == t.DONE:
                state.done += 1
            close_runs([str(run) for run in data.get("closed_executions", [])])
            state.status = target
            if target != t.IN_PROGRESS:
                state.holder, state.lease_until = None, None
        elif kind == EventKind.TASK_TRANSFERRED:
            check_holder(seq, "transfer", task_id, state, actor, at)
            close_runs([str(run) for run in data.get("closed_executions", [])])
            state.holder = str(data.get("to"))
            state.epoch = int(data.get("epoch", state.epoch + 1))
            state.lease_until = at + lease_ms
    verdict.open_runs = sorted(runs)
    verdict.done_counts = {task_id: state.done for task_id, state in tasks.items()}
    verdict.final_status = {task_id: state.status for task_id, state in tasks.items()}
    return verdict
