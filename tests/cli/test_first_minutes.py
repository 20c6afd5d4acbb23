"""The mistakes of someone's first minutes with the CLI, each a typed refusal that names what to
do and changes nothing (a missing `--agent`, an option given no value, ...)."""

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from boardlib import Board
from tests.cli.conftest import BIN, KANBAN, Kanban, clean_env, unchanged
from tests.cli.test_doc_examples import run


@pytest.fixture
def kanban(tmp_path: Path) -> Kanban:
    return Kanban(tmp_path / "board.db")


@pytest.mark.parametrize(
    "args",
    [("task", "claim-next"), ("task", "claim", "TASK-1"), ("task", "heartbeat", "TASK-1")],
)
def test_a_missing_agent_says_it_may_come_from_the_environment(
    kanban: Kanban, args: tuple[str, ...]
) -> None:
    """`kanban task claim-next` without KANBAN_AGENT said only "Missing option '--agent'",
    though every agent loop sets the variable once rather than pass the option each call."""
    with kanban.board() as board:
        board.create_task("first")
    with unchanged(kanban.db):
        error = kanban.refused(*args, reason="usage")
    assert error["error"].startswith("Missing option '--agent'"), error
    assert "KANBAN_AGENT" in error["error"], error
    assert error["command"] == "kanban " + " ".join(args[:2])


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (("task", "claim-next", "-a", "bob", "--role"), "kanban task claim-next"),
        (("task", "list", "--db"), "kanban task list"),
        (("--db",), "kanban"),
        (("events", "--task"), "kanban events"),
    ],
)
def test_an_option_given_no_value_names_its_command_and_help(
    kanban: Kanban, args: tuple[str, ...], command: str
) -> None:
    """Click's parser raised "Option '--role' requires an argument." with no context, so the
    refusal alone of all usage errors named neither the command nor the help to read."""
    with kanban.board() as board:
        board.create_task("first")
    with unchanged(kanban.db):
        error = kanban.refused(*args, reason="usage")
    assert error["error"].endswith("requires an argument."), error
    assert (error["command"], error["help"]) == (command, f"{command} -h")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("task", "claim-next", "-a", "bob", "--minutes", "0"), "'--minutes': 0 is not in the"),
        (("task", "claim-next", "-a", "bob", "--minutes", "2000"), ": 2000 is not in the range"),
        (("task", "dispatch", "x", "--budget-usd", "1e400"), ": 1e400 is not in the range"),
        (("task", "claim-next", "-a", "bob", "--minutes", "abc"), ": 'abc' is not a number"),
        (
            ("task", "exec", "finish", "EX-1", "-a", "b", "--status", "failed", "--cost", "1,5"),
            ": '1,5' is not a number",
        ),
    ],
)
def test_a_number_out_of_its_range_is_quoted_as_typed(
    kanban: Kanban, args: tuple[str, ...], says: str
) -> None:
    """`--minutes 0` was refused as "0.0 is not in the range 0<x<=1440", `--budget-usd 1e400`
    as "inf is not ...", and `--minutes abc` as "not a valid float range": Python's words for
    what the person typed, where the range beside them was already written as people write it."""
    with unchanged(kanban.db):
        error = kanban.refused(*args, reason="usage")
    assert says in error["error"], error


@pytest.mark.parametrize(
    ("args", "refused_by", "belongs_to"),
    [
        (("--agent", "bob", "task", "claim-next"), "kanban", "kanban task claim-next --agent"),
        (("-a", "bob", "task", "claim-next"), "kanban", "kanban task claim-next -a"),
        (("--status", "todo", "task", "list"), "kanban", "kanban task list --status"),
        (("task", "--agent=bob", "claim-next"), "kanban task", "kanban task claim-next --agent"),
        (("task", "--db", "b.db", "list"), "kanban task", "kanban task list --db"),
    ],
)
def test_an_option_before_its_command_says_where_it_belongs(
    kanban: Kanban, args: tuple[str, ...], refused_by: str, belongs_to: str
) -> None:
    """`kanban --agent bob task claim-next` was refused as "No such option '--agent'." alone,
    though the option exists: it is the verb's, and goes after the verb."""
    with kanban.board() as board:
        board.create_task("first")
    with unchanged(kanban.db):
        error = kanban.refused(*args, reason="usage")
    assert error["command"] == refused_by, error
    assert f"({belongs_to} ...)" in error["error"], error
    assert "suggestion" not in error, error


def test_an_option_no_command_has_is_refused_as_before(kanban: Kanban) -> None:
    error = kanban.refused("--agent", "bob", "task", "list", reason="usage")
    assert error["error"] == "No such option '--agent'.", error


def test_db_copy_takes_no_db_it_would_ignore(kanban: Kanban, tmp_path: Path) -> None:
    """`db copy` listed --db ("Board file, ...") beside --from and --to, and ignored it: `kanban
    db copy --db other.db --from a.db --to b.db` copied a.db. It is refused, creating nothing."""
    with kanban.board() as board:
        board.create_task("first")
    target = tmp_path / "copy.db"
    other = str(tmp_path / "other.db")
    with unchanged(kanban.db):
        error = kanban.refused(
            "db",
            "copy",
            "--db",
            other,
            "--from",
            str(kanban.db),
            "--to",
            str(target),
            reason="usage",
        )
    assert error["error"] == "No such option '--db'.", error
    assert not target.exists()
    assert [path.name for path in tmp_path.iterdir() if "board.db" not in path.name] == []


