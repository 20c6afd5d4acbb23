"""Guarantee 2: `kanban serve` killed with SIGKILL mid-flight and restarted on the same file.

HTTP workers (each with its own agent token) work a plan through the server. Three times, while
they are claiming, the server is killed with SIGKILL; the workers are then held still (their
requests fail anyway) until every lease they held has run out, and the server is started again on
the same file and port. At that restart the orphan pass must release exactly the dead runs: every
task whose lease lapsed in the outage goes back to todo with its running runs `timed_out` and
tombstoned, while a task held under a live lease (a library agent's ten-minute claim, its run still
open) stays held under the same epoch; a second pass (`kanban reconcile`) releases nothing. Then
the workers carry on, and they finish the plan: judged as the soak is (every task done exactly
once, the event log replayed clean, integrity and `kanban db check`).
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, BoardConfig, PlanItem
from boardlib.events import EventKind, read
from boardlib.payloads import LeaseExpired
from boardlib.records import EXECUTION_RUNNING, EXECUTION_SUCCEEDED, EXECUTION_TIMED_OUT

from .soak import KANBAN, Soak, SoakConfig

pytestmark = pytest.mark.slow  # a server killed and restarted mid-plan

LEASE_MS = 2000
STEADY_LEASE_MS = 10 * 60_000
CYCLES = 3


def in_flight(board: Board, done_before: int, timeout: float = 180.0) -> None:
    """Wait until the workers are busy: tasks held and more done than last time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        counts = board.status_counts()
        if counts.get("in_progress", 0) >= 3 and counts.get("done", 0) > done_before:
            return
        time.sleep(0.05)
    raise AssertionError(f"the workers never got going: {board.status_counts()}")


def signal_workers(soak: Soak, sig: signal.Signals) -> None:
    with soak.lock:
        for member in soak.members.values():
            if member.popen.poll() is None:
                os.killpg(member.popen.pid, sig)


def test_a_killed_server_restarts_and_its_orphan_pass_releases_exactly_the_dead_runs(
    tmp_path: Path,
) -> None:
    config = SoakConfig(
        workers=6, surfaces=("http",), reviewers=1, lease_ms=LEASE_MS, kill=False, freeze=False
    )
    soak = Soak(config, tmp_path / "run")
    board = Board(soak.db, config=soak.board_config, create=True)
    plan = [
        PlanItem(key=f"k{i}", title=f"restart {i}", depends_on=(f"k{i - 5}",) if i >= 5 else ())
        for i in range(60)
    ]
    board.create_plan(plan)
    steady_task = board.create_task("held across the restarts", priority=-5)
    steady = board.claim(steady_task.id, "steady", lease_ms=STEADY_LEASE_MS)
    steady_run = board.open_execution(steady.id, "chaos", agent="steady", epoch=steady.claim_epoch)
    soak.start_server()
    assert soak.url is not None
    port = int(soak.url.rsplit(":", 1)[1])
    soak.start_fleet()
    cycles: list[dict[str, Any]] = []
    try:
        for cycle in range(CYCLES):
            in_flight(board, board.status_counts().get("done", 0))
            assert soak.server is not None
            os.killpg(soak.server.pid, signal.SIGKILL)  # mid-flight: requests die with it
            soak.server.wait()
            signal_workers(soak, signal.SIGSTOP)
            with Board(soak.db, read_only=True, reconcile_orphans=False) as view:
                held = [t for t in view.list_tasks(status="in_progress")]
                running = {
                    t.id: [r.id for r in view.executions(t.id) if r.status == EXECUTION_RUNNING]
                    for t in held
                }
                seq = view.last_event_seq()
            dead = {t.id for t in held if t.id != steady.id}
            latest = max((t.lease_until or 0) for t in held if t.id in dead) if dead else 0
            time.sleep(max(0.0, latest / 1000 - time.time()) + 0.3)  # every dead lease is out

            soak.start_server(port=port)  # same file, same port: the clients' URL still works
            with Board(soak.db, read_only=True, reconcile_orphans=False) as view:
                after = view.events(since=seq)
                released = [e for e in after if e.kind == EventKind.LEASE_EXPIRED]
                first = released[0].created_at if released else None
                first_pass = {e.task_id for e in released if e.created_at == first}
                assert first_pass == dead, (cycle, first_pass, dead)
                for event in released:
                    assert event.actor == "system"
                    expired: LeaseExpired = read(event.data)
                    assert expired["timed_out_executions"] == running[str(event.task_id)]
                for task_id in dead:
                    for run in view.executions(task_id):
                        if run.id in running[task_id]:
                            assert run.status == EXECUTION_TIMED_OUT and run.recovery_tombstone, run
                            assert run.error and "lease expired" in run.error
                still = view.get_task(steady.id)
                assert (still.status, still.assignee_agent_id, still.claim_epoch) == (
                    "in_progress",
                    "steady",
                    steady.claim_epoch,
                )
                assert view.get_execution(steady_run.id).status == "running"
            second = subprocess.run(
                [str(KANBAN), "reconcile"],
                env=soak.env,
                capture_output=True,
                text=True,
                check=False,
            )
            assert second.returncode == 0, second.stderr
            assert json.loads(second.stdout)["released"] == [], second.stdout
            cycles.append({"dead": sorted(dead), "runsTimedOut": sum(map(len, running.values()))})
            signal_workers(soak, signal.SIGCONT)

        # The library agent finishes its long task; everyone else finishes the plan.
        steady_board = Board(soak.db, config=BoardConfig(lease_ms=STEADY_LEASE_MS))
        steady_board.close_execution(
            steady_run.id, EXECUTION_SUCCEEDED, agent="steady", epoch=steady.claim_epoch
        )
        steady_board.complete(steady.id, "steady", epoch=steady.claim_epoch)
        steady_board.close()
        drained = soak.drain(board)
    finally:
        signal_workers(soak, signal.SIGCONT)
        soak.stop_fleet()
        board.close()
    report = soak.judge(drained=drained, leases={"steady": STEADY_LEASE_MS})
    failed = {name: check for name, check in report["checks"].items() if not check["ok"]}
    assert not failed, json.dumps({"failed": failed, "cycles": cycles}, indent=2)
    assert report["figures"]["tasks"] == 61 and report["figures"]["lost"] == 0
    assert sum(len(c["dead"]) for c in cycles) >= CYCLES  # each outage left some runs dead
