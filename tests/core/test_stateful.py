"""Random operations against the board and against a plain in-memory model of the seed's rules;
after every step the two must agree on status, owner, holders, readiness, runs and refusals.

The model includes the agent contract (issue 9): the generic move by an identified agent (only a
task it holds, never into done, never its own work out of review), the operator's overrides, and
runs that belong to their holder (closed only by it, closed for it when the task moves on), and
the holder's own calls (a same-place move, a comment, a run opened) renewing its live lease."""

import copy
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from boardlib import Board, BoardError, ManualClock, Task
from boardlib import transitions as t
from tests.examples import examples

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
    claimed_by: str | None = None  # the first claimer ever: never judges the task


@dataclass
class ModelRun:
    task: str
    agent: str
    status: str = "running"


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
        self.runs: dict[str, ModelRun] = {}

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
                self.end_runs(task, "timed_out")

    def end_runs(self, task: ModelTask, status: str) -> None:
        for run in self.runs.values():
            if run.task == task.id and run.status == "running":
                run.status = status

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

    def mover_refusal(self, task: ModelTask, target: str, agent: str, now: int) -> str | None:
        """The agent contract on a move, written out again from the issue's words."""
        if target == task.status:
            return None
        built = agent == task.assignee or agent in task.holders or agent == task.claimed_by
        if built and (target == "done" or task.status == "in_review"):
            return "self_review"
        if target == "done" or task.assignee != agent:
            return "not_assignee"
        if task.status == "in_progress" and task.lease is not None and task.lease < now:
            return "stale_claim"
        return None

    def signs_of_life(self, task: ModelTask, actor: str, now: int) -> None:
        """The holder's own call renews its live lease for the board's span (never shortens it);
        anyone else's call, or a run-out lease, renews nothing."""
        live = task.lease is not None and task.lease >= now
        if task.status == "in_progress" and task.assignee == actor and live:
            task.lease = max(task.lease or 0, now + LEASE)

    def table_refusal(self, task: ModelTask, target: str) -> str | None:
        if target != task.status and target not in MODEL_MOVES[task.status]:
            return "illegal_transition"
        if target != task.status and task.dropped and target in ("in_progress", "in_review"):
            return "invalid_state"  # a dropped task is restored before anyone works on it
        return None

    def enter(self, task: ModelTask, target: str, actor: str, now: int) -> None:
        """The model's side effects of a legal move."""
        if task.status != target and (
            task.status == "in_progress" or target in ("todo", "backlog", "cancelled")
        ):
            self.end_runs(task, "cancelled")  # runs end when their task leaves in progress
        if target in ("todo", "backlog"):
            task.assignee, task.lease, task.holders = None, None, []
        elif target == "in_progress":
            task.lease = now + LEASE
            if task.assignee is None:
                task.assignee = actor
                task.claimed_by = task.claimed_by or actor
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
        never_done = any(self.tasks[tid].status == "cancelled" for tid in blockers)
        created = self.expect(
            "invalid_state" if never_done else None,
            lambda: self.board.create_task(
                "t", priority=priority, depends_on=sorted(blockers), status=status
            ),
        )
        if created is None:
            return
        assert isinstance(created, Task)
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
        before = copy.deepcopy((self.tasks, self.runs))
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
            self.tasks, self.runs = before  # a refused claim changes nothing, its reclaim included

    @rule(agent=AGENTS, start_run=st.booleans())
    def claim_next(self, agent: str, start_run: bool) -> None:
        """Claim the best ready task; with `start_run`, open a run on it as the agent loop does."""
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
        if start_run:
            run = self.board.open_execution(claimed.id, "sh", agent=agent)
            self.runs[run.id] = ModelRun(claimed.id, agent)

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
        elif reviewer in task.holders or reviewer == task.claimed_by:
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
        reason = self.table_refusal(task, target)
        moved = self.expect(
            reason, lambda: self.board.move(task.id, target, actor="operator:op", reason="r")
        )
        if moved is not None and target != task.status:
            self.enter(task, target, "operator:op", now)
        elif moved is not None:
            self.signs_of_life(task, "operator:op", now)

    @precondition(lambda self: self.tasks)
    @rule(index=PICK, agent=AGENTS, to=st.sampled_from(t.STATUSES), unblock=st.booleans())
    def agent_move(self, index: int, agent: str, to: str, unblock: bool) -> None:
        """The generic move (or unblock) by an identified agent: the contract first, then the
        table."""
        now = self.clock.now_ms()
        task = self.pick(index)
        if unblock:
            target = "todo"
            reason = (
                "invalid_state"
                if task.status != "blocked"
                else self.mover_refusal(task, target, agent, now)
            )
            call = lambda: self.board.unblock(task.id, actor=agent)  # noqa: E731
        else:
            target = to
            reason = self.mover_refusal(task, target, agent, now) or self.table_refusal(
                task, target
            )
            call = lambda: self.board.move(task.id, target, actor=agent, reason="r")  # noqa: E731
        moved = self.expect(reason, call)
        if moved is not None and target != task.status:
            self.enter(task, target, agent, now)
        elif moved is not None:
            self.signs_of_life(task, agent, now)

    @precondition(lambda self: self.tasks)
    @rule(index=PICK, agent=AGENTS, as_holder=st.booleans())
    def open_run(self, index: int, agent: str, as_holder: bool) -> None:
        """By anyone on any task, or (half the time) by the holder of a task in progress, so
        runs exist often enough for the close rule to judge them."""
        now = self.clock.now_ms()
        task = self.pick(index)
        held = [
            task
            for task in self.tasks.values()
            if task.status == "in_progress" and task.lease is not None and task.lease >= now
        ]
        if as_holder and held:
            task = held[index % len(held)]
            agent = task.assignee or agent
        reason = self.holder_refusal(task, agent, now)
        run = self.expect(reason, lambda: self.board.open_execution(task.id, "sh", agent=agent))
        if run is not None:
            self.runs[run.id] = ModelRun(task.id, agent)  # type: ignore[attr-defined]
            self.signs_of_life(task, agent, now)

    @precondition(lambda self: self.tasks)
    @rule(index=PICK, agent=AGENTS, as_holder=st.booleans())
    def comment(self, index: int, agent: str, as_holder: bool) -> None:
        """Anyone may comment on any task; the holder's comment is its sign of life."""
        now = self.clock.now_ms()
        task = self.pick(index)
        if as_holder and task.assignee is not None:
            agent = task.assignee
        self.board.add_comment(task.id, "a note", author_agent_id=agent)
        self.signs_of_life(task, agent, now)

    @precondition(lambda self: self.runs)
    @rule(index=PICK, agent=AGENTS, who=st.sampled_from(["holder", "other", "operator"]))
    def close_run(self, index: int, agent: str, who: str) -> None:
        """Only the run's holder closes it (an operator may close any running run)."""
        now = self.clock.now_ms()
        running = [run_id for run_id, run in self.runs.items() if run.status == "running"]
        pool = running if running and index % 3 else list(self.runs)
        run_id = pool[index % len(pool)]
        run = self.runs[run_id]
        task = self.tasks[run.task]
        operator = who == "operator"
        if who == "holder":
            agent = run.agent
        elif who == "other" and agent == run.agent:
            agent = next(name for name in ("ann", "ben", "cat") if name != run.agent)
        closer = "operator" if operator else agent
        if run.status != "running":
            reason: str | None = "not_found"
        elif operator or closer.startswith("operator"):  # an operator holder closes as one
            reason = None
        else:
            reason = self.holder_refusal(task, agent, now)
            if reason is None and run.agent != agent:
                reason = "not_assignee"
        closed = self.expect(
            reason, lambda: self.board.close_execution(run_id, "succeeded", agent=closer)
        )
        if closed is not None:
            run.status = "succeeded"

    @precondition(lambda self: len(self.tasks) >= 2)
    @rule(a=PICK, b=PICK)
    def link(self, a: int, b: int) -> None:
        task, blocker = self.pick(a), self.pick(b)
        reason = "dependency_cycle" if self.reaches(blocker.id, task.id) else None
        if reason is None and blocker.status == "cancelled" and blocker.id not in task.deps:
            reason = "invalid_state"  # never done: a new link onto it could never be met
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
            assert stored.claimed_by == model.claimed_by, task_id
            if stored.status == "in_progress":
                assert stored.assignee_agent_id and stored.lease_until

    @invariant()
    def runs_agree_with_model(self) -> None:
        for task_id in self.tasks:
            for execution in self.board.executions(task_id):
                model = self.runs[execution.id]
                assert (execution.status, execution.agent_id) == (model.status, model.agent)
                if execution.status == "running":  # a run never outlives its holder's stay
                    assert self.tasks[task_id].status == "in_progress"
                    assert self.tasks[task_id].assignee == execution.agent_id

    @invariant()
    def integrity(self) -> None:
        assert self.board.check().problems == []


BoardMachine.TestCase.settings = settings(
    max_examples=examples(60),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestBoardRules = BoardMachine.TestCase


FOUND_CASES = {  # cases hypothesis found once, kept so they run every time
    "an operator holding the task closes its run as an operator": [
        ("create", {"backlog": False, "deps": [], "priority": 0}),
        ("operator_move", {"index": 0, "to": "in_progress"}),
        ("open_run", {"agent": "ann", "as_holder": True, "index": 0}),
        ("time_passes", {"minutes": 1.2}),
        ("close_run", {"agent": "ann", "index": 0, "who": "holder"}),
    ],
    "the holder's move to where its task is renews the lease": [
        ("create", {"backlog": False, "deps": [], "priority": 0}),
        ("operator_move", {"index": 0, "to": "in_progress"}),
        ("time_passes", {"minutes": 0}),
        ("operator_move", {"index": 0, "to": "in_progress"}),
    ],
}


def test_found_cases() -> None:
    for steps in FOUND_CASES.values():
        machine = BoardMachine()
        try:
            for name, arguments in steps:
                getattr(machine, name)(**arguments)
                machine.board_agrees_with_model()
                machine.integrity()
                machine.runs_agree_with_model()
        finally:
            machine.teardown()