def test_m_gives_a_verbs_text_as_it_does_for_log_progress(kanban: Kanban) -> None:
    """`-m` is the text of `log-progress`, `complete` and `comment`; `task block ID -m ...` was
    "No such option '-m'", the block's reason being the one thing it needs."""
    with kanban.board() as board:
        task = board.create_task("stuck work")
        board.claim(task.id, "alice")
    blocked = kanban.ok("task", "block", task.id, "-a", "alice", "-m", "no credentials")
    assert (blocked["status"], blocked["blockedReason"]) == ("blocked", "no credentials")


def test_the_first_steps_of_kanban_help_run_as_printed(tmp_path: Path) -> None:
    """`kanban --help` listed commands and exit codes but no way to start; its first steps are
    copied from the printed help into a shell, in a fresh git repository, and must run."""
    env = clean_env(
        HOME=str(tmp_path),
        XDG_STATE_HOME=str(tmp_path / "state"),
        PATH=f"{BIN}:{os.environ['PATH']}",
        COLUMNS="80",
    )
    shown = subprocess.run(
        [str(KANBAN), "--help"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert max(len(line) for line in shown.splitlines()) <= 80
    steps = shown.split("First steps", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert steps and all(line.startswith("    ") for line in steps), shown
    script = "\n".join(line.split("#", 1)[0].strip() for line in steps)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    run(script, repo, env)  # the steps as printed, in bash with errexit
    with Board(tmp_path / "state" / "kanban" / "board.db", read_only=True) as board:
        task = board.get_task("TASK-1")
    assert (task.title, task.status) == ("Write the parser", "in_review")
    assert (repo / "CLAUDE.md").exists() and (repo / ".mcp.json").exists()


def test_every_exit_code_is_in_the_agents_table_and_ctrl_c_is_130(tmp_path: Path) -> None:
    """Ctrl-C exits 130 (`exitcodes.INTERRUPTED`), which no page listed: the agents page's
    table of exit codes has a row for every code the console script returns."""
    from kanban.cli import exitcodes

    page = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    table = page.split("## Exit codes and reasons", 1)[1].split("\n\n", 2)[1]
    listed = {int(line.split("|")[1]) for line in table.splitlines()[2:]}
    declared = {
        value for key, value in vars(exitcodes).items() if key.isupper() and isinstance(value, int)
    }
    assert listed == declared
    kanban = Kanban(tmp_path / "board.db")
    serving = subprocess.Popen(
        [str(KANBAN), "mcp", "-a", "bob"],
        env=kanban.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as a terminal's foreground job has it: a shell without job control (CI started in the
        # background) starts its children with SIGINT ignored, and the server then ended at the
        # stdin `communicate` closes, exit 0 (the demo's Ctrl-C test says the same)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # Up and serving before the interrupt: its answer to `initialize` (a sleep of 1 s was not
    # enough on a loaded machine: the signal came before Python's own handler, and it died -2).
    assert serving.stdin is not None and serving.stdout is not None
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}  # fmt: skip
    serving.stdin.write(json.dumps(hello) + "\n")
    serving.stdin.flush()
    assert json.loads(serving.stdout.readline())["id"] == 1
    serving.send_signal(signal.SIGINT)
    _out, err = serving.communicate(timeout=30)
    assert serving.returncode == exitcodes.INTERRUPTED
    assert err.strip() == "", err


@pytest.mark.parametrize(
    "args",
    [
        ("task", "dispatch", "Write", "the", "parser"),
        ("task", "search", "fix", "the", "bug"),
        ("task", "log-progress", "TASK-1", "-a", "alice", "-m", "half", "way"),
    ],
)
def test_unquoted_text_is_told_to_be_quoted(kanban: Kanban, args: tuple[str, ...]) -> None:
    """`kanban task dispatch Write the parser` was "Got unexpected extra arguments (the parser)",
    which does not say that a title with spaces is one quoted argument."""
    with kanban.board() as board:
        board.claim(board.create_task("first").id, "alice")
    with unchanged(kanban.db):
        error = kanban.refused(*args, reason="usage")
    assert error["error"].startswith("Got unexpected extra argument"), error
    assert error["error"].endswith(". Text with spaces is one argument: put it in quotes."), error


def test_extra_ids_are_not_told_to_be_quoted(kanban: Kanban) -> None:
    error = kanban.refused("task", "get", "TASK-1", "TASK-2", reason="usage")
    assert error["error"] == "Got unexpected extra argument (TASK-2)", error


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("help",), "Help is an option: kanban -h, or kanban COMMAND -h."),
        (("task", "help"), "Help is an option: kanban task -h, or kanban task COMMAND -h."),
    ],
)
def test_help_as_a_command_points_at_the_option(
    kanban: Kanban, args: tuple[str, ...], says: str
) -> None:
    """`kanban help`, as git and docker take it, was "No such command 'help'." alone."""
    error = kanban.refused(*args, reason="usage")
    assert error["error"] == f"No such command 'help'. {says}", error
