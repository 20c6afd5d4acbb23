"""Real multi-process races on one board file: every guarantee that matters under contention.

Workers are processes of their own, forked from a forkserver (tests/racers.py), each with its own
`Board`. Where a race needs simultaneity, the workers wait on one barrier so the contended
statements really overlap (without it, these tests would pass even with a read-then-write claim).
"""

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from boardlib import Board, BoardConfig, BoardError, Reason
from boardlib import transitions as t
from tests.racers import racing_context

pytestmark = pytest.mark.slow  # processes racing

CTX = racing_context()
# Generous budget: 16 processes on 2 cores can starve one worker; the test is about correctness.
RACE_CONFIG = BoardConfig(retry_budget_ms=30_000, retry_max_attempts=10_000)


def _claim_until_empty(path: str, agent: str, barrier: Any, results: Any) -> None:
    with Board(path, config=RACE_CONFIG, reconcile_orphans=False) as board:
        barrier.wait()
        mine = []
        while (task := board.claim_next(agent)) is not None:
            assert task.assignee_agent_id == agent
            mine.append(task.id)
        results.put((agent, mine))


def _run(target: Any, args_per_worker: list[tuple[Any, ...]]) -> list[Any]:
    results = CTX.Queue()
    barrier = CTX.Barrier(len(args_per_worker))
    workers = [
        CTX.Process(target=target, args=(*args, barrier, results)) for args in args_per_worker
    ]
    for worker in workers:
        worker.start()
    collected = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    return collected


def test_eight_processes_claim_a_thousand_tasks_each_exactly_once(board_path: Path) -> None:
    path = board_path
    with Board(path) as board:
        from boardlib.board import PlanItem

        board.create_plan(
            [PlanItem(key=str(i), title=f"task {i}", priority=i % 7) for i in range(1000)]
        )
    collected = _run(_claim_until_empty, [(str(path), f"agent-{n}") for n in range(8)])
    claims = Counter(task_id for _, ids in collected for task_id in ids)
    assert len(claims) == 1000 and set(claims.values()) == {1}
    with Board(path) as board:
        tasks = board.list_tasks()
        assert {task.status for task in tasks} == {t.IN_PROGRESS}
        owner = {task_id: agent for agent, ids in collected for task_id in ids}
        assert all(task.assignee_agent_id == owner[task.id] for task in tasks)
        assert (
            sum(1 for event in board.events(limit=10_000) if event.kind == "task_claimed") == 1000
        )
        assert board.check().ok


def _claim_one(path: str, task_ids: list[str], agent: str, barrier: Any, results: Any) -> None:
    outcome = {}
    with Board(path, config=RACE_CONFIG, reconcile_orphans=False) as board:
        for task_id in task_ids:
            barrier.wait()
            try:
                board.claim(task_id, agent)
                outcome[task_id] = "won"
            except BoardError as error:
                outcome[task_id] = error.reason.value
    results.put(outcome)


def test_twenty_simultaneous_claims_have_one_winner(board_path: Path) -> None:
    path = board_path
    with Board(path) as board:
        ids = [board.create_task(f"contested {i}").id for i in range(5)]
    outcomes = _run(_claim_one, [(str(path), ids, f"racer-{n}") for n in range(20)])
    for task_id in ids:
        tally = Counter(outcome[task_id] for outcome in outcomes)
        assert tally == {"won": 1, Reason.CONFLICT.value: 19}


def _link(path: str, pairs: list[tuple[str, str]], barrier: Any, results: Any) -> None:
    outcome = []
    with Board(path, config=RACE_CONFIG, reconcile_orphans=False) as board:
        for task_id, depends_on in pairs:
            barrier.wait()
            try:
                board.link_dependency(task_id, depends_on)
                outcome.append("linked")
            except BoardError as error:
                outcome.append(error.reason.value)
    results.put(outcome)


def test_racing_opposite_links_cannot_both_win(board_path: Path) -> None:
    path = board_path
    with Board(path) as board:
        ids = [board.create_task(f"node {i}").id for i in range(60)]
    # each round: A->B against B->A, and a three-way ring x->y, y->z, z->x
    forward = [(ids[i], ids[i + 1]) for i in range(0, 30, 2)]
    backward = [(b, a) for a, b in forward]
    collected = _run(_link, [(str(path), forward), (str(path), backward)])
    for first, second in zip(*collected, strict=True):
        assert sorted([first, second]) == ["dependency_cycle", "linked"]
    rings = [ids[i : i + 3] for i in range(30, 60, 3)]
    ring_args = [[(ring[k], ring[(k + 1) % 3]) for ring in rings] for k in range(3)]
    collected = _run(_link, [(str(path), pairs) for pairs in ring_args])
    for round_outcomes in zip(*collected, strict=True):
        assert sorted(round_outcomes) == ["dependency_cycle", "linked", "linked"]
    with Board(path) as board:
        assert board.check().ok
        _assert_acyclic(board, ids)


