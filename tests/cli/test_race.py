"""16 concurrent `kanban task claim-next` processes drain 200 tasks: each task claimed exactly
once, none lost, and every worker ends on exit 3 (`{"task": null}`, with `heldByYou` naming
the tasks it claimed)."""

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.cli.conftest import Kanban

pytestmark = pytest.mark.slow  # 16 processes racing

WORKERS = 16
TASKS = 200


def test_sixteen_claim_next_processes_claim_each_task_exactly_once(board_path: Path) -> None:
    kanban = Kanban(board_path, test_clock=False)  # real time, like real agents
    with kanban.board() as board:
        created = {board.create_task(f"task {n}", priority=n % 7).id for n in range(TASKS)}

    claims: dict[str, list[str]] = {f"agent-{n}": [] for n in range(WORKERS)}
    outcomes: dict[str, Counter[int]] = {agent: Counter() for agent in claims}
    failures: list[str] = []

    def worker(agent: str) -> None:
        while True:
            result = kanban.run("task", "claim-next", "--agent", agent)
            outcomes[agent][result.code] += 1
            if result.code == 0:
                task = result.doc
                if task["assigneeAgentId"] != agent or task["status"] != "in_progress":
                    failures.append(str(result))
                claims[agent].append(task["id"])
            elif result.code == 3:
                idle = json.loads(result.out)  # and the tasks it holds (its leases are live)
                if idle != {"task": None, "heldByYou": idle.get("heldByYou", [])} or set(
                    idle.get("heldByYou", [])
                ) != set(claims[agent]):
                    failures.append(str(result))
                return
            elif result.code != 4:  # busy is "try again"; anything else is a failure
                failures.append(str(result))
                return

    threads = [threading.Thread(target=worker, args=(agent,)) for agent in claims]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []

    claimed = [task_id for ids in claims.values() for task_id in ids]
    duplicates = [task_id for task_id, count in Counter(claimed).items() if count > 1]
    assert duplicates == []
    assert set(claimed) == created
    assert all(outcome[3] == 1 for outcome in outcomes.values())
    assert sum(1 for ids in claims.values() if ids) > 1  # the work really was shared

    with kanban.board() as board:
        rows = {task.id: task for task in board.all_tasks()}
    owner = {task_id: agent for agent, ids in claims.items() for task_id in ids}
    assert all(rows[task_id].assignee_agent_id == owner[task_id] for task_id in created)
    assert all(rows[task_id].attempts == 1 for task_id in created)
