"""The verification gate: the builder is not the judge.

It runs the task's verify command in its worktree (with a timeout, in its own process group; task
text never reaches the command), records the typed verdict, and moves the task: pass -> done, fail
-> back to the builder until the attempt budget, then blocked; no command -> `completed_with_debt`.
Where the command comes from and what debt means: docs/architecture.md#the-verification-gate
"""

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .. import transitions as t
from .. import validation as validate
from ..actors import GATE, OPERATOR
from ..errors import BoardError, Reason, wrong_state
from ..leases import beating
from ..processes import EXITED_STATES, dying_with_parent, group_token, orphaned_group, stat_fields
from .gitrepo import GIT_LOCATION_VARIABLES
from .results import name_files
from .sor import (
    HANDOFF_JSON,
    INIT_SH,
    append_verification_entry,
    commands_from_init,
    parse_handoff,
    read_sor_file,
)

if TYPE_CHECKING:
    from ..board import Board
    from ..models import DeterministicResult, VerificationResult
    from ..records import Task

GATE_ACTOR = GATE  # declared in boardlib.actors
# Why an empty complete's workspace is archived: landing reads it back to say "empty", not "gone".
EMPTY_DIFF_REMOVED = "empty diff: worktree and branch removed"
DEFAULT_TIMEOUT_S = 600.0
TAIL_CHARS = 4000  # of stdout and stderr kept in the verdict
COMMENT_TAIL_CHARS = 1500
COMMENT_MAX = 18_000  # below the board's comment limit
KILL_GRACE_S = 2.0
GATE_MARGIN_MS = 60_000  # the commit before the command, the record and comment after it


# How often a running gate says it lives (`Board.gate_beat`: one small write, no event): a reader
# on another machine takes a gate that missed three beats for dead (`attention.gate_since`), a
# minute after a kill -9 rather than at its bound (the verify timeout and a minute). Set by
# KANBAN_GATE_BEAT_S (a test beats faster). Why this figure: docs/worktrees.md
GATE_BEAT_S = 20.0


def gate_bound_ms(timeout_s: float) -> int:
    """How long a gate may run, all told: past it a reader takes it for dead (on another machine,
    where its process cannot be seen) and the task waits on a person again."""
    return int(timeout_s * 1000) + int(2 * KILL_GRACE_S * 1000) + GATE_MARGIN_MS


def gate_beating(board: "Board", task_id: str, every_s: float) -> "AbstractContextManager[None]":
    """Beat for the gate judging `task_id` from a thread, every `every_s` seconds, while the
    block runs (the commit before the command and the record after it too). A failed beat is
    skipped: the next may pass, and a gate that cannot write cannot record its verdict either."""

    def beat() -> bool:
        try:
            return board.gate_beat(task_id)  # False: its verdict is in, or it moved
        except Exception:
            return True

    return beating(every_s, beat, f"gate-beat-{task_id}")


HANDOFF = "handoff"
INIT_SH_SOURCE = "init.sh"


@dataclass(frozen=True, slots=True)
class VerifyCommand:
    """The command the gate will run, where it came from (`handoff` or `init.sh`), who wrote it
    (the builder, or `operator` for the command fixed at provision time), and what made reading
    it awkward."""

    command: str | None
    source: str | None
    warnings: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)  # the handoff's brokenOrUnverified
    handoff_from: str | None = None
    author: str | None = None
    verify_from: str = "builder"

    def describe(self) -> str:
        """`the handoff, written by alice` / `init.sh, fixed at provision by the operator`."""
        where = "the handoff" if self.source == HANDOFF else "init.sh"
        if self.author == OPERATOR:
            return f"{where}, fixed at provision by the operator"
        return f"{where}, written by {self.author}" if self.author else where


