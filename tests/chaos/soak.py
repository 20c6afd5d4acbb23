"""The kill -9 soak: a fleet works one board while a killer and a freezer go through it.

    python -m tests.chaos.soak --seconds 600 --workers 12 --report soak.json
    python -m tests.chaos.soak --db postgresql://... --surfaces lib,cli,http

What runs (see `fleet` for the processes):

- N workers (default 12), their surfaces cycled over `--surfaces` (library, CLI, and HTTP clients of
  a `kanban serve` the soak starts), looping claim_next -> open a run -> heartbeat -> log_progress
  -> close the run -> complete; 2 reviewers approving or rejecting (a fifth of the time);
- a feeder (the operator) keeping twice as many tasks as workers waiting, in plans of ten with
  dependencies between them;
- a killer: every 0.2-1 s it SIGKILLs a random worker (its whole process group: a CLI worker's
  `kanban` child dies with it), half the time while the worker is inside a board call, and starts
  a replacement under the same name;
- a freezer: every 2-5 s it SIGSTOPs a worker that holds a task for longer than its lease, then
  SIGCONTs it, so its next call is late and must be refused.

Leases are short through configuration only (`KANBAN_LEASE_MS` for every process). After the soak
time the killer and freezer stop, reviewers stop rejecting, and the fleet drains the board. Then
the soak judges (see `judge`): every task done exactly once, every run closed (`succeeded`, or
`timed_out`/`cancelled` with a recovery tombstone), the event log replayed without a double holder,
a late write, or an early release, no late call a worker made accepted, no unexpected answer from
any surface, `PRAGMA integrity_check` ok and `kanban db check` clean. The JSON report carries the
figures docs/guarantees.md is written from (`tests.chaos.guarantees`).
"""

import argparse
import collections
import json
import os
import platform
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from boardlib import Board, BoardConfig, BoardError, PlanItem, Reason

from .fleet import HOLDING, IN_CALL, LATE_COST, SURFACES, Flags
from .replay import replay

REPO = Path(__file__).resolve().parents[2]
KANBAN = Path(sys.executable).parent / "kanban"
LATE_REFUSALS = frozenset({"stale_claim", "not_assignee", "invalid_state", "not_found"})
# A late close of a run the board timed out is its cost, counted once (fleet.LATE_COST): allowed.
LATE_ANSWERS = LATE_REFUSALS | {LATE_COST}


@dataclass
class SoakConfig:
    seconds: float = 60.0
    workers: int = 12
    surfaces: tuple[str, ...] = ("lib", "cli", "http")
    reviewers: int = 2
    lease_ms: int = 3000
    kill_every_s: tuple[float, float] = (0.2, 1.0)
    freeze_every_s: tuple[float, float] = (2.0, 5.0)
    freeze_beyond_lease_s: tuple[float, float] = (0.5, 1.5)
    # How long the freezer waits for a holder between two calls (the target whose next call is
    # late) before it freezes whoever is there: 0, it takes whoever is there at once.
    freeze_waits_for_holder_s: float = 0.0
    waiting_per_worker: int = 2
    drain_timeout_s: float = 300.0
    db: str | None = None  # a board file (default: board.db in the run folder) or a URL
    seed: int | None = None
    kill: bool = True  # the killer runs (the restart test kills the server instead)
    freeze: bool = True  # the freezer runs
    # Chaos enough to end the soak before `seconds` (all zero: the soak runs its whole time):
    # kills, kills inside a board call, and holders frozen past their lease and thawed.
    enough_kills: int = 0
    enough_kills_in_call: int = 0
    enough_late_thaws: int = 0

    def __post_init__(self) -> None:
        unknown = set(self.surfaces) - set(SURFACES)
        if unknown or not self.surfaces:
            raise ValueError(f"surfaces must be some of {', '.join(SURFACES)}")


@dataclass
class Member:
    name: str
    role: str
    surface: str
    slot: int | None
    popen: "subprocess.Popen[bytes]"
    frozen: bool = False
    incarnations: int = 1


@dataclass
class Tally:
    kills: int = 0
    kills_in_call: int = 0
    freezes: int = 0
    freezes_of_holders: int = 0
    late_thaws: int = 0  # holders frozen past their lease, thawed: their next call is late
    frozen_seconds: float = 0.0
    crashes: list[str] = field(default_factory=list)
    killed_at_stop: int = 0
    tasks_created: int = 0
    plans: int = 0


