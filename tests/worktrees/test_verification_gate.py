"""The verification gate on its own: running the command, judging, routing, recording."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib.models import DeterministicResult, VerificationResult, parse_verdict
from boardlib.worktrees.gate import (
    TAIL_CHARS,
    VerifyCommand,
    VerifyRun,
    find_verify_command,
    judge,
    route,
    run_gate,
    run_verify_command,
)


def test_a_verify_run_is_recorded_field_for_field() -> None:
    """A run (plain data, what a landing reads) and its record in the verdict (the model) have
    the same fields, so the gate's record loses nothing."""
    assert list(DeterministicResult.model_fields) == [f for f in VerifyRun.__dataclass_fields__]
    run = VerifyRun("c", 3, False, "out", "err", 12, True)
    assert run.recorded() == DeterministicResult(
        command="c", exit_code=3, passed=False, stdout_tail="out", stderr_tail="err",
        duration_ms=12, timed_out=True,
    )  # fmt: skip


def test_pass_fail_and_output_tails(tmp_path):
    ok = run_verify_command("echo hello; echo oops >&2", tmp_path, timeout_s=10)
    assert ok.passed and ok.exit_code == 0 and not ok.timed_out
    assert ok.stdout_tail == "hello\n" and ok.stderr_tail == "oops\n"
    bad = run_verify_command("exit 7", tmp_path, timeout_s=10)
    assert not bad.passed and bad.exit_code == 7
    chatty = run_verify_command("seq 1 200000", tmp_path, timeout_s=30)
    assert len(chatty.stdout_tail) == TAIL_CHARS and chatty.stdout_tail.endswith("200000\n")


