"""The demo's simulated agents and their lead, each run in its own process.

They make exactly the library calls a real agent makes and treat every refusal as data; code tasks
are real work in real worktrees through the verification gate, and now and then an agent crashes
on purpose for the lease recovery to recover. Every number here is "seconds at speed 1"; `Pace`
divides them by the speed. The story: docs/architecture.md#the-demo-and-the-review-board
"""

import ctypes
import os
import random
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from boardlib import transitions as t
from boardlib.actors import operator_named
from boardlib.board import Board
from boardlib.config import BoardConfig
from boardlib.errors import BoardError
from boardlib.leases import beating
from boardlib.records import EXECUTION_CANCELLED, EXECUTION_FAILED, EXECUTION_SUCCEEDED, Task
from boardlib.worktrees import GitFailure, Worktrees, isolation_for

from . import project

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext
    from multiprocessing.synchronize import Semaphore

SIMULATED_CRASH_EXIT = 86  # how an agent tells its supervisor "that was a planned crash"
RUNTIME = "demo-agent"
LEAD = "lead"
# The lead also plays the operator: unblocking and cancelling others' tasks is an operator's move
# under the agent contract, so it does those as `operator:lead`.
LEAD_OPERATOR = operator_named(LEAD)

LEASE_S = 6.0
LEASE_FLOOR_MS = 1000  # below this, a busy 2-core machine makes agents lose leases by accident
STEP_S = (0.8, 2.2)
STEPS = (2, 4)
REVIEW_S = (0.6, 1.5)
IDLE_S = (0.4, 0.9)
LEAD_TICK_S = 0.5

CRASH_CHANCE = 0.04  # per task, from an agent's third task on (after its scripted moments)
BLOCK_CHANCE = 0.05
REJECT_CHANCE = 0.15  # per review, while the task has had fewer than three attempts
LEAD_REJECT_CHANCE = 0.3  # the lead's look at a research attempt, after the first (a reject)
REVIEW_FIRST_CHANCE = 0.5  # an agent with reviewable work looks at it before claiming more
GIVE_UP_CHANCE = 0.35  # the lead cancels a blocked task (and its pending dependents)

_NOTES = (
    "read the code around it",
    "sketched the approach",
    "wrote a first draft",
    "added tests",
    "tests pass locally",
    "cleaned up the diff",
    "checked the edge cases",
)
_SUMMARIES = (
    "done; tests added",
    "implemented as planned",
    "done, with a follow-up noted in the comments",
    "finished; small refactor on the way",
)
_REJECTIONS = (
    "missing tests for the error path",
    "the naming does not match the rest of the module",
    "breaks the layout at 80 columns",
    "needs a migration note in the docs",
)
_APPROVALS = ("LGTM", "looks good, nice tests", "approved; clear diff", "ship it")
_BLOCKERS = (
    "waiting on staging credentials",
    "needs a decision: which payment provider?",
    "the upstream API returns 500 since this morning",
    "conflicting requirements in the ticket",
)
_ANSWERS = (
    "credentials are in the vault now",
    "decision made: go with the first option",
    "upstream fixed; try again",
    "requirements clarified in the ticket",
)


@dataclass(frozen=True, slots=True)
class Pace:
    """The demo's clock speed: `speed` 10 makes every sleep ten times shorter."""

    speed: float = 1.0

    def s(self, seconds: float) -> float:
        return seconds / self.speed

    @property
    def lease_ms(self) -> int:
        return max(LEASE_FLOOR_MS, round(LEASE_S * 1000 / self.speed))

    @property
    def heartbeat_s(self) -> float:
        return self.lease_ms / 3000

    @property
    def respawn_s(self) -> float:
        """How long a crashed agent stays gone: past its lease, so someone else recovers it."""
        return 1.5 * self.lease_ms / 1000

    @property
    def blocked_patience_s(self) -> float:
        return 1.5 * self.lease_ms / 1000

    @property
    def review_patience_s(self) -> float:
        return 4 * self.lease_ms / 1000

    @property
    def lead_review_s(self) -> float:
        """How long research work in review is the lead's alone to look at, before peers may."""
        return 0.5 * self.lease_ms / 1000


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """Everything a spawned agent (or the lead) needs; picklable for `spawn`."""

    name: str
    role: str | None
    index: int
    incarnation: int
    seed: int
    db_path: str
    log_path: str
    config: BoardConfig
    pace: Pace
    parent_pid: int
    crash_first: bool = False  # scripted: vanish during the first task
    reject_first: bool = False  # scripted: reject the first review
    block_first: bool = False  # scripted: block the first task
    fail_verify_first: bool = False  # scripted: the first gate run of this agent fails once
    repo_path: str | None = None  # the demo's repository: code tasks get worktrees of it
    worktrees_root: str | None = None

    def rng(self) -> random.Random:
        return random.Random(f"{self.seed}/{self.index}/{self.incarnation}")