def _is_url(location: str) -> bool:
    return "://" in location


class Soak:
    def __init__(self, config: SoakConfig, folder: Path) -> None:
        self.config = config
        self.dir = folder
        (folder / "logs").mkdir(parents=True, exist_ok=True)
        self.db = config.db or str(folder / "board.db")
        self.random = random.Random(config.seed)
        self.tally = Tally()
        self.lock = threading.Lock()
        self.members: dict[str, Member] = {}
        self.stop_chaos = threading.Event()
        self.flags = Flags(folder / "flags", slots=max(config.workers, 1))
        self.server: subprocess.Popen[bytes] | None = None
        self.url: str | None = None
        self.env = {
            key: value for key, value in os.environ.items() if not key.startswith("KANBAN_")
        } | {
            "KANBAN_DB": self.db,
            "KANBAN_LEASE_MS": str(config.lease_ms),
            "KANBAN_EVENT_TTL_SECONDS": "none",
            "PYTHONPATH": str(REPO),
        }
        self.board_config = BoardConfig(lease_ms=config.lease_ms, event_ttl_seconds=None)

    # -- the fleet ------------------------------------------------------------------------------

    def spawn(self, name: str, role: str, surface: str, slot: int | None) -> Member:
        command = [
            sys.executable,
            "-m",
            "tests.chaos.fleet",
            role,
            "--surface",
            surface,
            "--name",
            name,
            "--dir",
            str(self.dir),
        ]
        if slot is not None:
            command += ["--slot", str(slot)]
        env = self.env
        if surface == "http":
            assert self.url is not None
            env = env | {"KANBAN_URL": self.url, "KANBAN_TOKEN": self.token(name)}
        with (self.dir / "logs" / f"{name}.err").open("ab") as errors:
            popen = subprocess.Popen(
                command,
                cwd=REPO,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                start_new_session=True,
            )
        return Member(name, role, surface, slot, popen)

    def start_fleet(self) -> None:
        surfaces = self.config.surfaces
        for index in range(self.config.workers):
            name = f"worker-{index + 1}"
            self.members[name] = self.spawn(name, "worker", surfaces[index % len(surfaces)], index)
        for index in range(self.config.reviewers):
            name = f"reviewer-{index + 1}"
            surface = surfaces[(index + 1) % len(surfaces)]
            self.members[name] = self.spawn(name, "reviewer", surface, None)

    def token(self, name: str) -> str:
        return f"chaos-{name}-" + "0123456789abcdef"

    def start_server(self, port: int = 0) -> None:
        """`kanban serve` on a free loopback port for the HTTP workers, with a token per agent:
        the server, not the request body, says who each HTTP worker is."""
        tokens = self.dir / "tokens"
        names = [f"worker-{i + 1}" for i in range(self.config.workers)]
        names += [f"reviewer-{i + 1}" for i in range(self.config.reviewers)]
        tokens.write_text("".join(f"{self.token(name)} agent:{name}\n" for name in names))
        tokens.chmod(0o600)
        self.server = subprocess.Popen(
            [str(KANBAN), "serve", "--port", str(port), "--tokens", str(tokens)],
            cwd=REPO,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=(self.dir / "logs" / "serve.err").open("ab"),
            start_new_session=True,
        )
        assert self.server.stdout is not None
        line = self.server.stdout.readline().decode()
        if not line:
            raise RuntimeError("kanban serve did not start: see logs/serve.err")
        self.url = str(json.loads(line)["listening"])

    def restart(self, member: Member) -> None:
        """A replacement under the same name (the caller holds the lock)."""
        if member.slot is not None:
            self.flags.clear(member.slot)
        fresh = self.spawn(member.name, member.role, member.surface, member.slot)
        fresh.incarnations = member.incarnations + 1
        self.members[member.name] = fresh

    def workers(self) -> list[Member]:
        return [m for m in self.members.values() if m.role == "worker"]

    # -- chaos ----------------------------------------------------------------------------------

    def killer(self) -> None:
        low, high = self.config.kill_every_s
        while not self.stop_chaos.wait(self.random.uniform(low, high)):
            with self.lock:
                candidates = [m for m in self.workers() if not m.frozen]
            if not candidates:
                continue
            target = self.random.choice(candidates)
            if self.random.random() < 0.5 and target.slot is not None:  # wait for a board call
                deadline = time.monotonic() + 1.0
                while time.monotonic() < deadline and not self.flags.get(target.slot) & IN_CALL:
                    time.sleep(0.001)
            with self.lock:
                member = self.members[target.name]
                if member is not target or member.frozen or member.popen.poll() is not None:
                    continue
                in_call = member.slot is not None and bool(self.flags.get(member.slot) & IN_CALL)
                os.killpg(member.popen.pid, signal.SIGKILL)
                member.popen.wait()
                self.tally.kills += 1
                self.tally.kills_in_call += in_call
                self.restart(member)

    def await_holder(self, seconds: float) -> None:
        """Up to `seconds` for a live worker that holds a task and is between two calls (its
        flags are written by the worker itself, so polling them costs the fleet nothing)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.stop_chaos.is_set():
            with self.lock:
                slots = [m.slot for m in self.workers() if m.popen.poll() is None]
            if any(
                s is not None and self.flags.get(s) & (HOLDING | IN_CALL) == HOLDING for s in slots
            ):
                return
            time.sleep(0.001)

    def freezer(self) -> None:
        low, high = self.config.freeze_every_s
        beyond_low, beyond_high = self.config.freeze_beyond_lease_s
        while not self.stop_chaos.wait(self.random.uniform(low, high)):
            self.await_holder(self.config.freeze_waits_for_holder_s)
            with self.lock:
                alive = [m for m in self.workers() if m.popen.poll() is None]
                holders = [
                    m
                    for m in alive
                    if m.slot is not None
                    and self.flags.get(m.slot) & HOLDING
                    and not self.flags.get(m.slot) & IN_CALL
                ]
                pool = holders or alive
                if not pool:
                    continue
                target = self.random.choice(pool)
                os.killpg(target.popen.pid, signal.SIGSTOP)
                target.frozen = True
                self.tally.freezes += 1
                self.tally.freezes_of_holders += bool(holders)
            frozen_for = self.config.lease_ms / 1000 + self.random.uniform(beyond_low, beyond_high)
            started = time.monotonic()
            cut_short = self.stop_chaos.wait(frozen_for)  # the drain thaws early rather than wait
            with self.lock:
                if target.popen.poll() is None:
                    os.killpg(target.popen.pid, signal.SIGCONT)
                target.frozen = False
                self.tally.frozen_seconds += time.monotonic() - started
                self.tally.late_thaws += bool(holders) and not cut_short

    def watch(self) -> None:
        """A fleet process that exited by itself crashed: note why, and replace it."""
        with self.lock:
            for member in list(self.members.values()):
                code = member.popen.poll()
                if code is None:
                    continue
                tail = (self.dir / "logs" / f"{member.name}.err").read_text(errors="replace")
                self.tally.crashes.append(f"{member.name} exited {code}: {tail[-800:]}")
                self.restart(member)

    def feed(self, board: Board) -> None:
        """Keep twice as many tasks waiting as there are workers, ten at a time, with
        dependencies inside each plan."""
        try:
            counts = board.status_counts()
        except BoardError:
            return
        waiting = counts.get("todo", 0) + counts.get("in_progress", 0)
        if waiting >= self.config.workers * self.config.waiting_per_worker:
            return
        batch = self.tally.plans
        items = [
            PlanItem(
                key=f"k{i}",
                title=f"chaos {batch}-{i}",
                priority=self.random.randint(0, 3),
                depends_on=(f"k{i - 3}",) if i % 3 == 0 and i else (),
            )
            for i in range(10)
        ]
        try:
            created = board.create_plan(items)
        except BoardError as error:
            if error.reason == Reason.BUSY:
                return
            raise
        self.tally.plans += 1
        self.tally.tasks_created += len(created)

    # -- the run --------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        started_at = datetime.now(UTC)
        load_before = os.getloadavg()
        board = Board(self.db, config=self.board_config, create=True)
        chaos: list[threading.Thread] = []
        try:
            if "http" in self.config.surfaces:
                self.start_server()
            self.feed(board)
            self.start_fleet()
            began = time.monotonic()
            chaos = [
                threading.Thread(target=target, name=f"chaos-{target.__name__}", daemon=True)
                for target, wanted in (
                    (self.killer, self.config.kill),
                    (self.freezer, self.config.freeze),
                )
                if wanted
            ]
            for thread in chaos:
                thread.start()
            while time.monotonic() - began < self.config.seconds and not self.enough():
                self.watch()
                self.feed(board)
                time.sleep(0.1)
            soaked = time.monotonic() - began
            self.stop_chaos.set()
            for thread in chaos:
                thread.join()
            (self.dir / "drain").touch()
            drained = self.drain(board)
            total = time.monotonic() - began
        finally:
            self.stop_chaos.set()
            self.stop_fleet()
            board.close()
        report = self.judge(drained=drained)
        report["figures"] |= {
            "soakSeconds": round(soaked, 1),
            "minutes": round(soaked / 60, 2),
            "totalSeconds": round(total, 1),
        }
        report["machine"] = {
            "cores": os.cpu_count(),
            "loadBefore": [round(x, 1) for x in load_before],
            "loadAfter": [round(x, 1) for x in os.getloadavg()],
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        }
        report["startedAt"] = started_at.isoformat(timespec="seconds")
        return report

    def enough(self) -> bool:
        """The chaos the config asks for has happened (never, when it asks for none)."""
        config, tally = self.config, self.tally
        wanted = (config.enough_kills, config.enough_kills_in_call, config.enough_late_thaws)
        return any(wanted) and (
            tally.kills >= config.enough_kills
            and tally.kills_in_call >= config.enough_kills_in_call
            and tally.late_thaws >= config.enough_late_thaws
        )

    def drain(self, board: Board) -> bool:
        deadline = time.monotonic() + self.config.drain_timeout_s
        while time.monotonic() < deadline:
            self.watch()
            try:
                counts = board.status_counts()
            except BoardError:
                counts = {}
            if counts and not any(n for status, n in counts.items() if status != "done"):
                return True
            time.sleep(0.2)
        return False

    def stop_fleet(self) -> None:
        (self.dir / "stop").touch()
        deadline = time.monotonic() + 30
        with self.lock:
            members = list(self.members.values())
        for member in members:
            if member.popen.poll() is None:
                os.killpg(member.popen.pid, signal.SIGCONT)
        for member in members:
            try:
                member.popen.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                os.killpg(member.popen.pid, signal.SIGKILL)
                member.popen.wait()
                self.tally.killed_at_stop += 1
        if self.server is not None:
            self.server.terminate()
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        self.flags.close()

    # -- the verdict ----------------------------------------------------------------------------

    def judge(self, *, drained: bool, leases: dict[str, int] | None = None) -> dict[str, Any]:
        """The verdict and figures of the run (see the module's docstring). `leases`: agents
        that claimed with a lease of their own (for the replay)."""
        with Board(
            self.db, config=self.board_config, reconcile_orphans=False, create=False
        ) as board:
            tasks = board.all_tasks()
            events = []
            cursor = 0
            while True:
                page = board.events(since=cursor, limit=1000)
                if not page:
                    break
                events += page
                cursor = page[-1].seq
            runs = [run for task in tasks for run in board.executions(task.id)]
        verdict = replay(events, lease_ms=self.config.lease_ms, leases=leases)
        calls = self.read_logs()

        not_done = sorted(task.id for task in tasks if task.status != "done")
        done_counts = verdict.done_counts
        not_once = sorted(tid for tid in (t.id for t in tasks) if done_counts.get(tid, 0) != 1)
        runs_by_status = collections.Counter(run.status for run in runs)
        running = sorted(run.id for run in runs if run.status == "running")
        untombstoned = sorted(
            run.id
            for run in runs
            if run.status != "succeeded" and not (run.recovery_tombstone and run.error)
        )
        late = [c for c in calls if c.get("late")]
        late_accepted = [c for c in late if c["outcome"] == "ok"]
        late_refused = collections.Counter(c["outcome"] for c in late if c["outcome"] != "ok")
        unexpected = [c for c in calls if c["outcome"] == "unexpected"]
        odd_late = sorted(set(late_refused) - LATE_ANSWERS - {"busy"})
        integrity = self.integrity()
        db_check = subprocess.run(
            [str(KANBAN), "db", "check"], env=self.env, capture_output=True, text=True, check=False
        )

        checks = {
            "drained": (drained, "every task reached done before the drain timeout"),
            "lost": (not not_done, f"tasks not done: {not_done[:20]}"),
            "doneExactlyOnce": (not not_once, f"tasks not done exactly once: {not_once[:20]}"),
            "runsClosed": (not running and not verdict.open_runs, f"running: {running[:20]}"),
            "tombstones": (
                not untombstoned,
                f"closed by recovery without a tombstone: {untombstoned[:20]}",
            ),
            "noDoubleHolder": (verdict.double_held == 0, verdict.violations[:10]),
            "noLateWriteInLog": (verdict.late_writes == 0, verdict.violations[:10]),
            "noEarlyRelease": (verdict.early_releases == 0, verdict.violations[:10]),
            "noLateCallAccepted": (not late_accepted, late_accepted[:10]),
            "lateCallsRefusedTyped": (not odd_late, f"late calls got {odd_late}"),
            "noUnexpected": (
                not unexpected and not self.tally.crashes,
                [c.get("error") for c in unexpected[:10]] + self.tally.crashes[:5],
            ),
            "integrityCheck": (integrity in ("ok", "n/a"), integrity),
            "dbCheck": (
                db_check.returncode == 0,
                db_check.stdout[-2000:] + db_check.stderr[-2000:],
            ),
            "chaosHappened": (
                (self.tally.kills > 0 or not self.config.kill)
                and (self.tally.freezes > 0 or not self.config.freeze),
                f"kills {self.tally.kills}, freezes {self.tally.freezes}",
            ),
        }
        surfaces = collections.Counter(c["surface"] for c in calls)
        figures = {
            "workers": self.config.workers,
            "reviewers": self.config.reviewers,
            "surfaces": dict(
                sorted(collections.Counter(m.surface for m in self.workers()).items())
            ),
            "leaseMs": self.config.lease_ms,
            "kills": self.tally.kills,
            "killsInsideACall": self.tally.kills_in_call,
            "freezes": self.tally.freezes,
            "freezesOfHolders": self.tally.freezes_of_holders,
            "lateThaws": self.tally.late_thaws,
            "tasks": len(tasks),
            "done": len(tasks) - len(not_done),
            "lost": len(not_done),
            "doneTwice": sum(1 for count in done_counts.values() if count > 1),
            "doubleHeld": verdict.double_held,
            "lateWritesAccepted": verdict.late_writes + len(late_accepted),
            "lateCallsRefused": dict(sorted(late_refused.items())),
            "claims": verdict.claims,
            "leaseExpiries": verdict.lease_expiries,
            "runs": dict(sorted(runs_by_status.items())),
            "calls": len(calls),
            "callsBySurface": dict(sorted(surfaces.items())),
            "busyAnswers": sum(1 for c in calls if c["outcome"] == "busy"),
            "crashes": len(self.tally.crashes),
            "killedAtStop": self.tally.killed_at_stop,
            "events": len(events),
        }
        return {
            "kind": "kanban-soak",
            "version": 1,
            "ok": all(ok for ok, _ in checks.values()),
            "config": {k: v for k, v in asdict(self.config).items() if k != "db"}
            | {"backend": "postgres" if _is_url(self.db) else "sqlite"},
            "figures": figures,
            "checks": {
                name: {"ok": ok, **({} if ok else {"detail": detail})}
                for name, (ok, detail) in checks.items()
            },
        }

    def read_logs(self) -> list[dict[str, Any]]:
        calls: list[dict[str, Any]] = []
        for log in sorted((self.dir / "logs").glob("*.jsonl")):
            for line in log.read_text().splitlines():
                try:
                    calls.append(json.loads(line))
                except ValueError:
                    continue  # the last line of a worker killed while writing it
        return calls

    def integrity(self) -> str:
        if _is_url(self.db):
            return "n/a"
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
        finally:
            conn.close()
        return "; ".join(str(row[0]) for row in rows)


def run_soak(config: SoakConfig, folder: Path | None = None) -> dict[str, Any]:
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="chaos-soak-"))
    return Soak(config, folder).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.chaos.soak",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=12)
    parser.add_argument("--surfaces", default="lib,cli,http")
    parser.add_argument("--lease-ms", type=int, default=3000)
    parser.add_argument("--db", help="board file or URL (default: a new file in --dir)")
    parser.add_argument("--dir", type=Path, help="run folder (default: a new temp folder)")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--report", type=Path, help="write the JSON report here")
    args = parser.parse_args(argv)
    config = SoakConfig(
        seconds=args.seconds,
        workers=args.workers,
        surfaces=tuple(args.surfaces.split(",")),
        lease_ms=args.lease_ms,
        db=args.db,
        seed=args.seed,
    )
    report = run_soak(config, args.dir)
    text = json.dumps(report, indent=2)
    if args.report:
        args.report.write_text(text + "\n")
    print(text)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