def test_a_timeout_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = run_verify_command(f"sleep 60 & echo $! > {pid_file}; wait", tmp_path, timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert result.timed_out and result.exit_code is None and not result.passed
    assert "timed out" in result.stderr_tail
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        # A zombie child of a dead shell is reaped by init; give it a moment.
        time.sleep(0.05)
    else:
        stat = Path(f"/proc/{child}/stat")
        assert stat.exists() and stat.read_text().split()[2] == "Z", "grandchild still running"


def test_what_a_finished_command_left_running_is_stopped(tmp_path):
    """`npm run dev &` in a verify command outlived the verdict, running in the checkout (a
    landing's scratch one, holding its lock) after it was judged."""
    pid_file = tmp_path / "server.pid"
    result = run_verify_command(
        f"sleep 60 & echo $! > {pid_file}; echo tested", tmp_path, timeout_s=10
    )
    assert result.passed and result.stdout_tail.strip() == "tested"
    assert "left processes running; they were stopped" in result.stderr_tail
    child = int(pid_file.read_text())
    stat = Path(f"/proc/{child}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    clean = run_verify_command("echo tested", tmp_path, timeout_s=10)
    assert clean.passed and clean.stderr_tail == ""


def test_the_command_starts_only_once_its_group_is_recorded(tmp_path):
    """A lander killed -9 between spawning its verify command and recording the command's group
    (CI: the command had already started a background child) left a group no later landing could
    stop, holding a scratch checkout's lock. strace holds the starter's opening of the record for
    a second: the command's first instruction must still find the record written."""
    from tests.pg_cluster import in_ci

    strace = shutil.which("strace")
    if strace is None:
        assert not in_ci(), "CI must have strace (.ci/run installs it)"
        pytest.skip("strace is not installed")
    checkout = tmp_path / "scratch"
    checkout.mkdir()
    record = tmp_path / ".scratch.verify-group"
    starter = (
        "import sys; from pathlib import Path; "
        "from boardlib.worktrees.gate import run_verify_command; "
        "r = run_verify_command(sys.argv[1], Path(sys.argv[2]), timeout_s=30); "
        "print(r.stdout_tail.strip())"
    )
    command = f"test -e {record} && echo recorded || echo early"
    done = subprocess.run(
        [strace, "-f", "-qq", "-o", os.devnull, "-e", "trace=openat", "-P", str(record),
         "-e", "inject=openat:delay_enter=1000000", sys.executable, "-c", starter, command,
         str(checkout)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "recorded"


def test_a_run_killed_mid_command_leaves_no_files_behind(tmp_path):
    """Found after a day of CI: each verify run killed -9 (the chaos tests kill landers) left
    its output folder, `kanban-verify-*`, in /tmp for good (38 of them). The starter runs here
    with a temporary folder of its own; killed while its command runs, then a second run in the
    same checkout: nothing is left in that folder, nor beside the checkout."""
    temp, checkout = tmp_path / "tmp", tmp_path / "scratch"
    temp.mkdir()
    checkout.mkdir()
    started = tmp_path / "started"
    starter = (
        "import sys; from pathlib import Path; "
        "from boardlib.worktrees.gate import run_verify_command; "
        "run_verify_command(sys.argv[1], Path(sys.argv[2]), timeout_s=60)"
    )
    env = {**os.environ, "TMPDIR": str(temp)}
    command = f"echo some output; echo more >&2; touch {started}; sleep 60"
    process = subprocess.Popen([sys.executable, "-c", starter, command, str(checkout)], env=env)
    try:
        deadline = time.monotonic() + 30
        while not started.exists():
            assert process.poll() is None and time.monotonic() < deadline, "never started"
            time.sleep(0.02)
    finally:
        process.kill()
        process.wait()
    record = tmp_path / ".scratch.verify-group"
    assert record.exists()  # what the second run needs to stop the orphaned `sleep`
    again = subprocess.run(
        [sys.executable, "-c", starter, "echo again", str(checkout)], env=env, timeout=60
    )
    assert again.returncode == 0
    assert sorted(path.name for path in temp.iterdir()) == []
    assert sorted(path.name for path in tmp_path.iterdir()) == ["scratch", "started", "tmp"]
    assert sorted(path.name for path in checkout.iterdir()) == []


def test_the_command_runs_in_the_worktree_with_context_in_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    result = run_verify_command(
        'pwd; echo "$KANBAN_TASK_ID ${GIT_DIR:-unset}"', tmp_path,
        env={"KANBAN_TASK_ID": "TASK-9"},
    )  # fmt: skip
    assert result.stdout_tail.splitlines() == [str(tmp_path), "TASK-9 unset"]


def test_a_missing_worktree_is_a_failed_run_not_a_crash(tmp_path):
    result = run_verify_command("true", tmp_path / "gone", timeout_s=5)
    assert not result.passed and result.exit_code is None
    assert "could not start" in result.stderr_tail


def test_where_the_command_comes_from(tmp_path):
    assert find_verify_command(tmp_path).command is None
    (tmp_path / "init.sh").write_text("VERIFY_CMD='make check'\n")
    found = find_verify_command(tmp_path)
    assert (found.command, found.source) == ("make check", "init.sh")
    (tmp_path / "AGENT_HANDOFF.json").write_text(
        '{"handoffFrom": "a", "runtime": "r", "commands": {"verify": "pytest"}}'
    )
    assert find_verify_command(tmp_path).command == "pytest"
    (tmp_path / "AGENT_HANDOFF.json").write_text('{"handoffFrom": "a", "runtime": "r"}')
    assert find_verify_command(tmp_path).command == "make check"


def det(passed: bool) -> DeterministicResult:
    return DeterministicResult(command="c", exit_code=0 if passed else 1, passed=passed)


def test_attempts_accumulate_and_route_by_the_budget():
    found = VerifyCommand("c", "init.sh")
    verdict: VerificationResult | None = None
    targets = []
    for at in range(1, 5):
        verdict = judge(verdict, det(False), now=at, found=found)
        targets.append((route(verdict, 3).target, route(verdict, 3).attempts_left))
    assert targets == [("in_progress", 2), ("in_progress", 1), ("blocked", 0), ("blocked", 0)]
    assert [a.attempt for a in verdict.attempts] == [1, 2, 3, 4]
    passed = judge(verdict, det(True), now=9, found=found)
    assert passed.status == "pass" and route(passed, 3).target == "done"
    assert len(passed.attempts) == 5 and passed.debt_notes == []


def test_debt_verdicts_and_their_promotability():
    none = judge(None, None, now=1, found=VerifyCommand(None, None))
    assert none.status == "completed_with_debt" and not none.promotable
    assert route(none, 3).target == "blocked"
    green = judge(None, det(True), now=1, found=VerifyCommand("c", "init.sh", broken=["flaky e2e"]))
    assert green.status == "completed_with_debt" and green.promotable
    assert route(green, 3).target == "blocked" and "flaky e2e" in route(green, 3).reason
    # Earlier failures stay in the history; a new no-command run does not hide them.
    red = judge(judge(None, det(False), now=1, found=VerifyCommand("c", "init.sh")), None, now=2,
                found=VerifyCommand(None, None))  # fmt: skip
    assert red.status == "completed_with_debt" and len(red.attempts) == 1 and not red.promotable


def test_the_gate_only_judges_tasks_in_review(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    with pytest.raises(BoardError) as refused:
        run_gate(env.board, task_id, Path(made.worktree.worktree_path))
    assert refused.value.reason == Reason.INVALID_STATE
    assert env.board.get_task(task_id).verification is None


def test_a_reviewer_who_judges_during_the_run_wins_and_the_late_verdict_is_not_stored(env):
    """The verify command itself plays the other agent: it approves the task mid-run."""
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "app.py").write_text("changed\n")
    approve = (
        f"{sys.executable} -c \"import sys; sys.path.insert(0, '{Path(__file__).parents[2]}');"
        f"from boardlib import Board; Board('{env.board.path}').approve('{task_id}', 'bob')\""
        "; exit 1"
    )
    env.trees.write_handoff(
        task_id, {"handoffFrom": "alice", "runtime": "r", "commands": {"verify": approve}}
    )
    env.board.complete(task_id, "alice")
    outcome = run_gate(env.board, task_id, path, builder="alice")
    assert outcome.recorded is False and outcome.verdict.status == "fail"
    task = env.board.get_task(task_id)
    assert task.status == "done" and parse_verdict(task.verification).status == "pass"
    assert "not recorded" in env.board.comments(task_id)[-1].body


def test_record_verification_with_an_expected_status_refuses_and_writes_nothing(env):
    task_id = env.task()
    verdict = judge(None, det(True), now=1, found=VerifyCommand("c", "init.sh")).dumps()
    audit = len(env.board.audit(task_id))
    with pytest.raises(BoardError) as refused:
        env.board.record_verification(task_id, verdict, expected_status="in_review")
    assert refused.value.reason == Reason.INVALID_STATE
    assert env.board.get_task(task_id).verification is None
    assert len(env.board.audit(task_id)) == audit
    stored = env.board.record_verification(task_id, verdict, expected_status="in_progress")
    assert parse_verdict(stored.verification).status == "pass"
