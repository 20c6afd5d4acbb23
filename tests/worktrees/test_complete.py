"""Complete: the diff against the baseline decides, then the verification gate judges, through
every outcome (pass, fail with attempts left, fail at the budget, timeout, no command, debt)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib import attention as a
from boardlib.models import parse_verdict
from boardlib.worktrees.gate import GATE_ACTOR
from tests.worktrees.conftest import git, make_env


@pytest.fixture
def env(tmp_path, monkeypatch):
    e = make_env(tmp_path, monkeypatch, verify_timeout_s=20)
    yield e
    e.board.close()


def provisioned(env, verify: str | None = None):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    if verify is not None:
        init = (path / "init.sh").read_text()
        (path / "init.sh").write_text(init.replace("VERIFY_CMD=''", f"VERIFY_CMD='{verify}'"))
    return task_id, made, path


def change(path: Path, answer: int = 41) -> None:
    (path / "app.py").write_text(f"def answer():\n    return {answer}\n")


def system_comments(env, task_id):
    return [c.body for c in env.board.comments(task_id) if c.author_type == "system"]


def test_empty_diff_cleans_up_and_lands_done_without_a_gate(env):
    task_id, made, path = provisioned(env, verify="exit 1")
    # Bookkeeping alone is no deliverable: progress, handoff, decisions.
    (path / "task-progress.md").write_text("## Done\n- looked around\n")
    env.trees.write_handoff(task_id, {"handoffFrom": "alice", "runtime": "r"})
    result = env.trees.complete(task_id, "alice")
    body = result.to_json()
    assert body["complete"] == {
        "dirty": False,
        "diffStat": {"filesChanged": 0, "insertions": 0, "deletions": 0, "dirty": False},
        "cleaned": True,
    }
    assert body["taskStatus"] == "done" and "verified" not in body
    task = env.board.get_task(task_id)
    assert task.status == "done" and task.verification is None
    assert not path.exists()
    assert git(env.repo, "branch", "--list", made.worktree.branch) == ""
    assert env.board.workspaces(task_id)[0].status == "archived"
    assert system_comments(env, task_id) == []  # no gate ran


def test_pass_goes_to_done_with_a_pass_verdict_audit_and_comment(env):
    task_id, made, path = provisioned(env, verify="grep -q 41 app.py")
    change(path)
    result = env.trees.complete(task_id, "alice", summary="changed the answer")
    assert (result.task_status, result.verified, result.gate_ran) == ("done", "pass", True)
    task = env.board.get_task(task_id)
    verdict = parse_verdict(task.verification)
    assert verdict.status == "pass" and verdict.promotable
    [attempt] = verdict.attempts
    assert attempt.deterministic.command == "grep -q 41 app.py"
    assert attempt.deterministic.exit_code == 0 and attempt.deterministic.passed
    # The work is committed on the branch; the checkout stays until garbage collection.
    assert "return 41" in git(env.repo, "show", f"{made.worktree.branch}:app.py")
    assert git(env.repo, "rev-parse", made.worktree.branch) == result.head
    audit = [a for a in env.board.audit(task_id) if a.action == "verification"]
    assert len(audit) == 1 and audit[0].actor == GATE_ACTOR
    [comment] = system_comments(env, task_id)
    assert "pass" in comment and "Moved to done" in comment
    journal = (path / "VERIFICATION.md").read_text()
    assert "## Attempt 1" in journal and "grep -q 41 app.py" in journal
    moves = [
        (e.data.get("to"), e.actor) for e in env.board.events(task_id=task_id) if e.data.get("to")
    ]
    assert moves[-2:] == [("in_review", "alice"), ("done", GATE_ACTOR)]


@pytest.mark.parametrize("passes", [True, False])
def test_what_the_verify_command_leaves_is_removed_not_judged_or_landed(env, passes):
    """Found by hand: with docs/worktrees.md's `python -m compileall -q .` and no .gitignore, the
    gate's `__pycache__` joined the diff under review and landed on main (and a failed attempt's
    next complete would have committed it). What the command creates untracked is removed and
    said; what .gitignore ignores, and the builder's own work, stay."""
    verify = "mkdir -p build/deep && echo x > build/deep/out.bin && echo y > cache.pyc"
    verify += " && echo z > run.log && echo n > new\\ name.txt"
    task_id, _, path = provisioned(env, verify=verify + ("" if passes else " && exit 1"))
    change(path)
    (path / ".gitignore").write_text("*.log\n")
    (path / "build").mkdir()
    (path / "build" / "kept.txt").write_text("the builder's own file\n")
    result = env.trees.complete(task_id, "alice")
    assert result.verified == ("pass" if passes else "fail")
    assert not (path / "cache.pyc").exists() and not (path / "new name.txt").exists()
    assert not (path / "build" / "deep").exists()  # the folder it made, emptied, goes too
    assert (path / "build" / "kept.txt").exists() and (path / "run.log").exists()
    changed = git(path, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert [line for line in changed if "VERIFICATION.md" not in line] == []
    comment = system_comments(env, task_id)[-1]
    assert "Removed what the verify command left" in comment
    assert "cache.pyc" in comment and "build/deep/out.bin" in comment
    files = [entry["path"] for entry in env.trees.detail(task_id).to_json()["diffFiles"]]
    assert sorted(files) == [".gitignore", "app.py", "build/kept.txt"], files


def test_fail_returns_to_the_builder_then_blocks_at_the_budget(env):
    task_id, _, path = provisioned(env, verify="echo broken >&2; exit 3")
    change(path)
    epochs = []
    for attempt in (1, 2):
        result = env.trees.complete(task_id, "alice")
        assert (result.task_status, result.verified) == ("in_progress", "fail")
        task = env.board.get_task(task_id)
        assert task.assignee_agent_id == "alice" and task.lease_until is not None
        assert result.claim_epoch == task.claim_epoch
        epochs.append(task.claim_epoch)
        assert len(parse_verdict(task.verification).attempts) == attempt
        change(path, 40 - attempt)  # keep working
    assert epochs[0] < epochs[1]
    final = env.trees.complete(task_id, "alice")
    assert (final.task_status, final.verified) == ("blocked", "fail")
    task = env.board.get_task(task_id)
    assert "budget" in task.blocked_reason
    verdict = parse_verdict(task.verification)
    assert [a.attempt for a in verdict.attempts] == [1, 2, 3]
    assert verdict.attempts[-1].deterministic.exit_code == 3
    assert "broken" in verdict.attempts[-1].deterministic.stderr_tail
    comments = system_comments(env, task_id)
    assert len(comments) == 3
    assert "exited 3" in comments[-1] and "broken" in comments[-1] and "Reproduce" in comments[-1]
    assert len([a for a in env.board.audit(task_id) if a.action == "verification"]) == 3
    # The done-gate now refuses: a failing verdict is not promotable.
    env.board.move(task_id, "in_progress", actor="operator")
    with pytest.raises(BoardError) as refused:
        env.board.move(task_id, "done")
    assert refused.value.reason == Reason.VERIFICATION_REQUIRED


def test_repeat_complete_on_a_blocked_task_does_not_rerun_the_gate(env):
    task_id, _, path = provisioned(env, verify="exit 1")
    change(path)
    env.board.config = replace(env.board.config, verification_attempt_budget=1)
    first = env.trees.complete(task_id, "alice")
    assert first.task_status == "blocked"
    journal = (path / "VERIFICATION.md").read_text()
    comments = env.board.comments(task_id)
    again = env.trees.complete(task_id, "alice")
    body = again.to_json()
    assert body["taskStatus"] == "blocked" and body["verified"] == "fail"
    assert body["gateRan"] is False and body["complete"]["dirty"] is True
    assert (path / "VERIFICATION.md").read_text() == journal
    assert env.board.comments(task_id) == comments


def test_a_verify_command_that_hangs_is_killed_at_the_timeout(env):
    task_id, _, path = provisioned(env, verify="sleep 30")
    change(path)
    trees = type(env.trees)(env.board, verify_timeout_s=0.5)
    result = trees.complete(task_id, "alice")
    assert (result.task_status, result.verified) == ("in_progress", "fail")
    det = parse_verdict(env.board.get_task(task_id).verification).attempts[-1].deterministic
    assert det.timed_out and det.exit_code is None and not det.passed
    assert det.duration_ms < 10_000
    assert "timed out" in system_comments(env, task_id)[-1]


def test_no_verify_command_means_debt_and_blocked_with_advice(env):
    task_id, _, path = provisioned(env)
    change(path)
    result = env.trees.complete(task_id, "alice")
    assert (result.task_status, result.verified) == ("blocked", "completed_with_debt")
    task = env.board.get_task(task_id)
    verdict = parse_verdict(task.verification)
    assert verdict.attempts == [] and not verdict.promotable
    assert "no verify command" in verdict.debt_notes[0].justification
    assert "VERIFY_CMD" in task.blocked_reason
    assert "no verify command" in system_comments(env, task_id)[-1]
    # Again: seed 003's answer to a repeat on a blocked task is `verified: 'fail'`, the
    # stored debt verdict beside it (found against the seed: it said completed_with_debt).
    again = env.trees.complete(task_id, "alice").to_json()
    assert (again["taskStatus"], again["verified"], again["gateRan"]) == ("blocked", "fail", False)
    assert again["verification"]["status"] == "completed_with_debt"
    # Red debt needs a human override to reach done: one step, from where the gate left it.
    with pytest.raises(BoardError):
        env.board.move(task_id, "done")
    done = env.board.move(task_id, "done", human_override=True, reason="checked")
    assert done.status == "done" and done.assignee_agent_id is None
    assert env.board.audit(task_id)[-1].from_status == "blocked"


def test_a_task_blocked_for_want_of_a_verify_command_moves_as_its_words_say(env):
    """The reason said "complete again", but a repeat complete on a blocked task runs nothing and
    answered like a gate result; the builder's unblock said "claim it first" and its claim said
    "unblock it first". Each answer now says what moves it."""
    task_id, _, path = provisioned(env)
    change(path)
    env.trees.complete(task_id, "alice")
    reason = env.board.get_task(task_id).blocked_reason
    assert "an operator unblocks it" in reason and "complete again" not in reason
    again = env.trees.complete(task_id, "alice").to_json()
    assert again["gateRan"] is False and "ran no gate" in again["note"]
    with pytest.raises(BoardError) as unblocked:
        env.board.unblock(task_id, actor="alice")
    assert unblocked.value.reason == Reason.NOT_ASSIGNEE
    assert "claim it first" not in str(unblocked.value)
    assert "an operator unblocks it" in str(unblocked.value)
    with pytest.raises(BoardError) as claimed:
        env.board.claim(task_id, "alice")
    assert claimed.value.reason == Reason.CONFLICT
    assert str(claimed.value).endswith("an operator unblocks it (back to todo)")
    # What the reason says, done: an operator unblocks, the agent claims, names its check and
    # completes again: the gate runs it.
    env.board.unblock(task_id)
    held = env.board.claim(task_id, "alice")
    handoff = {"handoffFrom": "alice", "runtime": "r", "commands": {"verify": "true"}}
    env.trees.write_handoff(task_id, handoff, actor="alice", epoch=held.claim_epoch)
    result = env.trees.complete(task_id, "alice", epoch=held.claim_epoch)
    assert (result.task_status, result.verified, result.note) == ("done", "pass", None)
    assert "note" not in result.to_json()


def test_the_inbox_files_a_gate_with_no_verify_command_as_blocked_not_debt(env):
    """The inbox filed it as `debt` to override, but no command ran and nothing passed with debt
    (docs/inbox.md); its reason says what moves it."""
    task_id, _, path = provisioned(env)
    change(path)
    env.trees.complete(task_id, "alice")
    [item] = env.board.inbox().items
    assert (item.kind, item.action) == (a.BLOCKED, a.UNBLOCK)
    assert item.why.startswith("blocked: verification could not judge the work")


def test_a_passing_gate_with_items_the_builder_left_broken_is_green_debt(env):
    task_id, _, path = provisioned(env)
    change(path)
    env.trees.write_handoff(
        task_id,
        {
            "handoffFrom": "alice",
            "runtime": "r",
            "brokenOrUnverified": ["the e2e test is flaky"],
            "commands": {"verify": "true"},
        },
    )
    result = env.trees.complete(task_id, "alice")
    assert (result.task_status, result.verified) == ("blocked", "completed_with_debt")
    verdict = parse_verdict(env.board.get_task(task_id).verification)
    assert verdict.promotable and verdict.debt_notes[0].criterion == "the e2e test is flaky"
    assert verdict.attempts[-1].deterministic.command == "true"  # the handoff's command wins
    env.board.move(task_id, "in_progress", actor="operator")
    assert env.board.move(task_id, "done").status == "done"  # green debt needs no override


def test_the_handoff_verify_command_takes_precedence_over_init_sh(env):
    task_id, _, path = provisioned(env, verify="exit 1")
    change(path)
    env.trees.write_handoff(
        task_id, {"handoffFrom": "alice", "runtime": "r", "commands": {"verify": "exit 0"}}
    )
    assert env.trees.complete(task_id, "alice").verified == "pass"


def test_only_the_assignee_completes_and_a_refusal_changes_nothing(env):
    task_id, _, path = provisioned(env, verify="true")
    change(path)
    head = git(path, "rev-parse", "HEAD")
    with pytest.raises(BoardError) as refused:
        env.trees.complete(task_id, "mallory")
    assert refused.value.reason == Reason.NOT_ASSIGNEE
    with pytest.raises(BoardError) as stale:
        env.trees.complete(task_id, "alice", epoch=99)
    assert stale.value.reason == Reason.STALE_CLAIM
    task = env.board.get_task(task_id)
    assert task.status == "in_progress" and task.verification is None
    assert git(path, "rev-parse", "HEAD") == head and "app.py" in git(path, "status", "--porcelain")


def test_a_repository_with_no_commit_in_the_worktree_is_named_not_a_git_failure(env):
    """`git init vendor` inside the worktree made complete fail git_failed ("'vendor/' does not have
    a commit checked out"); the agent is told what to do."""
    task_id, _, path = provisioned(env, verify="true")
    change(path)
    (path / "vendor").mkdir()
    git(path / "vendor", "init", "-q")
    (path / "vendor" / "lib.txt").write_text("a library\n")
    head = git(path, "rev-parse", "HEAD")
    with pytest.raises(BoardError) as refused:
        env.trees.complete(task_id, "alice")
    assert refused.value.reason == Reason.INVALID_STATE
    assert refused.value.details["why"] == "embedded_repository"
    assert refused.value.details["files"] == ["vendor"]
    assert "git submodule add" in refused.value.message
    task = env.board.get_task(task_id)
    assert task.status == "in_progress" and task.verification is None
    assert git(path, "rev-parse", "HEAD") == head
    detail = env.trees.detail(task_id)  # the drawer still opens, saying why there is no diff
    assert detail.diff_stat is None and "vendor in the worktree" in detail.warnings[0]
    git(path / "vendor", "add", "lib.txt")
    git(path / "vendor", "-c", "user.name=a", "-c", "user.email=a@x", "commit", "-qm", "v")
    # once it has a commit, complete takes it (landing refuses it unless declared: test_land)
    assert env.trees.complete(task_id, "alice").task_status == "done"


def test_an_empty_diff_over_a_failing_verdict_is_refused(env):
    task_id, _, path = provisioned(env, verify="exit 1")
    change(path)
    assert env.trees.complete(task_id, "alice").task_status == "in_progress"
    change(path, 42)  # undo the work: nothing left to deliver
    with pytest.raises(BoardError) as refused:
        env.trees.complete(task_id, "alice")
    assert refused.value.reason == Reason.VERIFICATION_REQUIRED
    assert env.board.get_task(task_id).status == "in_progress" and path.exists()


def test_complete_on_a_paused_worktree_reattaches_it_first(env):
    task_id, made, path = provisioned(env, verify="true")
    change(path)
    paused = env.trees.pause(task_id)
    assert not path.exists()
    result = env.trees.complete(task_id, "alice")
    assert (result.task_status, result.verified, result.reattached) == ("done", "pass", True)
    assert result.to_json()["reattached"] is True
    assert path.is_dir() and (path / "app.py").read_text() == "def answer():\n    return 41\n"
    assert result.head == paused.pause.head  # the gate judged exactly the paused work
    [ws] = env.board.workspaces(task_id)
    assert ws.status == "active" and ws.id == made.workspace_id


def test_complete_on_a_paused_worktree_whose_branch_is_gone_names_the_command(env):
    task_id, made, path = provisioned(env, verify="true")
    change(path)
    env.trees.pause(task_id)
    git(env.repo, "branch", "-D", made.worktree.branch)
    before = env.board.get_task(task_id)
    with pytest.raises(BoardError) as refused:
        env.trees.complete(task_id, "alice")
    command = f"kanban task workspace provision {task_id} --repo {env.repo.resolve()}"
    assert refused.value.reason == Reason.INVALID_STATE
    assert f"`{command}`" in refused.value.message
    assert refused.value.details["command"] == command
    assert env.board.get_task(task_id) == before  # refused, nothing changed


def test_a_gate_interrupted_in_review_is_rerun_by_its_builder(env):
    task_id, _, path = provisioned(env, verify="true")
    change(path)
    env.board.complete(task_id, "alice")  # the process died right after this
    with pytest.raises(BoardError):
        env.trees.complete(task_id, "bob")  # not a holder
    result = env.trees.complete(task_id, "alice")
    assert (result.task_status, result.verified) == ("done", "pass")


def test_task_text_is_never_interpolated_into_the_command(env, tmp_path):
    marker = tmp_path / "pwned"
    task = env.board.create_task(
        f"$(touch {marker}) `touch {marker}`", description=f"; touch {marker}"
    )
    env.board.claim(task.id, "alice")
    made = env.trees.provision(task.id, env.repo)
    path = Path(made.worktree.worktree_path)
    init = (
        (path / "init.sh")
        .read_text()
        .replace("VERIFY_CMD=''", "VERIFY_CMD='printenv KANBAN_TASK_ID'")
    )
    (path / "init.sh").write_text(init)
    change(path)
    env.trees.complete(task.id, "alice")
    assert not marker.exists()
    det = parse_verdict(env.board.get_task(task.id).verification).attempts[-1].deterministic
    assert det.stdout_tail.strip() == task.id  # context arrives through the environment


def test_json_of_a_dirty_complete_carries_the_seed_fields(env):
    task_id, _, path = provisioned(env, verify="true")
    change(path)
    body = env.trees.complete(task_id, "alice").to_json()
    assert {"complete", "taskStatus", "verified"} <= set(body)
    assert set(body["complete"]) == {"dirty", "diffStat", "cleaned"}
    json.dumps(body)
