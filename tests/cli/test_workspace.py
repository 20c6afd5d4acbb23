"""`kanban task workspace ...` through the real console script, on real temporary git repos."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import BIN, Kanban, clean_env
from tests.doc_examples import example
from tests.worktrees.conftest import GIT_ENV, git, make_repo, repo_state

HANDOFF = {
    "handoffFrom": "alice",
    "runtime": "claude-code",
    "completedSubtasks": ["fixed answer()"],
    "nextBestStep": "run the tests",
    "commands": {"verify": 'python -c "import app; assert app.answer() == 43"'},
}


@pytest.fixture
def setup(tmp_path: Path, board_path: Path) -> tuple[Kanban, Path, dict[str, str]]:
    repo = make_repo(tmp_path / "repo")
    env = {
        "KANBAN_WORKTREES": str(tmp_path / "state" / "worktrees"),
        **{key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")},
    }
    return Kanban(board_path), repo, env


def claimed(kanban: Kanban, title: str = "Fix answer", **fields: str) -> str:
    with kanban.board() as board:
        task = board.create_task(title, **fields)  # type: ignore[arg-type]
        board.claim(task.id, "alice")
        return task.id


def test_provision_prints_the_seed_shape_reuses_and_leaves_the_repo_clean(setup) -> None:  # type: ignore[no-untyped-def]
    kanban, repo, env = setup
    task_id = claimed(kanban)
    before = repo_state(repo)
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    tree = made["worktree"]
    assert made["isolation"] == "worktree" and made["workspaceId"]
    assert tree["taskId"] == task_id and tree["branch"] == f"kanban/task-{task_id}"
    assert not tree["detached"] and len(tree["baseCommit"]) == 40
    assert Path(tree["worktreePath"]).is_dir()
    assert not Path(tree["worktreePath"]).is_relative_to(repo)
    assert repo_state(repo)[0] == before[0]  # the user's `git status` did not change
    again = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    assert again["workspaceId"] == made["workspaceId"]
    assert len(kanban.ok("task", "view", task_id)["workspaces"]) == 1
    assert kanban.row(task_id)["worktreeRef"] == tree["worktreePath"]


def test_refused_kind_exits_2_with_no_isolation_and_creates_nothing(setup) -> None:  # type: ignore[no-untyped-def]
    kanban, repo, env = setup
    task_id = claimed(kanban, "Survey the options", kind="research")
    before = kanban.snapshot()
    error = kanban.refused(
        "task", "workspace", "provision", task_id, "--repo", str(repo), env=env,
        reason="no_isolation",
    )  # fmt: skip
    assert error["reason"] == "no_isolation" and error["isolation"] == "none"
    # The error was the bare code; it says what is wrong and what to do.
    assert error["error"].startswith(f"cannot provision a worktree for {task_id}: a research")
    assert "without a worktree" in error["error"]
    assert kanban.snapshot() == before
    assert not Path(env["KANBAN_WORKTREES"]).exists()


def test_only_the_holder_or_an_operator_provisions(setup) -> None:  # type: ignore[no-untyped-def]
    """Provision took no --agent and acted as the system, so any agent made a worktree for a task
    another agent holds."""
    kanban, repo, env = setup
    task_id = claimed(kanban)
    before, files = kanban.snapshot(), repo_state(repo)
    error = kanban.refused(
        "task", "workspace", "provision", task_id, "--repo", str(repo),
        env={**env, "KANBAN_AGENT": "mallory"}, reason="not_assignee",
    )  # fmt: skip
    assert error["assignee"] == "alice"
    assert kanban.snapshot() == before and repo_state(repo) == files
    assert not Path(env["KANBAN_WORKTREES"]).exists()
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), "-a", "alice",
                     env=env)  # fmt: skip
    assert made["worktree"]["taskId"] == task_id
    with kanban.board() as board:
        [provisioned] = [
            e for e in board.events(task_id=task_id) if e.kind == "workspace_provisioned"
        ]
    assert provisioned.actor == "alice"


def test_a_lapsed_holder_quoting_its_epoch_cannot_touch_its_successors_worktree(setup) -> None:  # type: ignore[no-untyped-def]
    """Only `complete` took --epoch, so a process whose lease lapsed, still running under the name
    its restarted successor claimed again, paused the successor's worktree (committing its
    unfinished work and removing the checkout). Every workspace verb takes the epoch now, and a
    stale one is stale_claim, as the lease verbs say."""
    kanban, repo, env = setup
    task_id = claimed(kanban)
    agent = {**env, "KANBAN_AGENT": "alice"}
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=agent)
    worktree = Path(made["worktree"]["worktreePath"])
    kanban.advance(minutes=16)  # the lease lapses; alice, restarted, claims the task again
    epoch = kanban.ok("task", "claim", task_id, env=agent)["claimEpoch"]
    assert epoch > 1
    (worktree / "wip.py").write_text("the successor's unfinished work\n")
    handoff = worktree.parent / "handoff.json"
    handoff.write_text(json.dumps(HANDOFF))
    before, files = kanban.snapshot(), repo_state(worktree)
    for verb in (
        ("pause",),
        ("sync",),
        ("handoff", "--file", str(handoff)),
        ("provision", "--repo", str(repo)),
        ("complete",),
    ):
        error = kanban.refused(
            "task", "workspace", verb[0], task_id, *verb[1:], "--epoch", "1", env=agent,
            reason="stale_claim",
        )  # fmt: skip
        assert (error["epoch"], error["currentEpoch"]) == (1, epoch), verb
    assert kanban.snapshot() == before and repo_state(worktree) == files
    assert (worktree / "wip.py").exists()
    paused = kanban.ok("task", "workspace", "pause", task_id, "--epoch", str(epoch), env=agent)
    assert paused["pause"]["committed"] is True


@pytest.mark.parametrize("ref", ["--upload-pack=touch /tmp/pwned", "-x", "main..HEAD", "a b"])
def test_hostile_base_ref_is_refused_and_creates_nothing(setup, ref: str) -> None:  # type: ignore[no-untyped-def]
    kanban, repo, env = setup
    task_id = claimed(kanban)
    before = (kanban.snapshot(), repo_state(repo), git(repo, "branch", "--list"))
    kanban.refused(
        "task", "workspace", "provision", task_id, "--repo", str(repo), "--base-ref", ref,
        env=env, reason="invalid_input",
    )  # fmt: skip
    assert (kanban.snapshot(), repo_state(repo), git(repo, "branch", "--list")) == before


@pytest.mark.slow  # the whole worktree story through the CLI
def test_handoff_resume_detail_pause_and_complete_through_the_gate(setup) -> None:  # type: ignore[no-untyped-def]
    kanban, repo, env = setup
    task_id = claimed(kanban)
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    worktree = Path(made["worktree"]["worktreePath"])
    bad = kanban.run(
        "task", "workspace", "handoff", task_id, "--file", "-", env=env, stdin='{"runtime": 3}'
    )
    assert bad.code == 2 and bad.error["error"] == "invalid handoff"
    assert not (worktree / "AGENT_HANDOFF.json").exists()
    kanban.ok(
        "task", "workspace", "handoff", task_id, "--file", "-", env=env, stdin=json.dumps(HANDOFF)
    )
    resumed = kanban.ok("task", "workspace", "resume", task_id, env=env)
    assert resumed["resume"]["hasHandoff"] and resumed["resume"]["next"] == "run the tests"
    (worktree / "app.py").write_text("def answer():\n    return 43\n")
    detail = kanban.ok("task", "workspace", "detail", task_id, env=env)
    assert "TASK.md" in detail["sorFiles"] and "AGENT_HANDOFF.json" in detail["sorFiles"]
    assert detail["diffStat"]["filesChanged"] == 1 and "+    return 43" in detail["diff"]
    assert "TASK.md" not in detail["diff"]
    paused = kanban.ok("task", "workspace", "pause", task_id, env=env)
    assert paused["pause"]["committed"] and not worktree.exists()
    kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    assert (worktree / "app.py").read_text().endswith("return 43\n")  # the work came back
    done = kanban.ok("task", "workspace", "complete", task_id, env=env)
    assert done["taskStatus"] == "done" and done["verified"] == "pass"
    assert done["complete"]["dirty"] and not done["complete"]["cleaned"]
    assert kanban.row(task_id)["status"] == "done"


def test_complete_with_a_failing_gate_goes_back_to_the_builder(setup) -> None:  # type: ignore[no-untyped-def]
    kanban, repo, env = setup
    task_id = claimed(kanban)
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    worktree = Path(made["worktree"]["worktreePath"])
    kanban.ok(
        "task", "workspace", "handoff", task_id, "--file", "-", env=env, stdin=json.dumps(HANDOFF)
    )
    (worktree / "app.py").write_text("def answer():\n    return 41\n")
    failed = kanban.ok("task", "workspace", "complete", task_id, "--agent", "alice", env=env)
    assert failed["taskStatus"] == "in_progress" and failed["verified"] == "fail"
    row = kanban.row(task_id)
    assert row["assigneeAgentId"] == "alice"
    assert json.loads(row["verification"])["attempts"][0]["deterministic"]["exitCode"] != 0


def test_empty_diff_completes_to_done_and_cleans_up(setup) -> None:  # type: ignore[no-untyped-def]
    kanban, repo, env = setup
    task_id = claimed(kanban)
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    done = kanban.ok("task", "workspace", "complete", task_id, env=env)
    assert done == {
        **done,
        "taskStatus": "done",
        "complete": {**done["complete"], "dirty": False, "cleaned": True},
    }
    assert not Path(made["worktree"]["worktreePath"]).exists()
    assert git(repo, "branch", "--list", f"kanban/task-{task_id}") == ""


@pytest.mark.slow
def test_the_docs_worktree_example_runs_in_the_order_shown(tmp_path: Path) -> None:
    """Copied from docs/worktrees.md as it is, with only HOME and the editor set: every line
    succeeds and the task ends done through the gate."""
    home = tmp_path / "home"
    make_repo(home / "src" / "shop")
    (home / "src" / "shop" / "cart.py").write_text("def total(items):\n    return sum(items)\n")
    git(home / "src" / "shop", "add", "-A")
    git(home / "src" / "shop", "commit", "-q", "-m", "cart")
    editor = tmp_path / "editor.sh"
    editor.write_text(
        '#!/bin/sh\nprintf "\\n\\ndef count(items):\\n    return len(items)\\n" >> "$1"\n'
    )
    editor.chmod(0o755)
    kanban = Kanban(tmp_path / "board.db")
    with kanban.board() as board:
        for index in range(7):  # the example's TASK-7
            board.create_task(f"task {index + 1}")
    script = "set -euo pipefail\n" + example("docs/worktrees.md#worktree-session")
    env = {
        **clean_env(),
        "HOME": str(home),
        "EDITOR": str(editor),
        "KANBAN_DB": str(tmp_path / "board.db"),
        "KANBAN_WORKTREES": str(tmp_path / "state" / "worktrees"),
        "PATH": f"{BIN}:{os.environ['PATH']}",
        **{key: GIT_ENV[key] for key in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")},
    }
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["taskStatus"] == "done" and last["verified"] == "pass" and last["reattached"]
    handoff = json.loads((tmp_path / "handoff.json").read_text())
    assert handoff["handoffFrom"] == "worker-1" and handoff["nextBestStep"] == "add a test"


def test_handoff_template_is_valid_and_prefilled_from_the_worktree(setup) -> None:  # type: ignore[no-untyped-def]
    kanban, repo, env = setup
    task_id = claimed(kanban)
    bare = kanban.ok("task", "workspace", "handoff", task_id, "--template", env=env)
    assert bare["handoffFrom"] == "alice" and bare["commands"]["init"] == "./init.sh"
    assert "timestamp" not in bare and bare["runtime"] == "your-runtime"
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    init = Path(made["worktree"]["worktreePath"]) / "init.sh"
    init.write_text(init.read_text().replace("VERIFY_CMD=''", "VERIFY_CMD='make check'"))
    template = kanban.ok(
        "task", "workspace", "handoff", task_id, "--template", "--agent", "bob", env=env
    )
    assert template["handoffFrom"] == "bob" and template["commands"]["verify"] == "make check"
    # as printed it still says "your-runtime": refused, not recorded as the task's runtime, and
    # nothing is written
    before = kanban.snapshot()
    error = kanban.refused(
        "task", "workspace", "handoff", task_id, "--file", "-", env=env,
        stdin=json.dumps(template), reason="invalid_input",
    )  # fmt: skip
    assert error["field"] == "runtime" and kanban.snapshot() == before
    written = kanban.run(
        "task", "workspace", "handoff", task_id, "--file", "-", env=env,
        stdin=json.dumps({**template, "runtime": "claude-code"}),
    )  # fmt: skip
    assert written.code == 0, written
    neither = kanban.run("task", "workspace", "handoff", task_id, env=env)
    assert neither.code == 2 and "--template" in neither.err
    kanban.refused(
        "task", "workspace", "handoff", "TASK-99", "--template", reason="not_found", env=env
    )


def test_workspace_detail_as_a_table_draws_the_diff_and_files_as_lines(setup) -> None:  # type: ignore[no-untyped-def]
    """An operator reviewing over SSH read `task workspace detail --format table`'s diff as one
    line, `diff --git a/app.py b/app.py␤index ...␤+    return 43␤`, folded into a block, and each
    file of the worktree's record likewise. The diff and each file are their lines (inert: an
    escape in the work is drawn as ␛), a wrapped line under its own indent."""
    kanban, repo, env = setup
    task_id = claimed(kanban)
    made = kanban.ok("task", "workspace", "provision", task_id, "--repo", str(repo), env=env)
    worktree = Path(made["worktree"]["worktreePath"])
    (worktree / "app.py").write_text("def answer():\n    return 43  # \x1b[2J\n")
    table = kanban.run("task", "workspace", "detail", task_id, "--format", "table",
                       env={**env, "COLUMNS": "80"})  # fmt: skip
    assert table.code == 0, str(table)
    lines = [line.strip() for line in table.out.splitlines()]
    at = lines.index("-    return 42")
    assert lines[at - 2 : at + 2] == ["@@ -1,2 +1,2 @@", "def answer():", "-    return 42",
                                      "+    return 43  # ␛[2J"], table.out  # fmt: skip
    assert "␤" not in table.out and "\x1b" not in table.out, table.out
    assert lines[lines.index(f"# {task_id}: Fix answer") - 1].endswith("TASK.md:"), table.out
    assert all(len(line) <= 80 for line in table.out.splitlines()), table.out