def find_verify_command(
    worktree: Path,
    *,
    verify_from: str = "builder",
    provisioned: str | None = None,
    builder: str | None = None,
) -> VerifyCommand:
    """The command the gate runs, by the board's policy (`BoardConfig.verify_from`):

    - `builder` (the default, seed 003): the handoff's `commands.verify` when set, else the
      worktree's `init.sh` `VERIFY_CMD`. The builder may thereby choose its own judge; the verdict
      says so (`commandSource`, `commandAuthor`).
    - `operator`: only the `VERIFY_CMD` of `provisioned`, the `init.sh` text of the scaffold
      commit (fixed at provision from the operator's setting), can promote to done; the handoff's
      command and edits to the worktree's `init.sh` are ignored, with a warning. No such command:
      no command (the gate records `completed_with_debt`).

    `provisioned` also tells who wrote the worktree's `VERIFY_CMD` under the builder policy: the
    operator when it is still the provision-time command, else the builder."""
    return find_verify_command_from(
        lambda name: read_sor_file(worktree, name),
        verify_from=verify_from,
        provisioned=provisioned,
        builder=builder,
    )


def find_verify_command_from(
    read: Callable[[str], str | None],
    *,
    verify_from: str = "builder",
    provisioned: str | None = None,
    builder: str | None = None,
) -> VerifyCommand:
    """`find_verify_command` over any source of SoR texts (a live folder, a branch's files: a
    landing reads a paused task's command from its branch)."""
    handoff, warnings = parse_handoff(read(HANDOFF_JSON))
    broken = list(handoff["brokenOrUnverified"]) if handoff else []
    handoff_from = handoff["handoffFrom"] if handoff else None
    handoff_verify = handoff["commands"]["verify"] if handoff else ""
    commands, init_warnings = commands_from_init(read(INIT_SH))
    warnings += init_warnings
    fixed = commands_from_init(provisioned)[0]["verify"] if provisioned is not None else None

    def found(
        command: str | None, source: str | None = None, author: str | None = None
    ) -> VerifyCommand:
        return VerifyCommand(
            command, source, warnings, broken, handoff_from, author, verify_from=verify_from
        )

    if verify_from == "operator":
        if handoff_verify:
            warnings.append(
                f"the handoff's commands.verify ({handoff_verify!r}) was not run: under "
                "KANBAN_VERIFY_FROM=operator only the command fixed at provision time judges"
            )
        if commands["verify"] and commands["verify"] != (fixed or ""):
            warnings.append(
                f"init.sh's VERIFY_CMD was changed in the worktree ({commands['verify']!r}); "
                "the command fixed at provision time runs instead"
            )
        return found(fixed, INIT_SH_SOURCE, OPERATOR) if fixed else found(None)
    if handoff_verify:
        return found(handoff_verify, HANDOFF, handoff_from or builder)
    if commands["verify"]:
        if fixed is not None and commands["verify"] == fixed:
            return found(commands["verify"], INIT_SH_SOURCE, OPERATOR)
        return found(commands["verify"], INIT_SH_SOURCE, builder)
    return found(None)


def _tail(handle: BinaryIO, chars: int) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - chars * 4))
    text = handle.read().decode("utf-8", errors="replace")
    return text[-chars:]


