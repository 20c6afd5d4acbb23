"""The clock-out handoff and the cold-resume read: state rebuilt from the worktree alone."""

import json
from pathlib import Path

import pytest

from boardlib import BoardError, Reason
from boardlib.models import AgentHandoff
from boardlib.worktrees.sor import commands_from_init, parse_progress
from tests.worktrees.conftest import make_env

FULL = {
    "handoffFrom": "native-specialist-abc",
    "runtime": "claude-code",
    "timestamp": "2024-05-01T12:30:00Z",
    "completedSubtasks": ["wired the route"],
    "brokenOrUnverified": ["the e2e test is flaky"],
    "nextBestStep": "stabilize the flaky test",
    "whyBlocked": None,
    "commands": {"init": "./init.sh", "verify": "pytest -q", "start": "make run"},
    "evidence": {"testResults": "12 passed", "lintResults": None},
    "warnings": ["do not touch the schema"],
    "nativeSessionId": "sess-1",
    "roomCursor": {"roomId": "room-7", "lastSeenSeq": 41},
}


def test_handoff_round_trip_through_the_worktree(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    written = env.trees.write_handoff(task_id, FULL)
    assert written.handoff == FULL
    on_disk = json.loads((Path(made.worktree.worktree_path) / "AGENT_HANDOFF.json").read_text())
    assert on_disk == FULL
    back = env.trees.resume(task_id)
    assert back.handoff == FULL and back.live
    assert back.resume == {
        "hasHandoff": True,
        "done": ["wired the route"],
        "broken": ["the e2e test is flaky"],
        "next": "stabilize the flaky test",
        "whyBlocked": None,
        "commands": {"init": "./init.sh", "verify": "pytest -q", "start": "make run"},
        "warnings": ["do not touch the schema"],
        "lastRuntime": "claude-code",
        "nativeSessionId": "sess-1",
    }
    # One event per write, so live views refresh.
    kinds = [event.kind for event in env.board.events(task_id=task_id)]
    assert kinds[-1] == "workspace_updated"


def test_handoff_defaults_and_timestamp_from_the_board_clock(env):
    task_id = env.task()
    env.trees.provision(task_id, env.repo)
    written = env.trees.write_handoff(task_id, '{"handoffFrom": "alice", "runtime": "human"}')
    assert written.handoff["timestamp"] == "2023-11-14T22:13:20.000Z"  # ManualClock's start
    assert written.handoff["commands"] == {"init": "./init.sh", "verify": "", "start": ""}
    assert written.handoff["completedSubtasks"] == [] and written.handoff["nextBestStep"] == ""
    AgentHandoff.model_validate(written.handoff)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"runtime": "r"}, "handoffFrom"),
        ({"handoffFrom": "", "runtime": "r"}, "handoffFrom"),
        ({"handoffFrom": "a", "runtime": "   "}, "runtime"),
        ({"handoffFrom": "a", "runtime": "r", "timestamp": "yesterday"}, "timestamp"),
        ({"handoffFrom": "a", "runtime": "r", "completedSubtasks": "one"}, "completedSubtasks"),
        ({"handoffFrom": "a", "runtime": "r", "commands": {"verify": 3}}, "commands.verify"),
        (
            {"handoffFrom": "a", "runtime": "r", "roomCursor": {"roomId": "x"}},
            "roomCursor.lastSeenSeq",
        ),
        ({"handoffFrom": "a", "runtime": "r", "nextStep": "typo"}, "nextStep"),
    ],
)
def test_invalid_handoffs_are_refused_with_field_errors_and_write_nothing(env, body, field):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    events = len(env.board.events(task_id=task_id))
    with pytest.raises(BoardError) as refused:
        env.trees.write_handoff(task_id, body)
    error = refused.value.to_dict()
    assert refused.value.reason == Reason.INVALID_INPUT and error["error"] == "invalid handoff"
    assert field in error["details"]["fieldErrors"]
    assert not (Path(made.worktree.worktree_path) / "AGENT_HANDOFF.json").exists()
    assert len(env.board.events(task_id=task_id)) == events


@pytest.mark.parametrize("raw", ["not json", "[1, 2]", b"\xff"])
def test_a_handoff_that_is_not_a_json_object_is_refused(env, raw):
    task_id = env.task()
    env.trees.provision(task_id, env.repo)
    with pytest.raises(BoardError) as refused:
        env.trees.write_handoff(task_id, raw)
    assert refused.value.to_dict()["details"]["formErrors"]


@pytest.mark.parametrize("agent", [" ", "ev\x1b[2Jil", 7])
def test_a_handoff_template_for_a_bad_agent_name_is_invalid_input(env, agent):
    """Found by tests/chaos/test_fuzz_worktrees.py: a blank name failed the template's own
    schema check (a pydantic ValidationError, a 500 on any surface)."""
    with pytest.raises(BoardError) as refused:
        env.trees.handoff_template(env.task(), agent=agent)
    assert (
        refused.value.reason == Reason.INVALID_INPUT and refused.value.details["field"] == "agent"
    )


def test_handoff_and_resume_need_a_workspace(env):
    task_id = env.task()
    for call in (lambda: env.trees.resume(task_id), lambda: env.trees.write_handoff(task_id, FULL)):
        with pytest.raises(BoardError) as refused:
            call()
        assert refused.value.reason == Reason.NOT_FOUND
        assert refused.value.message.startswith("workspace not found")


