"""Random operations against the board and against a plain in-memory model of the seed's rules;
after every step the two must agree on status, owner, holders, readiness and refusals."""

import copy
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from boardlib import Board, BoardError, ManualClock
from boardlib import transitions as t

LEASE = 60_000
AGENTS = st.sampled_from(["ann", "ben", "cat"])
PICK = st.integers(min_value=0, max_value=30)

MODEL_MOVES = {  # written out again on purpose: the model must not borrow the code under test
    "backlog": {"todo", "blocked", "cancelled"},
    "todo": {"in_progress", "blocked", "backlog", "cancelled"},
    "in_progress": {"in_review", "done", "blocked", "todo", "cancelled"},
    "in_review": {"done", "in_progress", "blocked", "cancelled"},
    "blocked": {"todo", "in_progress", "backlog", "cancelled"},
    "done": set(),
    "cancelled": set(),
}


@dataclass
class ModelTask:
    id: str
    priority: int
    seq: int
    updated: int
    status: str = "todo"
    assignee: str | None = None
    holders: list[str] = field(default_factory=list)
    lease: int | None = None
    deps: set[str] = field(default_factory=set)
    dropped: bool = False


class BoardMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.TemporaryDirectory()
        self.clock = ManualClock(1_000_000)
        from boardlib import BoardConfig

        self.board = Board(
            Path(self.dir.name) / "b.db", clock=self.clock, config=BoardConfig(lease_ms=LEASE)
        )
        self.tasks: dict[str, ModelTask] = {}

    def teardown(self) -> None:
        self.board.close()
        self.dir.cleanup()

    # -- model helpers --------------------------------------------------------------------------

    def pick(self, index: int) -> ModelTask:
        ids = list(self.tasks)
        return self.tasks[ids[index % len(ids)]]

    def unmet(self, task: ModelTask) -> int:
        return sum(1 for dep in task.deps if self.tasks[dep].status != "done")

    def ready(self, task: ModelTask) -> bool:
        return task.status == "todo" and not task.dropped and self.unmet(task) == 0

    def reap(self, now: int) -> None:
        for task in self.tasks.values():
            if task.status == "in_progress" and task.lease is not None and task.lease < now:
                task.status, task.assignee, task.lease, task.updated = "todo", None, None, now

    def reaches(self, start: str, target: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            node = stack.pop()
            if node == target:
                return True
            if node not in seen:
                seen.add(node)
                stack.extend(self.tasks[node].deps)
        return False

    def expect(self, reason: str | None, call: object) -> object:
        """Run the board call; it must fail with `reason` (or succeed when reason is None)."""
        try:
            result = call()  # type: ignore[operator]
        except BoardError as error:
            assert error.reason.value == reason, f"board refused {error.reason}, model: {reason}"
            return None
        assert reason is None, f"board accepted, model expected {reason}"
        return result

    def holder_refusal(self, task: ModelTask, agent: str, now: int) -> str | None:
        if task.status != "in_progress":
            return "invalid_state"
        if task.assignee != agent:
            return "not_assignee"
        if task.lease is not None and task.lease < now:
            return "stale_claim"
        return None

    def enter(self, task: ModelTask, target: str, actor: str, now: int) -> None:
        """The model's side effects of a legal move."""
        if target in ("todo", "backlog"):
            task.assignee, task.lease, task.holders = None, None, []
        elif target == "in_progress":
            task.lease = now + LEASE
            if task.assignee is None:
                task.assignee = actor
                if actor not in task.holders:
                    task.holders.append(actor)
        elif target in ("in_review",):
            task.assignee, task.lease = None, None
        else:
            task.lease = None
        task.status, task.updated = target, now

    # -- rules ----------------------------------------------------------------------------------

    @rule(priority=st.integers(0, 3), deps=st.lists(PICK, max_size=2), backlog=st.booleans())
    def create(self, priority: int, deps: list[int], backlog: bool) -> None:
        blockers = {self.pick(i).id for i in deps} if self.tasks else set()
        status = "backlog" if backlog else "todo"
        created = self.board.create_task(
            "t", priority=priority, depends_on=sorted(blockers), status=status
        )
        self.tasks[created.id] = ModelTask(
            created.id, priority, len(self.tasks), self.clock.now_ms(), status=status, deps=blockers
        )

    @rule(minutes=st.sampled_from([0, 0.5, 1.2]))
    def time_passes(self, minutes: float) -> None:
        self.clock.advance(minutes=minutes, ms=1)

    @precondition(lambda self: self.tasks)
    @rule(index=PICK, agent=AGENTS)
    def claim(self, index: int, agent: str) -> None:
        now = self.clock.now_ms()
        before = copy.deepcopy(self.tasks)
        self.reap(now)
        task = self.pick(index)
        if self.ready(task):
            reason = None
        elif (
            task.status == "todo"
            and not task.dropped
            and task.assignee is None
            and self.unmet(task)
        ):
            reason = "unmet_dependencies"
        else:
            reason = "conflict"
        if self.expect(reason, lambda: self.board.claim(task.id, agent)) is not None:
            self.enter(task, "in_progress", agent, now)
        else:
            self.tasks = before  # a refused claim changes nothing, its lease sweep included

    @rule(agent=AGENTS)
    def claim_next(self, agent: str) -> None:
        now = self.clock.now_ms()
        self.reap(now)
        ready = [task for task in self.tasks.values() if self.ready(task)]
        claimed = self.board.claim_next(agent)
        if not ready:
            assert claimed is None
            return
        top = max((task.priority, task.updated) for task in ready)
        best = {task.id for task in ready if (task.priority, task.updated) == top}
        assert claimed is not None and claimed.id in best
        self.enter(self.tasks[claimed.id], "in_progress", agent, now)

    @precondition(lambda self: self.tasks)
    @rule(
        index=PICK,
        agent=AGENTS,
        verb=st.sampled_from(["heartbeat", "complete", "block", "release"]),
    )
    def holder_verb(self, index: int, agent: str, verb: str) -> None:
        now = self.clock.now_ms()
        task = self.pick(index)
        reason = self.holder_refusal(task, agent, now)
        call = {
            "heartbeat": lambda: self.board.heartbeat(task.id, agent),
            "complete": lambda: self.board.complete(task.id, agent),
            "block": lambda: self.board.block(task.id, agent, "stuck"),
            "release": lambda: self.board.release(task.id, agent),
        }[verb]
        if self.expect(reason, call) is None:
            return
        if verb == "heartbeat":
            task.lease = now + LEASE
        else:
            target = {"complete": "in_review", "block": "blocked", "release": "todo"}[verb]
            self.enter(task, target, agent, now)

    @precondition(lambda self: self.tasks)
    @rule(index=PICK, reviewer=AGENTS, approve=st.booleans())
    def review(self, index: int, reviewer: str, approve: bool) -> None:
        now = self.clock.now_ms()
        task = self.pick(index)
        if task.status != "in_review":
            reason: str | None = "invalid_state"
        elif reviewer in task.holders:
            reason = "self_review"
        else:
            reason = None
        if approve:
            if self.expect(reason, lambda: self.board.approve(task.id, reviewer)) is not None:
                self.enter(task, "done", reviewer, now)
        elif self.expect(reason, lambda: self.board.reject(task.id, reviewer, "redo")) is not None:
            self.enter(task, "todo", reviewer, now)

    @precondition(lambda self: self.tasks)
    @rule(index=PICK, to=st.sampled_from(t.STATUSES))
    def operator_move(self, index: int, to: str) -> None:
        target = to
        now = self.clock.now_ms()
        task = self.pick(index)
        legal = target == task.status or target in MODEL_MOVES[task.status]
        reason = None if legal else "illegal_transition"
        if (
            legal
            and target != task.status
            and task.dropped
            and target in ("in_progress", "in_review")
        ):
            reason = "invalid_state"  # a dropped task is restored before anyone works on it
        moved = self.expect(
            reason, lambda: self.board.move(task.id, target, actor="operator:op", reason="r")
        )
        if moved is not None and target != task.status:
            self.enter(task, target, "operator:op", now)

    @precondition(lambda self: len(self.tasks) >= 2)
    @rule(a=PICK, b=PICK)
    def link(self, a: int, b: int) -> None:
        task, blocker = self.pick(a), self.pick(b)
        reason = "dependency_cycle" if self.reaches(blocker.id, task.id) else None
        if self.expect(reason, lambda: self.board.link_dependency(task.id, blocker.id)) is not None:
            task.deps.add(blocker.id)

    @precondition(lambda self: self.tasks)
    @rule(index=PICK)
    def cancel_dependents(self, index: int) -> None:
        now = self.clock.now_ms()
        root = self.pick(index)
        downstream = {
            tid for tid, task in self.tasks.items() if tid != root.id and self.reaches(tid, root.id)
        }
        expected = {tid for tid in downstream if self.tasks[tid].status in ("todo", "backlog")}
        cancelled = self.board.cancel_dependents(root.id)
        assert {task.id for task in cancelled} == expected
        for tid in expected:
            self.tasks[tid].status, self.tasks[tid].lease, self.tasks[tid].updated = (
                "cancelled",
                None,
                now,
            )

    @precondition(lambda self: self.tasks)
    @rule(index=PICK, drop=st.booleans())
    def drop_or_restore(self, index: int, drop: bool) -> None:
        now = self.clock.now_ms()
        task = self.pick(index)
        if drop:
            locked = task.status in ("in_progress", "in_review")
            reason = "invalid_state" if locked and not task.dropped else None
            if self.expect(reason, lambda: self.board.drop(task.id)) is not None:
                if not task.dropped:
                    task.updated = now
                task.dropped = True
        else:
            self.board.restore(task.id)
            if task.dropped:
                task.updated = now
            task.dropped = False

    # -- invariants -----------------------------------------------------------------------------

    @invariant()
    def board_agrees_with_model(self) -> None:
        rows = {task.id: task for task in self.board.all_tasks()}
        assert rows.keys() == self.tasks.keys()
        for task_id, model in self.tasks.items():
            stored = rows[task_id]
            assert stored.status == model.status, task_id
            assert stored.assignee_agent_id == model.assignee, task_id
            assert stored.holders == model.holders, task_id
            assert stored.lease_until == model.lease, task_id
            assert bool(stored.dropped) == model.dropped, task_id
            assert stored.unmet_deps == self.unmet(model), task_id
            assert stored.updated_at == model.updated, task_id
            if stored.status == "in_progress":
                assert stored.assignee_agent_id and stored.lease_until

    @invariant()
    def integrity(self) -> None:
        assert self.board.check().problems == []


BoardMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestBoardRules = BoardMachine.TestCase