def _group_running(group: int) -> bool:
    """Whether a process of `group` still runs. A killed orphan stays a zombie until init reaps
    it, and signal 0 counts zombies, so on Linux their state is read in /proc."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(entry.name)  # empty when gone meanwhile
        if len(fields) > 2 and fields[2] == str(group) and fields[0] not in EXITED_STATES:
            return True
    return False


def _stop_leftovers(group: int) -> bool:
    """Stop what runs in a command's process group: at its timeout the whole of it, once it
    exits what it left running (a server or watcher it started in the background). SIGTERM,
    then SIGKILL after the grace; a shell we have not reaped yet counts as stopped (a zombie).
    Whether anything was running."""
    if not _group_running(group):
        return False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + KILL_GRACE_S
        while time.monotonic() < deadline:
            if not _group_running(group):
                return True
            time.sleep(0.02)
    return True


def _group_record(cwd: Path) -> Path:
    """Where the process group of a verify command running in `cwd` is written: beside the
    checkout, never in it (a landing's scratch checkout, a task's worktree)."""
    return cwd.parent / f".{cwd.name}.verify-group"


def stop_orphaned_verify(cwd: Path) -> bool:
    """Stop what a verify command in `cwd` left running when the process that ran it was killed
    (kill -9 of a lander or a gate): it would go on writing in a checkout the next run reuses.
    Whether anything was stopped. A record whose starter still runs is its own to finish."""
    record = _group_record(cwd)
    try:
        group = orphaned_group(record.read_text())
    except (OSError, UnicodeDecodeError):
        return False
    stopped = group is not None and _stop_leftovers(group)
    if group is not None:
        with contextlib.suppress(OSError):
            record.unlink(missing_ok=True)
    return stopped


@dataclass(frozen=True, slots=True)
class VerifyRun:
    """One run of a verify command, as it ended: plain data, so that a landing, which only reads
    it, does not import the pydantic models (about 135 ms of a lander process's first landing).
    The gate records it as the verdict's `DeterministicResult` (the same fields: a test holds
    the two equal)."""

    command: str
    exit_code: int | None
    passed: bool
    stdout_tail: str = ""
    stderr_tail: str = ""
    duration_ms: int = 0
    timed_out: bool = False

    def recorded(self) -> "DeterministicResult":
        from ..models import DeterministicResult

        return DeterministicResult(**asdict(self))


# What the verify command's shell runs first: wait for the line its starter writes once the
# command's group is recorded, then take /dev/null as its stdin. A starter killed between the
# spawn and the record (the command already running, a background child of it outliving the
# shell) left a group no later run could stop, holding a scratch checkout's lock; now the pipe
# closes with the starter and the shell ends before the command runs.
AFTER_RECORD = "read -r _ || exit 125; exec </dev/null; "


def run_verify_command(
    command: str,
    cwd: Path,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: dict[str, str] | None = None,
    pass_fds: Collection[int] = (),
) -> VerifyRun:
    """Run `command` with `bash -c` in `cwd` (its own session, stdin closed, output to nameless
    temporary files, so a chatty or hung command cannot stall us and a kill -9 leaves none of
    them); kill its process group at the timeout, and stop what it left running once it is
    done: nothing it started outlives the verdict (it would hold the checkout, its files and
    `pass_fds`). `pass_fds` stay open in the command (a
    landing's scratch-checkout lock, held while it runs). The command dies with this process
    (`dying_with_parent`), and its group is recorded beside `cwd` before it starts (`AFTER_RECORD`)
    and while it runs, so the next run in `cwd` stops what a killed run's command started
    (`stop_orphaned_verify`)."""
    stop_orphaned_verify(cwd)
    shell = shutil.which("bash") or "/bin/sh"
    environment = {
        key: value for key, value in os.environ.items() if key not in GIT_LOCATION_VARIABLES
    }
    environment.update(env or {})
    started = time.monotonic()
    # Files without a name (O_TMPFILE, or unlinked as soon as made): a run killed with -9 leaves
    # nothing behind, where a named folder stayed in /tmp for good, one per killed run.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        argv, preexec = dying_with_parent([shell, "-c", AFTER_RECORD + command])
        go_read, go_write = os.pipe()
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=environment,
                stdin=go_read,
                stdout=out,
                stderr=err,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
                preexec_fn=preexec,
            )
        except OSError as error:
            os.close(go_write)
            return VerifyRun(
                command=command,
                exit_code=None,
                passed=False,
                stderr_tail=f"could not start the verify command: {error}",
                duration_ms=int((time.monotonic() - started) * 1000),
            )
        finally:
            os.close(go_read)
        record = _group_record(cwd)
        with contextlib.suppress(OSError):
            record.write_text(group_token(process.pid))
        with contextlib.suppress(OSError):  # the command starts now (`AFTER_RECORD`)
            os.write(go_write, b"\n")
        os.close(go_write)
        timed_out = False
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        # the group, the shell with it at the timeout, or what it left running: one way
        left_running = _stop_leftovers(process.pid)
        process.wait()
        with contextlib.suppress(OSError):
            record.unlink(missing_ok=True)
        duration_ms = int((time.monotonic() - started) * 1000)
        stderr_tail = _tail(err, TAIL_CHARS)
        note = None
        if timed_out:
            note = f"[kanban: timed out after {timeout_s:g} s; the process group was killed]"
        elif left_running:
            note = "[kanban: the command left processes running; they were stopped]"
        if note:
            stderr_tail = f"{stderr_tail.rstrip()}\n{note}".lstrip()[-TAIL_CHARS:]
        return VerifyRun(
            command=command,
            exit_code=None if timed_out else process.returncode,
            passed=not timed_out and process.returncode == 0,
            stdout_tail=_tail(out, TAIL_CHARS),
            stderr_tail=stderr_tail,
            duration_ms=duration_ms,
            timed_out=timed_out,
        )


def judge(
    previous: "VerificationResult | None",
    deterministic: "DeterministicResult | None",
    *,
    now: int,
    found: VerifyCommand,
) -> "VerificationResult":
    """The new verdict: earlier attempts (and reviews) kept, this run appended, debt recomputed."""
    from ..models import DebtNote, VerificationAttempt, VerificationResult

    attempts = list(previous.attempts) if previous else []
    reviews = list(previous.reviews) if previous else []
    debt: list[DebtNote] = []
    if deterministic is None:
        if found.verify_from == "operator":
            why = "no verify command was fixed at provision time (the repository's git config "
            why += "kanban.verify or the board's KANBAN_VERIFY_CMD), and under "
            why += "KANBAN_VERIFY_FROM=operator nothing else may judge the work"
        else:
            why = "no verify command is configured (AGENT_HANDOFF.json commands.verify or init.sh"
            why += " VERIFY_CMD), so the gate cannot judge the work"
        if found.warnings:
            why += f"; {'; '.join(found.warnings)}"
        debt.append(DebtNote(criterion="deterministic verification", severity="high",
                             justification=why))  # fmt: skip
        status = "completed_with_debt"
    else:
        attempts.append(
            VerificationAttempt(
                attempt=len(attempts) + 1,
                at=now,
                deterministic=deterministic,
                status="pass" if deterministic.passed else "fail",
                source=found.source,
                author=found.author,
            )
        )
        if not deterministic.passed:
            status = "fail"
        elif found.broken:
            who = found.handoff_from or "the builder"
            debt = [
                DebtNote(criterion=item[:500], severity="medium",
                         justification=f"listed as broken or unverified in the handoff by {who}")
                for item in found.broken
            ]  # fmt: skip
            status = "completed_with_debt"
        else:
            status = "pass"
    return VerificationResult(
        status=status,
        attempts=attempts,
        debt_notes=debt,
        reviews=reviews,
        updated_at=now,
        command_source=found.source,
        command_author=found.author,
        verify_from=found.verify_from,
    )


# What moves a task the gate blocked for want of a verify command. A complete on a blocked task
# re-runs nothing and nobody holds it, so neither its builder's complete nor its unblock can (the
# reason said "complete again", and the refusals pointed at each other).
AGAIN = (
    "an operator unblocks it, then an agent claims it, sets "
    "commands.verify in AGENT_HANDOFF.json or VERIFY_CMD in init.sh and completes again; or an "
    "operator overrides"
)


@dataclass(frozen=True, slots=True)
class Route:
    """Where the verdict sends the task, and why (the blocked reason when blocked)."""

    target: str
    reason: str
    attempts_left: int


def route(verdict: "VerificationResult", budget: int) -> Route:
    if verdict.status == "pass":
        return Route(t.DONE, "verification passed", 0)
    if verdict.status == "completed_with_debt":
        notes = "; ".join(note.criterion[:120] for note in verdict.debt_notes[:3])
        if len(verdict.debt_notes) > 3:
            notes += f"; and {len(verdict.debt_notes) - 3} more"
        if verdict.promotable:
            reason = (
                f"verification passed with debt ({notes}); an operator reviews the debt, then "
                "moves the task on (in_progress -> done needs no override)"
            )
        elif verdict.verify_from == "operator":
            reason = (
                "verification could not judge the work: no verify command was fixed at provision "
                "time (KANBAN_VERIFY_FROM=operator); an operator sets the repository's git config "
                "kanban.verify or KANBAN_VERIFY_CMD for new worktrees, or overrides"
            )
        else:
            reason = (
                f"verification could not judge the work: no verify command is configured; {AGAIN}"
            )
        return Route(t.BLOCKED, reason, 0)
    failed = len(verdict.attempts)
    left = max(0, budget - failed)
    if left > 0:
        return Route(t.IN_PROGRESS, f"verification failed (attempt {failed}/{budget})", left)
    return Route(
        t.BLOCKED,
        f"verification failed {failed} time(s), the attempt budget of {budget} is spent; "
        "an operator decides (fix and unblock, or override)",
        0,
    )


@dataclass(frozen=True, slots=True)
class GateOutcome:
    """What one gate run decided and did."""

    verdict: "VerificationResult"
    task: "Task"  # the task after the gate's move (or as found, if someone moved it meanwhile)
    route: Route
    command: VerifyCommand
    recorded: bool  # False when the task had left in_review before the verdict could be stored

    def to_json(self) -> dict[str, Any]:
        return {
            "verified": self.verdict.status,
            "verification": self.verdict.to_json(),
            "taskStatus": self.task.status,
            "recorded": self.recorded,
            "attemptsLeft": self.route.attempts_left,
            "command": self.command.command,
            "commandSource": self.command.source,
            "commandAuthor": self.command.author,
            "verifyFrom": self.command.verify_from,
            "warnings": self.command.warnings,
        }


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.1f} s"


def _ending(result: "DeterministicResult") -> str:
    if result.timed_out:
        return f"timed out after {_seconds(result.duration_ms)} and was killed"
    if result.exit_code is None:
        return "could not be started"
    return f"exited {result.exit_code} after {_seconds(result.duration_ms)}"


def _fence(text: str) -> str:
    body = text.rstrip() or "(empty)"
    return f"~~~~\n{body.replace('~~~~', '~ ~ ~ ~')}\n~~~~"


def journal_entry(
    verdict: "VerificationResult", found: VerifyCommand, worktree: Path, at_iso: str
) -> str:
    """The human summary appended to VERIFICATION.md."""
    last = verdict.attempts[-1] if verdict.attempts else None
    result = last.deterministic if last is not None else None
    if found.command is None or result is None:
        notes = "\n".join(f"- {note.justification}" for note in verdict.debt_notes)
        return f"## Gate run ({at_iso}): {verdict.status}\n\n{notes}\n"
    assert last is not None
    lines = [
        f"## Attempt {last.attempt} ({at_iso}): {verdict.status}",
        "",
        f"- Command: `{found.command}` (from {found.describe()})",
        f"- Result: {_ending(result)}",
        f"- Reproduce: `cd {shlex.quote(str(worktree))} && {found.command}`",
    ]
    lines += [f"- Debt: {note.criterion} ({note.justification})" for note in verdict.debt_notes]
    lines += ["", "stdout (tail):", _fence(result.stdout_tail)]
    lines += ["", "stderr (tail):", _fence(result.stderr_tail), ""]
    return "\n".join(lines)


def comment_body(
    verdict: "VerificationResult", found: VerifyCommand, worktree: Path, outcome: str
) -> str:
    """The system comment: what happened, what failed, the tail, how to reproduce."""
    last = verdict.attempts[-1] if verdict.attempts else None
    result = last.deterministic if last is not None else None
    if found.command is None or result is None or last is None:
        notes = " ".join(note.justification for note in verdict.debt_notes)
        return _capped(f"Verification gate: {verdict.status}. {notes}. {outcome}")
    parts = [
        f"Verification gate, attempt {last.attempt}: {verdict.status}. "
        f"`{found.command}` (from {found.describe()}) {_ending(result)}. {outcome}"
    ]
    if verdict.debt_notes:
        parts.append("Debt: " + "; ".join(note.criterion[:200] for note in verdict.debt_notes))
    if not result.passed:
        tail = (result.stderr_tail.strip() or result.stdout_tail.strip())[-COMMENT_TAIL_CHARS:]
        parts.append(f"Output (tail):\n{_fence(tail)}")
    parts.append(f"Reproduce: cd {shlex.quote(str(worktree))} && {found.command}")
    return _capped("\n\n".join(parts))


def _capped(text: str, limit: int = COMMENT_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 20].rstrip() + "\n[... truncated]"


def run_gate(
    board: "Board",
    task_id: str,
    worktree: Path,
    *,
    builder: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    budget: int | None = None,
    provisioned_init: str | None = None,
    runtime: str | None = None,
) -> GateOutcome:
    """Judge the work of an in_review task in `worktree`: run, record, journal, comment, move.
    `provisioned_init` is `init.sh` as the scaffold commit has it (the operator's command, see
    `find_verify_command`). `runtime`: the builder's, which failed work goes back to it in. The
    caller serialises access to the worktree (the worktree lock)."""
    from ..models import iso_timestamp, parse_verdict

    timeout_s = validate.positive_number(timeout_s, "timeout", unit="seconds")
    budget = board.config.verification_attempt_budget if budget is None else budget
    task = board.get_task(task_id)
    if task.status != t.IN_REVIEW:
        raise wrong_state("run the verification gate", task.status, t.IN_REVIEW, id=task_id)
    builder = builder or task.builder
    previous = None
    if task.verification:
        try:
            previous = parse_verdict(task.verification)
        except ValueError:
            previous = None  # an unreadable verdict is replaced, not extended
    found = find_verify_command(
        worktree,
        verify_from=board.config.verify_from,
        provisioned=provisioned_init,
        builder=builder,
    )
    attempt = len(previous.attempts) + 1 if previous else 1
    deterministic = None
    left_behind: list[str] = []
    if found.command is not None:
        # What the command leaves (`__pycache__`, coverage files, build output) is not the
        # builder's work: it is removed, or it would join the diff under review and land.
        from . import gitrepo  # git on first use: importing the package does not pay for it

        untracked_before = gitrepo.untracked_files(worktree)
        deterministic = run_verify_command(
            found.command,
            worktree,
            timeout_s=timeout_s,
            env={
                "KANBAN_TASK_ID": task_id,
                "KANBAN_WORKTREE": str(worktree),
                "KANBAN_VERIFY_ATTEMPT": str(attempt),
            },
        ).recorded()
        left_behind = gitrepo.remove_created(worktree, untracked_before)
    now = board.now()
    verdict = judge(previous, deterministic, now=now, found=found)
    plan = route(verdict, budget)
    if plan.target == t.IN_PROGRESS and not builder:
        plan = Route(t.BLOCKED, f"{plan.reason}; no builder to hand it back to", 0)

    # The journal is a courtesy copy for the worktree's next reader; the board holds the record.
    with contextlib.suppress(OSError):
        append_verification_entry(
            worktree, journal_entry(verdict, found, worktree, iso_timestamp(now))
        )

    summary = (
        f"attempt {attempt}: {verdict.status}"
        + (f" ({_ending(deterministic)})" if deterministic else " (no verify command)")
        + f" -> {plan.target}"
    )
    holder = builder if plan.target == t.IN_PROGRESS else None
    try:
        moved, refusal = board.record_gate_verdict(
            task_id, verdict.dumps(), plan.target, detail=summary, holder=holder,
            holder_runtime=runtime if holder else None,
            reason=None if plan.target == t.DONE else plan.reason,
        )  # fmt: skip
    except BoardError as error:
        if error.reason != Reason.INVALID_STATE:
            raise
        current = board.get_task(task_id)
        board.add_comment(
            task_id,
            f"Verification gate finished ({verdict.status}) after {task_id} had already moved to "
            f"{current.status}; the verdict was not recorded.",
            author_agent_id=GATE_ACTOR,
            author_type="system",
        )
        return GateOutcome(verdict, current, plan, found, recorded=False)

    if refusal is not None:
        outcome = f"Could not move the task ({refusal.message}); it is {moved.status}."
    elif plan.target == t.IN_PROGRESS:
        outcome = (
            f"Back to in_progress for {builder} ({plan.attempts_left} attempt(s) left; "
            f"claim epoch {moved.claim_epoch})."
        )
    elif plan.target == t.DONE:
        outcome = "Moved to done."
    else:
        outcome = f"Blocked: {plan.reason}."
    if left_behind:
        outcome += (
            f" Removed what the verify command left in the worktree, untracked: "
            f"{name_files(left_behind)} (add them to .gitignore to keep them)."
        )
    board.add_comment(
        task_id,
        comment_body(verdict, found, worktree, outcome),
        author_agent_id=GATE_ACTOR,
        author_type="system",
    )
    return GateOutcome(verdict, moved, plan, found, recorded=True)
