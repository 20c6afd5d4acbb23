"""The demo's supervisor: runs the lead and the agents as real processes and brings crashed agents
back as new incarnations.

Why processes (spawn) and not threads: the TUI process must stay responsive while agents write, and
the board's guarantees are about separate processes sharing one file, so that is what the demo
exercises. Each agent opens its own `Board`. A new incarnation gets a new name (`ada#2`): the
board sees a different agent, exactly as it would when a real agent is restarted.
"""

import multiprocessing
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.process import BaseProcess
from pathlib import Path

from boardlib.config import BoardConfig

from .agents import (
    LEAD,
    SIMULATED_CRASH_EXIT,
    AgentSpec,
    Flag,
    Pace,
    Signals,
    agent_main,
    agent_name,
    lead_main,
)
from .plan import AGENT_ROLES

NAMES = (
    "ada", "grace", "linus", "barbara", "ken", "margaret",
    "dennis", "frances", "alan", "radia", "edsger", "hedy",
)  # fmt: skip
MAX_UNEXPECTED_FAILURES = 3  # per slot: past this a broken agent stays down instead of looping
SUPERVISE_TICK_S = 0.05


def agent_roles(count: int) -> list[str | None]:
    return [AGENT_ROLES[i % len(AGENT_ROLES)] for i in range(count)]


def base_name(index: int) -> str:
    return NAMES[index] if index < len(NAMES) else f"agent{index + 1}"


@dataclass
class _Slot:
    """One seat in the team: the current incarnation's process, or when the next one starts."""

    spec: AgentSpec
    entry: Callable[[AgentSpec, Signals], None]
    base: str
    process: BaseProcess | None = None
    respawn_at: float | None = None
    failures: int = 0


class Fleet:
    def __init__(
        self,
        *,
        db_path: Path,
        log_path: Path,
        config: BoardConfig,
        pace: Pace,
        seed: int,
        agents: int,
        notify: Callable[[str], None],
        repo_path: Path | None = None,
        worktrees_root: Path | None = None,
    ) -> None:
        self._ctx = multiprocessing.get_context("spawn")
        self._signals = Signals(
            stop=Flag(self._ctx), ready=self._ctx.Semaphore(0), go=Flag(self._ctx)
        )
        self._halt = threading.Event()
        self._lock = threading.Lock()
        self._notify = notify
        self._pace = pace
        self.crashes = 0
        self.failures = 0
        self.incarnations = 0
        parent = multiprocessing.current_process().pid or 0

        def spec(name: str, role: str | None, index: int, **script: bool) -> AgentSpec:
            return AgentSpec(
                name=name, role=role, index=index, incarnation=1, seed=seed,
                db_path=str(db_path), log_path=str(log_path), config=config, pace=pace,
                parent_pid=parent,
                repo_path=str(repo_path) if repo_path else None,
                worktrees_root=str(worktrees_root) if worktrees_root else None,
                **script,
            )  # fmt: skip

        roles = agent_roles(agents)
        self._slots = [_Slot(spec(LEAD, None, -1), lead_main, LEAD)]
        for index, role in enumerate(roles):
            # Scripted moments of the first incarnations, so every run shows them early: the
            # first agent crashes during its first task, the second rejects its first review,
            # the third fails its first verification once, the last blocks its first task.
            script = {
                "crash_first": index == 0,
                "reject_first": index == 1 % agents,
                "fail_verify_first": index == (2 if agents > 3 else agents - 1),
                "block_first": index == agents - 1 and agents > 1,
            }
            self._slots.append(
                _Slot(spec(base_name(index), role, index, **script), agent_main, base_name(index))
            )
        self._thread = threading.Thread(target=self._supervise, name="demo-fleet", daemon=True)

    @property
    def members(self) -> list[AgentSpec]:
        return [slot.spec for slot in self._slots]

    def start(self, timeout_s: float = 60.0) -> bool:
        """Start the lead and every agent and wait until each has its board open (process start-up
        takes a while on a busy machine; the demo's clock should not run meanwhile). False when
        someone was not up within `timeout_s`."""
        for slot in self._slots:
            self._launch(slot)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        up = 0
        while up < len(self._slots) and time.monotonic() < deadline and not self.failures:
            if self._signals.ready.acquire(timeout=0.1):
                up += 1
        self._signals.go.set()
        return up == len(self._slots)

    def _launch(self, slot: _Slot) -> None:
        process = self._ctx.Process(
            target=slot.entry,
            args=(slot.spec, self._signals),
            name=slot.spec.name,
            daemon=True,
        )
        # Spawned with Ctrl-C blocked: a terminal's Ctrl-C reaches the whole process group, and an
        # agent still importing would die of it instead of stopping through its stop event. The
        # mask is inherited across exec and restored here at once.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        slot.process = process
        slot.respawn_at = None
        self.incarnations += 1

    def _supervise(self) -> None:
        while not self._halt.wait(SUPERVISE_TICK_S):
            with self._lock:
                if self._halt.is_set():
                    return
                for slot in self._slots:
                    self._check(slot)

    def _check(self, slot: _Slot) -> None:
        now = time.monotonic()
        process = slot.process
        if process is not None and not process.is_alive():
            process.join()
            code = process.exitcode
            slot.process = None
            name = slot.spec.name
            if code == SIMULATED_CRASH_EXIT:
                self.crashes += 1
                slot.respawn_at = now + self._pace.respawn_s
                self._notify(
                    f"{name} crashed (simulated); its lease will expire and someone else takes "
                    f"over; {agent_name(slot.base, slot.spec.incarnation + 1)} starts in "
                    f"{self._pace.respawn_s:.1f} s"
                )
            else:
                self.failures += 1
                slot.failures += 1
                if slot.failures < MAX_UNEXPECTED_FAILURES:
                    slot.respawn_at = now + self._pace.respawn_s
                self._notify(f"{name} exited unexpectedly (code {code}); see the demo log")
        if slot.process is None and slot.respawn_at is not None and now >= slot.respawn_at:
            incarnation = slot.spec.incarnation + 1
            slot.spec = replace(
                slot.spec,
                name=agent_name(slot.base, incarnation) if slot.base != LEAD else LEAD,
                incarnation=incarnation,
                crash_first=False,
                reject_first=False,
                fail_verify_first=False,
                block_first=False,
            )
            self._launch(slot)
            self._notify(f"{slot.spec.name} started (incarnation {incarnation})")

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask every member to stop (agents hand their tasks back), wait, then force the rest.
        Idempotent."""
        with self._lock:
            self._halt.set()
            self._signals.stop.set()
            self._signals.go.set()
            processes = [slot.process for slot in self._slots if slot.process is not None]
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=1)
        deadline = time.monotonic() + timeout_s
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join(1)
            if process.is_alive():
                process.kill()
                process.join(1)
            if process.exitcode not in (0, SIMULATED_CRASH_EXIT) and process.exitcode is not None:
                self.failures += 1
        for slot in self._slots:
            slot.process = None

    def alive(self) -> int:
        return sum(
            1 for slot in self._slots if slot.process is not None and slot.process.is_alive()
        )
