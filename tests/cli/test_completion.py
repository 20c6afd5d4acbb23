"""Shell completion, as a person's shell runs it: the script `kanban completion bash` prints,
loaded into a real bash, asked for what follows a half-typed command line; and the zsh and fish
answers, whose descriptions (task titles, agent text) are drawn inert on one line each."""

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from boardlib import Board
from kanban.cli.completion import PATIENCE_S
from tests.cli.conftest import KANBAN, Kanban, clean_env, unchanged
from tests.doc_examples import example

EVIL_TITLE = "evil \x1b]52;c;aGk=\x07 [bold]x[/] \x1b[2J\nsecond line\u202e"


@pytest.fixture
def kanban(board_path: Path) -> Kanban:
    return Kanban(board_path)


def offered(kanban: Kanban, shell: str, *words: str, env: dict[str, str] | None = None) -> str:
    """What the shell is told for the command line `words` (the last one half typed): the raw
    answer of click's completion protocol for `shell`."""
    line = " ".join(["kanban", *words])
    done = subprocess.run(
        [str(KANBAN)],
        env=kanban.env(
            _KANBAN_COMPLETE=f"{shell}_complete",
            COMP_WORDS=line,
            COMP_CWORD=words[-1] if shell == "fish" else str(len(words)),
            **(env or {}),
        ),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == "", done
    return done.stdout


def bash_completes(kanban: Kanban, *words: str) -> list[str]:
    """COMPREPLY in a real bash that loaded `kanban completion bash`, for `words` typed after
    `kanban ` (the last one half typed)."""
    script = (
        example("docs/agents.md#completion").splitlines()[0]
        + "\n"
        + (
            'COMP_WORDS=(kanban "$@"); COMP_CWORD=$#\n'
            "_kanban_completion kanban\n"
            "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
        )
    )
    env = kanban.env(PATH=f"{KANBAN.parent}:{clean_env()['PATH']}")
    done = subprocess.run(
        ["bash", "-c", script, "bash", *words], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stderr == "", done
    return done.stdout.splitlines()


def test_bash_completes_task_ids_unfinished_first_in_any_case(kanban: Kanban) -> None:
    with kanban.board() as board:
        done = board.create_task("shipped")  # TASK-1, then finished
        board.move(done.id, "in_progress")
        board.move(done.id, "done")
        for number in range(2, 13):
            board.create_task(f"task {number}")
        board.drop(board.create_task("dropped").id)  # TASK-13: never offered
    assert bash_completes(kanban, "task", "approve", "task-1") == [
        "TASK-12",
        "TASK-11",
        "TASK-10",
        "TASK-1",
    ]
    assert bash_completes(kanban, "task", "get", "TASK-") == [
        *(f"TASK-{n}" for n in range(12, 1, -1)),
        "TASK-1",
    ]
    # and the commands and options themselves
    assert bash_completes(kanban, "task", "appr") == ["approve"]
    assert "completion" in bash_completes(kanban, "com")


def test_ids_are_found_by_the_store_and_offered_a_page_at_a_time(kanban: Kanban) -> None:
    with kanban.board() as board:
        for number in range(1, 61):
            board.create_task(f"task {number}")
        assert [t.id for t in board.tasks_by_id_prefix("task-6")] == ["TASK-60", "TASK-6"]
        assert board.tasks_by_id_prefix("TASK_") == []  # a `_` typed is no wildcard
    answer = offered(kanban, "bash", "task", "get", "")
    assert len(answer.splitlines()) == 50  # the newest page, not the board


def test_titles_beside_ids_are_inert_and_on_one_line(kanban: Kanban) -> None:
    with kanban.board() as board:
        board.create_task(EVIL_TITLE)
    zsh = offered(kanban, "zsh", "task", "approve", "TASK-")
    assert zsh.splitlines()[:2] == ["plain", "TASK-1"]
    (shown,) = zsh.splitlines()[2:]  # one description line: the newline is drawn, not kept
    assert shown.startswith("todo: evil ")
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in shown)
    assert "\u202e" not in shown and "[bold]x[/]" in shown  # bidi drawn; markup is just text
    fish = offered(kanban, "fish", "task", "approve", "TASK-")
    assert fish == f"plain,TASK-1\t{shown}\n"


def test_completing_without_a_board_offers_nothing_and_creates_nothing(tmp_path: Path) -> None:
    missing = Kanban(tmp_path / "no" / "board.db", init=False)
    assert offered(missing, "bash", "task", "get", "TASK").strip() == ""
    assert not missing.db.parent.exists()
    unreachable = Kanban("postgresql://kanban@127.0.0.1:1/board", init=False)  # type: ignore[arg-type]
    assert offered(unreachable, "bash", "task", "get", "TASK").strip() == ""


def test_a_board_that_does_not_answer_costs_tab_seconds_not_the_connect_timeout(
    tmp_path: Path,
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # takes the connection, never speaks
        port = silent.getsockname()[1]
        url = f"postgresql://kanban@127.0.0.1:{port}/board"
        mute = Kanban(url, init=False)  # type: ignore[arg-type]  # a URL, as board_path gives
        started = time.monotonic()
        assert offered(mute, "bash", "task", "get", "TASK").strip() == ""
        assert time.monotonic() - started < PATIENCE_S + 3.0  # the connect timeout is 10 s


def test_completing_writes_nothing(kanban: Kanban) -> None:
    with kanban.board() as board:
        board.create_task("one")
    with unchanged(kanban.db):
        assert offered(kanban, "bash", "task", "get", "T") == "plain,TASK-1\n"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_its_script(kanban: Kanban, shell: str) -> None:
    script = kanban.run("completion", shell)
    assert script.code == 0 and script.err == "", script
    assert "_KANBAN_COMPLETE" in script.out and f"{shell}_complete" in script.out
    if shutil.which(shell) and shell != "bash":  # bash is proven above by running it
        checked = subprocess.run(
            [shell, "-n"] if shell != "fish" else [shell, "--no-execute"],
            input=script.out,
            capture_output=True,
            text=True,
            check=False,
        )
        assert checked.returncode == 0, checked


def test_an_unknown_shell_is_a_usage_refusal(kanban: Kanban) -> None:
    refusal = kanban.refused("completion", env={"SHELL": "/bin/tcsh"}, reason="usage")
    assert "kanban completion bash|zsh|fish" in refusal["error"]
    assert "/bin/tcsh" in refusal["error"]
    assert kanban.refused("completion", "powershell", reason="usage")
    follows = kanban.run("completion", env={"SHELL": "/usr/bin/zsh"})
    assert follows.code == 0 and "compdef" in follows.out, follows


def test_the_board_is_read_the_same_way_on_both_backends(board: Board) -> None:
    for title in ("a", "b", "c"):
        board.create_task(title)
    board.move("TASK-1", "in_progress")
    board.move("TASK-1", "done")
    assert [t.id for t in board.tasks_by_id_prefix("")] == ["TASK-3", "TASK-2", "TASK-1"]
    assert [t.id for t in board.tasks_by_id_prefix("task-3", limit=5)] == ["TASK-3"]
    assert board.tasks_by_id_prefix("%") == []
