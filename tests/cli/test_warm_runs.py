"""The warm CLI runs (`tests/cli/warm.py`) answer as a fresh `kanban` process does: the same exit
code, stdout and stderr for a success, a refusal, a usage error, help, stdin and an unexpected
environment, and the same files left beside the board; each run its own process with its own
folder and environment. The rest of the CLI tests lean on this, so it runs in the fast loop."""

import json
import os
import shutil
from pathlib import Path

import pytest

from boardlib import Board
from tests.cli.conftest import KANBAN, START_MS, clean_env
from tests.cli.warm import run_kanban

PLAN = "tasks:\n  - key: a\n    title: first\n  - key: b\n    title: second\n    depends_on: [a]\n"


@pytest.mark.parametrize(
    ("argv", "stdin"),
    [
        (["task", "list"], None),
        (["task", "view", "TASK-404"], None),  # a refusal: exit 2, one JSON line on stderr
        (["task", "nope"], None),  # a usage error
        (["task", "dispatch", "--title", "x", "--priority", "2"], None),  # says the time
        (["--help"], None),
        (["plan", "apply", "-"], PLAN),  # stdin
        (["task", "view", "TASK-1", "--format", "table"], None),
        (["task", "dispatch", "--title", "\udcff"], None),  # not UTF-8: refused, exit 2
    ],
)
def test_a_warm_run_answers_as_a_fresh_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], stdin: str | None
) -> None:
    template = tmp_path / "template.db"
    with Board(template, reconcile_orphans=False) as board:
        board.create_task("the one task")
    answers = []
    for name in ("warm", "fresh"):
        shutil.copyfile(template, tmp_path / f"{name}.db")
    env = {"KANBAN_TEST_CLOCK": "1", "KANBAN_NOW_MS": str(START_MS)}
    monkeypatch.delenv("KANBAN_TEST_FRESH_PROCESSES", raising=False)
    for name in ("warm", "fresh"):
        if name == "fresh":
            monkeypatch.setenv("KANBAN_TEST_FRESH_PROCESSES", "1")
        done = run_kanban(
            [str(KANBAN), *argv],
            env=clean_env(KANBAN_DB=str(tmp_path / f"{name}.db"), **env),
            input=stdin,
        )
        answers.append((done.returncode, done.stdout, done.stderr))
    warm, fresh = answers
    assert warm == fresh
    # What the run left beside its board (a journal, a WAL not checkpointed): a warm run ends
    # without the interpreter's module teardown (zygote.py's `leave`), a fresh one with it.
    names = ("warm", "fresh")
    beside = [sorted(p.name[len(n) :] for p in tmp_path.glob(f"{n}.db*")) for n in names]
    assert beside[0] == beside[1]
    assert warm[0] in (0, 2), warm  # the cases say something, not a crash


def test_each_warm_run_is_its_own_process_in_its_own_folder(tmp_path: Path) -> None:
    """A run's folder and environment are its own: the board the environment names, in the
    folder the test is in, and nothing carried over from the run before."""
    first, second = tmp_path / "one", tmp_path / "two"
    for folder in (first, second):
        folder.mkdir()
    here = os.getcwd()
    try:
        for folder in (first, second):
            os.chdir(folder)
            done = run_kanban([str(KANBAN), "--db", "board.db", "db", "init"], env=clean_env())
            assert done.returncode == 0, done.stderr
    finally:
        os.chdir(here)
    assert (first / "board.db").exists() and (second / "board.db").exists()
    named = run_kanban(
        [str(KANBAN), "task", "list"], env=clean_env(KANBAN_DB=str(first / "board.db"))
    )
    unnamed = run_kanban(
        [str(KANBAN), "task", "list"], env=clean_env(KANBAN_DB=str(tmp_path / "x.db"))
    )
    assert named.returncode == 0 and json.loads(named.stdout) == []
    assert unnamed.returncode == 2 and "reason" in json.loads(unnamed.stderr)


def test_a_run_past_its_timeout_is_killed(tmp_path: Path) -> None:
    import subprocess

    Board(tmp_path / "board.db", reconcile_orphans=False).close()
    with pytest.raises(subprocess.TimeoutExpired):
        run_kanban(
            [str(KANBAN), "events", "--follow"],
            env=clean_env(KANBAN_DB=str(tmp_path / "board.db")),
            timeout=1.0,
        )
