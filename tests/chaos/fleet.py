"""The chaos fleet: the agent processes a soak kills, freezes and restarts.

Each process drives one board through one surface, as a real agent would: the library (`Board`),
the `kanban` CLI (a subprocess per call) or the REST API of `kanban serve` (httpx). A worker loops
claim_next -> open a run -> heartbeat -> log_progress -> close the run -> complete; a reviewer
approves or rejects what is in review. Every call is one JSON line in the process's log, with the
wall-clock time it started, what it quoted (task, epoch) and how the board answered, so the soak
can judge afterwards what a frozen worker's late call got.

A worker also publishes two bits in a shared flag file (one byte per worker slot): "inside a board
call" and "holding a task". The killer uses the first to kill inside a call half the time, the
freezer the second to freeze a worker that holds a task (its next call after the thaw is late).

    python -m tests.chaos.fleet worker --surface cli --name worker-3 --slot 3 --dir RUN_DIR
    python -m tests.chaos.fleet reviewer --surface lib --name reviewer-1 --dir RUN_DIR

The board is `KANBAN_DB` (a file, or a URL where the library supports one); the server's address
is `KANBAN_URL`; leases come from `KANBAN_LEASE_MS`, as for any agent. `RUN_DIR/drain` tells
reviewers to stop rejecting, `RUN_DIR/stop` tells everyone to exit.
"""

import argparse
import json
import mmap
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

