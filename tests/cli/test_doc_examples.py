"""The shell and Python examples of the README's agent quick start, docs/agents.md and
docs/postgresql.md, run as a reader copies them: bash with `set -euo pipefail`, the real console
script on PATH, HOME in a temp folder (so `~/team/board.db` lands there) and nothing else set
that the page does not set itself."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardlib import Board
from boardlib.watch import Consumers
from tests.cli.conftest import BIN, clean_env
from tests.doc_examples import example


def reader_env(home: Path, **extra: str) -> dict[str, str]:
    return clean_env(HOME=str(home), PATH=f"{BIN}:{os.environ['PATH']}", **extra)


def run(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return done


def documents(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_the_readme_agent_quick_start_runs_as_written(tmp_path: Path) -> None:
    done = run(example("README.md#agent-quick-start"), tmp_path, reader_env(tmp_path))
    assert "exit 2: a builder may not judge its own work" in done.stdout
    assert '"reason":"self_review"' in done.stderr
    assert "Document it" in done.stdout  # the table of what is left to do
    with Board(tmp_path / "team" / "board.db", read_only=True) as board:
        parser, docs = board.get_task("TASK-1"), board.get_task("TASK-2")
        assert (parser.status, parser.claimed_by) == ("done", "worker-1")
        assert [c.body for c in board.comments("TASK-1")][:1] == ["half way"]
        assert (docs.status, docs.unmet_deps) == ("todo", 0)  # ready now


def test_setup_and_dispatch_make_a_board_and_its_first_tasks(tmp_path: Path) -> None:
    script = example("docs/agents.md#setup") + example("docs/agents.md#dispatch")
    done = run(script, tmp_path, reader_env(tmp_path))
    created, first, second = documents(done.stdout)
    assert created["created"] is True and created["path"] == str(tmp_path / "team" / "board.db")
    # the output the page shows beside `kanban db init` is the output (it said schema 7 at 8)
    [shown] = [line for line in script.splitlines() if line.startswith("kanban db init")]
    assert (
        json.loads(shown.split("# ", 1)[1].replace("...", json.dumps(created["path"]))) == created
    )
    assert (first["id"], first["role"], first["priority"]) == ("TASK-1", "worker", 3)
    assert (second["id"], second["status"], second["unmetDeps"]) == ("TASK-2", "backlog", 1)


def board_in(home: Path, *titles: str, role: str | None = "worker") -> Path:
    db = home / "team" / "board.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    with Board(db) as board:
        for title in titles:
            board.create_task(title, role=role)
    return db


@pytest.mark.slow
def test_the_worker_loop_claims_works_and_finishes_until_there_is_nothing_left(
    tmp_path: Path,
) -> None:
    db = board_in(tmp_path, "works", "fails")
    (tmp_path / "worker.sh").write_text(example("docs/agents.md#worker-loop"))
    work = tmp_path / "do-the-work.sh"  # the reader's agent: TASK-2's work fails
    work.write_text('#!/bin/sh\necho "$1" >> worked.txt\n[ "$1" != TASK-2 ]\n')
    work.chmod(0o755)
    loop = subprocess.Popen(
        ["bash", "worker.sh"],
        cwd=tmp_path,
        env=reader_env(tmp_path, KANBAN_DB=str(db), KANBAN_AGENT="worker-1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            with Board(db, read_only=True) as board:
                statuses = [board.get_task(t).status for t in ("TASK-1", "TASK-2")]
            if statuses == ["in_review", "blocked"] or loop.poll() is not None:
                break
            time.sleep(0.2)
        assert loop.poll() is None, loop.communicate()  # idle, it sleeps and asks again
    finally:
        os.killpg(loop.pid, signal.SIGKILL)
        loop.wait()
    assert statuses == ["in_review", "blocked"]
    assert sorted((tmp_path / "worked.txt").read_text().split()) == ["TASK-1", "TASK-2"]
    with Board(db, read_only=True) as board:
        assert [c.body for c in board.comments("TASK-1")] == ["done by worker-1"]
        assert board.get_task("TASK-2").blocked_reason == "work failed, see the log"


def test_a_run_is_recorded_on_the_task_held(tmp_path: Path) -> None:
    db = board_in(tmp_path, "run me")
    env = reader_env(tmp_path, KANBAN_DB=str(db), KANBAN_AGENT="worker-1")
    claim = (  # what the lease loop above it on the page has done
        "task=$(kanban task claim-next)\n"
        'id=$(jq -r .id <<<"$task"); epoch=$(jq -r .claimEpoch <<<"$task")\n'
    )
    run(claim + example("docs/agents.md#runs"), tmp_path, env)
    with Board(db, read_only=True) as board:
        (execution,) = board.executions("TASK-1")
        assert (execution.status, execution.executor_type) == ("succeeded", "claude-code")
        assert (execution.cost_usd, execution.input_tokens) == (0.42, 48000)


@pytest.mark.slow
def test_the_review_loop_approves_what_another_agent_built(tmp_path: Path) -> None:
    db = board_in(tmp_path, "one", "two", role=None)
    with Board(db) as board:
        for task_id in ("TASK-1", "TASK-2"):
            board.claim(task_id, "worker-1")
            board.log_progress(task_id, "worker-1", f"{task_id} built")
            board.complete(task_id, "worker-1")
    done = run(example("docs/agents.md#review"), tmp_path, reader_env(tmp_path, KANBAN_DB=str(db)))
    shown = [json.loads(chunk) for chunk in done.stdout.replace("}\n{", "}\x00{").split("\x00")]
    assert {"task": "one", "notes": ["TASK-1 built"]} in shown
    with Board(db, read_only=True) as board:
        assert [board.get_task(t).status for t in ("TASK-1", "TASK-2")] == ["done", "done"]


@pytest.mark.slow
def test_the_plan_is_linted_then_applied_whole(tmp_path: Path) -> None:
    db = board_in(tmp_path)
    done = run(example("docs/agents.md#plan"), tmp_path, reader_env(tmp_path, KANBAN_DB=str(db)))
    assert done.stdout.splitlines()[-2:] == ["0 existing, 3 created", "3 existing, 0 created"]
    with Board(db, read_only=True) as board:
        tasks = {task.title: task for task in board.all_tasks()}
        assert sorted(tasks) == ["Design the API", "Document it", "Implement it"]
        assert tasks["Document it"].unmet_deps == 2 and tasks["Design the API"].priority == 5
        assert [d.id for d in board.dependencies(tasks["Implement it"].id)] == [
            tasks["Design the API"].id
        ]


def test_the_library_example_runs_as_a_script(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(example("docs/agents.md#library"))
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("self_review cannot approve")
    with Board(tmp_path / "board.db", read_only=True) as board:
        parse, docs = board.get_task("TASK-1"), board.get_task("TASK-2")
        assert parse.status == "done" and docs.unmet_deps == 0


# -- PostgreSQL -------------------------------------------------------------------------------


def with_board_url(block: str, url: str) -> str:
    """The page's block with its example server replaced by the test's: the install line (the
    test runs installed) and the `export KANBAN_DB=` line are checked, then set from `url`."""
    lines = block.splitlines()
    if lines[0].startswith("pip install"):
        assert lines.pop(0).startswith("pip install -e '.[postgres]'")
    assert lines[0].startswith("export KANBAN_DB=postgresql://"), lines[0]
    lines[0] = f"export KANBAN_DB='{url}'"
    return "\n".join(lines) + "\n"


@pytest.fixture
def schema_url(postgres_cluster) -> str:  # type: ignore[no-untyped-def]
    from tests.conftest import new_postgres_board

    return new_postgres_board(postgres_cluster)


def test_the_postgres_session_runs_on_a_fresh_schema(tmp_path: Path, schema_url: str) -> None:
    script = with_board_url(example("docs/postgresql.md#postgres-session"), schema_url)
    done = run(script, tmp_path, reader_env(tmp_path))
    *_, claimed = documents(done.stdout)
    assert (claimed["title"], claimed["assigneeAgentId"]) == ("Deploy the board", "alice")


def test_an_existing_board_moves_to_postgres_whole(tmp_path: Path, schema_url: str) -> None:
    with Board(tmp_path / "board.db") as board:
        board.create_task("kept")
        board.claim("TASK-1", "alice")
        board.create_task("also kept", depends_on=["TASK-1"])
    script = with_board_url(example("docs/postgresql.md#postgres-copy"), schema_url)
    run(script, tmp_path, reader_env(tmp_path))
    with Board(schema_url, read_only=True) as board:
        assert sorted((t.id, t.status) for t in board.all_tasks()) == [
            ("TASK-1", "in_progress"),
            ("TASK-2", "todo"),
        ]
        assert board.get_task("TASK-2").unmet_deps == 1


def test_a_consumer_reads_on_and_is_forgotten(tmp_path: Path) -> None:
    """docs/agents.md#consumer: two reads as one consumer see every event once, in order."""
    db = tmp_path / "board.db"
    with Board(db) as board:
        for number in range(150):
            board.create_task(f"task {number}")
    done = run(
        example("docs/agents.md#consumer"), tmp_path, reader_env(tmp_path, KANBAN_DB=str(db))
    )
    assert '"name":"indexer","lastSeq":150' in done.stdout
    first = json.loads((tmp_path / "first.json").read_text())
    rest = json.loads((tmp_path / "rest.json").read_text())
    assert [e["seq"] for e in first + rest] == list(range(1, 151))
    with Board(db, read_only=True) as board:
        assert Consumers(board).all() == []


def test_prune_archives_old_events_and_imports_them_back(tmp_path: Path) -> None:
    """docs/agents.md#prune on a board with a year of history: the events come back as they were."""
    from boardlib import ManualClock

    db = tmp_path / "board.db"
    day = 86_400_000
    clock = ManualClock(int(time.time() * 1000) - 365 * day)
    with Board(db, clock=clock) as board:
        for week in range(40):
            task = board.create_task(f"week {week}")
            board.claim(task.id, "worker-1")
            board.move(task.id, "done")
            clock.advance(ms=7 * day)
    with Board(db, read_only=True) as board:
        before = board.events(limit=10_000)
    done = run(example("docs/agents.md#prune"), tmp_path, reader_env(tmp_path, KANBAN_DB=str(db)))
    pruned, imported = documents(done.stdout)
    assert pruned["archived"] == pruned["pruned"] == imported["imported"] > 50
    with Board(db, read_only=True) as board:
        assert board.events(limit=10_000) == before