def test_cold_resume_without_a_handoff_reads_progress_and_init(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    path = Path(made.worktree.worktree_path)
    (path / "task-progress.md").write_text(
        "# Progress\n\n## Done\n- [x] parsed the input\n* wrote tests\n\n"
        "## Broken or unverified\n- the cache\n\n## Next\n1. wire the CLI\n2. later\n\n"
        "## Blocked\nwaiting on the API key\n"
    )
    init = (path / "init.sh").read_text()
    init = init.replace("VERIFY_CMD=''", "VERIFY_CMD='pytest -q tests/'")
    (path / "init.sh").write_text(init.replace("START_CMD=''", 'START_CMD="make run"'))
    resume = env.trees.resume(task_id)
    assert resume.handoff is None and resume.live
    assert resume.resume == {
        "hasHandoff": False,
        "done": ["parsed the input", "wrote tests"],
        "broken": ["the cache"],
        "next": "wire the CLI",
        "whyBlocked": "waiting on the API key",
        "commands": {"init": "./init.sh", "verify": "pytest -q tests/", "start": "make run"},
        "warnings": [],
        "lastRuntime": None,
        "nativeSessionId": None,
    }


def test_an_invalid_handoff_on_disk_falls_back_with_a_warning(env):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    (Path(made.worktree.worktree_path) / "AGENT_HANDOFF.json").write_text('{"runtime": 1}')
    resume = env.trees.resume(task_id)
    assert resume.handoff is None and resume.resume is not None
    assert resume.resume["hasHandoff"] is False
    assert any("AGENT_HANDOFF.json is invalid" in w for w in resume.resume["warnings"])


def test_resume_of_a_paused_worktree_has_null_parts(env):
    task_id = env.task()
    env.trees.provision(task_id, env.repo)
    env.trees.write_handoff(task_id, FULL)
    env.trees.pause(task_id)
    resume = env.trees.resume(task_id)
    assert resume.live is False and resume.resume is None and resume.handoff is None
    assert resume.workspace.status == "active"
    body = resume.to_json()
    assert set(body) >= {"workspace", "resume", "handoff"}
    with pytest.raises(BoardError) as refused:
        env.trees.write_handoff(task_id, FULL)
    assert refused.value.reason == Reason.NOT_FOUND
    # Re-attaching brings the committed handoff back.
    env.trees.provision(task_id, env.repo)
    assert env.trees.resume(task_id).handoff == FULL


def test_a_planted_symlink_is_replaced_not_followed_by_the_handoff_write(env, tmp_path):
    task_id = env.task()
    made = env.trees.provision(task_id, env.repo)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (Path(made.worktree.worktree_path) / "AGENT_HANDOFF.json").symlink_to(victim)
    env.trees.write_handoff(task_id, FULL)
    assert victim.read_text() == "keep me\n"
    assert not (Path(made.worktree.worktree_path) / "AGENT_HANDOFF.json").is_symlink()


def test_resume_and_handoff_do_not_import_git(tmp_path, monkeypatch):
    import subprocess
    import sys

    e = make_env(tmp_path, monkeypatch)
    task_id = e.task()
    e.trees.provision(task_id, e.repo)
    e.board.close()
    code = (
        "import sys, boardlib\n"
        "from boardlib.worktrees import Worktrees\n"
        "b = boardlib.Board(sys.argv[1])\n"
        "w = Worktrees(b)\n"
        "w.write_handoff(sys.argv[2], {'handoffFrom': 'a', 'runtime': 'r'})\n"
        "assert w.resume(sys.argv[2]).resume['hasHandoff']\n"
        "print('git' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "board.db"), task_id],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.stdout.strip() == "False", done.stderr


# -- the readers of init.sh and task-progress.md, on their own ------------------------------------


def test_init_sh_assignments_are_read_without_running_the_file():
    text = (
        "VERIFY_CMD='first'\n"
        "export VERIFY_CMD='pytest -q && ruff check .'  # the real one\n"
        'START_CMD="npm run \\"dev\\""\n'
        "INIT_CMD=make\n"
    )
    commands, warnings = commands_from_init(text)
    assert commands == {
        "init": "make",
        "verify": "pytest -q && ruff check .",
        "start": 'npm run "dev"',
    }
    assert warnings == []


@pytest.mark.parametrize(
    "line", ["VERIFY_CMD=$(cat secret)", "VERIFY_CMD='it'\\''s'", 'VERIFY_CMD="$HOME/x"']
)
def test_init_sh_assignments_too_clever_to_read_are_warned_about(line):
    commands, warnings = commands_from_init(f"VERIFY_CMD='old'\n{line}\n")
    assert commands["verify"] == "" and warnings


def test_progress_sections_are_recognised_by_heading():
    parsed = parse_progress("## DONE ##\n- a\n\n### Unverified things\n+ b\n\n## Next steps\nc\n")
    assert parsed == {"done": ["a"], "broken": ["b"], "next": "c", "whyBlocked": None}
    assert parse_progress(None) == {"done": [], "broken": [], "next": None, "whyBlocked": None}