IN_CALL = 1
HOLDING = 2
SURFACES = ("lib", "cli", "http")
LATE_COST = "late_cost"  # a close_run answered with the run as the board had closed it
BUSY_RETRIES = 40  # busy means nothing was written: the same step is tried again this often


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Refused(Exception):
    """A typed refusal of the board (nothing was written)."""

    def __init__(self, reason: str, doc: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.doc = doc or {}


class Busy(Exception):
    """The write lock stayed taken past the budget: nothing was written, try again."""


class Unexpected(Exception):
    """Anything that is neither a result nor a typed refusal: a bug the soak reports."""


# -- the three surfaces, one interface -----------------------------------------------------------


class LibClient:
    def __init__(self) -> None:
        from boardlib import Board, BoardConfig

        self.board = Board(os.environ["KANBAN_DB"], config=BoardConfig.from_env(), create=False)

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        from boardlib import BoardError, Reason

        try:
            yield
        except BoardError as error:
            if error.reason == Reason.BUSY:
                raise Busy(error.message) from None
            raise Refused(error.reason.value, error.to_dict()) from None

    def claim_next(self, agent: str) -> dict[str, Any] | None:
        with self._mapped():
            task = self.board.claim_next(agent)
        return None if task is None else task.to_json()

    def open_run(self, task_id: str, agent: str, epoch: int) -> str:
        with self._mapped():
            return self.board.open_execution(task_id, "chaos", agent=agent, epoch=epoch).id

    def heartbeat(self, task_id: str, agent: str, epoch: int) -> dict[str, Any]:
        with self._mapped():
            return self.board.heartbeat(task_id, agent, epoch=epoch).to_json()

    def progress(self, task_id: str, agent: str, epoch: int, note: str) -> dict[str, Any]:
        with self._mapped():
            return self.board.log_progress(task_id, agent, note, epoch=epoch).to_json()

    def close_run(self, run_id: str, agent: str, epoch: int, cost: float) -> dict[str, Any]:
        """The run's answer: `succeeded`, or as the board closed it when this is a late cost."""
        with self._mapped():
            closed = self.board.close_execution(
                run_id, "succeeded", agent=agent, epoch=epoch, cost_usd=cost, input_tokens=1000
            )
        return closed.to_json()

    def complete(self, task_id: str, agent: str, epoch: int, summary: str) -> dict[str, Any]:
        with self._mapped():
            return self.board.complete(task_id, agent, epoch=epoch, summary=summary).to_json()

    def in_review(self) -> list[str]:
        with self._mapped():
            return [task.id for task in self.board.list_tasks(status="in_review")]

    def approve(self, task_id: str, agent: str) -> None:
        with self._mapped():
            self.board.approve(task_id, agent)

    def reject(self, task_id: str, agent: str, reason: str) -> None:
        with self._mapped():
            self.board.reject(task_id, agent, reason)


class CliClient:
    """Every call a `kanban` process, exit codes read as the README tells a shell loop to."""

    def __init__(self) -> None:
        self.kanban = str(Path(sys.executable).parent / "kanban")

    def _run(self, *args: str, idle_ok: bool = False) -> Any:
        done = subprocess.run(
            [self.kanban, *args], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode == 0:
            return json.loads(done.stdout)
        if done.returncode == 3 and idle_ok:
            return None
        if done.returncode == 4:
            raise Busy(done.stderr.strip())
        if done.returncode == 2:
            error = json.loads(done.stderr.strip().splitlines()[-1])
            raise Refused(str(error.get("reason")), error)
        raise Unexpected(f"kanban {' '.join(args)} -> {done.returncode}: {done.stderr.strip()}")

    def claim_next(self, agent: str) -> dict[str, Any] | None:
        found = self._run("task", "claim-next", "--agent", agent, idle_ok=True)
        return found if found and found.get("id") else None

    def open_run(self, task_id: str, agent: str, epoch: int) -> str:
        run = self._run(
            "task",
            "exec",
            "start",
            task_id,
            "--executor",
            "chaos",
            "--agent",
            agent,
            "--epoch",
            str(epoch),
        )
        return str(run["id"])

    def heartbeat(self, task_id: str, agent: str, epoch: int) -> dict[str, Any]:
        return dict(
            self._run("task", "heartbeat", task_id, "--agent", agent, "--epoch", str(epoch))
        )

    def progress(self, task_id: str, agent: str, epoch: int, note: str) -> dict[str, Any]:
        return dict(
            self._run(
                "task",
                "log-progress",
                task_id,
                "--agent",
                agent,
                "--epoch",
                str(epoch),
                "--note",
                note,
            )
        )

    def close_run(self, run_id: str, agent: str, epoch: int, cost: float) -> dict[str, Any]:
        return dict(
            self._run(
                "task",
                "exec",
                "finish",
                run_id,
                "--status",
                "succeeded",
                "--agent",
                agent,
                "--epoch",
                str(epoch),
                "--cost",
                f"{cost:.4f}",
                "--input-tokens",
                "1000",
            )
        )

    def complete(self, task_id: str, agent: str, epoch: int, summary: str) -> dict[str, Any]:
        return dict(
            self._run(
                "task",
                "complete",
                task_id,
                "--agent",
                agent,
                "--epoch",
                str(epoch),
                "--summary",
                summary,
            )
        )

    def in_review(self) -> list[str]:
        return [str(task["id"]) for task in self._run("task", "list", "--status", "in_review")]

    def approve(self, task_id: str, agent: str) -> None:
        self._run("task", "approve", task_id, "--agent", agent)

    def reject(self, task_id: str, agent: str, reason: str) -> None:
        self._run("task", "reject", task_id, "--agent", agent, "--reason", reason)


class HttpClient:
    """The REST API of `kanban serve` (KANBAN_URL), answers read as its README says."""

    def __init__(self) -> None:
        import httpx

        token = os.environ.get("KANBAN_TOKEN")  # this agent's own token: the server knows who
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=os.environ["KANBAN_URL"], headers=headers, timeout=60)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import httpx

        try:
            answer = self.http.request(method, path, json=body)
        except httpx.TransportError as error:  # the server is gone (a restart test kills it)
            raise Busy(f"{type(error).__name__}: {error}") from None
        if answer.status_code == 204:
            return None
        if answer.status_code == 503:
            raise Busy(answer.text)
        doc = answer.json() if answer.content else {}
        if answer.status_code < 300 and doc.get("ok", True) is not False:
            return doc
        if 400 <= answer.status_code < 500 and isinstance(doc, dict) and doc.get("reason"):
            raise Refused(str(doc["reason"]), doc)
        raise Unexpected(f"{method} {path} -> {answer.status_code}: {answer.text[:500]}")

    def _task(self, doc: Any) -> dict[str, Any]:
        return dict(doc["task"])

    def claim_next(self, agent: str) -> dict[str, Any] | None:
        doc = self._call("POST", "/api/board/claim-next", {"agent": agent})
        return None if doc is None else self._task(doc)

    def open_run(self, task_id: str, agent: str, epoch: int) -> str:
        body = {"executorType": "chaos", "epoch": epoch}  # the agent is the token's
        return str(self._call("POST", f"/api/board/{task_id}/executions", body)["execution"]["id"])

    def heartbeat(self, task_id: str, agent: str, epoch: int) -> dict[str, Any]:
        body = {"agent": agent, "epoch": epoch}
        return self._task(self._call("POST", f"/api/board/{task_id}/heartbeat", body))

    def progress(self, task_id: str, agent: str, epoch: int, note: str) -> dict[str, Any]:
        body = {"agent": agent, "epoch": epoch, "note": note}
        return self._task(self._call("POST", f"/api/board/{task_id}/progress", body))

    def close_run(self, run_id: str, agent: str, epoch: int, cost: float) -> dict[str, Any]:
        body = {"status": "succeeded", "epoch": epoch, "costUsd": cost, "inputTokens": 1000}
        return dict(self._call("PATCH", f"/api/board/executions/{run_id}", body)["execution"])

    def complete(self, task_id: str, agent: str, epoch: int, summary: str) -> dict[str, Any]:
        body = {"agent": agent, "epoch": epoch, "summary": summary}
        return self._task(self._call("POST", f"/api/board/{task_id}/complete", body))

    def in_review(self) -> list[str]:
        doc = self._call("GET", "/api/board?status=in_review")
        return [str(task["id"]) for task in doc["tasks"]]

    def approve(self, task_id: str, agent: str) -> None:
        self._call("POST", f"/api/board/{task_id}/approve", {"agent": agent})

    def reject(self, task_id: str, agent: str, reason: str) -> None:
        self._call("POST", f"/api/board/{task_id}/reject", {"agent": agent, "reason": reason})


def client(surface: str) -> Any:
    return {"lib": LibClient, "cli": CliClient, "http": HttpClient}[surface]()


# -- the shared flags ----------------------------------------------------------------------------


class Flags:
    """One byte per worker slot in a file both sides map: IN_CALL | HOLDING."""

    def __init__(self, path: Path, slots: int | None = None) -> None:
        if slots is not None:
            path.write_bytes(bytes(slots))
        self._file = path.open("r+b")
        self._map = mmap.mmap(self._file.fileno(), 0)

    def get(self, slot: int) -> int:
        return self._map[slot]

    def set(self, slot: int, bits: int, on: bool) -> None:
        value = self._map[slot]
        self._map[slot] = (value | bits) if on else (value & ~bits)

    def clear(self, slot: int) -> None:
        self._map[slot] = 0

    def close(self) -> None:
        self._map.close()
        self._file.close()


# -- the agents ----------------------------------------------------------------------------------


class Agent:
    def __init__(self, args: argparse.Namespace) -> None:
        self.name: str = args.name
        self.slot: int | None = args.slot
        self.dir = Path(args.dir)
        self.surface: str = args.surface
        self.random = random.Random(os.getpid() ^ time.time_ns())
        self.flags = Flags(self.dir / "flags") if self.slot is not None else None
        log_path = self.dir / "logs" / f"{self.name}.jsonl"
        self.log = log_path.open("a", buffering=1)
        self.client = self.call_logged("open", None, None, lambda: client(self.surface))

    def stopping(self) -> bool:
        return (self.dir / "stop").exists()

    def draining(self) -> bool:
        return (self.dir / "drain").exists()

    def flag(self, bits: int, on: bool) -> None:
        if self.flags is not None and self.slot is not None:
            self.flags.set(self.slot, bits, on)

    def call_logged(
        self,
        verb: str,
        task: str | None,
        epoch: int | None,
        call: Callable[[], Any],
        *,
        lease_until: int | None = None,
    ) -> Any:
        """Run one board call inside the IN_CALL flag and log how it went. `lease_until` is the
        end of the lease this worker last saw for the task: a call started after it is late and
        must be refused."""
        self.flag(IN_CALL, True)
        started = now_ms()
        entry: dict[str, Any] = {
            "agent": self.name,
            "pid": os.getpid(),
            "surface": self.surface,
            "verb": verb,
            "task": task,
            "epoch": epoch,
            "t0": started,
        }
        if lease_until is not None:
            entry["leaseUntil"] = lease_until
            entry["late"] = started > lease_until
        try:
            result = call()
        except Refused as refused:
            entry["outcome"] = refused.reason
            raise
        except Busy:
            entry["outcome"] = "busy"
            raise
        except Exception as error:
            entry["outcome"] = "unexpected"
            entry["error"] = f"{type(error).__name__}: {error}"[:2000]
            raise
        else:
            # A run the board timed out takes its cost once, late (`Board._record_late`): money
            # spent is counted, the run stays as it closed and the task where it is. Data, not a
            # holder's write: the judge counts it apart.
            late_cost = verb == "close_run" and result.get("status") != "succeeded"
            entry["outcome"] = LATE_COST if late_cost else "ok"
            return result
        finally:
            entry["t1"] = now_ms()
            self.flag(IN_CALL, False)
            self.log.write(json.dumps(entry) + "\n")

    def retrying(
        self, verb: str, task: str | None, epoch: int | None, call: Callable[[], Any], **kwargs: Any
    ) -> Any:
        """`call_logged`, again after a busy answer (nothing was written)."""
        for attempt in range(BUSY_RETRIES):
            try:
                return self.call_logged(verb, task, epoch, call, **kwargs)
            except Busy:
                if attempt == BUSY_RETRIES - 1 or self.stopping():
                    raise
                time.sleep(self.random.uniform(0.05, 0.3))
        raise AssertionError("unreachable")

    def pause(self, low: float = 0.0, high: float = 0.03) -> None:
        time.sleep(self.random.uniform(low, high))


class Worker(Agent):
    def run(self) -> None:
        idle = 0.02
        while not self.stopping():
            try:
                task = self.retrying(
                    "claim_next", None, None, lambda: self.client.claim_next(self.name)
                )
            except (Refused, Busy):
                self.pause(0.05, 0.2)
                continue
            if task is None:
                time.sleep(idle)
                idle = min(idle * 2, 0.3)
                continue
            idle = 0.02
            self.flag(HOLDING, True)
            try:
                self.work(task)
            except (Refused, Busy):
                pass  # lost the task (a late call was refused, or the board stayed busy): next
            finally:
                self.flag(HOLDING, False)

    def work(self, task: dict[str, Any]) -> None:
        c, me = self.client, self.name
        task_id, epoch = str(task["id"]), int(task["claimEpoch"])
        lease = int(task["leaseUntil"])

        def step(verb: str, call: Callable[[], Any]) -> Any:
            return self.retrying(verb, task_id, epoch, call, lease_until=lease)

        self.pause()
        run_id = step("open_run", lambda: c.open_run(task_id, me, epoch))
        self.pause()
        lease = int(step("heartbeat", lambda: c.heartbeat(task_id, me, epoch))["leaseUntil"])
        self.pause()
        note = f"{me} (pid {os.getpid()}) half way"
        lease = int(step("progress", lambda: c.progress(task_id, me, epoch, note))["leaseUntil"])
        self.pause()
        cost = round(self.random.uniform(0.01, 0.5), 4)
        step("close_run", lambda: c.close_run(run_id, me, epoch, cost))
        self.pause()
        step("complete", lambda: c.complete(task_id, me, epoch, f"done by {me}"))


class Reviewer(Agent):
    REJECT_SHARE = 0.2

    def run(self) -> None:
        while not self.stopping():
            try:
                waiting = self.retrying("in_review", None, None, self.client.in_review)
            except (Refused, Busy):
                self.pause(0.05, 0.2)
                continue
            if not waiting:
                self.pause(0.05, 0.2)
                continue
            self.random.shuffle(waiting)
            for task_id in waiting[:5]:
                reject = not self.draining() and self.random.random() < self.REJECT_SHARE
                try:
                    if reject:
                        self.retrying(
                            "reject",
                            task_id,
                            None,
                            lambda t=task_id: self.client.reject(t, self.name, "not good enough"),
                        )
                    else:
                        self.retrying(
                            "approve",
                            task_id,
                            None,
                            lambda t=task_id: self.client.approve(t, self.name),
                        )
                except (Refused, Busy):
                    continue  # the other reviewer judged it first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos.fleet")
    parser.add_argument("role", choices=("worker", "reviewer"))
    parser.add_argument("--surface", choices=SURFACES, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--slot", type=int)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args(argv)
    agent = Worker(args) if args.role == "worker" else Reviewer(args)
    try:
        agent.run()
    except Unexpected as error:
        print(f"{args.name}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