# What happens to a task an agent works on, drawn at the claim: it crashes, blocks or finishes.
Fate = Literal["crash", "block", "finish"]


@dataclass
class Ledger:
    """Tokens spent on one run, priced like a mid-size model ($3 / $15 per million in / out)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0

    def add_step(self, rng: random.Random) -> None:
        self.input_tokens += rng.randint(3_000, 25_000)
        self.output_tokens += rng.randint(400, 3_000)
        self.cache_read += rng.randint(0, 40_000)

    @property
    def cost_usd(self) -> float:
        cost = self.input_tokens * 3 + self.output_tokens * 15 + self.cache_read * 0.3
        return round(cost / 1_000_000, 4)


def agent_name(base: str, incarnation: int) -> str:
    return base if incarnation == 1 else f"{base}#{incarnation}"


class _Log:
    """One line per action in the demo's log file (never on the terminal the TUI owns)."""

    def __init__(self, path: str, name: str) -> None:
        self.name = name
        self.file: TextIO = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115

    def __call__(self, message: str) -> None:
        self.file.write(f"{time.strftime('%H:%M:%S')} {self.name}: {message}\n")


def _detach(spec: AgentSpec) -> _Log:
    """Point stdout/stderr at the log and ignore Ctrl-C: the terminal belongs to the TUI, and the
    supervisor stops agents through their stop event so they can hand their tasks back."""
    log = _Log(spec.log_path, spec.name)
    os.dup2(log.file.fileno(), 1)
    os.dup2(log.file.fileno(), 2)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return log


FLAG_POLL_S = 0.02  # how often a member waiting on a `Flag` looks at it