def _assert_acyclic(board: Board, ids: list[str]) -> None:
    edges = {task_id: [dep.id for dep in board.dependencies(task_id)] for task_id in ids}
    state: dict[str, int] = {}

    def visit(node: str) -> None:
        state[node] = 1
        for nxt in edges[node]:
            assert state.get(nxt) != 1, f"cycle through {node} -> {nxt}"
            if nxt not in state:
                visit(nxt)
        state[node] = 2

    for node in ids:
        if node not in state:
            visit(node)


def _create_child(path: str, parent: str, barrier: Any, results: Any) -> None:
    config = BoardConfig(max_live_children=5, retry_budget_ms=30_000, retry_max_attempts=10_000)
    with Board(path, config=config, reconcile_orphans=False) as board:
        barrier.wait()
        try:
            board.create_task("child", parent_task_id=parent, capped=True)
            results.put("created")
        except BoardError as error:
            results.put(error.details.get("cap", error.reason.value))


def test_a_cap_of_five_under_twenty_racers_admits_exactly_five(board_path: Path) -> None:
    path = board_path
    with Board(path) as board:
        parent = board.create_task("parent").id
    outcomes = _run(_create_child, [(str(path), parent) for _ in range(20)])
    assert Counter(outcomes) == {"created": 5, "children": 15}
    with Board(path) as board:
        assert len(board.list_tasks()) == 6


def _claim_ignoring_deps(path: str, agent: str, barrier: Any, results: Any) -> None:
    with Board(path, config=RACE_CONFIG, reconcile_orphans=False) as board:
        barrier.wait()
        mine = []
        while (task := board.claim_next(agent, respect_deps=False)) is not None:
            mine.append(task.id)
        results.put(("claimed", mine))


def _cancel_dependents_of(path: str, blocker: str, barrier: Any, results: Any) -> None:
    with Board(path, config=RACE_CONFIG, reconcile_orphans=False) as board:
        barrier.wait()
        results.put(("cancelled", [task.id for task in board.cancel_dependents(blocker)]))


def test_cancel_dependents_never_cancels_a_task_claimed_meanwhile(board_path: Path) -> None:
    """Four claimers take dependents while a fifth process cancels them all: each dependent ends
    claimed or cancelled, never both (lessons: the Clawboo race, cancelled under its worker)."""
    from boardlib.board import PlanItem

    path = str(board_path)
    with Board(path) as board:
        items = [PlanItem(key="blocker", title="blocker", priority=-1)]
        items += [PlanItem(key=f"d{i}", title=f"d{i}", depends_on=("blocker",)) for i in range(200)]
        blocker = board.create_plan(items)["blocker"].id
    args: list[tuple[Any, ...]] = [(path, f"agent-{n}") for n in range(4)]
    collected = _run_mixed(
        [(_claim_ignoring_deps, a) for a in args] + [(_cancel_dependents_of, (path, blocker))]
    )
    claimed = [task for kind, ids in collected if kind == "claimed" for task in ids]
    cancelled = [task for kind, ids in collected if kind == "cancelled" for task in ids]
    assert len(claimed) == len(set(claimed))
    assert not set(claimed) & set(cancelled)
    with Board(path) as board:
        for task in board.list_tasks():
            if task.id == blocker:
                continue
            assert (task.status, task.id in claimed) in {
                (t.IN_PROGRESS, True),
                (t.CANCELLED, False),
            }
            if task.status == t.CANCELLED:
                assert task.assignee_agent_id is None
        assert board.check().ok


def _run_mixed(jobs: list[tuple[Any, tuple[Any, ...]]]) -> list[Any]:
    results = CTX.Queue()
    barrier = CTX.Barrier(len(jobs))
    workers = [CTX.Process(target=job, args=(*args, barrier, results)) for job, args in jobs]
    for worker in workers:
        worker.start()
    collected = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    return collected