class Flag:
    """A flag set once by the supervisor and seen by every member process. Not a
    `multiprocessing.Event`: its `set()` waits for each sleeper on it to wake, and a member
    killed while asleep on it never does (a closed tmux pane sends SIGHUP to the agents too), so
    `kanban demo` hung for good in `Fleet.stop`. One shared byte, no lock: setting it waits for
    nobody."""

    def __init__(self, context: "BaseContext") -> None:
        self._value = context.RawValue(ctypes.c_bool, False)

    def set(self) -> None:
        self._value.value = True

    def is_set(self) -> bool:
        return bool(self._value.value)

    def wait(self, timeout: float | None = None) -> bool:
        """True once set; False when `timeout` seconds passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            left = FLAG_POLL_S if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(FLAG_POLL_S, left))
        return True


class _Member:
    """What agents and the lead share: a board, a stop event, a log, a seeded random source."""

    def __init__(self, spec: AgentSpec, board: Board, stop: Flag, log: _Log) -> None:
        self.spec = spec
        self.name = spec.name
        self.board = board
        self.stop = stop
        self.log = log
        self.pace = spec.pace
        self.rng = spec.rng()

    def stopping(self) -> bool:
        """Asked to stop, or orphaned (the demo process died without stopping us)."""
        return self.stop.is_set() or os.getppid() != self.spec.parent_pid

    def pause(self, seconds: float) -> bool:
        """Sleep `seconds` of demo time; True when asked to stop meanwhile."""
        return self.stop.wait(self.pace.s(seconds)) or self.stopping()

    def between(self, bounds: tuple[float, float]) -> float:
        return self.rng.uniform(*bounds)

    def run(self) -> None:
        raise NotImplementedError


class Agent(_Member):
    def __init__(self, spec: AgentSpec, board: Board, stop: Flag, log: _Log) -> None:
        super().__init__(spec, board, stop, log)
        self.tasks_started = 0
        self.reviews_done = 0
        self.gate_runs = 0
        self.blocks = 0
        self._renewed = 0.0
        self.trees = (
            Worktrees(board, root=spec.worktrees_root, verify_timeout_s=120)
            if spec.repo_path
            else None
        )

    def run(self) -> None:
        self.log(f"incarnation {self.spec.incarnation} up, role {self.spec.role or 'any'}")
        while not self.stopping():
            if self.rng.random() < REVIEW_FIRST_CHANCE and self.review_something():
                continue
            try:
                task = self.board.claim_next(self.name, role=self.spec.role, runtime=RUNTIME)
            except BoardError as error:
                self.log(f"claim refused: {error.reason.value}: {error.message}")
                task = None
            if task is not None:
                self.work_on(task)
            elif not self.review_something():
                self.pause(self.between(IDLE_S))
        self.log("stopped")

    # -- building ---------------------------------------------------------------------------------

    def work_on(self, task: Task) -> None:
        self.tasks_started += 1
        first = self.tasks_started == 1
        epoch = task.claim_epoch
        self.log(f"claimed {task.id} (epoch {epoch}): {task.title}")
        steps = self.rng.randint(*STEPS)
        fate: Fate = "finish"
        if self.spec.crash_first and first:
            fate = "crash"
        elif self.spec.block_first and self.blocks == 0:  # until the scripted block is shown
            fate = "block"
        elif self._may_crash() and self.rng.random() < CRASH_CHANCE:
            fate = "crash"
        elif self._may_block() and self.rng.random() < BLOCK_CHANCE:
            fate = "block"
        fate_step = self.rng.randint(1, steps - 1)
        if self._builds_files(task):
            self.build_in_worktree(task, fate, fate_step, steps)
            return
        ledger = Ledger()
        try:
            execution = self.board.open_execution(
                task.id,
                RUNTIME,
                agent=self.name,
                epoch=epoch,
                run_reason=f"attempt {task.attempts}",
            )
            self._renewed = time.monotonic()
            notes = self.rng.sample(_NOTES, k=steps)
            for step in range(1, steps + 1):
                if not self._work(task.id, epoch, self.between(STEP_S)):
                    self._hand_back(task.id, epoch, execution.id)
                    return
                ledger.add_step(self.rng)
                self.board.log_progress(
                    task.id, self.name, f"{step}/{steps}: {notes[step - 1]}", epoch=epoch
                )
                self._renewed = time.monotonic()
                if step == fate_step and self._meet_fate(
                    fate, task.id, epoch, execution.id, ledger
                ):
                    return
            summary = self.rng.choice(_SUMMARIES)
            self._close_run(execution.id, EXECUTION_SUCCEEDED, epoch, ledger, summary=summary)
            self.board.complete(task.id, self.name, summary=summary, epoch=epoch)
            self.log(f"completed {task.id} -> in_review")
        except BoardError as error:
            # The lease lapsed, or an operator moved, cancelled or dropped it: not ours any more.
            self.log(f"lost {task.id}: {error.reason.value}: {error.message}")

    def _judged_by_the_gate(self, task: Task) -> bool:
        """Code tasks are judged by the verification gate (which may be running right now), not
        by a peer."""
        return self.trees is not None and isolation_for(task.kind) == "worktree"

    def _builds_files(self, task: Task) -> bool:
        return self.trees is not None and isolation_for(task.kind) == "worktree"

    @contextmanager
    def _keep_alive(self, task_id: str, epoch: int) -> Iterator[None]:
        """Heartbeat from a thread while a long git step runs (provision, the gate): a real agent
        renews its lease while its tools work, or a busy machine makes it lose the task. Stops at
        the first refusal (the task left in_progress, e.g. into review)."""

        def beat() -> bool:
            try:
                self.board.heartbeat(task_id, self.name, epoch=epoch)
            except BoardError:
                return False
            return True

        try:
            with beating(self.pace.heartbeat_s, beat, f"{self.name}-heartbeat"):
                yield
        finally:
            self._renewed = time.monotonic()

    def build_in_worktree(self, task: Task, fate: Fate, fate_step: int, steps: int) -> None:
        """A code task: provision (or take over) the worktree, edit real files step by step with
        progress notes, hand off, and complete through the verification gate; fix and complete
        again when the gate fails."""
        assert self.trees is not None and self.spec.repo_path is not None
        epoch = task.claim_epoch
        ledger = Ledger()
        try:
            with self._keep_alive(task.id, epoch):
                made = self.trees.provision(task.id, self.spec.repo_path, actor=self.name)
            worktree = Path(made.worktree.worktree_path)
            if made.reused:
                resumed = self.trees.resume(task.id).resume or {}
                self.board.log_progress(
                    task.id, self.name,
                    f"took over the worktree; its notes say next: {resumed.get('next') or '?'}",
                    epoch=epoch,
                )  # fmt: skip
            execution = self.board.open_execution(
                task.id, RUNTIME, agent=self.name, epoch=epoch,
                run_reason=f"attempt {task.attempts}",
            )  # fmt: skip
            self._renewed = time.monotonic()
            broken = self.spec.fail_verify_first and self.gate_runs == 0
            done: list[str] = []
            for step in range(1, steps + 1):
                if not self._work(task.id, epoch, self.between(STEP_S)):
                    self._hand_back(task.id, epoch, execution.id)
                    return
                ledger.add_step(self.rng)
                note = project.work_step(
                    worktree, task_id=task.id, title=task.title, step=step, steps=steps,
                    done=done, rng=self.rng, broken=broken,
                )  # fmt: skip
                done.append(note)
                self.board.log_progress(task.id, self.name, f"{step}/{steps}: {note}", epoch=epoch)
                self._renewed = time.monotonic()
                if step == fate_step and self._meet_fate(
                    fate, task.id, epoch, execution.id, ledger
                ):
                    return
            summary = self.rng.choice(_SUMMARIES)
            self._hand_off(task, done, "review the diff in the drawer")
            self._close_run(execution.id, EXECUTION_SUCCEEDED, epoch, ledger, summary=summary)
            self._complete_through_gate(task, worktree, epoch, summary)
        except BoardError as error:
            self.log(f"lost {task.id}: {error.reason.value}: {error.message}")
        except GitFailure as error:
            self.log(f"git failed on {task.id}: {error}")

    def _hand_off(self, task: Task, done: list[str], next_step: str) -> None:
        assert self.trees is not None
        self.trees.write_handoff(
            task.id,
            {
                "handoffFrom": self.name,
                "runtime": RUNTIME,
                "completedSubtasks": done,
                "nextBestStep": next_step,
                "commands": {"verify": project.verify_command()},
                "evidence": {"testResults": "ran the new test locally"},
            },
            actor=self.name,
        )

    def _complete_through_gate(self, task: Task, worktree: Path, epoch: int, summary: str) -> None:
        """Complete; the gate judges. A failure comes back to this agent with a new epoch: read
        it, fix the test, complete again (the attempt budget caps the loop)."""
        assert self.trees is not None
        for _ in range(self.board.config.verification_attempt_budget):
            with self._keep_alive(task.id, epoch):  # until the task reaches review
                result = self.trees.complete(task.id, self.name, epoch=epoch, summary=summary)
            self.gate_runs += 1
            self.log(f"completed {task.id}: gate {result.verified or 'skipped'} -> "
                     f"{result.task_status}")  # fmt: skip
            if result.task_status != t.IN_PROGRESS or result.claim_epoch is None:
                return
            epoch = result.claim_epoch
            self._renewed = time.monotonic()
            if not self._work(task.id, epoch, self.between(STEP_S)):
                self.board.release(task.id, self.name, epoch=epoch)  # stopping: hand it back
                self.log(f"released {task.id}: demo stopping")
                return
            execution = self.board.open_execution(
                task.id, RUNTIME, agent=self.name, epoch=epoch,
                run_reason="fix after a failed verification",
            )  # fmt: skip
            note = project.fix_the_test(worktree, task.title)
            self.board.log_progress(task.id, self.name, note, epoch=epoch)
            ledger = Ledger()
            ledger.add_step(self.rng)
            self._hand_off(task, [note], "the gate should pass now")
            self._close_run(execution.id, EXECUTION_SUCCEEDED, epoch, ledger, summary=note)

    def _close_run(
        self,
        execution_id: str,
        status: str,
        epoch: int,
        ledger: Ledger,
        *,
        summary: str | None = None,
        error: str | None = None,
    ) -> None:
        self.board.close_execution(
            execution_id, status, agent=self.name, epoch=epoch, summary=summary, error=error,
            input_tokens=ledger.input_tokens, output_tokens=ledger.output_tokens,
            cache_read=ledger.cache_read, cost_usd=ledger.cost_usd,
        )  # fmt: skip

    def _owes_scripted_moment(self) -> bool:
        """A scripted rejection or failed gate run not shown yet (the incarnation that owes it
        must live to show it: a respawn does not carry the script)."""
        owes_review = self.spec.reject_first and self.reviews_done == 0
        owes_gate_failure = self.spec.fail_verify_first and self.gate_runs == 0
        return owes_review or owes_gate_failure

    def _may_crash(self) -> bool:
        """Random crashes wait until the agent has shown its scripted moments, so a seed-driven run
        always contains them."""
        return self.tasks_started > 2 and not self._owes_scripted_moment()

    def _may_block(self) -> bool:
        """Random blocks wait likewise: a blocked task may go to another agent, gate and all."""
        return self.tasks_started > 1 and not self._owes_scripted_moment()

    def _work(self, task_id: str, epoch: int, seconds: float) -> bool:
        """Work for `seconds` of demo time, heartbeating every third of a lease; False if asked to
        stop meanwhile."""
        end = time.monotonic() + self.pace.s(seconds)
        while True:
            now = time.monotonic()
            if now >= end:
                return True
            due = self._renewed + self.pace.heartbeat_s
            if now >= due:
                self.board.heartbeat(task_id, self.name, epoch=epoch)
                self._renewed = time.monotonic()
                continue
            if self.stop.wait(min(end, due) - now) or self.stopping():
                return False

    def _hand_back(self, task_id: str, epoch: int, execution_id: str) -> None:
        """A clean stop: close the run as cancelled and release the task for whoever comes next."""
        self.board.close_execution(
            execution_id, EXECUTION_CANCELLED, agent=self.name, epoch=epoch, summary="demo stopped"
        )
        self.board.release(task_id, self.name, epoch=epoch)
        self.log(f"released {task_id}: demo stopping")

    def _meet_fate(
        self,
        fate: Fate,
        task_id: str,
        epoch: int,
        execution_id: str,
        ledger: Ledger,
    ) -> bool:
        """At the step the fate was drawn for: a crash ends the process; a block closes the run
        failed and blocks the task (True: the work on it is over); a finish goes on."""
        if fate == "crash":
            self._vanish(task_id)
        if fate != "block":
            return False
        reason = self.rng.choice(_BLOCKERS)
        self._close_run(execution_id, EXECUTION_FAILED, epoch, ledger, error=f"blocked: {reason}")
        self.board.block(task_id, self.name, reason, epoch=epoch)
        self.blocks += 1
        self.log(f"blocked {task_id}: {reason}")
        return True

    def _vanish(self, task_id: str) -> None:
        self.log(f"CRASH (simulated) while holding {task_id}: no more heartbeats")
        self.log.file.flush()
        os._exit(SIMULATED_CRASH_EXIT)

    # -- reviewing --------------------------------------------------------------------------------

    def review_something(self) -> bool:
        """Judge one task someone else built; False when there is nothing this agent may review.
        Another reviewer may win the race meanwhile: the refusal is data."""
        try:
            waiting = self.board.list_tasks(status=t.IN_REVIEW)
        except BoardError as error:
            self.log(f"could not list reviews: {error.message}")
            return False
        now = self.board.now()
        mine = [
            task
            for task in waiting
            if self.name not in task.holders
            and task.claimed_by != self.name
            and not self._judged_by_the_gate(task)
            and now - task.updated_at >= self.pace.lead_review_s * 1000  # the lead looks first
        ]
        if not mine:
            return False
        task = self.rng.choice(mine)
        if self.pause(self.between(REVIEW_S)):
            return True
        reject = (self.spec.reject_first and self.reviews_done == 0) or (
            task.attempts < 3 and self.rng.random() < REJECT_CHANCE
        )
        try:
            if reject:
                reason = self.rng.choice(_REJECTIONS)
                self.board.reject(task.id, self.name, reason)
                self.log(f"rejected {task.id}: {reason}")
            else:
                self.board.approve(task.id, self.name)
                self.board.add_comment(
                    task.id, self.rng.choice(_APPROVALS), author_agent_id=self.name
                )
                self.log(f"approved {task.id}")
            self.reviews_done += 1
        except BoardError as error:
            self.log(f"review of {task.id} refused: {error.reason.value}: {error.message}")
        return True


class Lead(_Member):
    """The team lead: answers blocked tasks (unblock with an answer, or give up and cancel what
    waited on them), reviews work nobody else may review, and cancels work stranded behind a
    cancelled dependency, so the board never stalls for good."""

    looked_at: set[tuple[str, int]]

    def run(self) -> None:
        self.looked_at = set()
        self.log("lead up")
        while not self.pause(LEAD_TICK_S):
            try:
                self.tick()
            except BoardError as error:
                self.log(f"refused: {error.reason.value}: {error.message}")
        self.log("stopped")

    def tick(self) -> None:
        now = self.board.now()
        for task in self.board.list_tasks(status=t.BLOCKED):
            if now - task.updated_at < self.pace.blocked_patience_s * 1000:
                continue
            if len(self._waiting_on(task.id)) <= 2 and self.rng.random() < GIVE_UP_CHANCE:
                self.board.cancel(
                    task.id, actor=LEAD_OPERATOR, reason=f"giving up: {task.blocked_reason}"
                )
                cancelled = self.board.cancel_dependents(task.id, actor=LEAD)
                self.log(f"cancelled {task.id} and {len(cancelled)} dependent(s)")
            else:
                answer = self.rng.choice(_ANSWERS)
                self.board.unblock(task.id, note=answer, actor=LEAD_OPERATOR)
                self.log(f"unblocked {task.id}: {answer}")
        for task in self.board.list_tasks(status=t.IN_REVIEW):
            waited = now - task.updated_at
            if waited >= self.pace.review_patience_s * 1000:
                self.board.approve(task.id, LEAD)
                self.log(f"approved {task.id} (nobody else could review it)")
            elif (
                isolation_for(task.kind) == "none"
                and (task.id, task.attempts) not in self.looked_at
            ):
                # The lead looks at each research attempt first (peers wait `lead_review_s`):
                # the very first look is a reject, later ones now and then.
                first = not self.looked_at
                self.looked_at.add((task.id, task.attempts))
                if task.attempts < 3 and (first or self.rng.random() < LEAD_REJECT_CHANCE):
                    reason = self.rng.choice(_REJECTIONS)
                    self.board.reject(task.id, LEAD, reason)
                    self.log(f"rejected {task.id}: {reason}")
        self._cancel_stranded()

    def _waiting_on(self, task_id: str) -> set[str]:
        """Every unfinished task that waits on `task_id`, directly or not: what giving up costs."""
        seen: set[str] = set()
        frontier = [task_id]
        while frontier:
            for dependent in self.board.dependents(frontier.pop()):
                if dependent.id not in seen and dependent.status not in t.TERMINAL:
                    seen.add(dependent.id)
                    frontier.append(dependent.id)
        return seen

    def _cancel_stranded(self) -> None:
        """Todo work waiting on a cancelled task (an operator cancelled a blocker by hand) can
        never become ready: cancel it, the way the board's blocker-failed path does."""
        counts = self.board.status_counts()
        busy = counts[t.IN_PROGRESS] + counts[t.IN_REVIEW] + counts[t.BLOCKED]
        if busy or not counts[t.TODO] or self.board.ready_tasks():
            return
        for task in self.board.list_tasks(status=t.TODO):
            for dependency in self.board.dependencies(task.id):
                if dependency.status == t.CANCELLED:
                    cancelled = self.board.cancel_dependents(dependency.id, actor=LEAD)
                    self.log(f"cancelled {len(cancelled)} task(s) stranded by {dependency.id}")


@dataclass(frozen=True)
class Signals:
    """The supervisor's levers, shared with every member process: `ready` is released once a
    member has its board open, `go` starts the whole team at once, `stop` ends it."""

    stop: Flag
    ready: "Semaphore"
    go: Flag


def _main(spec: AgentSpec, signals: Signals, member: type[_Member]) -> None:
    log = _detach(spec)
    try:
        with Board(Path(spec.db_path), config=spec.config) as board:
            signals.ready.release()
            signals.go.wait()
            member(spec, board, signals.stop, log).run()
    except Exception:
        log(f"FAILED unexpectedly:\n{traceback.format_exc()}")
        log.file.flush()
        sys.exit(1)


def agent_main(spec: AgentSpec, signals: Signals) -> None:
    """Process entry point of one agent incarnation."""
    _main(spec, signals, Agent)


def lead_main(spec: AgentSpec, signals: Signals) -> None:
    """Process entry point of the lead."""
    _main(spec, signals, Lead)
